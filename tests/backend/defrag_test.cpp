// Defragmentation: after random deaths, defragment() leaves fewer blocks, verify() holds, every
// surviving object keeps its fields, and every pointer to a moved object — in heap fields
// (plain and array fields, from another class, from a subclass, into an abstract base) and in a
// registered array — names the same object as before. A compact heap moves nothing; a do-all
// afterwards sees every object once; bad arguments are refused. Compiled for both backends.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "test_support.hpp"

namespace shoal::test::defrag {

class Node;
class Part;
class Bolt;
class Leaf;
using DefragHeap = shoal::heap<Node, Part, Bolt, Leaf>;

class Part : public object<DefragHeap, Part> {
 public:
  SHOAL_ABSTRACT(Part)
  SHOAL_FIELDS(Part, (unsigned long long, id), (Node*, owner))
};
class Bolt : public object<DefragHeap, Bolt, Part> {
 public:
  SHOAL_FIELDS(Bolt, (float, torque))
  SHOAL_HD Bolt(unsigned long long i) { id = i, owner = nullptr, torque = 0.5f * static_cast<float>(i); }
};
class Leaf : public object<DefragHeap, Leaf, Part> {
 public:
  SHOAL_FIELDS(Leaf, (std::uint16_t, colour), (std::uint8_t[3], veins))
  SHOAL_HD Leaf(unsigned long long i) {
    id = i, owner = nullptr, colour = static_cast<std::uint16_t>(i * 7);
    for (int k = 0; k < 3; ++k) veins[k] = static_cast<std::uint8_t>(i + k);
  }
};
class Node : public object<DefragHeap, Node> {
 public:
  SHOAL_FIELDS(Node, (unsigned long long, id), (Node*, next), (Part*[2], parts), (double, weight), (int, visits))
  SHOAL_HD Node(unsigned long long i) {
    id = i, next = nullptr, parts[0] = nullptr, parts[1] = nullptr, weight = 1.0 / static_cast<double>(i + 1), visits = 0;
  }
  SHOAL_HD void visit() { visits += 1; }
};
using DefragRuntime = runtime<DefragHeap>;

/// Survives the churn: about one object in `keep_one_in`, decided by a hash of the index.
SHOAL_HD inline bool survives(std::uint64_t i, std::uint64_t keep_one_in) {
  std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x % keep_one_in == 0;
}

/// What the host expects of node i (a survivor) and what the device reads through the pointers.
struct node_view {
  unsigned long long id, next_id, part_ids[2], owner_ids[2];
  double weight;
  float torque;
  std::uint16_t colour;
  std::uint8_t veins[3];
  int visits;
  int dead;  // pointers (the node's, its next, its parts', their owners') to a slot not in use
};

/// n nodes, each with a Bolt and a Leaf (ids n + i, 2n + i); survivors link to survivors only:
/// next = the next surviving node, parts = the node's own parts, parts' owner = the node.
void build(DefragRuntime& rt, std::uint64_t n, std::uint64_t keep_one_in, Node** nodes) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    Node* node = new Node(i);
    node->parts[0] = new Bolt(n + i);
    node->parts[1] = new Leaf(2 * n + i);
    node->parts[0]->owner = node;
    node->parts[1]->owner = node;
    nodes[i] = node;
  });
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (!survives(i, keep_one_in)) return;
    for (std::uint64_t j = (i + 1) % n; j != i; j = (j + 1) % n)
      if (survives(j, keep_one_in)) {
        nodes[i]->next = nodes[j];
        return;
      }
  });
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (survives(i, keep_one_in)) return;
    delete nodes[i]->parts[0];
    delete nodes[i]->parts[1];
    delete nodes[i];
    nodes[i] = nullptr;
  });
}

/// Reads every surviving node and what it points to.
std::vector<node_view> read(DefragRuntime& rt, std::uint64_t n, Node* const* nodes) {
  arch::device_buffer<node_view> out(n);
  out.zero();
  node_view* o = out.data();
  const detail::heap_view h = rt.view();
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    const Node* node = nodes[i];
    if (node == nullptr) return;
    node_view v{};
    // A stale pointer still reads the old copy until the slot is reused: check each is live.
    auto dead = [&](const void* p) { return p != nullptr && !detail::is_live_object(h, detail::bits_of(p)); };
    v.dead = dead(node) + dead(node->next.get());
    for (int k = 0; k < 2; ++k) v.dead += dead(node->parts[k]) + dead(node->parts[k]->owner.get());
    v.id = node->id;
    v.next_id = node->next ? static_cast<unsigned long long>(node->next->id) : ~0ull;
    for (int k = 0; k < 2; ++k) {
      const Part* p = node->parts[k];
      v.part_ids[k] = p->id;
      v.owner_ids[k] = p->owner->id;
    }
    v.weight = node->weight;
    const Bolt* b = shoal::cast<Bolt>(node->parts[0]);
    const Leaf* l = shoal::cast<Leaf>(node->parts[1]);
    v.torque = b ? static_cast<float>(b->torque) : -1.0f;
    v.colour = l ? static_cast<std::uint16_t>(l->colour) : 0;
    for (int k = 0; k < 3; ++k) v.veins[k] = l ? static_cast<std::uint8_t>(l->veins[k]) : 0;
    v.visits = node->visits;
    o[i] = v;
  });
  return out.download();
}

