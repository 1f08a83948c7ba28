#pragma once
/// @file
/// Traffic as a program over MPI ranks (shoal::dist::run_model, `traffic_mpi`): traffic's command
/// line and outputs (traffic_app.hpp), the unit square in strips, one per rank, whose streets'
/// cars each rank holds (traffic_regions.hpp). Its CSV and checksum equal traffic's for the same
/// flags, on any number of ranks. `--checkpoint` writes one part per rank (its cars and cells);
/// resume it with as many ranks. No viewer yet.

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/viz/dist_driver.hpp"
#include "traffic_app.hpp"
#include "traffic_regions.hpp"

namespace traffic {

class regions_app {
 public:
  static constexpr const char* name = app::name;
  static constexpr const char* description =
      "Traffic over MPI ranks (run it with mpirun -np N): the unit square in strips, one per rank;\n"
      "cars migrate with the street they drive on. Same seed and flags: the same CSV and checksum\n"
      "as traffic's, for any number of ranks.";
  static constexpr shoal::sim::run_options defaults = app::defaults;
  using flags = options;

  static void add_flags(shoal::sim::flag_table<options>& t, options& o) { app::add_flags(t, o); }
  static int check(const shoal::sim::app_cli& cli, options& o) { return app::check(cli, o); }

  regions_app(const options& o, const shoal::sim::run_options& run, const shoal::dist::context& ctx)
      : o_(o), ranks_(ctx.size()), net_(build_network(o, run.heap_mb)),
        model_(net_, o_.model, static_cast<std::size_t>(run.heap_mb) << 20, ctx) {}

  shoal::runtime<TrafficHeap>& runtime() { return model_.runtime(); }
  shoal::sim::fields header() const {
    shoal::sim::fields f = header_fields(o_, net_);
    f.emplace_back("ranks", std::to_string(ranks_));
    return f;
  }
  static std::vector<std::string> csv_columns() { return app::csv_columns(); }

  void populate() {}  // the streets start empty; producers make the cars
  void step(std::uint64_t, shoal::sim::phase_timer& timer) {
    {
      auto phase = timer.phase("produce");
      model_.produce();
    }
    {
      auto phase = timer.phase("occupancy (exchange)");
      model_.share_occupancy();
    }
    {
      auto phase = timer.phase("car.plan");
      model_.plan();
    }
    {
      auto phase = timer.phase("car.move");
      model_.move();
    }
    {
      auto phase = timer.phase("migrate");
      model_.migrate();
    }
    model_.finish_step();
  }
  std::vector<shoal::sim::csv_value> csv_row() { return csv_row_of(model_.census()); }
  shoal::sim::summary result() { return summary_of(model_.census()); }

  /// This rank's part of a checkpoint: the flags (as traffic saves them) and its cars.
  void save(shoal::checkpoint::writer& w) {
    w.value("traffic.model", saved_model_of(o_));
    model_.save(w);
  }
  /// Checks this rank's part, then loads it; throws checkpoint_error, changing nothing, for a part
  /// that does not pass.
  void resume(const shoal::checkpoint::reader& r) { model_.load(r); }

 private:
  options o_;
  int ranks_;
  network net_;
  region_simulation model_;
};

}  // namespace traffic
