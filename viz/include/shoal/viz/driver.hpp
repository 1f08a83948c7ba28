#pragma once
/// @file
/// The app driver: a model is a class, and its program is one line.
///
///   int main(int argc, char** argv) { return shoal::sim::run_model<wator::app>(argc, argv); }
///
/// run_model() owns the run: the command line (the shared flags plus the model's own), the
/// checks of every output before step 1, the heap, resume or populate, the step loop with its
/// progress bar, the CSV time series, checkpoints, the viewer, the run header and summary line,
/// --timing, error messages and exit status (0 done, 1 run-time failure, 2 bad command line).
///
/// A model describes itself with a class (see the tutorial's step 5 and the apps):
///
///   struct app {
///     static constexpr const char* name = "wator";           // program name and output prefix
///     static constexpr const char* description = "...";      // --help's first lines
///     static constexpr sim::run_options defaults{.steps = 500, .heap_mb = 512};
///     static constexpr const char* sized_by = "--heap-mb / --width";  // optional: the flags named
///                                                            //   when the constructor's memory fails
///     struct flags { std::uint64_t width = 2048; };          // the model's own command-line values
///     static void add_flags(sim::flag_table<flags>& t, flags& f) {  // each flag once:
///       t.add("--width", f.width, "grid width")->check(sim::whole_number(1, 65536));
///     }
///     static constexpr const char* saved_flags = "wator.grid";  // optional: on --resume, the flags
///                                                            //   come from the flags save() wrote here
///     static int check(const sim::app_cli& cli, flags& f);   // optional: after parsing; -1 goes on,
///                                                            //   else an exit status (cli.fail(...))
///     app(const flags& f, const sim::run_options& o);        // the heap and the model's device state;
///                                                            //   may throw sim::usage_error (status 2)
///     shoal::runtime<Heap>& runtime();
///     sim::fields header() const;                            // sizes for the run header
///     static std::vector<std::string> csv_columns();         // after "step"
///     void populate();                                       // optional: a fresh run's agents
///     void step(std::uint64_t s, sim::phase_timer& timer);   // step s (1, 2, ...)
///     std::vector<sim::csv_value> csv_row();                 // the row of the state now
///     sim::summary result();                                 // populations and checksum at the end
///     // optional, offers --checkpoint, --checkpoint-every and --resume:
///     void save(shoal::checkpoint::writer& w);
///     void resume(const shoal::checkpoint::reader& r);       // checks every value before loading
///     // optional, offers --frames and --window:
///     viz::scene_spec scene(const sim::run_options& o) const;
///     void count(unsigned long long* values);                // the chart's values, on the device
///     void paint(viz::canvas_view c, viz::rect area);        // the scene into `area` of c
///     void show_in(viz::rect area);                          // optional: called once, before counting
///   };
///
/// A flag the model does not support is not on its command line: a model without save/resume
/// offers no --checkpoint, one without scene/count/paint no --frames or --window.

#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "shoal/shoal.hpp"
#include "shoal/sim/sim.hpp"
#include "shoal/viz/run_steps.hpp"
#include "shoal/viz/viewer.hpp"

