#pragma once
/// @file
/// Collision as a program (sim::run_model, shoal/viz/driver.hpp): its flags (--bodies and the
/// parameters, DynaSOAr's defaults), the heap, the CSV row (bodies, mass, kinetic_energy,
/// momentum_x, momentum_y), the summary, checkpoints and the picture. The model is in
/// collision_model.hpp.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collision_model.hpp"
#include "collision_resume.hpp"
#include "collision_view.hpp"
#include "shoal/viz/driver.hpp"

namespace collision {

class app {
 public:
  static constexpr const char* name = "collision";
  static constexpr const char* description =
      "Collision: bodies in the box [-1, 1]^2 attract each other and merge when closer than a\n"
      "radius (the merged-away body is deleted); all pairs in shared-memory tiles (runtime.all_pairs).";
  /// 2,000 steps as DynaSOAr: with its 40,000 bodies a few seconds on an H100 (the pair pass is
  /// n-body's at twice the bodies, and the bodies get fewer as they merge).
  static constexpr shoal::sim::run_options defaults{.steps = 2000, .heap_mb = 16};
  static constexpr const char* sized_by = "--heap-mb";
  using flags = model_flags;
  static constexpr const char* saved_flags = "collision.model";  // save() writes the flags there

  static void add_flags(shoal::sim::flag_table<model_flags>& t, model_flags& m) {
    namespace sim = shoal::sim;
    parameters& p = m.p;
    t.add("--bodies", m.bodies, "number of bodies at the start")->check(sim::whole_number(1, 1u << 24));
    t.add("--dt", p.dt, "time step")->check(sim::decimal<float>(1e-9, 1.0));
    t.add("--merge-radius", p.merge_radius, "bodies closer than this merge")
        ->check(sim::decimal<float>(1e-6, 1.0));
    t.add("--damping", p.damping, "added to the squared distance in the force law")
        ->check(sim::decimal<float>(1e-6, 10.0));
    t.add("--gravity", p.gravity, "gravitational constant G")->check(sim::decimal<float>(0.0, 1.0));
    t.add("--max-mass", p.max_mass, "initial masses are uniform in [max/2, max)")
        ->check(sim::decimal<float>(1e-6, 1e4));
    t.add("--max-speed", p.max_speed, "initial speeds are uniform in [-max, max) per axis")
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
  static std::vector<std::string> csv_columns() {
    return {"bodies", "mass", "kinetic_energy", "momentum_x", "momentum_y"};
  }

  void populate() { collision::populate(rt_, flags_.bodies, seed_, flags_.p); }
  void step(std::uint64_t, shoal::sim::phase_timer& timer) { collision::step(rt_, flags_.p, timer); }
  std::vector<shoal::sim::csv_value> csv_row() {
    using shoal::sim::fixed;
    const totals t = measure(rt_, scratch_);
    return {t.bodies, fixed{t.mass, 6}, fixed{t.kinetic_energy, 12}, fixed{t.momentum_x, 12},
            fixed{t.momentum_y, 12}};
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
  void resume(const shoal::checkpoint::reader& r) { collision::resume(rt_, flags_, r); }

  shoal::viz::scene_spec scene(const shoal::sim::run_options& o) const { return view::scene(o); }
  void show_in(shoal::viz::rect area) { painter_.emplace(area, flags_.p.max_mass); }
  void count(unsigned long long* values) { census_.count_into(values); }
  void paint(shoal::viz::canvas_view c, shoal::viz::rect) { painter_->paint(rt_, c); }

 private:
  model_flags flags_;
  std::uint64_t seed_;
  shoal::runtime<Space> rt_;
  shoal::sim::sums scratch_{5};
  shoal::sim::census<Space> census_{rt_};
  std::optional<view::painter> painter_;  // made by show_in, for the viewer's scene
};

}  // namespace collision
