#pragma once
/// @file
/// Structure (DynaSOAr's "structure" benchmark) on Shoal: a mesh of nodes joined by springs.
/// Pulling anchors drag the mesh, springs stretched too far break and are deleted, and a node
/// that loses its last spring is deleted. Nodes hold pointers to their springs and springs to
/// their nodes, so objects go while others still point at them. The starting mesh is
/// structure_mesh.hpp's; the app is structure_app.hpp; the static baseline
/// (bench/baselines/structure_baseline.hpp) runs the same arithmetic on index arrays.
///
/// Rules. A step: every pulling anchor moves by its velocity × dt (once); then `iterations`
/// rounds of
///  A. force (do-all over springs): a spring of stiffness k and rest length L (its length at the
///     start) whose nodes are d apart pulls with force k·max(0, d - L) along the line between
///     them (springs only pull). A force ≥ max_force breaks it: it marks itself broken and pulls
///     no more. A spring broken in the round before deletes itself first, before reading
///     anything.
///  B. move (do-all over all nodes): a node lets go of its broken springs (nulls its slot,
///     counts one spring less) and sums the pull of the others, in slot order; a node whose last
///     spring broke in this round deletes itself; a free node then moves: velocity += force · dt
///     / mass, × (1 - damping), position += velocity · dt. Anchors do not move in B.
/// and last, C. collect (do-all over springs): the springs broken in the last round delete
/// themselves, so that no broken spring and no pointer to a deleted node outlives the step.
///
/// Why the deletes are safe (who writes what). In A a spring writes only its own fields and
/// reads its nodes' positions, which nothing writes in A; it reads no other spring. In B a node
/// writes only its own fields and reads its springs' `broken`, force and ends, which nothing
/// writes in B; no node reads another node. So a spring list is only ever changed by its owner,
/// without atomics, and both nodes of a broken spring have let go of it by the end of the B that
/// follows the break. A spring is deleted only in the next A (or C), when no node points at it;
/// a node is deleted only when every spring it had is broken, and a broken spring never follows
/// its pointers again. Every pointer left after C names a live object (a checkpoint checks it).
///
/// Determinism: each phase's result depends only on the state before it, sums run in slot order
/// and slots are filled in the mesh's attach order, so a run is the same every time. The
/// arithmetic is plain IEEE single precision with every product rounded on its own (no fused
/// multiply-add: `product` below), and sqrt and division correctly rounded on both backends, so
/// the backends are meant to agree bit for bit (nvcc's default -prec-sqrt/-prec-div, no fast
/// math). Not yet compared on a GPU: the resume test stays same-backend until it is.
///
/// Differences from DynaSOAr: there, Node::move reads its neighbours' positions while they move
/// (thread order decides), a spring breaks at force > max_force (here ≥, so that a spring at its
/// threshold breaks: the boundary case is what the tests pin), and the direction of a spring's
/// pull is taken in A from the positions every thread saw. DynaSOAr also runs a breadth-first
/// search from the anchors after each step and deletes what is no longer connected to one; that
/// is not done here (free nodes cut off keep drifting until their springs break).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "shoal/shoal.hpp"
#include "shoal/sim/sums.hpp"
#include "structure_mesh.hpp"

