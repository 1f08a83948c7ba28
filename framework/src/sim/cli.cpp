// The shared command line (cli.hpp): CLI11 lives here, compiled once into the library, so that
// a model's translation unit does not parse and compile its headers (~12 s of g++ -O3 each).

#include "shoal/sim/cli.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <limits>
#include <string>

namespace shoal::sim {

rule whole_number(std::uint64_t lo, std::uint64_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  return {[lo, hi, range](std::string& text) -> std::string {
            std::uint64_t v = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, v);
            const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
            if (!digits || ec != std::errc{} || ptr != end || v < lo || v > hi)
              return "needs a whole number in " + range + ", got '" + text + "'";
            return {};
          },
          range, "whole_number"};
}

template <class T>
rule decimal(double lo, double hi) {
  static_assert(std::is_floating_point_v<T>);
  const std::string range = CLI::detail::to_string(lo) + ".." + CLI::detail::to_string(hi);
  return {[lo, hi, range](std::string& text) -> std::string {
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
          range, "decimal"};
}
template rule decimal<float>(double, double);
template rule decimal<double>(double, double);

rule frame_size() {
  return {[](std::string& text) -> std::string {
            const auto x = text.find('x');
            const rule side = whole_number(min_frame_side, max_frame_side);
            std::string w = x == std::string::npos ? "" : text.substr(0, x), h = x == std::string::npos ? "" : text.substr(x + 1);
            if (x == std::string::npos || !side.check(w).empty() || !side.check(h).empty())
              return "needs WIDTHxHEIGHT with each side in " + std::to_string(min_frame_side) + ".." +
                     std::to_string(max_frame_side) + ", got '" + text + "'";
            return {};
          },
          std::to_string(min_frame_side) + ".." + std::to_string(max_frame_side), "frame_size"};
}

// --- option, command_line ------------------------------------------------------------------------

namespace {
/// True when the option exists (the app offers it) and was given.
bool was_given(const option* o) { return o != nullptr && o->count() > 0; }

CLI::Validator validator_of(rule r) { return CLI::Validator(std::move(r.check), std::move(r.description), std::move(r.name)); }
}  // namespace

option* option::check(rule r) {
  o_->check(validator_of(std::move(r)));
  return this;
}
option* option::transform(rule r) {
  o_->transform(validator_of(std::move(r)));
  return this;
}
option* option::type_name(const std::string& name) {
  o_->type_name(name);
  return this;
}
option* option::default_str(const std::string& text) {
  o_->default_str(text);
  return this;
}
std::size_t option::count() const { return o_->count(); }

std::string option::why_not(const std::string& text) const {
  for (int i = 0;; ++i) {
    CLI::Validator* v = nullptr;
    try {
      v = o_->get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return "";
    }
    std::string t = text;
    if (std::string why = (*v)(t); !why.empty()) return why;
  }
}

command_line::command_line(const std::string& description, const std::string& name)
    : app_(std::make_unique<CLI::App>(description, name)) {}
command_line::~command_line() = default;

option* command_line::keep(CLI::Option* o) { return &options_.emplace_back(o); }

template <class T>
option* command_line::add_value(const std::string& name, T& value, const std::string& help) {
  return keep(app_->add_option(name, value, help));
}
template option* command_line::add_value(const std::string&, std::uint64_t&, const std::string&);
template option* command_line::add_value(const std::string&, std::uint32_t&, const std::string&);
template option* command_line::add_value(const std::string&, std::int64_t&, const std::string&);
template option* command_line::add_value(const std::string&, std::int32_t&, const std::string&);
template option* command_line::add_value(const std::string&, double&, const std::string&);
template option* command_line::add_value(const std::string&, float&, const std::string&);
template option* command_line::add_value(const std::string&, std::string&, const std::string&);

option* command_line::add_option_function(const std::string& name, std::function<std::string(const std::string&)> take,
                                          const std::string& help) {
  return keep(app_->add_option_function<std::string>(
      name,
      [name, take = std::move(take)](const std::string& value) {
        if (std::string why = take(value); !why.empty()) throw CLI::ValidationError(name, why);
      },
      help));
}

option* command_line::add_flag(const std::string& name, bool& value, const std::string& help) {
  return keep(app_->add_flag(name, value, help));
}

option* command_line::find(const std::string& name) const {
  const CLI::Option* o = app_->get_option_no_throw(name);
  if (o == nullptr) return nullptr;
  for (const option& kept : options_)
    if (&kept.cli11() == o) return const_cast<option*>(&kept);
  return nullptr;  // --help: CLI11's own, not one of ours
}

// --- app_cli --------------------------------------------------------------------------------------

app_cli::app_cli(std::string name, std::string description, run_options defaults)
    : name_(std::move(name)), app_(description, name_), options_(std::move(defaults)) {
  CLI::App& app = app_.cli11();
  app.option_defaults()->always_capture_default();
  app.get_formatter()->column_width(44);  // "--seed UINT:0..18446744073709551615=1" fits
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
    overlay_ = app_.add_option("--overlay", o.overlay, "text on frames: full, stable (no steps/s: same bytes every run), none");
    overlay_->cli11().check(CLI::IsMember({"full", "stable", "none"}));
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

bool app_cli::given(const std::string& flag) const { return was_given(app_.find(flag)); }

int app_cli::adopt_text(const std::string& flag, bool differs, const std::string& saved_text) const {
  const option* opt = app_.find(flag);
  if (opt != nullptr && opt->count() > 0 && differs)
    return fail(flag + " differs from the value saved in the --resume checkpoint ('" + options_.resume +
                "'); leave it out to continue that run");
  if (opt != nullptr)
    if (const std::string why = opt->why_not(saved_text); !why.empty())
      return fail("--resume: checkpoint '" + options_.resume + "' is invalid: its " + flag + " " + why);
  return -1;
}

int app_cli::parse(int argc, const char* const* argv) {
  CLI::App& app = app_.cli11();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return 0;
  } catch (const CLI::ExtrasError& e) {
    for (const std::string& arg : app.remaining())
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

int app_cli::fail(std::string_view message) const {
  std::string line(message);
  for (char& c : line)
    if (c == '\n') c = ' ';
  last_error_ = line;
  if (!hold_errors_) std::fprintf(stderr, "%s: error: %s (see %s --help)\n", name_.c_str(), line.c_str(), name_.c_str());
  return 2;
}

const char* app_cli::not_offered(const std::string& flag) const {
  const app_features f = options_.features;
  if (!f.checkpoints && (flag == "--checkpoint" || flag == "--checkpoint-every" || flag == "--resume"))
    return "writes no checkpoints";
  if (!f.frames && (flag == "--frames" || flag == "--frame-every")) return "writes no frames";
  if (!f.window && (flag == "--window" || flag == "--screenshot-at")) return "has no window";
  if (!f.frames && !f.window && (flag == "--frame-size" || flag == "--overlay")) return "draws no frames";
  return nullptr;
}

int app_cli::check_outputs() {
  const auto& o = options_;
  struct named {
    const char* flag;
    const option* opt;
    const std::string& path;
  };
  const named files[] = {{"--csv", csv_, o.csv}, {"--checkpoint", checkpoint_, o.checkpoint},
                         {"--resume", resume_option_, o.resume}};
  for (const auto& f : files)
    if (was_given(f.opt) && f.path.empty()) return fail(std::string(f.flag) + " needs a file name, got ''");
  if (was_given(csv_every_) && o.csv.empty()) return fail("--csv-every needs --csv FILE");
  if (was_given(checkpoint_every_) && o.checkpoint.empty()) return fail("--checkpoint-every needs --checkpoint FILE");
  // "-" is standard output, for the CSV rows only (csv_writer::standard_output).
  const auto is_stdout = [](const std::string& path) { return path == csv_writer::standard_output; };
  if (is_stdout(o.checkpoint)) return fail("--checkpoint needs a file name: '-' (standard output) is for --csv only");
  if (is_stdout(o.resume)) return fail("--resume needs a file name: '-' (standard input) is not read");
  for (const auto& f : files) {
    if (f.path.empty() || f.opt == resume_option_ || is_stdout(f.path)) continue;  // --resume: open_resume()
    if (const std::string why = check_output_file(f.path); !why.empty()) return fail(std::string(f.flag) + ": " + why);
    if (const char* stream = standard_stream_of(f.path); *stream != '\0')
      return fail(std::string(f.flag) + ": '" + f.path + "' is the file that " + stream +
                  " writes to; the run would replace it" + (f.opt == csv_ ? " (--csv - writes the rows to standard output)" : ""));
  }
  for (std::size_t i = 0; i < std::size(files); ++i)
    for (std::size_t j = i + 1; j < std::size(files); ++j)
      if (!files[i].path.empty() && !files[j].path.empty() && !is_stdout(files[i].path) &&
          !is_stdout(files[j].path) && same_file(files[i].path, files[j].path))
        return fail(std::string(files[i].flag) + " '" + files[i].path + "' and " + files[j].flag + " '" +
                    files[j].path + "' name the same file");
  return -1;
}

int app_cli::check_viewer() {
  auto& o = options_;
  if (was_given(frames_) && o.frames.empty()) return fail("--frames needs a directory name");
  if (was_given(frame_every_) && o.frames.empty()) return fail("--frame-every needs --frames DIR");
  if (was_given(frame_size_) && o.frames.empty() && !o.window)
    return fail("--frame-size needs --frames DIR or --window");
  if (was_given(screenshot_at_) && !o.window) return fail("--screenshot-at needs --window");
  if (was_given(overlay_) && o.frames.empty() && !o.window) return fail("--overlay needs --frames DIR or --window");
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

int app_cli::open_resume() {
  if (was_given(resume_option_) && options_.resume.empty()) return fail("--resume needs a file name, got ''");
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

}  // namespace shoal::sim
