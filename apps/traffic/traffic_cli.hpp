#pragma once
/// @file
/// The traffic app's command line: the shared options plus the network's and the model's,
/// parsed and checked as far as that needs no device and no network (main.cpp goes on from
/// there). A header of its own so that the command-line fuzz test
/// (tests/backend/cli_fuzz_test.cpp) runs the very same parser in-process.

#include <cstdint>
#include <string>

#include "network.hpp"
#include "shoal/sim/cli.hpp"
#include "traffic_model.hpp"

namespace traffic {

inline constexpr const char* app_description =
    "Nagel-Schreckenberg cars on a random street network (DynaSOAr's traffic benchmark):\n"
    "producers create cars, cars drive at random through traffic lights and leave at targets.\n"
    "Same seed and flags: same CSV and checksum, on every run and on both backends.";
inline constexpr shoal::sim::run_options app_defaults{.steps = 12000, .seed = 42, .heap_mb = 512,
                                                       .features = shoal::sim::app_features::all()};

/// The app's own flags.
struct options {
  network_params network;
  model_params model;
};

/// The flags that define the network and the model, saved in checkpoints.
struct saved_model {
  std::uint64_t intersections, light_period, max_speed;
  double cell_length, producer_ratio, target_ratio, car_probability, slow_probability;
};

/// A resumed run takes the saved flags (-1), unless one was given with another value (status 2).
inline int adopt_saved(const shoal::sim::app_cli& cli, options& o, const saved_model& s) {
  std::uint64_t intersections = o.network.intersections, light_period = o.model.light_period,
                max_speed = o.model.max_speed;
  int rc = cli.adopt("--intersections", intersections, s.intersections);  // stops at the first difference
  if (rc < 0) rc = cli.adopt("--cell-length", o.network.cell_length, s.cell_length);
  if (rc < 0) rc = cli.adopt("--producer-ratio", o.network.producer_ratio, s.producer_ratio);
  if (rc < 0) rc = cli.adopt("--target-ratio", o.network.target_ratio, s.target_ratio);
  if (rc < 0) rc = cli.adopt("--car-probability", o.model.car_probability, s.car_probability);
  if (rc < 0) rc = cli.adopt("--slow-probability", o.model.slow_probability, s.slow_probability);
  if (rc < 0) rc = cli.adopt("--light-period", light_period, s.light_period);
  if (rc < 0) rc = cli.adopt("--max-speed", max_speed, s.max_speed);
  o.network.intersections = static_cast<std::uint32_t>(intersections);
  o.model.light_period = static_cast<std::uint32_t>(light_period);
  o.model.max_speed = static_cast<std::uint32_t>(max_speed);
  return rc;
}

/// Heap the cars of a network of `cells` cells can need at most (a car on every cell), with room
/// for blocks that are only partly full: with this much the run cannot run out of heap.
inline std::uint64_t heap_bytes_needed(std::uint64_t cells) {
  const auto g = shoal::detail::compute_geometry<TrafficHeap>();
  const std::uint64_t per_slot = g.block_bytes / g.capacity[TrafficHeap::type_id<Car>] + 1;
  return cells * per_slot * 3 / 2 + (std::uint64_t{1} << 20);
}

/// Parses and checks the command line of `cli` (made with app_description and app_defaults).
/// Returns -1 when the run should go on, else the exit status (0 after --help, 2 after one line).
inline int parse_command_line(shoal::sim::app_cli& cli, options& o, int argc, const char* const* argv) {
  namespace sim = shoal::sim;
  CLI::App& app = cli.app();
  app.add_option("--intersections", o.network.intersections, "intersections at random points of the unit square")
      ->check(sim::whole_number(2, cell::max_intersections));
  app.add_option("--cell-length", o.network.cell_length, "length of a street cell (the square is 1 wide)")
      ->check(sim::decimal(1e-4, 1.0));
  app.add_option("--producer-ratio", o.network.producer_ratio, "fraction of cells that produce cars")
      ->check(sim::decimal(0.0, 1.0));
  app.add_option("--target-ratio", o.network.target_ratio, "fraction of cells where cars leave")
      ->check(sim::decimal(0.0, 1.0));
  app.add_option("--car-probability", o.model.car_probability,
                 "probability that a free producer cell creates a car in a step")
      ->check(sim::decimal(0.0, 1.0));
  app.add_option("--slow-probability", o.model.slow_probability, "probability of a random slow-down by 1")
      ->check(sim::decimal(0.0, 1.0));
  app.add_option("--light-period", o.model.light_period, "steps between two switches of a traffic light")
      ->check(sim::whole_number(1, 1000000));
  app.add_option("--max-speed", o.model.max_speed,
                 "cars and streets get top speeds of max-speed/2 .. max-speed - 1 cells per step")
      ->check(sim::whole_number(2, cell::max_limit + 1));
  if (const int rc = cli.parse(argc, argv); rc >= 0) return rc;
  const sim::run_options& run = cli.options();
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      if (const int rc = adopt_saved(cli, o, r->value<saved_model>("traffic.model")); rc >= 0) return rc;
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  }
  if (o.network.producer_ratio + o.network.target_ratio > 1.0)
    return cli.fail("--producer-ratio and --target-ratio add up to more than 1");
  o.network.seed = o.model.seed = run.seed;
  o.network.max_speed = o.model.max_speed;
  return -1;
}

}  // namespace traffic