/// Destroys every node left and its parts.
void destroy_all(DefragRuntime& rt, std::uint64_t n, Node** nodes) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    Node* node = nodes[i];
    if (node == nullptr) return;
    delete node->parts[0];
    delete node->parts[1];
    delete node;
    nodes[i] = nullptr;
  });
}

void expect_same(const std::vector<node_view>& a, const std::vector<node_view>& b, std::uint64_t n) {
  ASSERT_EQ(a.size(), b.size());
  for (std::uint64_t i = 0; i < n; ++i) {
    EXPECT_EQ(a[i].id, b[i].id) << i;
    EXPECT_EQ(a[i].next_id, b[i].next_id) << i;
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(a[i].part_ids[k], b[i].part_ids[k]) << i;
      EXPECT_EQ(a[i].owner_ids[k], b[i].owner_ids[k]) << i;
    }
    EXPECT_EQ(a[i].weight, b[i].weight) << i;
    EXPECT_EQ(a[i].torque, b[i].torque) << i;
    EXPECT_EQ(a[i].colour, b[i].colour) << i;
    for (int k = 0; k < 3; ++k) EXPECT_EQ(a[i].veins[k], b[i].veins[k]) << i;
    EXPECT_EQ(a[i].visits, b[i].visits) << i;
    EXPECT_EQ(a[i].dead, 0) << i;
    EXPECT_EQ(b[i].dead, 0) << i;
  }
}

/// A heap after build(n, keep_one_in), its node array registered, and what the nodes read before
/// any defragmentation.
struct churned_graph {
  DefragRuntime rt;
  arch::device_buffer<Node*> nodes;
  std::vector<node_view> before;
  churned_graph(std::uint64_t n, std::uint64_t keep_one_in)
      : rt(DefragRuntime::bytes_for<Node, Bolt, Leaf>(2 * n, 2 * n, 2 * n)), nodes(n) {
    nodes.zero();
    rt.register_pointers("nodes", nodes.data(), n);
    build(rt, n, keep_one_in, nodes.data());
    before = read(rt, n, nodes.data());
  }
};

TEST(Defragment, KeepsEveryObjectAndPointerAndFreesBlocks) {
  const std::uint64_t n = 20000, keep_one_in = 5;
  churned_graph g(n, keep_one_in);
  DefragRuntime& rt = g.rt;
  arch::device_buffer<Node*>& nodes = g.nodes;
  const auto& before = g.before;
  std::uint64_t survivors = 0;
  for (std::uint64_t i = 0; i < n; ++i) survivors += survives(i, keep_one_in);
  for (std::uint64_t i = 0; i < n; ++i) {  // the host model: what each survivor must read
    if (!survives(i, keep_one_in)) continue;
    ASSERT_EQ(before[i].id, i);
    ASSERT_EQ(before[i].part_ids[0], n + i);
    ASSERT_EQ(before[i].owner_ids[1], i);
  }
  const heap_stats s0 = rt.stats();
  ASSERT_EQ(s0.live(), 3 * survivors);

  const defrag_stats d = rt.defragment(0.5);
  EXPECT_EQ(rt.verify(), "");
  EXPECT_EQ(d.blocks_before, s0.blocks - s0.free_blocks);
  EXPECT_LT(d.blocks_after, d.blocks_before / 2) << "a fifth of the objects left: at least half the blocks go";
  EXPECT_GT(d.moved, 0u);
  const heap_stats s1 = rt.stats();
  EXPECT_EQ(s1.live(), 3 * survivors);
  EXPECT_EQ(s1.blocks - s1.free_blocks, d.blocks_after);
  expect_same(read(rt, n, nodes.data()), before, n);

  // Compact now: nothing moves. A do-all sees every node once.
  const defrag_stats again = rt.defragment(0.5);
  EXPECT_EQ(again.moved, 0u);
  EXPECT_EQ(again.blocks_after, again.blocks_before);
  rt.parallel_do<&Node::visit>();
  const auto visited = read(rt, n, nodes.data());
  for (std::uint64_t i = 0; i < n; ++i)
    if (survives(i, keep_one_in)) EXPECT_EQ(visited[i].visits, 1) << i;

  // The moved objects can be destroyed.
  destroy_all(rt, n, nodes.data());
  EXPECT_EQ(rt.stats().live(), 0u);
  EXPECT_EQ(rt.verify(), "");
}

