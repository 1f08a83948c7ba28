#pragma once
/// @file
/// A one-line progress bar on stderr: steps done, steps/s, ETA. Shown only when stderr is a
/// terminal and --quiet is not given, so logs and pipes stay clean.
///
///   sim::progress bar(steps, !run.quiet);
///   for (step = 1..steps) { enqueue the step; bar.update(step); }
///   rt.synchronize(); bar.finish();   // erases the line
///
/// update() only reads the host clock (tens of nanoseconds) and redraws at most 10 times a
/// second; it never waits for the device. On the cuda backend the count is of steps enqueued,
/// which runs ahead of the GPU by at most the launch queue (about a thousand launches).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include <unistd.h>

namespace shoal::sim {

/// The progress bar of a run (see the file comment): update() after each step redraws it at
/// most 10 times a second, finish() or the destructor erases it, line() is its text. Draws
/// nothing unless wanted and `out` is a terminal.
class progress {
 public:
  /// The clock of the rate and the redraw interval.
  using clock = std::chrono::steady_clock;

  /// A bar of `total_steps` steps on `out`, drawn only when `wanted` (not --quiet) and `out` is
  /// a terminal. Its clock starts now.
  progress(std::uint64_t total_steps, bool wanted, std::FILE* out = stderr)
      : total_(total_steps), out_(out), enabled_(wanted && ::isatty(::fileno(out)) == 1),
        start_(clock::now()), last_draw_(start_) {}
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;
  ~progress() { finish(); }

  /// Whether the bar is drawn at all.
  bool enabled() const { return enabled_; }

  /// `step` steps are done: redraws the bar if 100 ms have passed since the last redraw.
  void update(std::uint64_t step) {
    if (!enabled_) return;
    const auto now = clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    std::fputs(("\r" + line(step, std::chrono::duration<double>(now - start_).count()) + "\033[K").c_str(), out_);
    std::fflush(out_);
    drawn_ = true;
  }

  /// Erases the bar (when one was drawn) so that the summary line starts clean.
  void finish() {
    if (drawn_) {
      std::fputs("\r\033[K", out_);
      std::fflush(out_);
      drawn_ = false;
    }
  }

  /// The text of the bar after `seconds` at `step` (no terminal control characters).
  std::string line(std::uint64_t step, double seconds) const {
    constexpr int width = 30;
    const double done = total_ == 0 ? 1.0 : static_cast<double>(step) / static_cast<double>(total_);
    const int filled = static_cast<int>(done * width);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(width, '.');
    const double rate = seconds > 0 ? static_cast<double>(step) / seconds : 0.0;
    char text[160];
    if (rate > 0)
      std::snprintf(text, sizeof text, "[%s] %llu/%llu steps  %.1f steps/s  ETA %.1f s", bar.c_str(),
                    static_cast<unsigned long long>(step), static_cast<unsigned long long>(total_), rate,
                    static_cast<double>(total_ - step) / rate);
    else
      std::snprintf(text, sizeof text, "[%s] %llu/%llu steps", bar.c_str(),
                    static_cast<unsigned long long>(step), static_cast<unsigned long long>(total_));
    return text;
  }

 private:
  std::uint64_t total_;
  std::FILE* out_;
  bool enabled_;
  bool drawn_ = false;
  clock::time_point start_, last_draw_;
};

}  // namespace shoal::sim