namespace shoal::sim {

/// Whether a model saves and resumes (offers --checkpoint, --checkpoint-every, --resume).
template <class Model>
concept model_with_checkpoints = requires(Model& m, checkpoint::writer& w, const checkpoint::reader& r) {
  m.save(w);
  m.resume(r);
};

/// Whether a model can be watched (offers --frames and --window).
template <class Model>
concept model_with_view = requires(Model& m, const Model& cm, const run_options& o, unsigned long long* v,
                                   viz::canvas_view c, viz::rect a) {
  { cm.scene(o) } -> std::convertible_to<viz::scene_spec>;
  m.count(v);
  m.paint(c, a);
};

/// A model that registers every pointer array it keeps outside the heap with its runtime
/// (runtime::register_pointers) says so with `static constexpr bool defragmentable = true`, and
/// offers --defrag-every: pointers to moved objects anywhere else would be stale.
template <class Model>
concept model_with_defrag = requires { requires Model::defragmentable; };

/// The shared options a model offers: its defaults, with the features it supports.
template <class Model>
constexpr run_options model_defaults() {
  run_options o = Model::defaults;
  o.features = {model_with_checkpoints<Model>, model_with_view<Model>, model_with_view<Model>, model_with_defrag<Model>};
  return o;
}

/// Parses and checks a model's command line on `cli` (made with model_defaults<Model>()):
/// the shared flags, the model's (Model::add_flags), on --resume the model's flags saved under
/// Model::saved_flags, and its own checks (Model::check). Returns
/// -1 when the run should go on, else the exit status (0 after --help, 2 after one error line).
/// A function of its own so that tests run the very parser of the program.
template <class Model>
int parse_model_command_line(app_cli& cli, typename Model::flags& flags, int argc, const char* const* argv) {
  flag_table<typename Model::flags> table(cli.app(), flags);
  Model::add_flags(table, flags);
  if (const int rc = cli.parse(argc, argv); rc >= 0) return rc;
  // A resumed run takes the model's flags from the checkpoint, where save() put them.
  if constexpr (requires { Model::saved_flags; }) {
    const auto adopt = [&](const typename Model::flags& saved) { return table.adopt(cli, saved); };
    if (const int rc = cli.adopt_saved<typename Model::flags>(Model::saved_flags, adopt); rc >= 0) return rc;
  }
  if constexpr (requires { { Model::check(cli, flags) } -> std::same_as<int>; }) return Model::check(cli, flags);
  return -1;
}

namespace detail {

template <class Model>
int run_model(int argc, char** argv) {
  app_cli cli(Model::name, Model::description, model_defaults<Model>());
  typename Model::flags flags;
  if (const int rc = parse_model_command_line<Model>(cli, flags, argc, argv); rc >= 0) return rc;
  const run_options& o = cli.options();
  std::optional<csv_writer> csv;
  if (!o.csv.empty()) {
    try {
      csv.emplace(o.csv, Model::csv_columns());
    } catch (const csv_error& e) {
      return cli.fail(std::string("--csv: ") + e.what());
    }
  }

  arch::require_device();
  // Device memory for the heap and the model: a size the device cannot hold is a bad value too.
  std::optional<Model> made;
  try {
    made.emplace(flags, o);
  } catch (const usage_error& e) {
    return cli.fail(e.what());
  } catch (const backend_error& e) {
    if constexpr (requires { Model::sized_by; })
      return cli.fail(std::string(Model::sized_by) + ": " + e.what());
    else
      return cli.fail(std::string("--heap-mb: ") + e.what());
  }
  Model& model = *made;
  auto& rt = model.runtime();
  if (!o.quiet) std::printf("%s\n", header_line(Model::name, o, model.header()).c_str());
  std::fflush(stdout);

  phase_timer timer(o.timing);
  const std::uint64_t first = cli.resume_step() + 1;
  if (const checkpoint::reader* r = cli.resume()) {
    if constexpr (model_with_checkpoints<Model>) {
      try {
        model.resume(*r);
      } catch (const checkpoint_error& e) {
        return cli.fail(std::string("--resume: ") + e.what());
      }
    }
  } else if constexpr (requires { model.populate(); }) {
    auto phase = timer.phase("populate");
    model.populate();
  }
  if (csv && first == 1) csv->row(0, model.csv_row());

  // The viewer (--frames, --window): counts and paints on the device.
  std::optional<viz::viewer> view;
  auto count = [&](unsigned long long* values) {
    if constexpr (model_with_view<Model>) model.count(values);
  };
  auto paint = [&](viz::canvas_view c, viz::rect area) {
    if constexpr (model_with_view<Model>) model.paint(c, area);
  };
  if constexpr (model_with_view<Model>) {
    if (viz::viewer::wanted(o)) {
      try {
        view.emplace(o, model.scene(o));
      } catch (const viz::window_error& e) {
        return cli.fail(e.what());
      }
      if constexpr (requires { model.show_in(view->scene()); }) model.show_in(view->scene());
      view->after_step(first - 1, count, paint);
    }
  }

  rt.synchronize();  // the loop's time is the steps' alone
  const viz::steps_run done = viz::run_steps(
      o, Model::name, first, rt, timer, view, count, paint,
      [&](std::uint64_t s) {
        model.step(s, timer);
        // The step number decides, so a resumed run defragments where the whole run did.
        if constexpr (model_with_defrag<Model>)
          if (o.defrag_every != 0 && s % o.defrag_every == 0) rt.defragment();
      },
      [&](std::uint64_t s) {
        auto phase = timer.phase("csv");
        csv->row(s, model.csv_row());
      },
      [&](checkpoint::writer& w) {
        if constexpr (model_with_checkpoints<Model>) model.save(w);
      });
  if (csv) csv->close();

  summary sum = model.result();
  sum.steps = done.last - first + 1;  // run by this invocation
  sum.seconds = done.seconds;
  std::printf("%s\n", summary_line(Model::name, sum).c_str());
  if (o.timing) std::fputs(timer.table().c_str(), stdout);
  return 0;
}

}  // namespace detail

/// Runs the model's program as the file comment says; main() is `return run_model<M>(argc, argv);`.
/// Exit status 0 after a run (or --help), 2 for a bad command line (one line on stderr, before
/// any device work), 1 when the run fails (no usable device, heap full, I/O; one line on stderr).
template <class Model>
int run_model(int argc, char** argv) {
  try {
    return detail::run_model<Model>(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", Model::name, e.what());
    return 1;
  }
}

}  // namespace shoal::sim
