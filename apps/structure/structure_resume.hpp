#pragma once
/// @file
/// Resuming structure from a checkpoint, which may come from anyone: the mesh is checked on the
/// host before anything is copied to the device. The loader already checks that every saved
/// pointer names a live object of a class it may point to; a step relies on more, and a file that
/// breaks it could make a node delete itself while a spring still points at it. So, for what a
/// step leaves behind: each node's id is below --nodes, unique and of its class's id range
/// (free nodes, pulls, anchors, structure_mesh.hpp); positions, velocities, forces and lengths
/// are finite; free nodes have --mass; a node's degree counts its non-null slots, which name
/// distinct Springs that have the node as an end; a spring's ends are two distinct nodes that both
/// hold it (so each spring is held exactly twice); spring ids are unique and below the springs
/// asked for; no spring is broken (phase C deleted them).

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shoal/checkpoint/saved_heap.hpp"
#include "structure_model.hpp"

namespace structure {

/// Throws checkpoint_error (one line, naming the file and the first bad value) unless the saved
/// mesh is a state the steps can run from with the flags `m`.
inline void check_saved_state(const shoal::checkpoint::reader& r, const model_flags& m) {
  using saved = shoal::checkpoint::saved_heap<Mesh>;
  const saved heap(r);
  auto bad = [&](const std::string& why) { throw shoal::checkpoint_error(heap.name() + " is invalid: " + why); };
  const node_counts c = counts_of(m.nodes, m.p);
  const std::uint64_t most_springs = springs_wanted(m.nodes, m.p);
  std::vector<bool> node_seen(m.nodes, false), spring_seen(most_springs, false);
  std::vector<std::uint8_t> held(heap.blocks() * 64, 0);  // per spring: how many node slots hold it
  const auto finite = [](float v) { return std::isfinite(v); };

  // The springs first: their ends, to check against the nodes' slots.
  std::vector<std::optional<saved::object>> end1(heap.blocks() * 64), end2(heap.blocks() * 64);
  heap.for_each<Spring>([&](saved::object o) {
    const std::uint32_t id = heap.read<Spring>(o, &Spring::id);
    if (id >= most_springs || spring_seen[id]) bad("a spring has id " + std::to_string(id) + ", repeated or too large");
    spring_seen[id] = true;
    const auto a = heap.pointer(std::bit_cast<std::uint64_t>(heap.read<Spring>(o, &Spring::p1)), "a spring's first node");
    const auto b = heap.pointer(std::bit_cast<std::uint64_t>(heap.read<Spring>(o, &Spring::p2)), "a spring's second node");
    if (!a || !b || *a == *b || a->type == Mesh::type_id<Spring> || b->type == Mesh::type_id<Spring>) bad("spring " + std::to_string(id) + " does not join two distinct nodes");
    end1[saved::ordinal(o)] = a, end2[saved::ordinal(o)] = b;
    if (heap.read<Spring>(o, &Spring::broken) != 0) bad("spring " + std::to_string(id) + " is broken between steps");
    for (const float v : {heap.read<Spring>(o, &Spring::fx), heap.read<Spring>(o, &Spring::fy)})
      if (!finite(v)) bad("spring " + std::to_string(id) + " has a force that is not finite");
    const float k = heap.read<Spring>(o, &Spring::stiffness), l = heap.read<Spring>(o, &Spring::length);
    if (!(k >= 0.0f && finite(k) && l >= 0.0f && finite(l)))
      bad("spring " + std::to_string(id) + " has a stiffness or length that is negative or not finite");
  });

  const auto check_node = [&]<class C>(saved::object o, std::uint32_t first, std::uint32_t count) {
    const std::uint32_t id = heap.read<C>(o, &NodeBase::id);
    const std::string what = "node " + std::to_string(id);
    if (id < first || id >= first + count || node_seen[id]) bad(what + ": an id repeated or outside its class's range");
    node_seen[id] = true;
    if (!finite(heap.read<C>(o, &NodeBase::x)) || !finite(heap.read<C>(o, &NodeBase::y))) bad(what + ": a position that is not finite");
    std::uint32_t slots = 0;
    std::vector<saved::object> mine;
    for (int k = 0; k < max_degree; ++k) {
      const auto s = heap.pointer(std::bit_cast<std::uint64_t>(heap.read<C>(o, &NodeBase::springs, k)), what + "'s spring");
      if (!s) continue;
      ++slots;
      const std::size_t at = saved::ordinal(*s);
      if (s->type != Mesh::type_id<Spring> || !(end1[at] == o || end2[at] == o))
        bad(what + " holds a spring it is not an end of");
      for (const saved::object& other : mine)
        if (other == *s) bad(what + " holds a spring twice");
      mine.push_back(*s);
      ++held[at];
    }
    if (heap.read<C>(o, &NodeBase::degree) != slots) bad(what + ": its degree is not its number of springs");
  };
  heap.for_each<Node>([&](saved::object o) {
    check_node.template operator()<Node>(o, 0, c.free);
    if (!finite(heap.read<Node>(o, &Node::vx)) || !finite(heap.read<Node>(o, &Node::vy)))
      bad("a free node has a velocity that is not finite");
    if (heap.read<Node>(o, &Node::mass) != m.p.mass) bad("a free node's mass is not --mass");
  });
  heap.for_each<Pull>([&](saved::object o) {
    check_node.template operator()<Pull>(o, c.free, c.pulls);
    if (!finite(heap.read<Pull>(o, &Pull::vx)) || !finite(heap.read<Pull>(o, &Pull::vy)))
      bad("a pulling anchor has a velocity that is not finite");
  });
  heap.for_each<Anchor>([&](saved::object o) { check_node.template operator()<Anchor>(o, c.free + c.pulls, c.anchors); });
  heap.for_each<Spring>([&](saved::object o) {
    if (held[saved::ordinal(o)] != 2) bad("a spring is not held by both of its nodes");
  });
}

/// What a structure checkpoint holds besides the run's sections: the model flags and the mesh.
inline void save_state(shoal::checkpoint::writer& w, shoal::runtime<Mesh>& rt, const model_flags& m) {
  w.value("structure.model", m);
  rt.save_heap(w);
}

/// Checks the checkpoint (check_saved_state), then loads its mesh into `rt`. Throws
/// checkpoint_error, having changed nothing, for a file that does not pass.
inline void resume(shoal::runtime<Mesh>& rt, const model_flags& m, const shoal::checkpoint::reader& r) {
  check_saved_state(r, m);
  rt.load_heap(r);
}

}  // namespace structure
