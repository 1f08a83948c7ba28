#pragma once
/// @file
/// The command line every simulation app shares (CLI11, in the library), plus the app's own options:
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
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "shoal/checkpoint/file.hpp"
#include "shoal/sim/checkpoints.hpp"
#include "shoal/sim/csv.hpp"
#include "shoal/sim/paths.hpp"

namespace CLI {  // CLI11 (in cli.cpp; the wrappers below hand out its objects to who includes it)
class App;
class Option;
}  // namespace CLI

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

/// A check of an option's value as written on the command line: `check` returns "" when the
/// text is good, else why not (the error line names the flag and adds this); it may rewrite the
/// text (a transform: "none" -> "0"). `description` is what --help shows after the type.
struct rule {
  std::function<std::string(std::string&)> check;  ///< "" when the text is good, else why not; may rewrite it
  std::string description;  ///< e.g. "1..65536", "cells|no-cell"
  std::string name;         ///< for messages about the rule itself
};

/// Check: a whole number in [lo, hi], written in decimal digits only (no sign, no exponent), so
/// that "-5", "1e6", "12abc" and "0x10" are refused with the same clear message.
rule whole_number(std::uint64_t lo, std::uint64_t hi);

/// Check: a finite decimal number in [lo, hi] ("0.02", "1e-3") that the option's type T (float
/// or double) stores as given: a value too small or too large for T (1e-50 in a float becomes 0,
/// 1e-400 is 0 even as a double) is refused, not rounded to 0 or infinity.
template <class T = double>
rule decimal(double lo, double hi);
/// decimal() of a float option, compiled in the library.
extern template rule decimal<float>(double, double);
/// decimal() of a double option, compiled in the library.
extern template rule decimal<double>(double, double);

/// Smallest and largest --frame-size side.
inline constexpr std::uint32_t min_frame_side = 16, max_frame_side = 16384;  ///< largest --frame-size side

/// Check: "WxH" with both sides in min_frame_side..max_frame_side.
rule frame_size();

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

/// One option of a command_line, to refine after adding it: `->check(sim::whole_number(1, 9))`.
class option {
 public:
  /// Adds a check of the value (they run in the order given).
  option* check(rule r);
  /// Adds a check that may rewrite the value ("none" -> "0") before it is stored.
  option* transform(rule r);
  /// The word --help shows for the value ("FILE", "DIR").
  option* type_name(const std::string& name);
  /// The default --help shows, when the stored value's own text would mislead.
  option* default_str(const std::string& text);
  /// How often the option was given on the command line.
  std::size_t count() const;
  /// "" when `text` passes every check of the option (transforms included), else the first
  /// check's message.
  std::string why_not(const std::string& text) const;

  /// The wrapper of a CLI11 option (command_line makes them).
  explicit option(CLI::Option* o) : o_(o) {}
  CLI::Option& cli11() const { return *o_; }  ///< the CLI11 option behind it (include <CLI/CLI.hpp>)

 private:
  CLI::Option* o_;
};

/// An app's command line: the options it offers, bound to variables that parsing sets. CLI11
/// does the parsing (in the library: its headers cost every including file ~12 s of g++ -O3).
class command_line {
 public:
  /// An empty command line: `description` opens --help, `name` is the program's.
  command_line(const std::string& description, const std::string& name);
  ~command_line();
  command_line(const command_line&) = delete;
  command_line& operator=(const command_line&) = delete;

  /// Adds `--name VALUE` stored in `value` (an integer of 32 or 64 bits, float, double, or
  /// std::string); --help shows its current value as the default.
  template <class T>
  option* add_option(const std::string& name, T& value, const std::string& help) {
    static_assert(std::is_same_v<T, std::uint64_t> || std::is_same_v<T, std::uint32_t> ||
                      std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::int32_t> ||
                      std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, std::string>,
                  "an option's value is a (u)int32_t, (u)int64_t, float, double or std::string");
    return add_value(name, value, help);
  }
  /// Adds `--name VALUE` handed to `take`, which returns "" or why the value is refused.
  option* add_option_function(const std::string& name, std::function<std::string(const std::string&)> take,
                              const std::string& help);
  /// Adds `--name` without a value, setting `value` to true when given.
  option* add_flag(const std::string& name, bool& value, const std::string& help);
  /// The option called `name` (e.g. "--width"), or nullptr when there is none.
  option* find(const std::string& name) const;
  /// The CLI11 app behind it, for what the wrapper leaves out (include <CLI/CLI.hpp>).
  CLI::App& cli11() const { return *app_; }

