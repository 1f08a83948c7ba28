#pragma once
/// @file
/// Wa-Tor's command line: the shared options plus --width and --height, parsed and checked as
/// far as that needs no device (main.cpp goes on from there). A header of its own so that the
/// command-line fuzz test (tests/backend/cli_fuzz_test.cpp) runs the very same parser in-process.

#include <algorithm>
#include <cstdint>
#include <string>

#include "shoal/sim/cli.hpp"
#include "wator_model.hpp"

namespace wator {

inline constexpr const char* app_description =
    "Wa-Tor: fish and sharks on a toroidal grid (Dewdney's rules; see the README).\n"
    "Same seed and flags: same CSV and checksum, on every run and on both backends.";
inline constexpr shoal::sim::run_options app_defaults{.steps = 500, .heap_mb = 512,
                                                       .features = shoal::sim::app_features::all()};

/// The grid size (the app's own flags), also saved in checkpoints.
struct grid_size {
  std::uint64_t width = 2048, height = 2560;
};

/// Heap a grid of `cells` needs if every cell held the largest agent, with room for blocks that
/// are only partly full (each block holds one class): 1.5 × the exact fill.
inline std::uint64_t heap_bytes_needed(std::uint64_t cells) {
  const auto g = shoal::detail::compute_geometry<Ocean>();
  const std::uint64_t per_slot =
      std::max(g.block_bytes / g.capacity[Ocean::type_id<Fish>], g.block_bytes / g.capacity[Ocean::type_id<Shark>]) + 1;
  return cells * per_slot * 3 / 2 + (std::uint64_t{1} << 20);
}

/// Parses and checks the command line of `cli` (made with app_description and app_defaults).
/// Returns -1 when the run should go on, else the exit status (0 after --help, 2 after one line).
inline int parse_command_line(shoal::sim::app_cli& cli, grid_size& grid, int argc, const char* const* argv) {
  namespace sim = shoal::sim;
  cli.app().add_option("--width", grid.width, "grid width in cells")->check(sim::whole_number(1, 65536));
  cli.app().add_option("--height", grid.height, "grid height in cells")->check(sim::whole_number(1, 65536));
  if (const int rc = cli.parse(argc, argv); rc >= 0) return rc;
  const sim::run_options& o = cli.options();
  // A resumed run continues the saved grid: its size comes from the checkpoint.
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      const auto saved = r->value<grid_size>("wator.grid");
      if (const int rc = cli.adopt("--width", grid.width, saved.width); rc >= 0) return rc;
      if (const int rc = cli.adopt("--height", grid.height, saved.height); rc >= 0) return rc;
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  }
  const std::uint64_t cells = grid.width * grid.height;
  if (cells > (std::uint64_t{1} << 31))
    return cli.fail("--width " + std::to_string(grid.width) + " --height " + std::to_string(grid.height) +
                    " is more than 2^31 cells");
  const std::uint64_t need = heap_bytes_needed(cells);
  if (o.heap_mb << 20 < need)
    return cli.fail("a " + std::to_string(grid.width) + " x " + std::to_string(grid.height) +
                    " grid needs --heap-mb " + std::to_string((need + (1 << 20) - 1) >> 20) + " or more (got " +
                    std::to_string(o.heap_mb) + ")");
  return -1;
}

}  // namespace wator
