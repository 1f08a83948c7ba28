// traffic: Nagel–Schreckenberg cars on a random street network, DynaSOAr's traffic benchmark
// on the Shoal heap. The network and the rules live in network.hpp and traffic_model.hpp; this
// file reads the command line, runs the steps and reports (header, progress, CSV, summary,
// --timing).
//
// Exit status: 0 after a run, 2 for a bad command line (including a heap too small for a car on
// every cell, or a CSV file that cannot be written), 1 when the run fails (no usable device).
//
// The step loop never waits for the device: a step's launch and two do-alls are enqueued back to
// back, and the host synchronises only to count the cars for a CSV row and at the end.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "shoal/shoal.hpp"
#include "shoal/sim/sim.hpp"

#include "network.hpp"
#include "traffic_model.hpp"

namespace {

namespace sim = shoal::sim;

/// The app's own flags.
struct options {
  traffic::network_params network;
  traffic::model_params model;
};

/// The flags that define the network and the model, saved in checkpoints.
struct saved_model {
  std::uint64_t intersections, light_period, max_speed;
  double cell_length, producer_ratio, target_ratio, car_probability, slow_probability;
};

/// A resumed run takes the saved flags (-1), unless one was given with another value (status 2).
int adopt_saved(const sim::app_cli& cli, options& o, const saved_model& s) {
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

std::string decimal_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

/// The CSV row of a census: populations, then speeds as an integer sum and a fixed-point mean.
std::vector<sim::csv_value> csv_row(const traffic::census_result& c) {
  const double mean = c.cars == 0 ? 0.0 : static_cast<double>(c.speed_sum) / static_cast<double>(c.cars);
  return {c.cars, c.created, c.removed, c.stopped, c.speed_sum, sim::fixed{mean, 4}};
}

/// Heap the cars of a network of `cells` cells can need at most (a car on every cell), with room
/// for blocks that are only partly full: with this much the run cannot run out of heap.
std::uint64_t heap_bytes_needed(std::uint64_t cells) {
  const auto g = shoal::detail::compute_geometry<traffic::TrafficHeap>();
  const std::uint64_t per_slot = g.block_bytes / g.capacity[traffic::TrafficHeap::type_id<traffic::Car>] + 1;
  return cells * per_slot * 3 / 2 + (std::uint64_t{1} << 20);
}

int run(int argc, char** argv) {
  sim::app_cli cli("traffic",
                   "Nagel-Schreckenberg cars on a random street network (DynaSOAr's traffic benchmark):\n"
                   "producers create cars, cars drive at random through traffic lights and leave at targets.\n"
                   "Same seed and flags: same CSV and checksum, on every run and on both backends.",
                   {.steps = 12000, .seed = 42, .heap_mb = 512});
  options o;
  CLI::App& app = cli.app();
  app.add_option("--intersections", o.network.intersections, "intersections at random points of the unit square")
      ->check(sim::whole_number(2, traffic::cell::max_intersections));
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
      ->check(sim::whole_number(2, traffic::cell::max_limit + 1));
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

  // The network is built on the host before any device work: its size decides the heap needed.
  traffic::network net;
  try {
    net = traffic::generate(o.network);
  } catch (const std::invalid_argument& e) {
    return cli.fail(std::string("--intersections / --cell-length: ") + e.what());
  }
  const std::uint64_t need = heap_bytes_needed(net.cells());
  if (run.heap_mb << 20 < need)
    return cli.fail("a network of " + std::to_string(net.cells()) + " cells needs --heap-mb " +
                    std::to_string((need + (1 << 20) - 1) >> 20) + " or more (got " + std::to_string(run.heap_mb) + ")");
  std::optional<sim::csv_writer> csv;
  if (!run.csv.empty()) {
    try {
      csv.emplace(run.csv, std::vector<std::string>{"cars", "created", "removed", "stopped", "speed_sum", "mean_speed"});
    } catch (const sim::csv_error& e) {
      return cli.fail(std::string("--csv: ") + e.what());
    }
  }
  shoal::arch::require_device();
  // Device memory for the heap and the network: a size the device cannot hold is a bad value too.
  std::optional<traffic::simulation> simulation;
  try {
    simulation.emplace(net, o.model, static_cast<std::size_t>(run.heap_mb) << 20);
  } catch (const shoal::backend_error& e) {
    return cli.fail(std::string("--heap-mb / --intersections / --cell-length: ") + e.what());
  }
  traffic::simulation& model = *simulation;
  shoal::runtime<traffic::TrafficHeap>& rt = model.runtime();
  if (!run.quiet) {
    std::printf("%s\n", sim::header_line("traffic", run,
                                         {{"intersections", std::to_string(o.network.intersections)},
                                          {"cells", std::to_string(net.cells())},
                                          {"streets", std::to_string(net.streets.size())},
                                          {"producers", std::to_string(net.producers.size())},
                                          {"targets", std::to_string(net.targets)},
                                          {"cell_length", decimal_text(o.network.cell_length)},
                                          {"car_probability", decimal_text(o.model.car_probability)},
                                          {"slow_probability", decimal_text(o.model.slow_probability)},
                                          {"light_period", std::to_string(o.model.light_period)},
                                          {"max_speed", std::to_string(o.model.max_speed)}})
                            .c_str());
  }
  std::fflush(stdout);
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      model.load(*r);
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  } else if (csv) {
    csv->row(0, csv_row(model.census()));
  }
  sim::phase_timer timer(run.timing);
  sim::progress bar(run.steps, !run.quiet);
  rt.synchronize();
  const auto began = std::chrono::steady_clock::now();
  const std::uint64_t first = cli.resume_step() + 1;
  for (std::uint64_t step = first; step <= run.steps; ++step) {
    {
      auto phase = timer.phase("produce");
      model.produce();
    }
    {
      auto phase = timer.phase("car.plan");
      model.plan();
    }
    {
      auto phase = timer.phase("car.move");
      model.move();
    }
    model.finish_step();
    if (csv && sim::csv_writer::due(step, run.csv_every, run.steps)) {
      auto phase = timer.phase("csv");
      csv->row(step, csv_row(model.census()));
    }
    if (sim::checkpoint_due(run, step))
      sim::write_checkpoint(run.checkpoint, "traffic", step, run.seed, [&](shoal::checkpoint::writer& w) {
        w.value("traffic.model", saved_model{o.network.intersections, o.model.light_period, o.model.max_speed,
                                             o.network.cell_length, o.network.producer_ratio, o.network.target_ratio,
                                             o.model.car_probability, o.model.slow_probability});
        model.save(w);
      });
    bar.update(step);
  }
  rt.synchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  bar.finish();
  if (csv) csv->close();

  const traffic::census_result last = model.census();
  sim::summary sum;
  sum.steps = run.steps - first + 1;  // run by this invocation
  sum.seconds = seconds;
  sum.populations = {{"cars", last.cars}, {"created", last.created}, {"removed", last.removed},
                     {"stopped", last.stopped}, {"speed_sum", last.speed_sum}};
  sum.checksum = last.checksum;
  std::printf("%s\n", sim::summary_line("traffic", sum).c_str());
  if (run.timing) std::fputs(timer.table().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "traffic: %s\n", e.what());
    return 1;
  }
}
