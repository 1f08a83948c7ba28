#pragma once
/// @file
/// Wa-Tor as a program over MPI ranks (shoal::dist::run_model, `wator_mpi`): wator's command
/// line and outputs (wator_app.hpp), the grid split in bands of rows (wator_band.hpp). Its CSV
/// and checksum equal wator's for the same flags, on any number of ranks.

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/viz/dist_driver.hpp"
#include "wator_app.hpp"
#include "wator_band.hpp"

namespace wator {

class band_app {
 public:
  static constexpr const char* name = app::name;
  static constexpr const char* description =
      "Wa-Tor over MPI ranks (run it with mpirun -np N): the grid in bands of rows, one per rank.\n"
      "Same seed and flags: the same CSV and checksum as wator's, for any number of ranks.";
  static constexpr shoal::sim::run_options defaults = app::defaults;
  using flags = grid_size;

  static void add_flags(shoal::sim::flag_table<grid_size>& t, grid_size& grid) { app::add_flags(t, grid); }
  /// As wator's check, and every rank's band must have a row.
  static int check(const shoal::sim::app_cli& cli, grid_size& grid) { return app::check(cli, grid); }

  band_app(const grid_size& size, const shoal::sim::run_options& o, const shoal::dist::context& ctx)
      : size_(size), ranks_(ctx.size()), rt_(o.heap_mb << 20),
        ocean_(rt_, ctx, static_cast<std::uint32_t>(size.width), static_cast<std::uint32_t>(size.height), o.seed) {}

  shoal::runtime<Ocean>& runtime() { return rt_; }
  shoal::sim::fields header() const {
    return {{"width", std::to_string(size_.width)}, {"height", std::to_string(size_.height)}, {"ranks", std::to_string(ranks_)}};
  }
  static std::vector<std::string> csv_columns() { return app::csv_columns(); }

  void populate() { ocean_.populate(); }
  void step(std::uint64_t s, shoal::sim::phase_timer& timer) { ocean_.step(static_cast<std::uint32_t>(s), timer); }
  std::vector<shoal::sim::csv_value> csv_row() {
    const populations p = ocean_.count();
    return {p.fish, p.sharks, ocean_.state_hash()};
  }
  shoal::sim::summary result() {
    const populations p = ocean_.count();
    shoal::sim::summary s;
    s.populations = {{"fish", p.fish}, {"sharks", p.sharks}};
    s.checksum = p.checksum();
    return s;
  }

 private:
  grid_size size_;
  int ranks_;
  shoal::runtime<Ocean> rt_;
  band_ocean ocean_;
};

}  // namespace wator
