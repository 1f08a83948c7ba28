#pragma once
/// @file
/// Static structure baseline for the apps benchmark (DynaSOAr's methodology; its own SoA
/// baseline is shaped the same way): the model of apps/structure/structure_model.hpp without an
/// object heap. Nodes and springs are fixed arrays indexed by id, one per field, allocated once;
/// a node's springs are max_degree spring indices (-1: none), a spring's nodes two node indices;
/// nothing is ever moved or compacted, a deleted node or spring is a state word. A step is one
/// kernel per phase, over all node or spring indices: drag (pulls), then `iterations` rounds of
/// force (springs) and move (nodes), then collect (springs), with the same phase rules, the same
/// arithmetic (structure::spring_pull, move_node) and slot order as the app, so a run equals the
/// app's bit for bit on one backend: same springs broken, same nodes deleted, same positions
/// (bench/baselines/tests/structure_baseline_test.cpp).

#include <cmath>
#include <cstdint>
#include <vector>

#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/sim/sums.hpp"
#include "structure/structure_mesh.hpp"
#include "structure/structure_model.hpp"

namespace structure_baseline {

using structure::max_degree;

/// Spring states: pulling, broken in the last round (its nodes let go in the move that
/// follows), gone. Node states: live or gone.
enum : std::uint8_t { live = 0, broken = 1, gone = 2 };

/// Device pointers to the arrays.
struct arrays {
  float *x, *y, *vx, *vy;        ///< per node (vx, vy: free nodes and pulls)
  std::int32_t* slots;           ///< node * max_degree + k
  std::uint32_t* degree;         ///< per node
  std::uint8_t* node_state;
  std::uint32_t *p1, *p2;        ///< per spring
  float *stiffness, *length, *fx, *fy;
  std::uint8_t* spring_state;
  std::uint32_t free, pulls, nodes, springs;
  float mass;
};

class mesh_arrays {
 public:
  mesh_arrays(const structure::mesh& m, const structure::parameters& p)
      : node_f_(4 * std::size_t{m.nodes()} + 1), slots_(m.slots.size() + 1), degree_(m.nodes() + 1u),
        node_state_(m.nodes() + 1u), ends_(2 * std::size_t{m.springs()} + 1), spring_f_(4 * std::size_t{m.springs()} + 1),
        spring_state_(m.springs() + 1u), p_(p) {
    const std::size_t n = m.nodes(), s = m.springs();
    std::vector<float> nf(node_f_.size(), 0.0f), sf(spring_f_.size(), 0.0f);
    std::vector<std::uint32_t> deg(degree_.size(), 0), ends(ends_.size(), 0);
    for (std::size_t i = 0; i < n; ++i) {
      nf[i] = m.x[i], nf[n + i] = m.y[i], nf[2 * n + i] = m.vx[i], nf[3 * n + i] = m.vy[i];
      for (int k = 0; k < max_degree; ++k) deg[i] += m.slots[i * max_degree + static_cast<std::size_t>(k)] >= 0;
    }
    for (std::size_t j = 0; j < s; ++j) {
      ends[j] = m.p1[j], ends[s + j] = m.p2[j];
      sf[j] = m.stiffness[j];
      // The rest length as the app's Spring constructor computes it.
      const float dx = m.x[m.p2[j]] - m.x[m.p1[j]], dy = m.y[m.p2[j]] - m.y[m.p1[j]];
      sf[s + j] = std::sqrt(structure::product(dx, dx) + structure::product(dy, dy));
    }
    std::vector<std::int32_t> slots = m.slots;
    slots.push_back(-1);
    node_f_.upload(nf), spring_f_.upload(sf), degree_.upload(deg), ends_.upload(ends), slots_.upload(slots);
    node_state_.zero(), spring_state_.zero();
    float* f = node_f_.data();
    float* g = spring_f_.data();
    a_ = {f,           f + n,       f + 2 * n,  f + 3 * n,          slots_.data(), degree_.data(), node_state_.data(),
          ends_.data(), ends_.data() + s, g, g + s, g + 2 * s, g + 3 * s, spring_state_.data(),
          m.free,      m.pulls,     m.nodes(),  m.springs(),        p.mass};
  }

