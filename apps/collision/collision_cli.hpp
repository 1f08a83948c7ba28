#pragma once
/// @file
/// The collision app's command line: the shared options plus the model's (DynaSOAr's defaults),
/// parsed and checked as far as that needs no device. A header of its own so that the
/// command-line fuzz test (tests/backend/cli_fuzz_test.cpp) runs the very same parser in-process.

#include <cstdint>
#include <string>

#include "collision_model.hpp"
#include "shoal/sim/cli.hpp"

namespace collision {

inline constexpr const char* app_description =
    "Collision: bodies in the box [-1, 1]^2 attract each other and merge when closer than a\n"
    "radius (the merged-away body is deleted); all pairs in shared-memory tiles (runtime.all_pairs).";
/// 2,000 steps as DynaSOAr: with its 40,000 bodies a few seconds on an H100 (the pair pass is
/// n-body's at twice the bodies, and the bodies get fewer as they merge).
inline constexpr shoal::sim::run_options app_defaults{.steps = 2000, .heap_mb = 16,
                                                       .features = shoal::sim::app_features::all()};

/// The model's flags, also saved in checkpoints (no padding: no undefined bytes in files).
struct model_flags {
  std::uint64_t bodies = 40000;
  parameters p;
};
static_assert(sizeof(model_flags) == sizeof(std::uint64_t) + sizeof(parameters) && sizeof(parameters) == 6 * sizeof(float));

/// Heap that n bodies need, with a spare block and room for the heap's own tables.
inline std::uint64_t heap_bytes_needed(std::uint64_t bodies) {
  const auto g = shoal::detail::compute_geometry<Space>();
  const std::uint64_t capacity = g.capacity[Space::type_id<Body>];
  return ((bodies + capacity - 1) / capacity + 1) * (g.block_bytes + 64) + (std::uint64_t{1} << 20);
}

/// Parses and checks the command line of `cli` (made with app_description and app_defaults).
/// Returns -1 when the run should go on, else the exit status (0 after --help, 2 after one line).
inline int parse_command_line(shoal::sim::app_cli& cli, model_flags& m, int argc, const char* const* argv) {
  namespace sim = shoal::sim;
  parameters& p = m.p;
  CLI::App& app = cli.app();
  app.add_option("--bodies", m.bodies, "number of bodies at the start")->check(sim::whole_number(1, 1u << 24));
  app.add_option("--dt", p.dt, "time step")->check(sim::decimal<float>(1e-9, 1.0));
  app.add_option("--merge-radius", p.merge_radius, "bodies closer than this merge")
      ->check(sim::decimal<float>(1e-6, 1.0));
  app.add_option("--damping", p.damping, "added to the squared distance in the force law")
      ->check(sim::decimal<float>(1e-6, 10.0));
  app.add_option("--gravity", p.gravity, "gravitational constant G")->check(sim::decimal<float>(0.0, 1.0));
  app.add_option("--max-mass", p.max_mass, "initial masses are uniform in [max/2, max)")
      ->check(sim::decimal<float>(1e-6, 1e4));
  app.add_option("--max-speed", p.max_speed, "initial speeds are uniform in [-max, max) per axis")
      ->check(sim::decimal<float>(0.0, 1.0));
  if (const int rc = cli.parse(argc, argv); rc >= 0) return rc;
  const sim::run_options& o = cli.options();
  // A resumed run continues with the saved bodies and parameters.
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      const auto saved = r->value<model_flags>("collision.model");
      int rc = cli.adopt("--bodies", m.bodies, saved.bodies);  // stops at the first difference: one line
      if (rc < 0) rc = cli.adopt("--dt", p.dt, saved.p.dt);
      if (rc < 0) rc = cli.adopt("--merge-radius", p.merge_radius, saved.p.merge_radius);
      if (rc < 0) rc = cli.adopt("--damping", p.damping, saved.p.damping);
      if (rc < 0) rc = cli.adopt("--gravity", p.gravity, saved.p.gravity);
      if (rc < 0) rc = cli.adopt("--max-mass", p.max_mass, saved.p.max_mass);
      if (rc < 0) rc = cli.adopt("--max-speed", p.max_speed, saved.p.max_speed);
      if (rc >= 0) return rc;
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  }
  const std::uint64_t need = heap_bytes_needed(m.bodies);
  if (o.heap_mb << 20 < need)
    return cli.fail(std::to_string(m.bodies) + " bodies need --heap-mb " +
                    std::to_string((need + (1 << 20) - 1) >> 20) + " or more (got " + std::to_string(o.heap_mb) + ")");
  return -1;
}

}  // namespace collision
