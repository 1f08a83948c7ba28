#pragma once
/// @file
/// The n-body app's command line: the shared options plus the model's, parsed and checked as
/// far as that needs no device (main.cpp goes on from there). A header of its own so that the
/// command-line fuzz test (tests/backend/cli_fuzz_test.cpp) runs the very same parser in-process.

#include <cstdint>
#include <string>

#include "nbody_model.hpp"
#include "shoal/sim/cli.hpp"

namespace nbody {

inline constexpr const char* app_description =
    "N-body: softened 2-D gravity between all pairs of bodies in the unit box,\n"
    "bodies bouncing off its walls; all pairs in shared-memory tiles (runtime.all_pairs).";
inline constexpr shoal::sim::run_options app_defaults{.steps = 3000, .heap_mb = 64,
                                                       .features = shoal::sim::app_features::all()};

/// The model's flags, also saved in checkpoints (explicit padding: no undefined bytes in files).
struct model_flags {
  std::uint64_t bodies = 20000;
  parameters p;
  std::uint32_t unused = 0;
};

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
  cli.app().add_option("--bodies", m.bodies, "number of bodies")->check(sim::whole_number(1, 1u << 24));
  cli.app().add_option("--dt", p.dt, "time step")->check(sim::decimal<float>(1e-9, 1.0));
  cli.app().add_option("--softening", p.softening, "softening length")->check(sim::decimal<float>(1e-6, 1.0));
  cli.app().add_option("--gravity", p.gravity, "gravitational constant G")->check(sim::decimal<float>(0.0, 1.0));
  cli.app().add_option("--max-mass", p.max_mass, "masses are uniform in (0, max]")->check(sim::decimal<float>(1e-6, 1e9));
  cli.app().add_option("--max-speed", p.max_speed, "initial speeds are uniform in [-max, max] per axis")
      ->check(sim::decimal<float>(0.0, 1.0));
  if (const int rc = cli.parse(argc, argv); rc >= 0) return rc;
  const sim::run_options& o = cli.options();
  // A resumed run continues with the saved bodies and parameters.
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      const auto saved = r->value<model_flags>("nbody.model");
      int rc = cli.adopt("--bodies", m.bodies, saved.bodies);  // stops at the first difference: one line
      if (rc < 0) rc = cli.adopt("--dt", p.dt, saved.p.dt);
      if (rc < 0) rc = cli.adopt("--softening", p.softening, saved.p.softening);
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

}  // namespace nbody
