// barnes_hut: 2-D Barnes–Hut gravity on Shoal (model in barnes_hut_model.hpp).
//
// Reads the command line, creates the bodies with parallel_new, runs the steps with a progress
// bar, writes the CSV time series (step, bodies, cells, kinetic_energy, momentum_x, momentum_y)
// when asked, and prints a run header and a summary line. Exit status: 0 done, 1 run-time
// failure (no device, heap full, I/O), 2 bad command line.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "barnes_hut_cli.hpp"
#include "barnes_hut_model.hpp"
#include "barnes_hut_resume.hpp"
#include "barnes_hut_view.hpp"
#include "shoal/sim/sim.hpp"
#include "shoal/viz/run_steps.hpp"

namespace {

namespace sim = shoal::sim;
namespace bh = barnes_hut;

sim::fixed energy(double v) { return {v, 9}; }

int run(int argc, char** argv) {
  sim::app_cli cli("barnes_hut", bh::app_description, bh::app_defaults);
  bh::model_flags model;
  if (const int rc = bh::parse_command_line(cli, model, argc, argv); rc >= 0) return rc;
  const sim::run_options& o = cli.options();
  const bh::parameters& p = model.p;
  std::optional<sim::csv_writer> csv;
  if (!o.csv.empty()) {
    try {
      csv.emplace(o.csv,
                  std::vector<std::string>{"bodies", "cells", "kinetic_energy", "momentum_x", "momentum_y"});
    } catch (const sim::csv_error& e) {
      return cli.fail(std::string("--csv: ") + e.what());
    }
  }

  if (!o.quiet) {
    char theta[32];
    std::snprintf(theta, sizeof theta, "%g", static_cast<double>(p.theta));
    std::printf("%s\n",
                sim::header_line("barnes_hut", o, {{"bodies", std::to_string(model.bodies)}, {"theta", theta}}).c_str());
  }
  std::fflush(stdout);

  shoal::arch::require_device();
  // Device memory for the heap: a size the device cannot hold is a bad value too.
  std::optional<shoal::runtime<bh::Space>> heap;
  try {
    heap.emplace(o.heap_mb << 20);
  } catch (const shoal::backend_error& e) {
    return cli.fail(std::string("--heap-mb: ") + e.what());
  }
  shoal::runtime<bh::Space>& rt = *heap;
  bh::quadtree tree(model.bodies);
  sim::sums scratch(4);
  sim::census<bh::Space> census(rt);
  sim::phase_timer timer(o.timing);
  auto write_row = [&](std::uint64_t step) {
    const bh::totals t = bh::measure(rt, scratch);
    const std::uint64_t cells = sim::census<bh::Space>::of<bh::Cell>(census.count());
    csv->row(step, {t.bodies, cells, energy(t.kinetic_energy), energy(t.momentum_x), energy(t.momentum_y)});
  };

  const std::uint64_t first = cli.resume_step() + 1;
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      bh::resume(rt, model, *r);  // checks every saved value before loading
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  } else {
    auto t = timer.phase("populate");
    bh::populate(rt, model.bodies, o.seed, p);
  }
  if (csv && first == 1) write_row(0);

  // The viewer (--frames, --window): counts and paints on the device, next to the bodies.
  std::optional<shoal::viz::viewer> view;
  std::optional<bh::view::painter> painter;
  if (shoal::viz::viewer::wanted(o)) {
    try {
      view.emplace(o, bh::view::scene(o));
    } catch (const shoal::viz::window_error& e) {
      return cli.fail(e.what());
    }
    painter.emplace(view->scene(), p.max_mass);
  }
  auto count = [&](unsigned long long* values) { census.count_into(values); };
  auto paint = [&](shoal::viz::canvas_view c, shoal::viz::rect) { painter->paint(rt, c); };
  if (view) view->after_step(first - 1, count, paint);

  const shoal::viz::steps_run done = shoal::viz::run_steps(
      o, "barnes_hut", first, rt, timer, view, count, paint, [&](std::uint64_t) { bh::step(rt, tree, p, timer); }, write_row,
      [&](shoal::checkpoint::writer& w) { bh::save_state(w, rt, tree, model); });
  if (csv) csv->close();

  const bh::totals t = bh::measure(rt, scratch);
  sim::summary sum;
  sum.steps = done.last - first + 1;  // run by this invocation
  sum.seconds = done.seconds;
  sum.populations = {{"bodies", t.bodies}};
  // The kinetic energy in 1e-9 units: equal on one backend run to run, close across backends.
  sum.checksum = static_cast<std::uint64_t>(std::llround(t.kinetic_energy * 1e9));
  std::printf("%s\n", sim::summary_line("barnes_hut", sum).c_str());
  if (o.timing) std::fputs(timer.table().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "barnes_hut: %s\n", e.what());
    return 1;
  }
}
