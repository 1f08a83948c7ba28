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

#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "shoal/shoal.hpp"
#include "shoal/sim/sim.hpp"
#include "shoal/viz/run_steps.hpp"

#include "network.hpp"
#include "traffic_cli.hpp"
#include "traffic_model.hpp"
#include "traffic_view.hpp"

namespace {

namespace sim = shoal::sim;

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

int run(int argc, char** argv) {
  sim::app_cli cli("traffic", traffic::app_description, traffic::app_defaults);
  traffic::options o;
  if (const int rc = traffic::parse_command_line(cli, o, argc, argv); rc >= 0) return rc;
  const sim::run_options& run = cli.options();

  // The network is built on the host before any device work: its size decides the heap needed.
  traffic::network net;
  try {
    net = traffic::generate(o.network);
  } catch (const std::invalid_argument& e) {
    return cli.fail(std::string("--intersections / --cell-length: ") + e.what());
  }
  const std::uint64_t need = traffic::heap_bytes_needed(net.cells());
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
  const std::uint64_t first = cli.resume_step() + 1;
  // The viewer (--frames, --window): counts and paints on the device, next to the network.
  std::optional<shoal::viz::viewer> view;
  std::optional<traffic::view::painter> painter;
  if (shoal::viz::viewer::wanted(run)) {
    try {
      view.emplace(run, traffic::view::scene(run));
    } catch (const shoal::viz::window_error& e) {
      return cli.fail(e.what());
    }
    painter.emplace(net, view->scene(), o.model.max_speed);
  }
  auto count = [&](unsigned long long* values) { painter->count(model, values); };
  auto paint = [&](shoal::viz::canvas_view c, shoal::viz::rect) { painter->paint(model, c); };
  if (view) view->after_step(first - 1, count, paint);

  sim::phase_timer timer(run.timing);
  rt.synchronize();  // the loop's time is the steps' alone
  const shoal::viz::steps_run done = shoal::viz::run_steps(
      run, "traffic", first, rt, timer, view, count, paint,
      [&](std::uint64_t) {
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
      },
      [&](std::uint64_t step) {
        auto phase = timer.phase("csv");
        csv->row(step, csv_row(model.census()));
      },
      [&](shoal::checkpoint::writer& w) {
        w.value("traffic.model", traffic::saved_model{o.network.intersections, o.model.light_period, o.model.max_speed,
                                                      o.network.cell_length, o.network.producer_ratio,
                                                      o.network.target_ratio, o.model.car_probability,
                                                      o.model.slow_probability});
        model.save(w);
      });
  if (csv) csv->close();

  const traffic::census_result last = model.census();
  sim::summary sum;
  sum.steps = done.last - first + 1;  // run by this invocation
  sum.seconds = done.seconds;
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
