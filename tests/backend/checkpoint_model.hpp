#pragma once
// A heap for the checkpoint tests: objects that point at each other (single pointers, arrays
// of pointers, pointers to a base class), every kind of plain field, and a way to build a
// graph of them, damage it, and dump every live object with the objects it points to.

#include <cstdint>
#include <vector>

#include "test_support.hpp"

namespace shoal::test::ckpt {

class Link;
class Item;
class Coin;
class Gem;
using Graph = shoal::heap<Link, Item, Coin, Gem>;
using GraphRuntime = runtime<Graph>;

struct rgb {
  float r, g, b;
};
enum class shape : std::uint16_t { round = 1, square = 7 };

/// What a dump records per object: its own values and what its pointers lead to (ids, or
/// -1 for null), so two heaps at different addresses compare equal when their graphs are equal.
struct object_state {
  long long id = -1;
  long long next = -1, item[3] = {-1, -1, -1}, twin = -1;
  long long value = 0;
  double weight = 0;
  int kind = 0;  // 0 none, 1 link, 2 coin, 3 gem
  bool operator==(const object_state&) const = default;
};

class Item : public object<Graph, Item> {
 public:
  SHOAL_ABSTRACT(Item)
  SHOAL_FIELDS(Item, (long long, id), (Item*, twin))
};

class Coin : public object<Graph, Coin, Item> {
 public:
  SHOAL_FIELDS(Coin, (double, weight), (bool, shiny))
  SHOAL_HD Coin(long long i, double w) { id = i, twin = nullptr, weight = w, shiny = (i % 2) == 0; }
  SHOAL_HD void dump(object_state* out) {  // not const: parallel_do refuses const methods (nvcc)
    object_state& s = out[id];
    s.id = id, s.kind = 2, s.weight = weight, s.value = shiny ? 1 : 0;
    Item* t = twin;
    s.twin = t ? t->id.get() : -1;
  }
};

class Gem : public object<Graph, Gem, Item> {
 public:
  SHOAL_FIELDS(Gem, (rgb, colour), (shape, cut), (std::uint8_t[5], facets))
  SHOAL_HD Gem(long long i, float c) {
    id = i, twin = nullptr, colour = rgb{c, 2 * c, 3 * c}, cut = (i % 3) ? shape::round : shape::square;
    for (int k = 0; k < 5; ++k) facets[k] = static_cast<std::uint8_t>(i + k);
  }
  SHOAL_HD void dump(object_state* out) {  // not const: parallel_do refuses const methods (nvcc)
    object_state& s = out[id];
    s.id = id, s.kind = 3, s.weight = colour->g, s.value = static_cast<long long>(cut.get()) * 1000 + facets[4];
    Item* t = twin;
    s.twin = t ? t->id.get() : -1;
  }
};

class Link : public object<Graph, Link> {
 public:
  SHOAL_FIELDS(Link, (long long, id), (Link*, next), (Item*[3], items), (std::int16_t, hops))
  SHOAL_HD explicit Link(long long i) {
    id = i, next = nullptr, hops = static_cast<std::int16_t>(-i % 1000);
    for (int k = 0; k < 3; ++k) items[k] = nullptr;
  }
  SHOAL_HD void dump(object_state* out) {  // not const: parallel_do refuses const methods (nvcc)
    object_state& s = out[id];
    s.id = id, s.kind = 1, s.value = hops;
    Link* n = next;
    s.next = n ? n->id.get() : -1;
    for (int k = 0; k < 3; ++k) {
      Item* it = items[k];
      s.item[k] = it ? it->id.get() : -1;
    }
  }
};

/// Ids: link i has id i; its items have ids n + 3i + k.
inline std::uint64_t ids_for(std::uint64_t links) { return 4 * links; }

/// Builds `n` links, each with up to three items (coins and gems), links pointing to other
/// links, items pointing to twins; then destroys every fifth link (no pointer leads to it), so
/// the links' blocks are partly full. `roots` (device, n) receives each link or nullptr.
void build_graph(GraphRuntime& rt, Link** roots, std::uint64_t n);
/// Every live object's state, by id (ids_for(n) entries).
std::vector<object_state> dump(GraphRuntime& rt, std::uint64_t n);
/// Every root's id, or -1 (follows the pointers of the device array).
std::vector<long long> root_ids(GraphRuntime& rt, Link** roots, std::uint64_t n);

}  // namespace shoal::test::ckpt
