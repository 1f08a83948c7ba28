#pragma once
/// @file
/// The structure model's parameters and its starting mesh, made on the host: plain arrays that
/// the app (structure_model.hpp) turns into objects and the static baseline
/// (bench/baselines/structure_baseline.hpp) keeps as they are, so that both start alike.
///
/// The mesh is DynaSOAr's generator (example/structure/dataset.cc) with Shoal's random numbers:
/// node positions uniform in [margin, 1 - margin]², a share of the nodes pulling anchors with a
/// velocity uniform in [-pull_speed, pull_speed) per axis, a share fixed anchors, the rest free
/// nodes of one mass; then spring_fill × nodes × max_degree / 2 springs, each between two
/// distinct nodes drawn uniformly among those with fewer than max_degree springs (DynaSOAr
/// redraws until it hits one; drawing from the list of open nodes is the same distribution
/// without the loop), stiffness uniform in [spring_min, spring_max). Differences: DynaSOAr's
/// shares are truncated separately (0.65 N + 0.25 N + 0.1 N may be N - 1 nodes); here the free
/// nodes take the rest, so there are exactly N. A mesh too small for its springs (only one open
/// node left) stops early instead of looping. Node ids are free nodes, then pulls, then anchors,
/// as DynaSOAr orders them.

#include <cstdint>
#include <vector>

#include "shoal/sim/rng.hpp"

namespace structure {

inline constexpr int max_degree = 5;  ///< springs a node can hold (DynaSOAr's kMaxDegree)

/// DynaSOAr's constants (configuration.h, dataset.cc) as values. Twelve 4-byte words, no padding:
/// saved in checkpoints as bytes.
struct parameters {
  float dt = 0.2f;               ///< kDt
  float damping = 0.0f;          ///< kVelocityDampening: share of a node's velocity lost per iteration
  float max_force = 0.5f;        ///< a spring whose force reaches this breaks
  float spring_min = 3.0f;       ///< stiffness range
  float spring_max = 5.0f;
  float mass = 500.0f;           ///< every free node's mass
  float pull_speed = 0.05f;      ///< pulling anchors' speed range per axis
  float margin = 0.35f;          ///< nodes start in [margin, 1 - margin]^2
  float pull_share = 0.25f;      ///< share of the nodes that are pulling anchors
  float anchor_share = 0.1f;     ///< share that are fixed anchors
  float spring_fill = 0.7f;      ///< springs = spring_fill * nodes * max_degree / 2
  std::uint32_t iterations = 40; ///< kNumComputeIterations: force-and-move rounds per step
};
static_assert(sizeof(parameters) == 12 * 4);

/// The model's flags, also saved in checkpoints (no padding: no undefined bytes in files).
struct model_flags {
  std::uint64_t nodes = 1500000;  ///< DynaSOAr's kMaxNodes
  parameters p;
};
static_assert(sizeof(model_flags) == 8 + sizeof(parameters));

/// What kind of node id i is: ids [0, free) free nodes, then pulls, then anchors.
enum class kind : std::uint8_t { free, pull, anchor };

struct mesh {
  std::uint32_t free = 0, pulls = 0, anchors = 0;
  std::vector<float> x, y, vx, vy;     ///< per node; vx, vy: pulls' velocity, else 0
  std::vector<std::uint32_t> p1, p2;   ///< per spring: its two nodes
  std::vector<float> stiffness;        ///< per spring
  std::vector<std::int32_t> slots;     ///< node * max_degree + k: its k-th spring (attach order), or -1

  std::uint32_t nodes() const { return free + pulls + anchors; }
  std::uint32_t springs() const { return static_cast<std::uint32_t>(p1.size()); }
  kind kind_of(std::uint32_t i) const { return i < free ? kind::free : i < free + pulls ? kind::pull : kind::anchor; }
};

/// The node counts of a mesh of n nodes: (free, pulls, anchors).
struct node_counts {
  std::uint32_t free, pulls, anchors;
};
inline node_counts counts_of(std::uint64_t n, const parameters& p) {
  const auto pulls = static_cast<std::uint32_t>(static_cast<double>(n) * p.pull_share);
  const auto anchors = static_cast<std::uint32_t>(static_cast<double>(n) * p.anchor_share);
  return {static_cast<std::uint32_t>(n) - pulls - anchors, pulls, anchors};
}

/// Springs asked of a mesh of n nodes (a crowded small mesh may get fewer).
inline std::uint64_t springs_wanted(std::uint64_t n, const parameters& p) {
  return static_cast<std::uint64_t>(static_cast<double>(p.spring_fill) * static_cast<double>(n) * max_degree / 2);
}

/// The mesh of run `seed`: node i draws from stream (seed, i, 0, 0), spring j from (seed, j, 0, 1).
inline mesh make_mesh(std::uint64_t n, std::uint64_t seed, const parameters& p) {
  mesh m;
  const node_counts c = counts_of(n, p);
  m.free = c.free, m.pulls = c.pulls, m.anchors = c.anchors;
  const std::uint32_t total = m.nodes();
  m.x.resize(total), m.y.resize(total), m.vx.assign(total, 0.0f), m.vy.assign(total, 0.0f);
  const float span = 1.0f - 2.0f * p.margin;
  for (std::uint32_t i = 0; i < total; ++i) {
    shoal::sim::random r(seed, i, 0, 0);
    m.x[i] = p.margin + span * r.uniform();
    m.y[i] = p.margin + span * r.uniform();
    if (m.kind_of(i) == kind::pull) {
      m.vx[i] = (2.0f * r.uniform() - 1.0f) * p.pull_speed;
      m.vy[i] = (2.0f * r.uniform() - 1.0f) * p.pull_speed;
    }
  }
  // Nodes with room for a spring, and where each sits in that list (swap-remove when full).
  std::vector<std::uint32_t> open(total), at(total), degree(total, 0);
  for (std::uint32_t i = 0; i < total; ++i) open[i] = at[i] = i;
  m.slots.assign(static_cast<std::size_t>(total) * max_degree, -1);
  const auto attach = [&](std::uint32_t node, std::uint32_t spring) {
    m.slots[static_cast<std::size_t>(node) * max_degree + degree[node]] = static_cast<std::int32_t>(spring);
    if (++degree[node] < max_degree) return;
    const std::uint32_t last = open.back();
    open[at[node]] = last, at[last] = at[node];
    open.pop_back();
  };
  const std::uint64_t wanted = springs_wanted(n, p);
  for (std::uint32_t j = 0; j < wanted && open.size() >= 2; ++j) {
    shoal::sim::random r(seed, j, 0, 1);
    const auto size = static_cast<std::uint32_t>(open.size());
    const std::uint32_t ia = r.below(size);
    std::uint32_t ib = r.below(size - 1);
    if (ib >= ia) ++ib;  // uniform among the open nodes other than the first
    const std::uint32_t a = open[ia], b = open[ib];
    m.p1.push_back(a), m.p2.push_back(b);
    m.stiffness.push_back(p.spring_min + (p.spring_max - p.spring_min) * r.uniform());
    attach(a, j), attach(b, j);
  }
  return m;
}

}  // namespace structure
