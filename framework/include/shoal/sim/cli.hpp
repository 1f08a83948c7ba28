#pragma once
/// @file
/// The command line every simulation app shares (CLI11), plus the app's own options:
///
///   shoal::sim::app_cli cli("wator", "Wa-Tor predator-prey simulation.", {.steps = 500, .heap_mb = 1024});
///   std::uint64_t width = 2048;
///   cli.app().add_option("--width", width, "grid width in cells")->check(sim::whole_number(1, 65536));
///   if (const int rc = cli.parse(argc, argv); rc >= 0) return rc;   // --help: 0, bad input: 2
///   const sim::run_options& run = cli.options();
///   if (too_big) return cli.fail("--width 65536 --height 65536 needs more than --heap-mb 1024");
///
/// Every mistake on the command line (unknown flag, missing value, non-number, negative, zero
/// where a count must be positive, out of range) gives one line on stderr, "<app>: error: ...",
/// and exit status 2. `--help` lists every option with its default.
///
/// The viewer (viz/): `--frames DIR` writes PNG frames every `--frame-every N` steps (DIR is
/// created, and must be writable: checked here, before any device work), `--window` shows the
/// run in an SDL2 window; `--frame-size WxH` and `--overlay` shape both.
///
/// An app offers the viewer's and the checkpoints' flags only when its defaults say it implements
/// them (run_options::features, e.g. `.features = sim::app_features::all()`); given to an app
/// that does not, such a flag is one line: "--checkpoint: <app> writes no checkpoints".
///
/// Checkpoints (checkpoints.hpp): `--checkpoint FILE` writes one after the last step and, with
/// `--checkpoint-every N`, every N steps; `--resume FILE` continues a saved run up to `--steps`
/// in all. parse() opens the --resume file at once, so a missing, damaged or foreign checkpoint
/// is a bad command line too (status 2, one line).

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "shoal/checkpoint/file.hpp"
#include "shoal/sim/checkpoints.hpp"
#include "shoal/sim/csv.hpp"
#include "shoal/sim/paths.hpp"

namespace shoal::sim {

/// What an app implements beyond steps, seed, heap, CSV, quiet and timing. Only the flags of
/// what it implements are offered: an app that writes no checkpoints has no --checkpoint (a
/// user who gives it gets "--checkpoint: not an option of <app>"), rather than a flag that
/// exits 0 without writing a file.
struct app_features {
  bool checkpoints = false;  ///< --checkpoint, --checkpoint-every, --resume
  bool frames = false;       ///< --frames, --frame-every (and --frame-size, --overlay)
  bool window = false;       ///< --window, --screenshot-at (and --frame-size, --overlay)
  bool defrag = false;       ///< --defrag-every (the model registers its pointer arrays)
  /// Everything the shared command line offers.
  static constexpr app_features all() { return {true, true, true, true}; }
};

/// The options every app has. Defaults for steps and heap size are the app's.
struct run_options {
  std::uint64_t steps = 100;      ///< steps of the whole run, those before a --resume included
  std::uint64_t seed = 1;         ///< random seed: same seed and flags, same run
  std::uint64_t heap_mb = 256;    ///< object heap size in MiB of device memory
  std::string csv;                ///< time series file ("": none)
  std::uint64_t csv_every = 1;    ///< CSV row every N steps (and steps 0 and last)
  std::string frames;             ///< PNG frames directory ("": none)
  std::uint64_t frame_every = 1;  ///< frame (and chart sample) every N steps
  /// --frame-size width (0: the app's default)
  std::uint32_t frame_width = 0, frame_height = 0;  ///< --frame-size (0: the app's default)
  std::string overlay = "full";   ///< full | stable (no steps/s: reproducible frames) | none
  bool window = false;            ///< show the run in an SDL2 window
  std::uint64_t screenshot_at = 0;  ///< --window: save the window's picture after this step (0: never)
  bool quiet = false;             ///< no header and no progress bar: only the summary line
  bool timing = false;            ///< print the time spent in each phase at the end
  std::string checkpoint;          ///< checkpoint file written after the last step ("": none)
  std::uint64_t checkpoint_every = 0;  ///< and every N steps (0: only after the last)
  std::string resume;              ///< checkpoint to continue from ("": a fresh run)
  std::uint64_t defrag_every = 0;  ///< defragment the heap after every N steps (0: never)
  app_features features{};         ///< set in the app's defaults: which flags it offers
};

/// True when a checkpoint is due after `step`: every --checkpoint-every steps and after the last.
inline bool checkpoint_due(const run_options& run, std::uint64_t step) {
  return !run.checkpoint.empty() &&
         (step == run.steps || (run.checkpoint_every != 0 && step % run.checkpoint_every == 0));
}

/// Largest --steps and --*-every accepted: beyond this a run would not finish anyway, and a
/// typo (an extra zero or two) is more likely than intent.
inline constexpr std::uint64_t max_steps = 1'000'000'000;
/// Largest --heap-mb: 1 TiB, beyond any device memory.
inline constexpr std::uint64_t max_heap_mb = std::uint64_t{1} << 20;

/// CLI11 check: a whole number in [lo, hi], written in decimal digits only (no sign, no
/// exponent), so that "-5", "1e6", "12abc" and "0x10" are refused with the same clear message.
inline CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || ec != std::errc{} || ptr != end || v < lo || v > hi)
          return "needs a whole number in " + range + ", got '" + text + "'";
        return {};
      },
      range, "whole_number");
}