 private:
  // Defined and instantiated for the types above in cli.cpp, where CLI11 is.
  template <class T>
  option* add_value(const std::string& name, T& value, const std::string& help);
  option* keep(CLI::Option* o);

  std::unique_ptr<CLI::App> app_;
  std::deque<option> options_;  // a deque: the option* handed out stay valid
};

/// The shared command line of one app. Add the app's own options to app() before parse().
class app_cli {
 public:
  /// `name` heads every message; `description` opens --help; `defaults` are the app's values
  /// of the shared options, and its features say which of the optional flags it offers.
  app_cli(std::string name, std::string description, run_options defaults = {});

  app_cli(const app_cli&) = delete;
  app_cli& operator=(const app_cli&) = delete;

  /// The command line, to add the app's own options (they show their defaults in --help).
  command_line& app() { return app_; }
  /// The app's name, as given to the constructor.
  const std::string& name() const { return name_; }
  /// The shared options: the defaults, then as parse() set them.
  const run_options& options() const { return options_; }
  /// True when the option `flag` exists and was given on the command line.
  bool given(const std::string& flag) const;

  /// Parses the command line. Returns -1 when the app should run, otherwise the exit status the
  /// app should return at once: 0 after printing --help, 2 after a one-line error on stderr.
  int parse(int argc, const char* const* argv);
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
    if (const int rc = adopt_text(flag, !(value == saved), text_of(saved)); rc >= 0) return rc;
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
  int fail(std::string_view message) const;
  /// For a program that reports errors its own way (the Python module raises them): fail()
  /// keeps its message for last_error() instead of printing it.
  void hold_errors() { hold_errors_ = true; }
  /// The message of the last fail() ("" before any), without the program's name.
  const std::string& last_error() const { return last_error_; }

 private:
  std::string name_;
  command_line app_;
  run_options options_;

  option* frames_ = nullptr;
  option* frame_every_ = nullptr;
  option* window_ = nullptr;
  option* frame_size_ = nullptr;
  option* screenshot_at_ = nullptr;
  std::string frame_size_text_;
  option* checkpoint_ = nullptr;
  option* checkpoint_every_ = nullptr;
  option* csv_ = nullptr;
  option* csv_every_ = nullptr;
  option* overlay_ = nullptr;
  option* resume_option_ = nullptr;
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
  /// adopt() without its type: `differs` when the flag's value is not the saved one.
  int adopt_text(const std::string& flag, bool differs, const std::string& saved_text) const;
  const char* not_offered(const std::string& flag) const;
  int check_outputs();
  int check_viewer();
  int open_resume();
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
  flag_table(command_line& app, Flags& flags) : app_(app), flags_(flags) {}

  /// Adds option `name` bound to `member`, which must be a member of the flags (at any depth);
  /// returns the option, for ->check(...).
  template <class T>
  option* add(const std::string& name, T& member, const std::string& help) {
    const std::ptrdiff_t at = reinterpret_cast<const char*>(&member) - reinterpret_cast<const char*>(&flags_);
    if (at < 0 || static_cast<std::size_t>(at) + sizeof(T) > sizeof(Flags))
      throw std::logic_error("flag_table::add: " + name + " is bound to something outside the model's flags");
    adopters_.push_back([name, at](const app_cli& cli, Flags& live, const Flags& saved) {
      return cli.adopt(name, member_at<T>(live, at), member_at<T>(saved, at));
    });
    return app_.add_option(name, member, help);
  }

  /// The command line, for an option that is not one of the saved flags (a start file that only
  /// a fresh run reads): its add_option, with no adoption from a --resume checkpoint.
  command_line& app() { return app_; }

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

  command_line& app_;
  Flags& flags_;
  std::vector<std::function<int(const app_cli&, Flags&, const Flags&)>> adopters_;
};

}  // namespace shoal::sim
