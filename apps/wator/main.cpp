// wator: the Wa-Tor predator-prey simulation on Shoal (rules in wator_model.hpp).
//
// Reads the command line, sets up the heap and the grid, runs the steps with a progress bar,
// writes the CSV time series (step, fish, sharks, state_hash) when asked, and prints a run header
// and a summary line. Exit status: 0 done, 1 run-time failure (no device, heap full, I/O), 2 bad
// command line.
//
// The step loop never waits for the device: the four do-alls of a step are enqueued back to
// back, and the host synchronises only to count populations for a CSV row and at the end.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "shoal/sim/sim.hpp"
#include "shoal/viz/run_steps.hpp"
#include "wator_cli.hpp"
#include "wator_model.hpp"
#include "wator_resume.hpp"
#include "wator_view.hpp"

namespace {

namespace sim = shoal::sim;

int run(int argc, char** argv) {
  sim::app_cli cli("wator", wator::app_description, wator::app_defaults);
  wator::grid_size grid;
  if (const int rc = wator::parse_command_line(cli, grid, argc, argv); rc >= 0) return rc;
  const sim::run_options& o = cli.options();
  const std::uint64_t width = grid.width, height = grid.height;
  std::optional<sim::csv_writer> csv;
  if (!o.csv.empty()) {
    try {
      csv.emplace(o.csv, std::vector<std::string>{"fish", "sharks", "state_hash"});
    } catch (const sim::csv_error& e) {
      return cli.fail(std::string("--csv: ") + e.what());
    }
  }

  shoal::arch::require_device();
  // Device memory for the heap and the grid: a size the device cannot hold is a bad value too.
  std::optional<shoal::runtime<wator::Ocean>> heap;
  std::optional<wator::ocean> ocean;
  try {
    heap.emplace(o.heap_mb << 20);
    ocean.emplace(static_cast<std::uint32_t>(width), static_cast<std::uint32_t>(height), o.seed);
  } catch (const shoal::backend_error& e) {
    return cli.fail(std::string("--heap-mb / --width / --height: ") + e.what());
  }
  shoal::runtime<wator::Ocean>& rt = *heap;
  const wator::grid& g = ocean->view();

  if (!o.quiet)
    std::printf("%s\n", sim::header_line("wator", o, {{"width", std::to_string(width)},
                                                      {"height", std::to_string(height)}}).c_str());
  std::fflush(stdout);
  sim::census<wator::Ocean> census(rt);
  shoal::arch::device_buffer<unsigned long long> hash_sum(1);
  sim::phase_timer timer(o.timing);

  auto write_row = [&](std::uint64_t step) {
    const wator::populations p = wator::count(census);
    csv->row(step, {p.fish, p.sharks, wator::state_hash(rt, g, hash_sum)});
  };

  const std::uint64_t first = cli.resume_step() + 1;
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      wator::resume(rt, g, grid, *r);  // checks every saved value before loading
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  } else {
    auto p = timer.phase("populate");
    wator::populate(rt, g);
  }
  if (csv && first == 1) write_row(0);

  // The viewer (--frames, --window): counts and paints on the device, next to the grid.
  std::optional<shoal::viz::viewer> view;
  if (shoal::viz::viewer::wanted(o)) {
    try {
      view.emplace(o, wator::view::scene(o, width, height));
    } catch (const shoal::viz::window_error& e) {
      return cli.fail(e.what());
    }
  }
  auto count = [&](unsigned long long* values) { census.count_into(values); };
  auto paint = [&](shoal::viz::canvas_view c, shoal::viz::rect area) { wator::view::paint(rt, g, c, area); };
  if (view) view->after_step(first - 1, count, paint);

  const shoal::viz::steps_run done = shoal::viz::run_steps(
      o, "wator", first, rt, timer, view, count, paint, [&](std::uint64_t s) { wator::step(rt, g, static_cast<std::uint32_t>(s), timer); }, write_row,
      [&](shoal::checkpoint::writer& w) { wator::save_state(w, rt, g, grid); });
  if (csv) csv->close();

  const wator::populations final_pop = wator::count(census);
  sim::summary sum;
  sum.steps = done.last - first + 1;  // run by this invocation
  sum.seconds = done.seconds;
  sum.populations = {{"fish", final_pop.fish}, {"sharks", final_pop.sharks}};
  sum.checksum = final_pop.checksum();
  std::printf("%s\n", sim::summary_line("wator", sum).c_str());
  if (o.timing) std::fputs(timer.table().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "wator: %s\n", e.what());
    return 1;
  }
}