/// CLI11 check: a finite decimal number in [lo, hi] ("0.02", "1e-3") that the option's type
/// T stores as given: a value too small or too large for T (1e-50 in a float becomes 0, 1e-400
/// is 0 even as a double) is refused, not rounded to 0 or infinity.
template <class T = double>
CLI::Validator decimal(double lo, double hi) {
  static_assert(std::is_floating_point_v<T>);
  const std::string range = CLI::detail::to_string(lo) + ".." + CLI::detail::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (ec == std::errc::result_out_of_range && ptr == end) {
          const bool tiny = text.find("e-") != std::string::npos || text.find("E-") != std::string::npos;
          return "'" + text + "' is out of range: " + (tiny ? "too close to 0" : "too large") +
                 " to be stored; needs a number in " + range;
        }
        if (text.empty() || ec != std::errc{} || ptr != end || !(v >= lo && v <= hi))
          return "needs a number in " + range + ", got '" + text + "'";
        const T stored = static_cast<T>(v);
        if (v != 0 && (stored == 0 || !std::isnormal(stored) || std::isinf(stored)))
          return "'" + text + "' is out of range: too close to 0 to be stored (needs 0 or at least " +
                 CLI::detail::to_string(static_cast<double>(std::numeric_limits<T>::min())) + ")";
        return {};
      },
      range, "decimal");
}

/// Smallest and largest --frame-size side.
inline constexpr std::uint32_t min_frame_side = 16, max_frame_side = 16384;  ///< largest --frame-size side

/// CLI11 check: "WxH" with both sides in min_frame_side..max_frame_side.
inline CLI::Validator frame_size() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto x = text.find('x');
        const CLI::Validator side = whole_number(min_frame_side, max_frame_side);
        std::string w = x == std::string::npos ? "" : text.substr(0, x), h = x == std::string::npos ? "" : text.substr(x + 1);
        if (x == std::string::npos || !side(w).empty() || !side(h).empty()) return "needs WIDTHxHEIGHT with each side in " + std::to_string(min_frame_side) + ".." +
                        std::to_string(max_frame_side) + ", got '" + text + "'";
        return {};
      },
      std::to_string(min_frame_side) + ".." + std::to_string(max_frame_side), "frame_size");
}

/// "" when a heap of `heap_mb` MiB holds the `need` bytes of the model, else the error line
/// "<who needs> --heap-mb N or more (got M)", `who_needs` being e.g. "a 64 x 48 grid needs".
inline std::string heap_shortfall(std::uint64_t need, std::uint64_t heap_mb, const std::string& who_needs) {
  if (heap_mb << 20 >= need) return "";
  return who_needs + " --heap-mb " + std::to_string((need + (1 << 20) - 1) >> 20) + " or more (got " +
         std::to_string(heap_mb) + ")";
}

