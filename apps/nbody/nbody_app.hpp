#pragma once
/// @file
/// N-body as a program (sim::run_model, shoal/viz/driver.hpp): its flags (--bodies and the
/// parameters), the heap, the CSV row (bodies, kinetic_energy, momentum_x, momentum_y), the
/// summary, checkpoints and the picture. The model is in nbody_model.hpp.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nbody_model.hpp"
#include "nbody_resume.hpp"
#include "nbody_view.hpp"
#include "shoal/viz/driver.hpp"

namespace nbody {

class app {
 public:
  static constexpr const char* name = "nbody";
  static constexpr const char* description =
      "N-body: softened 2-D gravity between all pairs of bodies in the unit box,\n"
      "bodies bouncing off its walls; all pairs in shared-memory tiles (runtime.all_pairs).";
  static constexpr shoal::sim::run_options defaults{.steps = 3000, .heap_mb = 64};
  static constexpr const char* sized_by = "--heap-mb";
  using flags = model_flags;
  static constexpr const char* saved_flags = "nbody.model";  // save() writes the flags there

  static void add_flags(shoal::sim::flag_table<model_flags>& t, model_flags& m) {
    namespace sim = shoal::sim;
    parameters& p = m.p;
    t.add("--bodies", m.bodies, "number of bodies")->check(sim::whole_number(1, 1u << 24));
    t.add("--dt", p.dt, "time step")->check(sim::decimal<float>(1e-9, 1.0));
    t.add("--softening", p.softening, "softening length")->check(sim::decimal<float>(1e-6, 1.0));
    t.add("--gravity", p.gravity, "gravitational constant G")->check(sim::decimal<float>(0.0, 1.0));
    t.add("--max-mass", p.max_mass, "masses are uniform in (0, max]")->check(sim::decimal<float>(1e-6, 1e9));
    t.add("--max-speed", p.max_speed, "initial speeds are uniform in [-max, max] per axis")
        ->check(sim::decimal<float>(0.0, 1.0));
  }

  /// The heap must hold the bodies (a resumed run has its saved flags by now).
  static int check(const shoal::sim::app_cli& cli, model_flags& m) {
    // The bodies never grow in number: their blocks and the heap's tables are all it needs.
    return cli.require_heap(shoal::runtime<Space>::bytes_for<Body>(m.bodies), std::to_string(m.bodies) + " bodies need");
  }

  app(const model_flags& m, const shoal::sim::run_options& o) : flags_(m), seed_(o.seed), rt_(o.heap_mb << 20) {}

  shoal::runtime<Space>& runtime() { return rt_; }
  shoal::sim::fields header() const { return {{"bodies", std::to_string(flags_.bodies)}}; }
  static std::vector<std::string> csv_columns() { return {"bodies", "kinetic_energy", "momentum_x", "momentum_y"}; }

  void populate() { nbody::populate(rt_, flags_.bodies, seed_, flags_.p); }
  void step(std::uint64_t, shoal::sim::phase_timer& timer) { nbody::step(rt_, flags_.p, timer); }
  std::vector<shoal::sim::csv_value> csv_row() {
    const totals t = measure(rt_, scratch_);
    return {t.bodies, energy(t.kinetic_energy), energy(t.momentum_x), energy(t.momentum_y)};
  }
  shoal::sim::summary result() {
    const totals t = measure(rt_, scratch_);
    shoal::sim::summary s;
    s.populations = {{"bodies", t.bodies}};
    // The kinetic energy in 1e-12 units: equal on one backend run to run, close across backends.
    s.checksum = shoal::sim::real_checksum(t.kinetic_energy, 1e12);
    return s;
  }

  void save(shoal::checkpoint::writer& w) { save_state(w, rt_, flags_); }
  void resume(const shoal::checkpoint::reader& r) { nbody::resume(rt_, flags_, r, flags_.bodies); }

  shoal::viz::scene_spec scene(const shoal::sim::run_options& o) const { return view::scene(o); }
  void show_in(shoal::viz::rect area) { painter_.emplace(area, flags_.p.max_mass); }
  void count(unsigned long long* values) { census_.count_into(values); }
  void paint(shoal::viz::canvas_view c, shoal::viz::rect) { painter_->paint(rt_, c); }

 private:
  static shoal::sim::fixed energy(double v) { return {v, 9}; }

  model_flags flags_;
  std::uint64_t seed_;
  shoal::runtime<Space> rt_;
  shoal::sim::sums scratch_{4};
  shoal::sim::census<Space> census_{rt_};
  std::optional<view::painter> painter_;  // made by show_in, for the viewer's scene
};

}  // namespace nbody
