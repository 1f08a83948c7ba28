#pragma once
/// @file
/// The traffic benchmark as a program (sim::run_model, shoal/viz/driver.hpp): its flags (the
/// network's and the model's), the network built on the host, the heap and the simulation, the
/// CSV row (cars, created, removed, stopped, speed_sum, mean_speed), the summary, checkpoints and
/// the picture. The network and the rules are in network.hpp and traffic_model.hpp.
///
/// The step never waits for the device: its launch and two do-alls are enqueued back to back,
/// and the host synchronises only to count the cars for a CSV row and at the end.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "network.hpp"
#include "shoal/viz/driver.hpp"
#include "traffic_model.hpp"
#include "traffic_view.hpp"

namespace traffic {

/// A resumed run takes the saved flags (-1), unless one was given with another value (status 2).
inline int adopt_flags(const shoal::sim::app_cli& cli, options& o, const saved_model& s) {
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

/// A value of the run header: as short as "%g" writes it.
inline std::string decimal_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

/// The network of a run, built on the host; one that cannot be built, or whose cars would not
/// fit a heap of `heap_mb`, is a bad command line (usage_error).
inline network build_network(const options& o, std::uint64_t heap_mb) {
  network net;
  try {
    net = generate(o.network);
  } catch (const std::invalid_argument& e) {
    throw shoal::sim::usage_error(std::string("--intersections / --cell-length: ") + e.what());
  }
  const std::string shortfall = shoal::sim::heap_shortfall(
      heap_bytes_needed(net.cells()), heap_mb, "a network of " + std::to_string(net.cells()) + " cells needs");
  if (!shortfall.empty()) throw shoal::sim::usage_error(shortfall);
  return net;
}

/// The run header's fields: the network's size and the model's flags.
inline shoal::sim::fields header_fields(const options& o, const network& net) {
  return {{"intersections", std::to_string(o.network.intersections)},
          {"cells", std::to_string(net.cells())},
          {"streets", std::to_string(net.streets.size())},
          {"producers", std::to_string(net.producers.size())},
          {"targets", std::to_string(net.targets)},
          {"cell_length", decimal_text(o.network.cell_length)},
          {"car_probability", decimal_text(o.model.car_probability)},
          {"slow_probability", decimal_text(o.model.slow_probability)},
          {"light_period", std::to_string(o.model.light_period)},
          {"max_speed", std::to_string(o.model.max_speed)}};
}

/// The flags a checkpoint keeps ("traffic.model").
inline saved_model saved_model_of(const options& o) {
  return {o.network.intersections, o.model.light_period, o.model.max_speed, o.network.cell_length,
          o.network.producer_ratio, o.network.target_ratio, o.model.car_probability, o.model.slow_probability};
}

/// A CSV row of a census: populations, then speeds as an integer sum and a fixed-point mean.
inline std::vector<shoal::sim::csv_value> csv_row_of(const census_result& c) {
  const double mean = c.cars == 0 ? 0.0 : static_cast<double>(c.speed_sum) / static_cast<double>(c.cars);
  return {c.cars, c.created, c.removed, c.stopped, c.speed_sum, shoal::sim::fixed{mean, 4}};
}

/// The summary line of the last census.
inline shoal::sim::summary summary_of(const census_result& last) {
  shoal::sim::summary s;
  s.populations = {{"cars", last.cars}, {"created", last.created}, {"removed", last.removed},
                   {"stopped", last.stopped}, {"speed_sum", last.speed_sum}};
  s.checksum = last.checksum;
  return s;
}

class app {
 public:
  static constexpr const char* name = "traffic";
  static constexpr const char* description =
      "Nagel-Schreckenberg cars on a random street network (DynaSOAr's traffic benchmark):\n"
      "producers create cars, cars drive at random through traffic lights and leave at targets.\n"
      "Same seed and flags: same CSV and checksum, on every run and on both backends.";
  static constexpr shoal::sim::run_options defaults{.steps = 12000, .seed = 42, .heap_mb = 512};
  static constexpr const char* sized_by = "--heap-mb / --intersections / --cell-length";
  using flags = options;

  static void add_flags(shoal::sim::flag_table<options>& t, options& o) {
    namespace sim = shoal::sim;
    t.add("--intersections", o.network.intersections, "intersections at random points of the unit square")
        ->check(sim::whole_number(2, cell::max_intersections));
    t.add("--cell-length", o.network.cell_length, "length of a street cell (the square is 1 wide)")
        ->check(sim::decimal(1e-4, 1.0));
    t.add("--producer-ratio", o.network.producer_ratio, "fraction of cells that produce cars")
        ->check(sim::decimal(0.0, 1.0));
    t.add("--target-ratio", o.network.target_ratio, "fraction of cells where cars leave")
        ->check(sim::decimal(0.0, 1.0));
    t.add("--car-probability", o.model.car_probability,
                   "probability that a free producer cell creates a car in a step")
        ->check(sim::decimal(0.0, 1.0));
    t.add("--slow-probability", o.model.slow_probability, "probability of a random slow-down by 1")
        ->check(sim::decimal(0.0, 1.0));
    t.add("--light-period", o.model.light_period, "steps between two switches of a traffic light")
        ->check(sim::whole_number(1, 1000000));
    t.add("--max-speed", o.model.max_speed,
                   "cars and streets get top speeds of max-speed/2 .. max-speed - 1 cells per step")
        ->check(sim::whole_number(2, cell::max_limit + 1));
  }

  /// A resumed run continues the saved network and model (their flags come from the checkpoint).
  static int check(const shoal::sim::app_cli& cli, options& o) {
    const shoal::sim::run_options& run = cli.options();
    const auto adopt = [&](const saved_model& saved) { return adopt_flags(cli, o, saved); };
    if (const int rc = cli.adopt_saved<saved_model>("traffic.model", adopt); rc >= 0) return rc;
    if (o.network.producer_ratio + o.network.target_ratio > 1.0)
      return cli.fail("--producer-ratio and --target-ratio add up to more than 1");
    o.network.seed = o.model.seed = run.seed;
    o.network.max_speed = o.model.max_speed;
    return -1;
  }

  /// The network is built on the host before any device work: its size decides the heap
  /// needed, and one that cannot be built, or does not fit the heap, is a bad command line.
  app(const options& o, const shoal::sim::run_options& run)
      : o_(o), net_(build_network(o, run.heap_mb)), model_(net_, o_.model, static_cast<std::size_t>(run.heap_mb) << 20) {}

  shoal::runtime<TrafficHeap>& runtime() { return model_.runtime(); }
  shoal::sim::fields header() const { return header_fields(o_, net_); }
  static std::vector<std::string> csv_columns() {
    return {"cars", "created", "removed", "stopped", "speed_sum", "mean_speed"};
  }

  void step(std::uint64_t, shoal::sim::phase_timer& timer) {
    {
      auto phase = timer.phase("produce");
      model_.produce();
    }
    {
      auto phase = timer.phase("car.plan");
      model_.plan();
    }
    {
      auto phase = timer.phase("car.move");
      model_.move();
    }
    model_.finish_step();
  }
  std::vector<shoal::sim::csv_value> csv_row() { return csv_row_of(model_.census()); }
  shoal::sim::summary result() { return summary_of(model_.census()); }

  void save(shoal::checkpoint::writer& w) {
    w.value("traffic.model", saved_model_of(o_));
    model_.save(w);
  }
  void resume(const shoal::checkpoint::reader& r) { model_.load(r); }

  shoal::viz::scene_spec scene(const shoal::sim::run_options& o) const { return view::scene(o); }
  /// The painter places every cell of the network in the scene's area once, on the host.
  void show_in(shoal::viz::rect area) { painter_.emplace(net_, area, o_.model.max_speed); }
  void count(unsigned long long* values) { painter_->count(model_, values); }
  void paint(shoal::viz::canvas_view c, shoal::viz::rect) { painter_->paint(model_, c); }

 private:
  options o_;
  network net_;  // the header and the painter read it
  simulation model_;
  std::optional<view::painter> painter_;
};

}  // namespace traffic