/// A command-line value found bad only once the model is being made (traffic: a network that
/// cannot be built, or does not fit --heap-mb): sim::run_model reports it like a parse error,
/// one line and exit status 2, before any step.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The shared command line of one app. Add the app's own options to app() before parse().
class app_cli {
 public:
  /// `name` heads every message; `description` opens --help; `defaults` are the app's values
  /// of the shared options, and its features say which of the optional flags it offers.
  app_cli(std::string name, std::string description, run_options defaults = {})
      : name_(std::move(name)), app_(std::move(description), name_), options_(std::move(defaults)) {
    app_.option_defaults()->always_capture_default();
    app_.get_formatter()->column_width(44);  // "--seed UINT:0..18446744073709551615=1" fits
    auto& o = options_;
    app_.add_option("--steps", o.steps, "number of steps")->check(whole_number(1, max_steps));
    app_.add_option("--seed", o.seed, "random seed: same seed and flags, same run")
        ->check(whole_number(0, std::numeric_limits<std::uint64_t>::max()));
    app_.add_option("--heap-mb", o.heap_mb, "object heap size in MiB (device memory)")
        ->check(whole_number(1, max_heap_mb));
    csv_ = app_.add_option("--csv", o.csv, "write a CSV time series (step, populations) to FILE (replaced at the end of the run); - writes it to standard output (the run's own lines then go to standard error)")
               ->type_name("FILE");
    csv_every_ = app_.add_option("--csv-every", o.csv_every, "CSV row every N steps (and steps 0 and last)")
        ->check(whole_number(1, max_steps));
    const app_features f = o.features;
    if (f.frames) {
      frames_ = app_.add_option("--frames", o.frames, "write PNG frames DIR/frame_NNNNNN.png (DIR is created)")
                    ->type_name("DIR");
      frame_every_ = app_.add_option("--frame-every", o.frame_every, "a frame (and a chart sample) every N steps")
                         ->check(whole_number(1, max_steps));
    }
    if (f.frames || f.window) {
      frame_size_ = app_.add_option("--frame-size", frame_size_text_, "frame size in pixels (default: the app's)")
                        ->type_name("WxH")
                        ->check(frame_size());
      overlay_ = app_.add_option("--overlay", o.overlay, "text on frames: full, stable (no steps/s: same bytes every run), none")
                     ->check(CLI::IsMember({"full", "stable", "none"}));
    }
    if (f.window) {
      window_ = app_.add_flag("--window", o.window, "show the run in a window (SDL2; keys: space n s q)");
      screenshot_at_ = app_.add_option("--screenshot-at", o.screenshot_at,
                                       "with --window: save the window's picture after step N (tests)")
                           ->check(whole_number(0, max_steps));
    }
    if (f.checkpoints) {
      checkpoint_ = app_.add_option("--checkpoint", o.checkpoint, "write a checkpoint to FILE after the last step")
                        ->type_name("FILE");
      checkpoint_every_ = app_.add_option("--checkpoint-every", o.checkpoint_every,
                                          "also write the checkpoint every N steps (needs --checkpoint)")
                              ->check(whole_number(1, max_steps));
      resume_option_ = app_.add_option("--resume", o.resume, "continue the run saved in FILE, up to --steps in all")
                           ->type_name("FILE");
    }
    if (f.defrag)
      app_.add_option("--defrag-every", o.defrag_every,
                      "defragment the heap after every N steps: objects of sparse blocks move together (0: never)")
          ->check(whole_number(0, max_steps));
    app_.add_flag("--quiet", o.quiet, "no header and no progress bar: only the summary line");
    app_.add_flag("--timing", o.timing, "print the time spent in each phase at the end");
  }

  app_cli(const app_cli&) = delete;
  app_cli& operator=(const app_cli&) = delete;

  /// The CLI11 app, to add the app's own options (they show their defaults in --help).
  CLI::App& app() { return app_; }
  /// The app's name, as given to the constructor.
  const std::string& name() const { return name_; }
  /// The shared options: the defaults, then as parse() set them.
  const run_options& options() const { return options_; }

  /// Parses the command line. Returns -1 when the app should run, otherwise the exit status the
  /// app should return at once: 0 after printing --help, 2 after a one-line error on stderr.
  int parse(int argc, const char* const* argv) {
    try {
      app_.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      std::fputs(app_.help().c_str(), stdout);
      return 0;
    } catch (const CLI::CallForAllHelp&) {
      std::fputs(app_.help("", CLI::AppFormatMode::All).c_str(), stdout);
      return 0;
    } catch (const CLI::ExtrasError& e) {
      for (const std::string& arg : app_.remaining())
        if (const char* why = not_offered(arg.substr(0, arg.find('='))))
          return fail(arg.substr(0, arg.find('=')) + ": " + name_ + " " + why);
      return fail(e.what());
    } catch (const CLI::ParseError& e) {
      return fail(e.what());
    }
    // The --resume file first: a run that cannot continue is the first thing to say.
    if (const int rc = open_resume(); rc >= 0) return rc;
    if (const int rc = check_outputs(); rc >= 0) return rc;
    if (const int rc = check_viewer(); rc >= 0) return rc;
    return -1;
  }
  /// As above, for main()'s own argv.
  int parse(int argc, char** argv) { return parse(argc, const_cast<const char* const*>(argv)); }

