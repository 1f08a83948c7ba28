// traffic: Nagel–Schreckenberg cars on a random street network, DynaSOAr's traffic benchmark
// on the Shoal heap. The network and the rules live in network.hpp and traffic_model.hpp; this
// file reads the command line, runs the steps and reports (header, progress, CSV, summary,
// --timing).
//
// Exit status: 0 after a run, 2 for a bad command line, 1 when the run fails (no usable device,
// heap too small for the cars, CSV file not writable).

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

struct options {
  traffic::network_params network;
  traffic::model_params model;
};

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

int run(const sim::run_options& run, const options& o) {
  const auto& device = shoal::arch::probe_device();
  if (!device.usable) {
    std::fprintf(stderr, "traffic: no usable device: %s\n", device.reason.c_str());
    return 1;
  }
  if (!run.quiet)
    std::printf("%s\n", sim::header_line("traffic", run,
                                         {{"intersections", std::to_string(o.network.intersections)},
                                          {"cell_length", decimal_text(o.network.cell_length)},
                                          {"producer_ratio", decimal_text(o.network.producer_ratio)},
                                          {"target_ratio", decimal_text(o.network.target_ratio)},
                                          {"car_probability", decimal_text(o.model.car_probability)},
                                          {"slow_probability", decimal_text(o.model.slow_probability)},
                                          {"light_period", std::to_string(o.model.light_period)},
                                          {"max_speed", std::to_string(o.model.max_speed)}})
                            .c_str());
  const traffic::network net = traffic::generate(o.network);
  if (!run.quiet)
    std::printf("traffic: network cells=%llu streets=%zu producers=%zu targets=%llu\n",
                static_cast<unsigned long long>(net.cells()), net.streets.size(), net.producers.size(),
                static_cast<unsigned long long>(net.targets));
  std::fflush(stdout);

  traffic::simulation model(net, o.model, static_cast<std::size_t>(run.heap_mb) << 20);
  std::optional<sim::csv_writer> csv;
  if (!run.csv.empty()) {
    csv.emplace(run.csv, std::vector<std::string>{"cars", "created", "removed", "stopped", "speed_sum", "mean_speed"});
    csv->row(0, csv_row(model.census()));
  }
  sim::phase_timer timer(run.timing);
  sim::progress bar(run.steps, !run.quiet);
  shoal::runtime<traffic::TrafficHeap>& rt = model.runtime();
  rt.synchronize();
  const auto began = std::chrono::steady_clock::now();
  for (std::uint64_t step = 1; step <= run.steps; ++step) {
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
    bar.update(step);
  }
  rt.synchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  bar.finish();
  if (csv) csv->close();
  const traffic::census_result last = model.census();
  std::printf("%s\n", sim::summary_line("traffic", {run.steps,
                                                    seconds,
                                                    {{"cars", last.cars},
                                                     {"created", last.created},
                                                     {"removed", last.removed},
                                                     {"stopped", last.stopped},
                                                     {"speed_sum", last.speed_sum}},
                                                    last.checksum})
                          .c_str());
  if (run.timing) std::fputs(timer.table().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sim::app_cli cli("traffic",
                   "Nagel-Schreckenberg cars on a random street network (DynaSOAr's traffic benchmark): "
                   "producers create cars, cars drive at random through traffic lights and leave at targets.",
                   {.steps = 12000, .seed = 42, .heap_mb = 256});
  options o;
  CLI::App& app = cli.app();
  app.add_option("--intersections", o.network.intersections, "intersections at random points of the unit square")
      ->check(sim::whole_number(2, traffic::cell::max_intersections));
  app.add_option("--cell-length", o.network.cell_length, "length of a street cell (the unit square is 1 wide)")
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
                 "cars and streets get maximum speeds of max-speed/2 .. max-speed - 1 cells per step")
      ->check(sim::whole_number(2, traffic::cell::max_limit + 1));
  if (const int rc = cli.parse(argc, argv); rc >= 0) return rc;
  const sim::run_options& run_opts = cli.options();
  if (o.network.producer_ratio + o.network.target_ratio > 1.0)
    return cli.fail("--producer-ratio and --target-ratio add up to more than 1");
  o.network.seed = o.model.seed = run_opts.seed;
  o.network.max_speed = o.model.max_speed;
  try {
    return run(run_opts, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "traffic: %s\n", e.what());
    return 1;
  }
}
