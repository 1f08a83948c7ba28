// sugarscape: Epstein and Axtell's agents on a grid of sugar, on Shoal (rules in
// sugarscape_model.hpp).
//
// Reads the command line, sets up the heap and the grid, runs the steps with a progress bar,
// writes the CSV time series (step, males, females, grid_sugar, agent_sugar, state_hash) when
// asked, and prints a run header and a summary line. Exit status: 0 done, 1 run-time failure
// (no device, heap full, I/O), 2 bad command line.
//
// The step loop never waits for the device: the two launches and six do-alls of a step are
// enqueued back to back, and the host synchronises only for a CSV row and at the end.

#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "shoal/sim/sim.hpp"
#include "shoal/viz/run_steps.hpp"
#include "sugarscape_cli.hpp"
#include "sugarscape_model.hpp"
#include "sugarscape_resume.hpp"
#include "sugarscape_view.hpp"

namespace {

namespace sim = shoal::sim;

int run(int argc, char** argv) {
  sim::app_cli cli("sugarscape", sugarscape::app_description, sugarscape::app_defaults);
  sugarscape::model_flags flags;
  if (const int rc = sugarscape::parse_command_line(cli, flags, argc, argv); rc >= 0) return rc;
  const sim::run_options& o = cli.options();
  std::optional<sim::csv_writer> csv;
  if (!o.csv.empty()) {
    try {
      csv.emplace(o.csv, std::vector<std::string>{"males", "females", "grid_sugar", "agent_sugar", "state_hash"});
    } catch (const sim::csv_error& e) {
      return cli.fail(std::string("--csv: ") + e.what());
    }
  }

  shoal::arch::require_device();
  // Device memory for the heap and the grid: a size the device cannot hold is a bad value too.
  std::optional<shoal::runtime<sugarscape::Scape>> heap;
  std::optional<sugarscape::scape> scape;
  try {
    heap.emplace(o.heap_mb << 20);
    scape.emplace(flags, o.seed);
  } catch (const shoal::backend_error& e) {
    return cli.fail(std::string("--heap-mb / --width / --height: ") + e.what());
  }
  shoal::runtime<sugarscape::Scape>& rt = *heap;
  const sugarscape::world& w = scape->view();

  if (!o.quiet)
    std::printf("%s\n", sim::header_line("sugarscape", o, {{"width", std::to_string(flags.width)},
                                                           {"height", std::to_string(flags.height)}}).c_str());
  std::fflush(stdout);
  sim::census<sugarscape::Scape> census(rt);
  sim::sums sums(5);
  sim::phase_timer timer(o.timing);

  auto write_row = [&](std::uint64_t step) {
    const sugarscape::totals t = sugarscape::measure(rt, w, sums);
    csv->row(step, {t.males, t.females, t.grid_sugar, t.agent_sugar, t.state_hash});
  };

  const std::uint64_t first = cli.resume_step() + 1;
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      sugarscape::resume(rt, w, flags, *r);  // checks every saved value before loading
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  } else {
    auto p = timer.phase("populate");
    sugarscape::populate(rt, w, flags);
  }
  if (csv && first == 1) write_row(0);

  // The viewer (--frames, --window): counts and paints on the device, next to the grid.
  std::optional<shoal::viz::viewer> view;
  if (shoal::viz::viewer::wanted(o)) {
    try {
      view.emplace(o, sugarscape::view::scene(o, flags.width, flags.height));
    } catch (const shoal::viz::window_error& e) {
      return cli.fail(e.what());
    }
  }
  auto count = [&](unsigned long long* values) { census.count_into(values); };
  auto paint = [&](shoal::viz::canvas_view c, shoal::viz::rect area) { sugarscape::view::paint(rt, w, c, area); };
  if (view) view->after_step(first - 1, count, paint);

  const shoal::viz::steps_run done = shoal::viz::run_steps(
      o, "sugarscape", first, rt, timer, view, count, paint, [&](std::uint64_t s) { sugarscape::step(rt, w, static_cast<std::uint32_t>(s), timer); }, write_row,
      [&](shoal::checkpoint::writer& cw) { sugarscape::save_state(cw, rt, w, flags); });
  if (csv) csv->close();

  const sugarscape::totals final_totals = sugarscape::measure(rt, w, sums);
  sim::summary sum;
  sum.steps = done.last - first + 1;  // run by this invocation
  sum.seconds = done.seconds;
  sum.populations = {{"males", final_totals.males}, {"females", final_totals.females}};
  sum.checksum = final_totals.state_hash;
  std::printf("%s\n", sim::summary_line("sugarscape", sum).c_str());
  if (o.timing) std::fputs(timer.table().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "sugarscape: %s\n", e.what());
    return 1;
  }
}
