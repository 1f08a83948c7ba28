#pragma once
/// @file
/// The Barnes–Hut app's command line: the shared options plus the model's (DynaSOAr's defaults),
/// parsed and checked as far as that needs no device (main.cpp goes on from there). A header of
/// its own so that tests run the very same parser in-process.

#include <cstdint>
#include <string>

#include "barnes_hut_model.hpp"
#include "shoal/sim/cli.hpp"

namespace barnes_hut {

inline constexpr const char* app_description =
    "Barnes-Hut: 2-D gravity in the box [-1, 1)^2, each body's force from a tree walk over a\n"
    "quadtree of Cell objects created with new in device code every step (opening angle --theta).";
/// 300,000 bodies as DynaSOAr; 200 steps (DynaSOAr runs 4,000), meant to take seconds on an
/// H100: at the start a body's walk makes 242 pulls (214 of cells, 28 of bodies) and opens 88
/// cells, where all pairs would make 300,000 (an estimate until measured there).
inline constexpr shoal::sim::run_options app_defaults{.steps = 200, .heap_mb = 256,
                                                       .features = shoal::sim::app_features::all()};

/// The model's flags, also saved in checkpoints (explicit padding: no undefined bytes in files).
struct model_flags {
  std::uint64_t bodies = 300000;
  parameters p;
  std::uint32_t unused = 0;
};

/// Cells the heap must hold room for per body: a tree of uniformly spread bodies has about 0.7
/// cells per body; clusters make deeper trees, and cells that lose a race are deleted at once.
inline constexpr std::uint64_t cells_per_body = 2;

/// Heap that n bodies and their tree need, with a spare block per class and room for the heap's
/// own tables.
inline std::uint64_t heap_bytes_needed(std::uint64_t bodies) {
  const auto g = shoal::detail::compute_geometry<Space>();
  const std::uint64_t body_blocks = (bodies + g.capacity[Space::type_id<Body>] - 1) / g.capacity[Space::type_id<Body>];
  const std::uint64_t cell_blocks =
      (cells_per_body * bodies + g.capacity[Space::type_id<Cell>] - 1) / g.capacity[Space::type_id<Cell>];
  return (body_blocks + cell_blocks + 2) * (g.block_bytes + 64) + (std::uint64_t{1} << 20);
}

/// Parses and checks the command line of `cli` (made with app_description and app_defaults).
/// Returns -1 when the run should go on, else the exit status (0 after --help, 2 after one line).
inline int parse_command_line(shoal::sim::app_cli& cli, model_flags& m, int argc, const char* const* argv) {
  namespace sim = shoal::sim;
  parameters& p = m.p;
  cli.app().add_option("--bodies", m.bodies, "number of bodies")->check(sim::whole_number(1, 1u << 24));
  cli.app().add_option("--dt", p.dt, "time step")->check(sim::decimal<float>(1e-9, 1.0));
  cli.app().add_option("--gravity", p.gravity, "gravitational constant G")->check(sim::decimal<float>(0.0, 1.0));
  cli.app().add_option("--damping", p.damping, "added to r^2 in the force law G m M / (r^2 + damping)")
      ->check(sim::decimal<float>(1e-6, 1.0));
  cli.app().add_option("--max-mass", p.max_mass, "masses are uniform in [0.5, 1) x max")
      ->check(sim::decimal<float>(1e-6, 1e9));
  cli.app().add_option("--theta", p.theta, "opening angle: a cell of width w at distance d acts whole when w < theta d")
      ->check(sim::decimal<float>(0.0, 2.0));
  if (const int rc = cli.parse(argc, argv); rc >= 0) return rc;
  const sim::run_options& o = cli.options();
  // A resumed run continues with the saved bodies and parameters.
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      const auto saved = r->value<model_flags>("barnes_hut.model");
      int rc = cli.adopt("--bodies", m.bodies, saved.bodies);  // stops at the first difference: one line
      if (rc < 0) rc = cli.adopt("--dt", p.dt, saved.p.dt);
      if (rc < 0) rc = cli.adopt("--gravity", p.gravity, saved.p.gravity);
      if (rc < 0) rc = cli.adopt("--damping", p.damping, saved.p.damping);
      if (rc < 0) rc = cli.adopt("--max-mass", p.max_mass, saved.p.max_mass);
      if (rc < 0) rc = cli.adopt("--theta", p.theta, saved.p.theta);
      if (rc >= 0) return rc;
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  }
  const std::uint64_t need = heap_bytes_needed(m.bodies);
  if (o.heap_mb << 20 < need)
    return cli.fail(std::to_string(m.bodies) + " bodies and their tree need --heap-mb " +
                    std::to_string((need + (1 << 20) - 1) >> 20) + " or more (got " + std::to_string(o.heap_mb) + ")");
  return -1;
}

}  // namespace barnes_hut
