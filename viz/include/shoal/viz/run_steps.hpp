#pragma once
/// @file
/// The step loop every app built on sim::app_cli runs, written once:
///
///   const viz::steps_run done = viz::run_steps(o, "nbody", first, rt, timer, view, count, paint,
///       [&](std::uint64_t) { nbody::step(rt, p, timer); },                         // one step
///       write_row,                                                                  // a CSV row is due
///       [&](shoal::checkpoint::writer& w) { nbody::save_state(w, rt, model); });    // a checkpoint is due
///   if (csv) csv->close();
///
/// Steps `first` to --steps: each step, then the viewer (a closed window ends the run there),
/// the CSV row every --csv-every steps and at the last, the checkpoint when sim::checkpoint_due
/// says so, the progress bar. Then it waits for the device and for the frames (which it moves
/// into --frames) and erases the bar.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "shoal/sim/checkpoints.hpp"
#include "shoal/sim/cli.hpp"
#include "shoal/sim/csv.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "shoal/sim/progress.hpp"
#include "shoal/viz/viewer.hpp"

namespace shoal::viz {

/// What run_steps() reports for the summary line.
struct steps_run {
  std::uint64_t last;  ///< the last step run: --steps, or the one after which the window was closed
  double seconds;      ///< the loop's wall time, the device's work included
};

/// Runs steps `first`..o.steps as the file comment says. `step(s)` runs step s, `csv_row(s)`
/// writes its CSV row, `save(writer&)` adds the model to a checkpoint; `count` and `paint` go
/// to viewer::after_step() when `view` holds a viewer. Returns the last step run and the time.
template <class Runtime, class Count, class Paint, class Step, class Row, class Save>
steps_run run_steps(const sim::run_options& o, const std::string& app, std::uint64_t first, Runtime& rt,
                    sim::phase_timer& timer, std::optional<viewer>& view, Count& count, Paint& paint, Step&& step,
                    Row&& csv_row, Save&& save) {
  sim::progress bar(o.steps, !o.quiet);
  // --timing: the runtime times each of its launches and do-alls by name inside the model's
  // phases, for as long as the steps run.
  rt.time_with(&timer);
  struct untime {
    Runtime& rt;
    ~untime() { rt.time_with(nullptr); }
  } const stop_timing{rt};
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t last = o.steps;
  for (std::uint64_t s = first; s <= o.steps; ++s) {
    step(s);
    if (view && !view->after_step(s, count, paint, &timer)) {  // the window was closed: the run ends here
      last = s;
      bar.update(s);
      break;
    }
    if (!o.csv.empty() && sim::csv_writer::due(s, o.csv_every, o.steps)) csv_row(s);
    if (sim::checkpoint_due(o, s)) sim::write_checkpoint(o.checkpoint, app, s, o.seed, save);
    bar.update(s);
  }
  rt.synchronize();
  if (view) view->finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bar.finish();
  return {last, seconds};
}

}  // namespace shoal::viz