  /// The checkpoint given to --resume, opened and checked by parse(); nullptr for a fresh run.
  const shoal::checkpoint::reader* resume() const { return resume_ ? &*resume_ : nullptr; }
  /// Steps done in the resumed run (0 for a fresh run): the run continues with the next one.
  std::uint64_t resume_step() const { return resume_step_; }

  /// For a model parameter saved in the --resume checkpoint: takes the saved value, unless
  /// `flag` was given with another value (then one line and exit status 2, as parse()). The
  /// saved value must pass the flag's own checks (the same validators as on the command line:
  /// one set of rules, so a file cannot bring in a value the command line refuses).
  /// Returns -1 to go on, else the exit status.
  template <class T>
  int adopt(const std::string& flag, T& value, const T& saved) const {
    CLI::Option* opt = app_.get_option_no_throw(flag);
    if (opt != nullptr && opt->count() > 0 && !(value == saved))
      return fail(flag + " differs from the value saved in the --resume checkpoint ('" + options_.resume +
                  "'); leave it out to continue that run");
    if (opt != nullptr)
      if (const std::string why = check_saved(*opt, text_of(saved)); !why.empty())
        return fail("--resume: checkpoint '" + options_.resume + "' is invalid: its " + flag + " " + why);
    value = saved;
    return -1;
  }

  /// For a resumed run: reads the model's saved flags (a `T` under `key` in the checkpoint) and
  /// hands them to `adopt_from(saved)`, which adopt()s each flag and returns -1 or the status of
  /// the first that fails. A checkpoint without them is one line and status 2. -1 when not
  /// resuming.
  template <class T, class F>
  int adopt_saved(const std::string& key, F&& adopt_from) const {
    if (!resume_) return -1;
    T saved{};
    try {
      saved = resume_->value<T>(key);
    } catch (const checkpoint_error& e) {
      return fail(std::string("--resume: ") + e.what());
    }
    return adopt_from(static_cast<const T&>(saved));
  }

  /// -1 when --heap-mb holds the `need` bytes of the model, else fail() with heap_shortfall()'s
  /// line (status 2).
  int require_heap(std::uint64_t need, const std::string& who_needs) const {
    const std::string shortfall = heap_shortfall(need, options_.heap_mb, who_needs);
    return shortfall.empty() ? -1 : fail(shortfall);
  }

  /// Reports a bad command line found after parse() (e.g. sizes too large for --heap-mb): one
  /// line "<app>: error: <message>; see --help" on stderr. Returns 2, the exit status.
  int fail(std::string_view message) const {
    std::string line(message);
    for (char& c : line)
      if (c == '\n') c = ' ';
    last_error_ = line;
    if (!hold_errors_) std::fprintf(stderr, "%s: error: %s (see %s --help)\n", name_.c_str(), line.c_str(), name_.c_str());
    return 2;
  }
  /// For a program that reports errors its own way (the Python module raises them): fail()
  /// keeps its message for last_error() instead of printing it.
  void hold_errors() { hold_errors_ = true; }
  /// The message of the last fail() ("" before any), without the program's name.
  const std::string& last_error() const { return last_error_; }

 private:
  std::string name_;
  mutable CLI::App app_;  // mutable: adopt() runs an option's validators, which CLI11 hands out non-const
  run_options options_;
  /// Why a shared flag is not offered (the app's features lack it), or nullptr.
  const char* not_offered(const std::string& flag) const {
    const app_features f = options_.features;
    if (!f.checkpoints && (flag == "--checkpoint" || flag == "--checkpoint-every" || flag == "--resume"))
      return "writes no checkpoints";
    if (!f.frames && (flag == "--frames" || flag == "--frame-every")) return "writes no frames";
    if (!f.window && (flag == "--window" || flag == "--screenshot-at")) return "has no window";
    if (!f.frames && !f.window && (flag == "--frame-size" || flag == "--overlay")) return "draws no frames";
    return nullptr;
  }

  /// True when the option exists (the app offers it) and was given.
  static bool given(const CLI::Option* o) { return o != nullptr && o->count() > 0; }