TEST(Defragment, OneClassLeavesTheOthers) {
  const std::uint64_t n = 6000, keep_one_in = 4;
  churned_graph g(n, keep_one_in);
  DefragRuntime& rt = g.rt;
  arch::device_buffer<Node*>& nodes = g.nodes;
  const auto& before = g.before;
  const auto headers_before = rt.stats();
  const defrag_stats d = rt.defragment<Part>(0.5);  // Bolt and Leaf, not Node
  EXPECT_GT(d.moved, 0u);
  EXPECT_EQ(rt.verify(), "");
  expect_same(read(rt, n, nodes.data()), before, n);
  EXPECT_EQ(rt.stats().live(), headers_before.live());
  const defrag_stats nodes_only = rt.defragment<Node>(0.5);
  EXPECT_GT(nodes_only.moved, 0u);
  EXPECT_EQ(rt.verify(), "");
  expect_same(read(rt, n, nodes.data()), before, n);
}

/// The plan as the docs state it, on the host: per class, of the blocks filled at most max_fill,
/// the fullest stay (lower index first among equals), as few as hold all their objects; the
/// others' objects fill the kept blocks' free slots in block and slot order. Returns the headers
/// it leaves (classes in the mask `types` only).
std::vector<detail::block_header> planned(std::vector<detail::block_header> h, const detail::heap_view& v, double max_fill,
                                         std::uint32_t types) {
  for (std::uint32_t t = 0; t < v.num_types; ++t) {
    const std::uint32_t cap = v.capacity[t];
    if (cap == 0 || ((types >> t) & 1u) == 0) continue;
    const std::uint64_t full = v.full_mask(t);
    std::vector<std::pair<std::uint64_t, int>> sparse;  // block, live
    std::uint64_t live = 0;
    for (std::uint64_t b = 0; b < h.size(); ++b) {
      if (h[b].type != t) continue;
      const int n = std::popcount(~h[b].free_slots & full);
      if (n > static_cast<int>(max_fill * cap)) continue;
      sparse.push_back({b, n});
      live += static_cast<std::uint64_t>(n);
    }
    const std::uint64_t keep = (live + cap - 1) / cap;
    if (sparse.size() <= keep) continue;
    std::stable_sort(sparse.begin(), sparse.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::uint64_t> targets, sources;
    for (std::size_t i = 0; i < sparse.size(); ++i) (i < keep ? targets : sources).push_back(sparse[i].first);
    std::sort(targets.begin(), targets.end());
    std::sort(sources.begin(), sources.end());
    std::size_t k = 0;
    for (const std::uint64_t b : sources) {
      for (int n = std::popcount(~h[b].free_slots & full); n > 0; --n) {
        while ((h[targets[k]].free_slots & full) == 0) ++k;
        h[targets[k]].free_slots &= h[targets[k]].free_slots - 1;  // its lowest free slot
      }
      h[b] = detail::block_header{0, detail::no_type, 0};
    }
  }
  return h;
}

std::vector<detail::block_header> headers_of(const DefragRuntime& rt) {
  rt.settle_stocks();  // what defragment() sees
  std::vector<detail::block_header> h(rt.view().blocks);
  arch::copy_to_host(h.data(), rt.view().headers, h.size() * sizeof(detail::block_header));
  return h;
}

// The device plans (histograms, scans): its result must be the stated plan, block for block, at
// fills where many blocks tie, for every class at once and for one.
TEST(Defragment, KeepsTheFullestBlocksAndFillsThemInOrder) {
  const std::uint32_t parts = (1u << DefragHeap::type_id<Bolt>) | (1u << DefragHeap::type_id<Leaf>);
  for (const double fill : {0.3, 0.5, 0.9})
    for (const bool every_class : {true, false}) {
      const std::uint64_t n = 9000, keep_one_in = 3;
      churned_graph g(n, keep_one_in);
      DefragRuntime& rt = g.rt;
      const auto& before = g.before;
      const auto expected = planned(headers_of(rt), rt.view(), fill, every_class ? ~0u : parts);
      const defrag_stats d = every_class ? rt.defragment(fill) : rt.defragment<Part>(fill);
      const auto after = headers_of(rt);
      ASSERT_EQ(after.size(), expected.size());
      std::uint64_t differ = 0, used = 0;
      for (std::size_t b = 0; b < after.size(); ++b) {
        differ += after[b].type != expected[b].type || after[b].free_slots != expected[b].free_slots;
        used += after[b].type != detail::no_type;
      }
      EXPECT_EQ(differ, 0u) << "blocks unlike the plan at max_fill " << fill << (every_class ? "" : ", Part only");
      EXPECT_GT(d.moved, 0u);
      EXPECT_EQ(used, d.blocks_after);
      EXPECT_EQ(rt.verify(), "");
      expect_same(read(rt, n, g.nodes.data()), before, n);
    }
}

TEST(Defragment, RefusesAFillOutsideZeroToOne) {
  DefragRuntime rt(DefragRuntime::bytes_for<Node>(64));
  EXPECT_THROW(rt.defragment(0.0), shoal::error);
  EXPECT_THROW(rt.defragment(1.0), shoal::error);
  EXPECT_THROW(rt.defragment<Node>(-0.5), shoal::error);
  const defrag_stats empty = rt.defragment(0.5);
  EXPECT_EQ(empty.blocks_before, 0u);
  EXPECT_EQ(empty.moved, 0u);
}

}  // namespace shoal::test::defrag
