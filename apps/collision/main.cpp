// collision: bodies that attract each other and merge on Shoal (model in collision_model.hpp).
//
// Reads the command line, creates the bodies with parallel_new, runs the steps with a progress
// bar, writes the CSV time series (step, bodies, mass, kinetic_energy, momentum_x, momentum_y)
// when asked, and prints a run header and a summary line. Exit status: 0 done, 1 run-time
// failure (no device, heap full, I/O), 2 bad command line.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "collision_cli.hpp"
#include "collision_model.hpp"
#include "collision_resume.hpp"
#include "collision_view.hpp"
#include "shoal/sim/sim.hpp"
#include "shoal/viz/run_steps.hpp"

namespace {

namespace sim = shoal::sim;

sim::fixed decimals(double v, int digits) { return {v, digits}; }

int run(int argc, char** argv) {
  sim::app_cli cli("collision", collision::app_description, collision::app_defaults);
  collision::model_flags model;
  if (const int rc = collision::parse_command_line(cli, model, argc, argv); rc >= 0) return rc;
  const sim::run_options& o = cli.options();
  const collision::parameters& p = model.p;
  std::optional<sim::csv_writer> csv;
  if (!o.csv.empty()) {
    try {
      csv.emplace(o.csv,
                  std::vector<std::string>{"bodies", "mass", "kinetic_energy", "momentum_x", "momentum_y"});
    } catch (const sim::csv_error& e) {
      return cli.fail(std::string("--csv: ") + e.what());
    }
  }

  if (!o.quiet)
    std::printf("%s\n", sim::header_line("collision", o, {{"bodies", std::to_string(model.bodies)}}).c_str());
  std::fflush(stdout);

  shoal::arch::require_device();
  // Device memory for the heap: a size the device cannot hold is a bad value too.
  std::optional<shoal::runtime<collision::Space>> heap;
  try {
    heap.emplace(o.heap_mb << 20);
  } catch (const shoal::backend_error& e) {
    return cli.fail(std::string("--heap-mb: ") + e.what());
  }
  shoal::runtime<collision::Space>& rt = *heap;
  sim::sums scratch(5);
  sim::phase_timer timer(o.timing);
  auto write_row = [&](std::uint64_t step) {
    const collision::totals t = collision::measure(rt, scratch);
    csv->row(step, {t.bodies, decimals(t.mass, 6), decimals(t.kinetic_energy, 12), decimals(t.momentum_x, 12),
                    decimals(t.momentum_y, 12)});
  };

  const std::uint64_t first = cli.resume_step() + 1;
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      collision::resume(rt, model, *r);  // checks every saved value before loading
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  } else {
    auto t = timer.phase("populate");
    collision::populate(rt, model.bodies, o.seed, p);
  }
  if (csv && first == 1) write_row(0);

  // The viewer (--frames, --window): counts and paints on the device, next to the bodies.
  std::optional<shoal::viz::viewer> view;
  std::optional<collision::view::painter> painter;
  if (shoal::viz::viewer::wanted(o)) {
    try {
      view.emplace(o, collision::view::scene(o));
    } catch (const shoal::viz::window_error& e) {
      return cli.fail(e.what());
    }
    painter.emplace(view->scene(), p.max_mass);
  }
  sim::census<collision::Space> census(rt);
  auto count = [&](unsigned long long* values) { census.count_into(values); };
  auto paint = [&](shoal::viz::canvas_view c, shoal::viz::rect) { painter->paint(rt, c); };
  if (view) view->after_step(first - 1, count, paint);

  const shoal::viz::steps_run done = shoal::viz::run_steps(
      o, "collision", first, rt, timer, view, count, paint, [&](std::uint64_t) { collision::step(rt, p, timer); }, write_row,
      [&](shoal::checkpoint::writer& w) { collision::save_state(w, rt, model); });
  if (csv) csv->close();

  const collision::totals t = collision::measure(rt, scratch);
  sim::summary sum;
  sum.steps = done.last - first + 1;  // run by this invocation
  sum.seconds = done.seconds;
  sum.populations = {{"bodies", t.bodies}};
  // The kinetic energy in 1e-12 units: equal on one backend run to run, close across backends.
  sum.checksum = static_cast<std::uint64_t>(std::llround(t.kinetic_energy * 1e12));
  std::printf("%s\n", sim::summary_line("collision", sum).c_str());
  if (o.timing) std::fputs(timer.table().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "collision: %s\n", e.what());
    return 1;
  }
}