  CLI::Option* frames_ = nullptr;
  CLI::Option* frame_every_ = nullptr;
  CLI::Option* window_ = nullptr;
  CLI::Option* frame_size_ = nullptr;
  CLI::Option* screenshot_at_ = nullptr;
  std::string frame_size_text_;
  CLI::Option* checkpoint_ = nullptr;
  CLI::Option* checkpoint_every_ = nullptr;
  CLI::Option* csv_ = nullptr;
  CLI::Option* csv_every_ = nullptr;
  CLI::Option* overlay_ = nullptr;
  CLI::Option* resume_option_ = nullptr;
  std::optional<shoal::checkpoint::reader> resume_;
  std::uint64_t resume_step_ = 0;
  bool hold_errors_ = false;
  mutable std::string last_error_;

  /// A saved value as the command line would give it: decimal digits, or the shortest text that
  /// reads back as the same floating-point value ("nan", "inf" too).
  template <class T>
  static std::string text_of(const T& v) {
    char text[64];
    const auto r = std::to_chars(text, text + sizeof text, v);
    return std::string(text, r.ptr);
  }

  /// "" when `text` passes every check of `opt`, else the first check's message.
  static std::string check_saved(CLI::Option& opt, const std::string& text) {
    for (int i = 0;; ++i) {
      CLI::Validator* v = nullptr;
      try {
        v = opt.get_validator(i);
      } catch (const CLI::OptionNotFound&) {
        return "";
      }
      std::string t = text;
      if (std::string why = (*v)(t); !why.empty()) return why;
    }
  }

  /// The output files and --resume, before anything is written: no flag that would do nothing,
  /// every path usable (paths.hpp), no two of them the same file.
  int check_outputs() {
    const auto& o = options_;
    struct named {
      const char* flag;
      CLI::Option* option;
      const std::string& path;
    };
    const named files[] = {{"--csv", csv_, o.csv}, {"--checkpoint", checkpoint_, o.checkpoint},
                           {"--resume", resume_option_, o.resume}};
    for (const auto& f : files)
      if (given(f.option) && f.path.empty()) return fail(std::string(f.flag) + " needs a file name, got ''");
    if (given(csv_every_) && o.csv.empty()) return fail("--csv-every needs --csv FILE");
    if (given(checkpoint_every_) && o.checkpoint.empty()) return fail("--checkpoint-every needs --checkpoint FILE");
    // "-" is standard output, for the CSV rows only (csv_writer::standard_output).
    const auto is_stdout = [](const std::string& path) { return path == csv_writer::standard_output; };
    if (is_stdout(o.checkpoint)) return fail("--checkpoint needs a file name: '-' (standard output) is for --csv only");
    if (is_stdout(o.resume)) return fail("--resume needs a file name: '-' (standard input) is not read");
    for (const auto& f : files) {
      if (f.path.empty() || f.option == resume_option_ || is_stdout(f.path)) continue;  // --resume: open_resume()
      if (const std::string why = check_output_file(f.path); !why.empty()) return fail(std::string(f.flag) + ": " + why);
      if (const char* stream = standard_stream_of(f.path); *stream != '\0')
        return fail(std::string(f.flag) + ": '" + f.path + "' is the file that " + stream +
                    " writes to; the run would replace it" + (f.option == csv_ ? " (--csv - writes the rows to standard output)" : ""));
    }
    for (std::size_t i = 0; i < std::size(files); ++i)
      for (std::size_t j = i + 1; j < std::size(files); ++j)
        if (!files[i].path.empty() && !files[j].path.empty() && !is_stdout(files[i].path) &&
            !is_stdout(files[j].path) && same_file(files[i].path, files[j].path))
          return fail(std::string(files[i].flag) + " '" + files[i].path + "' and " + files[j].flag + " '" +
                      files[j].path + "' name the same file");
    return -1;
  }

  /// The viewer's options that depend on each other, and the frames directory.
  int check_viewer() {
    auto& o = options_;
    if (given(frames_) && o.frames.empty()) return fail("--frames needs a directory name");
    if (given(frame_every_) && o.frames.empty()) return fail("--frame-every needs --frames DIR");
    if (given(frame_size_) && o.frames.empty() && !o.window)
      return fail("--frame-size needs --frames DIR or --window");
    if (given(screenshot_at_) && !o.window) return fail("--screenshot-at needs --window");
    if (given(overlay_) && o.frames.empty() && !o.window) return fail("--overlay needs --frames DIR or --window");
    if (!frame_size_text_.empty()) {
      const auto x = frame_size_text_.find('x');
      std::from_chars(frame_size_text_.data(), frame_size_text_.data() + x, o.frame_width);
      std::from_chars(frame_size_text_.data() + x + 1, frame_size_text_.data() + frame_size_text_.size(),
                      o.frame_height);
    }
    if (!o.frames.empty()) {
      // A run replaces the directory's frames: no other output may live there.
      const std::pair<const char*, const std::string*> outputs[] = {{"--csv", &o.csv}, {"--checkpoint", &o.checkpoint}};
      for (const auto& [flag, path] : outputs)
        if (!path->empty() && *path != csv_writer::standard_output && inside_directory(*path, o.frames))
          return fail(std::string(flag) + " '" + *path + "' is in the --frames directory '" + o.frames +
                      "', whose frames a run replaces; write it elsewhere");
      if (const std::string why = prepare_directory(o.frames); !why.empty()) return fail("--frames: " + why);
    }
    return -1;
  }

