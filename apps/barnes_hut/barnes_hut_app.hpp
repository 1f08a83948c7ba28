#pragma once
/// @file
/// Barnes–Hut as a program (sim::run_model, shoal/viz/driver.hpp): its flags (--bodies and the
/// parameters, DynaSOAr's defaults), the heap and the quadtree, the CSV row (bodies, cells,
/// kinetic_energy, momentum_x, momentum_y), the summary, checkpoints and the picture. The model
/// is in barnes_hut_model.hpp.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "barnes_hut_model.hpp"
#include "barnes_hut_resume.hpp"
#include "barnes_hut_view.hpp"
#include "shoal/viz/driver.hpp"

namespace barnes_hut {

class app {
 public:
  static constexpr const char* name = "barnes_hut";
  static constexpr const char* description =
      "Barnes-Hut: 2-D gravity in the box [-1, 1)^2, each body's force from a tree walk over a\n"
      "quadtree of Cell objects created with new in device code every step (opening angle --theta).";
  /// 300,000 bodies as DynaSOAr; 200 steps (DynaSOAr runs 4,000), meant to take seconds on an
  /// H100: at the start a body's walk makes 242 pulls (214 of cells, 28 of bodies) and opens 88
  /// cells, where all pairs would make 300,000 (an estimate until measured there).
  static constexpr shoal::sim::run_options defaults{.steps = 200, .heap_mb = 256};
  static constexpr const char* sized_by = "--heap-mb";
  using flags = model_flags;
  static constexpr const char* saved_flags = "barnes_hut.model";  // save() writes the flags there

  static void add_flags(shoal::sim::flag_table<model_flags>& t, model_flags& m) {
    namespace sim = shoal::sim;
    parameters& p = m.p;
    t.add("--bodies", m.bodies, "number of bodies")->check(sim::whole_number(1, 1u << 24));
    t.add("--dt", p.dt, "time step")->check(sim::decimal<float>(1e-9, 1.0));
    t.add("--gravity", p.gravity, "gravitational constant G")->check(sim::decimal<float>(0.0, 1.0));
    t.add("--damping", p.damping, "added to r^2 in the force law G m M / (r^2 + damping)")
        ->check(sim::decimal<float>(1e-6, 1.0));
    t.add("--max-mass", p.max_mass, "masses are uniform in [0.5, 1) x max")
        ->check(sim::decimal<float>(1e-6, 1e9));
    t.add("--theta", p.theta, "opening angle: a cell of width w at distance d acts whole when w < theta d")
        ->check(sim::decimal<float>(0.0, 2.0));
  }

  /// The heap must hold the bodies and their tree (a resumed run has its saved flags by now).
  static int check(const shoal::sim::app_cli& cli, model_flags& m) {
    return cli.require_heap(heap_bytes_needed(m.bodies), std::to_string(m.bodies) + " bodies and their tree need");
  }

  app(const model_flags& m, const shoal::sim::run_options& o)
      : flags_(m), seed_(o.seed), rt_(o.heap_mb << 20), tree_(m.bodies) {}

  shoal::runtime<Space>& runtime() { return rt_; }
  shoal::sim::fields header() const {
    char theta[32];
    std::snprintf(theta, sizeof theta, "%g", static_cast<double>(flags_.p.theta));
    return {{"bodies", std::to_string(flags_.bodies)}, {"theta", theta}};
  }
  static std::vector<std::string> csv_columns() {
    return {"bodies", "cells", "kinetic_energy", "momentum_x", "momentum_y"};
  }

  void populate() { barnes_hut::populate(rt_, flags_.bodies, seed_, flags_.p); }
  void step(std::uint64_t, shoal::sim::phase_timer& timer) { barnes_hut::step(rt_, tree_, flags_.p, timer); }
  std::vector<shoal::sim::csv_value> csv_row() {
    const totals t = measure(rt_, scratch_);
    const std::uint64_t cells = shoal::sim::census<Space>::of<Cell>(census_.count());
    return {t.bodies, cells, energy(t.kinetic_energy), energy(t.momentum_x), energy(t.momentum_y)};
  }
  shoal::sim::summary result() {
    const totals t = measure(rt_, scratch_);
    shoal::sim::summary s;
    s.populations = {{"bodies", t.bodies}};
    // The kinetic energy in 1e-9 units: equal on one backend run to run, close across backends.
    s.checksum = shoal::sim::real_checksum(t.kinetic_energy, 1e9);
    return s;
  }

  void save(shoal::checkpoint::writer& w) { save_state(w, rt_, tree_, flags_); }
  void resume(const shoal::checkpoint::reader& r) { barnes_hut::resume(rt_, flags_, r); }

  shoal::viz::scene_spec scene(const shoal::sim::run_options& o) const { return view::scene(o); }
  void show_in(shoal::viz::rect area) { painter_.emplace(area, flags_.p.max_mass); }
  void count(unsigned long long* values) { census_.count_into(values); }
  void paint(shoal::viz::canvas_view c, shoal::viz::rect) { painter_->paint(rt_, c); }

 private:
  static shoal::sim::fixed energy(double v) { return {v, 9}; }

  model_flags flags_;
  std::uint64_t seed_;
  shoal::runtime<Space> rt_;
  quadtree tree_;
  shoal::sim::sums scratch_{4};
  shoal::sim::census<Space> census_{rt_};
  std::optional<view::painter> painter_;  // made by show_in, for the viewer's scene
};

}  // namespace barnes_hut
