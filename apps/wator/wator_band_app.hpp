#pragma once
/// @file
/// Wa-Tor as a program over MPI ranks (shoal::dist::run_model, `wator_mpi`): wator's command
/// line and outputs (wator_app.hpp), the grid split in bands of rows (wator_band.hpp). Its CSV
/// and checksum equal wator's for the same flags, on any number of ranks.

#include <cstdint>
#include <string>
#include <type_traits>
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
  static constexpr const char* saved_flags = "wator.grid";  // save() writes the flags there

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
  /// This rank's part of a checkpoint (dist::run_model writes one file per rank): the grid size
  /// and the agents; the band's cells are rebuilt from the agents' `cell` fields on resume.
  void save(shoal::checkpoint::writer& w) {
    w.value("wator.grid", size_);
    rt_.save_heap(w);
  }
  /// Checks this rank's part (check_band_state), then loads it. Throws checkpoint_error, having
  /// changed nothing, for a part that does not pass.
  void resume(const shoal::checkpoint::reader& r) {
    check_band_state(r);
    rt_.load_heap(r);
    ocean_.place_all();
  }

  shoal::sim::summary result() {
    const populations p = ocean_.count();
    shoal::sim::summary s;
    s.populations = {{"fish", p.fish}, {"sharks", p.sharks}};
    s.checksum = p.checksum();
    return s;
  }

 private:
  /// As wator::check_saved_state, for a part: each agent's cell is in this rank's band, no two
  /// agents share one, timers and energies are in range.
  void check_band_state(const shoal::checkpoint::reader& r) const {
    using saved = shoal::checkpoint::saved_heap<Ocean>;
    const saved heap(r);
    const band_grid& g = ocean_.view();
    std::vector<std::uint8_t> taken(std::uint64_t{g.rows} * g.width, 0);
    const auto bad = [&](const std::string& why) { throw shoal::checkpoint_error(heap.name() + " is invalid: " + why); };
    const auto check = [&]<class T>(saved::object o) {
      const std::uint32_t c = heap.read<T>(o, &Agent::cell);
      const std::int32_t timer = heap.read<T>(o, &Agent::timer);
      if (c >= g.size() || !g.owns(c))
        bad("an agent is on cell " + std::to_string(c) + ", outside rows " + std::to_string(g.first_row) + ".." +
            std::to_string(g.first_row + g.rows - 1) + " of this rank");
      if (taken[c - std::uint64_t{g.first_row} * g.width]++ != 0) bad("two agents are on cell " + std::to_string(c));
      if (timer < 0 || timer > max_saved_counter) bad("the agent on cell " + std::to_string(c) + " has timer " + std::to_string(timer));
      if constexpr (std::is_same_v<T, Shark>) {
        const std::int32_t energy = heap.read<Shark>(o, &Shark::energy);
        if (energy < 1 || energy > max_saved_counter)
          bad("the shark on cell " + std::to_string(c) + " has energy " + std::to_string(energy));
      }
    };
    heap.for_each<Fish>([&](saved::object o) { check.template operator()<Fish>(o); });
    heap.for_each<Shark>([&](saved::object o) { check.template operator()<Shark>(o); });
  }

  grid_size size_;
  int ranks_;
  shoal::runtime<Ocean> rt_;
  band_ocean ocean_;
};

}  // namespace wator