  /// Opens --resume before any device work: a file that is missing, damaged, another app's,
  /// from another seed, or already past --steps is a bad command line.
  int open_resume() {
    if (given(resume_option_) && options_.resume.empty()) return fail("--resume needs a file name, got ''");
    if (options_.resume.empty()) return -1;
    if (const std::string why = check_input_file(options_.resume); !why.empty()) return fail("--resume: " + why);
    try {
      resume_.emplace(options_.resume);
      const auto app = resume_->blob(run_keys::app);
      if (std::string_view(reinterpret_cast<const char*>(app.data()), app.size()) != name_)
        return fail("--resume: checkpoint '" + options_.resume + "' was not written by " + name_);
      resume_step_ = resume_->value<std::uint64_t>(run_keys::step);
      if (const int rc = adopt("--seed", options_.seed, resume_->value<std::uint64_t>(run_keys::seed)); rc >= 0)
        return rc;
    } catch (const shoal::checkpoint_error& e) {
      resume_.reset();
      return fail(std::string("--resume: ") + e.what());
    }
    if (options_.steps <= resume_step_)
      return fail("--steps " + std::to_string(options_.steps) + " is not after step " + std::to_string(resume_step_) +
                  " of the --resume checkpoint (--steps counts all steps, those before the checkpoint too)");
    return -1;
  }
};

/// A model's own flags, each declared once: add() puts it on the command line (a CLI11 option
/// bound to a member of the model's flags struct) and remembers where that member lies in the
/// struct, so that adopt() can take every flag from a saved copy of it (a --resume checkpoint)
/// without a second list of the flags.
template <class Flags>
class flag_table {
  static_assert(std::is_trivially_copyable_v<Flags>, "the flags are saved in checkpoints as bytes");

 public:
  /// The table of `flags`, whose options go on `app`.
  flag_table(CLI::App& app, Flags& flags) : app_(app), flags_(flags) {}

  /// Adds option `name` bound to `member`, which must be a member of the flags (at any depth);
  /// returns the option, for ->check(...).
  template <class T>
  CLI::Option* add(const std::string& name, T& member, const std::string& help) {
    const std::ptrdiff_t at = reinterpret_cast<const char*>(&member) - reinterpret_cast<const char*>(&flags_);
    if (at < 0 || static_cast<std::size_t>(at) + sizeof(T) > sizeof(Flags))
      throw std::logic_error("flag_table::add: " + name + " is bound to something outside the model's flags");
    adopters_.push_back([name, at](const app_cli& cli, Flags& live, const Flags& saved) {
      return cli.adopt(name, member_at<T>(live, at), member_at<T>(saved, at));
    });
    return app_.add_option(name, member, help);
  }

  /// The command line, for an option that is not one of the saved flags (a start file that only
  /// a fresh run reads): CLI11's own add_option, with no adoption from a --resume checkpoint.
  CLI::App& app() { return app_; }

  /// Takes every flag from `saved` with app_cli::adopt (a flag given with another value is an
  /// error line); -1, or the status of the first that fails.
  int adopt(const app_cli& cli, const Flags& saved) const {
    for (const auto& adopt_one : adopters_)
      if (const int rc = adopt_one(cli, flags_, saved); rc >= 0) return rc;
    return -1;
  }

 private:
  template <class T, class F>
  static auto& member_at(F& flags, std::ptrdiff_t at) {
    using byte = std::conditional_t<std::is_const_v<F>, const char, char>;
    using member = std::conditional_t<std::is_const_v<F>, const T, T>;
    return *reinterpret_cast<member*>(reinterpret_cast<byte*>(&flags) + at);
  }

  CLI::App& app_;
  Flags& flags_;
  std::vector<std::function<int(const app_cli&, Flags&, const Flags&)>> adopters_;
};

}  // namespace shoal::sim