  /// One step, enqueued.
  void step() {
    const arrays a = a_;
    const structure::parameters p = p_;
    shoal::arch::for_each_index(a.pulls, [=] SHOAL_DEVICE(std::size_t k) {
      const std::size_t i = a.free + k;
      if (a.node_state[i] != live) return;
      a.x[i] = a.x[i] + structure::product(a.vx[i], p.dt);
      a.y[i] = a.y[i] + structure::product(a.vy[i], p.dt);
    });
    for (std::uint32_t r = 0; r < p.iterations; ++r) {
      shoal::arch::for_each_index(a.springs, [=] SHOAL_DEVICE(std::size_t j) {
        if (a.spring_state[j] != live) {
          a.spring_state[j] = gone;
          return;
        }
        const std::uint32_t u = a.p1[j], v = a.p2[j];
        const structure::pull f = structure::spring_pull(a.x[u], a.y[u], a.x[v], a.y[v], a.length[j], a.stiffness[j], p.max_force);
        a.fx[j] = f.fx, a.fy[j] = f.fy;
        if (f.broken) a.spring_state[j] = broken;
      });
      shoal::arch::for_each_index(a.nodes, [=] SHOAL_DEVICE(std::size_t i) {
        if (a.node_state[i] != live) return;
        float sx = 0.0f, sy = 0.0f;
        std::uint32_t left = a.degree[i];
        bool lost = false;
        for (std::size_t k = i * max_degree; k < (i + 1) * max_degree; ++k) {
          const std::int32_t j = a.slots[k];
          if (j < 0) continue;
          if (a.spring_state[j] != live) {
            a.slots[k] = -1, --left, lost = true;
            continue;
          }
          if (a.p1[j] == i) sx += a.fx[j], sy += a.fy[j];
          else sx -= a.fx[j], sy -= a.fy[j];
        }
        a.degree[i] = left;
        if (lost && left == 0) {
          a.node_state[i] = gone;
          return;
        }
        if (i < a.free) structure::move_node(a.x[i], a.y[i], a.vx[i], a.vy[i], sx, sy, a.mass, p);
      });
    }
    shoal::arch::for_each_index(a.springs, [=] SHOAL_DEVICE(std::size_t j) {
      if (a.spring_state[j] == broken) a.spring_state[j] = gone;
    });
  }

  /// The app's totals (structure::measure): live nodes by kind, live springs, the state hash.
  structure::totals measure(shoal::sim::sums& scratch) {
    const arrays a = a_;
    const shoal::sim::sums::ref t = scratch.device();
    scratch.zero();
    shoal::arch::for_each_index(a.nodes, [=] SHOAL_DEVICE(std::size_t i) {
      if (a.node_state[i] != live) return;
      t.add(i < a.free ? 0 : i < a.free + a.pulls ? 1 : 2, 1);
      t.add(4, static_cast<long long>(structure::node_hash(static_cast<std::uint32_t>(i), a.x[i], a.y[i], a.degree[i])));
    });
    shoal::arch::for_each_index(a.springs, [=] SHOAL_DEVICE(std::size_t j) {
      if (a.spring_state[j] != live) return;
      t.add(3, 1);
      t.add(4, static_cast<long long>(structure::spring_hash(static_cast<std::uint32_t>(j))));
    });
    const auto v = scratch.read();
    const auto u = [&](int k) { return static_cast<std::uint64_t>(v[static_cast<std::size_t>(k)]); };
    return {u(0), u(1), u(2), u(3), u(4)};
  }

  /// For the agreement test: the node columns x, y, vx, vy (nodes() each) and the states.
  std::vector<float> node_columns() const { return node_f_.download(); }
  std::vector<std::uint8_t> node_states() const { return node_state_.download(); }
  std::vector<std::uint8_t> spring_states() const { return spring_state_.download(); }
  const arrays& view() const { return a_; }

 private:
  shoal::arch::device_buffer<float> node_f_;
  shoal::arch::device_buffer<std::int32_t> slots_;
  shoal::arch::device_buffer<std::uint32_t> degree_;
  shoal::arch::device_buffer<std::uint8_t> node_state_;
  shoal::arch::device_buffer<std::uint32_t> ends_;
  shoal::arch::device_buffer<float> spring_f_;
  shoal::arch::device_buffer<std::uint8_t> spring_state_;
  structure::parameters p_;
  arrays a_{};
};

}  // namespace structure_baseline