namespace structure {

/// a · b rounded on its own: nvcc would fuse a product followed by an add into one fma (another
/// rounding than the cpu's), so device code multiplies with __fmul_rn, which it never fuses.
SHOAL_HD inline float product(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

/// A spring's pull on its first node, (fx, fy) (its second gets the opposite), and whether it
/// breaks, from its nodes' positions: rule A.
struct pull {
  float fx, fy, force;
  bool broken;
};
SHOAL_HD inline pull spring_pull(float x1, float y1, float x2, float y2, float length, float stiffness, float max_force) {
  const float dx = x2 - x1, dy = y2 - y1;
  const float d = std::sqrt(product(dx, dx) + product(dy, dy));
  const float f = product(stiffness, std::fmax(0.0f, d - length));
  if (f >= max_force) return {0.0f, 0.0f, f, true};
  if (!(d > 0.0f)) return {0.0f, 0.0f, f, false};  // coincident nodes: no direction to pull in
  return {product(f, dx / d), product(f, dy / d), f, false};
}

/// A free node's move with the sum of its pulls (fx, fy): rule B.
SHOAL_HD inline void move_node(float& x, float& y, float& vx, float& vy, float fx, float fy, float mass, const parameters& p) {
  vx = product(vx + product(fx, p.dt) / mass, 1.0f - p.damping);
  vy = product(vy + product(fy, p.dt) / mass, 1.0f - p.damping);
  x = x + product(vx, p.dt);
  y = y + product(vy, p.dt);
}

/// 64 bits from a float's bits and two words (splitmix64's finaliser): the state hash.
SHOAL_HD inline std::uint64_t mix(std::uint64_t v) {
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
  return v ^ (v >> 31);
}
SHOAL_HD inline std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
/// Hash terms, summed (in any order) over the live nodes and springs.
SHOAL_HD inline std::uint64_t node_hash(std::uint32_t id, float x, float y, std::uint32_t degree) {
  return mix((std::uint64_t{id} << 32 | bits(x)) ^ mix(std::uint64_t{bits(y)} << 8 | degree));
}
SHOAL_HD inline std::uint64_t spring_hash(std::uint32_t id) { return mix(~std::uint64_t{id}); }

class NodeBase;
class Anchor;
class Pull;
class Node;
class Spring;
using Mesh = shoal::heap<NodeBase, Anchor, Pull, Node, Spring>;

/// The device copy of a mesh's arrays, and where the objects made from it are recorded.
struct mesh_view {
  const float *x, *y, *vx, *vy, *stiffness;
  const std::uint32_t *p1, *p2;
  const std::int32_t* slots;
  NodeBase** nodes;
  Spring** springs;
  std::uint32_t first;  ///< id of the parallel_new's object 0
  float mass;
};

class NodeBase : public shoal::object<Mesh, NodeBase> {
 public:
  SHOAL_ABSTRACT(NodeBase)
  SHOAL_FIELDS(NodeBase, (Spring*[max_degree], springs), (float, x), (float, y), (std::uint32_t, degree),
               (std::uint32_t, id))

  SHOAL_HD void place(std::uint32_t node, const mesh_view& m) {
    id = node, x = m.x[node], y = m.y[node], degree = 0;
    for (int k = 0; k < max_degree; ++k) springs[k] = nullptr;
    m.nodes[node] = this;
  }
  SHOAL_HD void apply(parameters p);  // rule B, below Node
  /// Shows the node to `f` as f(x, y, type id): what the viewer paints (structure_view.hpp).
  template <class F>
  SHOAL_HD void show(F f) {
    f(x.get(), y.get(), type_id());
  }
  SHOAL_HD void report(shoal::sim::sums::ref totals);
};

class Anchor : public shoal::object<Mesh, Anchor, NodeBase> {
 public:
  SHOAL_HD Anchor(unsigned long long i, mesh_view m) { place(m.first + static_cast<std::uint32_t>(i), m); }
};

class Pull : public shoal::object<Mesh, Pull, NodeBase> {
 public:
  SHOAL_FIELDS(Pull, (float, vx), (float, vy))
  SHOAL_HD Pull(unsigned long long i, mesh_view m) {
    place(m.first + static_cast<std::uint32_t>(i), m);
    vx = m.vx[id], vy = m.vy[id];
  }
  SHOAL_HD void drag(float dt) {
    x = x.get() + product(vx, dt);
    y = y.get() + product(vy, dt);
  }
};

class Node : public shoal::object<Mesh, Node, NodeBase> {
 public:
  SHOAL_FIELDS(Node, (float, vx), (float, vy), (float, mass))
  SHOAL_HD Node(unsigned long long i, mesh_view m) {
    place(m.first + static_cast<std::uint32_t>(i), m);
    vx = 0.0f, vy = 0.0f, mass = m.mass;
  }
  SHOAL_HD void move(float fx, float fy, const parameters& p) {
    float px = x, py = y, u = vx, v = vy;
    move_node(px, py, u, v, fx, fy, mass, p);
    x = px, y = py, vx = u, vy = v;
  }
};

class Spring : public shoal::object<Mesh, Spring> {
 public:
  SHOAL_FIELDS(Spring, (NodeBase*, p1), (NodeBase*, p2), (float, fx), (float, fy), (float, stiffness), (float, length),
               (std::uint32_t, id), (std::uint32_t, broken))

  /// Spring i of the mesh, between nodes made before it.
  SHOAL_HD Spring(unsigned long long i, mesh_view m) {
    const auto j = static_cast<std::uint32_t>(i);
    NodeBase* a = m.nodes[m.p1[j]];
    NodeBase* b = m.nodes[m.p2[j]];
    const float ax = a->x, ay = a->y, bx = b->x, by = b->y;
    const float dx = bx - ax, dy = by - ay;
    p1 = a, p2 = b, fx = 0.0f, fy = 0.0f, stiffness = m.stiffness[j], id = j, broken = 0;
    length = std::sqrt(product(dx, dx) + product(dy, dy));
    m.springs[j] = this;
  }

  /// Rule A.
  SHOAL_HD void force(float max_force) {
    if (broken.get() != 0) {  // both nodes let go of it in the last B
      delete this;
      return;
    }
    NodeBase* a = p1;
    NodeBase* b = p2;
    const pull f = spring_pull(a->x, a->y, b->x, b->y, length, stiffness, max_force);
    fx = f.fx, fy = f.fy, broken = f.broken ? 1u : 0u;
  }
  /// Shows the spring to `f` as f(x1, y1, x2, y2, |force|) (structure_view.hpp).
  template <class F>
  SHOAL_HD void show(F f) {
    NodeBase* a = p1;
    NodeBase* b = p2;
    const float u = fx, v = fy;
    f(a->x.get(), a->y.get(), b->x.get(), b->y.get(), std::sqrt(u * u + v * v));
  }
  /// Rule C.
  SHOAL_HD void collect() {
    if (broken.get() != 0) delete this;
  }
  SHOAL_HD void report(shoal::sim::sums::ref totals) {
    totals.add(3, 1);
    totals.add(4, static_cast<long long>(spring_hash(id)));
  }
};

inline void NodeBase::apply(parameters p) {
  float sx = 0.0f, sy = 0.0f;
  std::uint32_t left = degree;
  bool lost = false;
  for (int k = 0; k < max_degree; ++k) {
    Spring* s = springs[k];
    if (s == nullptr) continue;
    if (s->broken.get() != 0) {
      springs[k] = nullptr, --left, lost = true;
      continue;
    }
    const float fx = s->fx, fy = s->fy;
    if (s->p1.get() == this) sx += fx, sy += fy;
    else sx -= fx, sy -= fy;
  }
  degree = left;
  if (lost && left == 0) {  // its last spring broke: nothing points at it any more
    delete this;
    return;
  }
  if (Node* n = shoal::cast<Node>(this)) n->move(sx, sy, p);
}

inline void NodeBase::report(shoal::sim::sums::ref totals) {
  const std::uint32_t t = type_id();
  totals.add(t == Mesh::type_id<Node> ? 0 : t == Mesh::type_id<Pull> ? 1 : 2, 1);
  totals.add(4, static_cast<long long>(node_hash(id, x, y, degree)));
}

/// Makes the objects of mesh `m` (free nodes, pulls, anchors, springs, in id order, each class
/// in its lowest free blocks) and links every node to its springs in attach order. Waits.
inline void populate(shoal::runtime<Mesh>& rt, const mesh& m, const parameters& p) {
  namespace arch = shoal::arch;
  const auto up = [](const auto& v) {
    arch::device_buffer<typename std::decay_t<decltype(v)>::value_type> b(std::max<std::size_t>(v.size(), 1));
    if (!v.empty()) b.upload(v);
    return b;
  };
  auto x = up(m.x), y = up(m.y), vx = up(m.vx), vy = up(m.vy), k = up(m.stiffness);
  auto p1 = up(m.p1), p2 = up(m.p2);
  auto slots = up(m.slots);
  arch::device_buffer<NodeBase*> nodes(std::max<std::size_t>(m.nodes(), 1));
  arch::device_buffer<Spring*> springs(std::max<std::size_t>(m.springs(), 1));
  mesh_view v{x.data(), y.data(), vx.data(), vy.data(), k.data(), p1.data(), p2.data(), slots.data(),
              nodes.data(), springs.data(), 0, p.mass};
  rt.parallel_new<Node>(m.free, v);
  v.first = m.free;
  rt.parallel_new<Pull>(m.pulls, v);
  v.first = m.free + m.pulls;
  rt.parallel_new<Anchor>(m.anchors, v);
  rt.parallel_new<Spring>(m.springs(), v);
  rt.launch(m.nodes(), [=] SHOAL_DEVICE(std::size_t i) {
    NodeBase* n = v.nodes[i];
    std::uint32_t d = 0;
    for (int s = 0; s < max_degree; ++s) {
      const std::int32_t j = v.slots[i * max_degree + static_cast<std::size_t>(s)];
      n->springs[s] = j < 0 ? nullptr : v.springs[j];
      d += j >= 0;
    }
    n->degree = d;
  });
}

/// One step. Enqueued, no wait.
template <class Timer>
void step(shoal::runtime<Mesh>& rt, const parameters& p, Timer& timer) {
  {
    auto t = timer.phase("drag (do-all)");
    rt.parallel_do<&Pull::drag>(p.dt);
  }
  for (std::uint32_t i = 0; i < p.iterations; ++i) {
    {
      auto t = timer.phase("force (do-all)");
      rt.parallel_do<&Spring::force>(p.max_force);
    }
    {
      auto t = timer.phase("move (do-all)");
      rt.parallel_do<NodeBase, &NodeBase::apply>(p);
    }
  }
  auto t = timer.phase("collect (do-all)");
  rt.parallel_do<&Spring::collect>();
}

/// Live free nodes, pulls, anchors and springs, and the state hash (ids, positions and
/// degrees of the nodes, ids of the springs), after all queued work.
struct totals {
  std::uint64_t nodes, pulls, anchors, springs, state_hash;
};
inline totals measure(shoal::runtime<Mesh>& rt, shoal::sim::sums& scratch) {
  scratch.zero();
  rt.parallel_do<NodeBase, &NodeBase::report>(scratch.device());
  rt.parallel_do<&Spring::report>(scratch.device());
  const auto v = scratch.read();
  const auto u = [&](int k) { return static_cast<std::uint64_t>(v[static_cast<std::size_t>(k)]); };
  return {u(0), u(1), u(2), u(3), u(4)};
}

}  // namespace structure
