#pragma once
/// @file
/// The viewer an app runs next to its step loop: PNG frames (--frames DIR --frame-every N)
/// and/or an SDL2 window (--window), both fed from one device canvas that the app paints where
/// its data is.
///
///   viz::viewer view(cli.options(), {.app = "wator", .width = w, .height = h, .labels = {...}});
///   auto count = [&](unsigned long long* values) { ... };          // device work, no wait
///   auto paint = [&](viz::canvas_view c, viz::rect area) { ... };  // device work, no wait
///   view.after_step(0, count, paint);
///   for (s = 1; s <= steps; ++s) { step(s); if (!view.after_step(s, count, paint)) break; }
///   view.finish();
///
/// Every --frame-every steps the app counts its values (populations; the chart keeps them on
/// the device) and, with --frames, paints a frame that is copied once to the host and written by
/// worker threads. The window is painted at most at the display's refresh rate, whatever the
/// step rate: when the window is slower, frames are skipped, never steps.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "shoal/arch/memory.hpp"
#include "shoal/io/staging_directory.hpp"
#include "shoal/sim/cli.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "shoal/viz/canvas.hpp"
#include "shoal/viz/chart.hpp"
#include "shoal/viz/frame_writer.hpp"
#include "shoal/viz/layout.hpp"
#include "shoal/viz/overlay.hpp"
#include "shoal/viz/png.hpp"
#include "shoal/viz/window.hpp"

namespace shoal::viz {

/// What an app shows.
struct scene_spec {
  std::string app;                    ///< window title and screenshot names
  /// The frame's width in pixels.
  std::uint32_t width = 0, height = 0;  ///< the frame
  std::vector<std::string> labels;    ///< one per value word the app counts ("": not shown)
  std::uint32_t chart_height = 0;     ///< a line chart panel at the bottom (0: none)
  std::uint32_t chart_first = 0;      ///< the chart's series are values chart_first, ...
  std::vector<pixel> chart_colours;   ///< ... one per colour
};

/// The scene of a model in a box (no grid): a frame of `frame_width` x `frame_height` pixels
/// (--frame-size) with the chart panel a fifth of it, or, when those are 0, a 768 x 768 square
/// with a panel of 160 below it. The caller adds labels and chart colours.
inline scene_spec box_scene(std::string app, std::uint32_t frame_width, std::uint32_t frame_height) {
  scene_spec s;
  s.app = std::move(app);
  if (frame_width != 0) {
    s.width = frame_width, s.height = frame_height;
    s.chart_height = frame_height / 5;
  } else {
    s.width = 768, s.height = 768 + 160;
    s.chart_height = 160;
  }
  return s;
}

/// The scene of a grid model: as box_scene when --frame-size is given, else the grid one pixel per
/// cell (grid_frame) with the chart panel a quarter of its height (at least 24 pixels) below it.
/// The caller adds labels and chart colours.
inline scene_spec grid_scene(std::string app, std::uint32_t frame_width, std::uint32_t frame_height, std::uint64_t width,
                             std::uint64_t height) {
  if (frame_width != 0) return box_scene(std::move(app), frame_width, frame_height);
  scene_spec s;
  s.app = std::move(app);
  const extent e = grid_frame(width, height);
  s.width = e.width;
  s.chart_height = std::max<std::uint32_t>(24, e.height / 4);
  s.height = e.height + s.chart_height;
  return s;
}

/// The overlay's text lines for a frame.
inline std::vector<std::string> overlay_lines(const std::string& mode, const std::vector<std::string>& labels,
                                              const unsigned long long* values, std::uint64_t step, double rate) {
  std::vector<std::string> lines;
  if (mode == "none") return lines;
  lines.push_back("step " + grouped(step));
  for (std::size_t k = 0; k < labels.size(); ++k)
    if (!labels[k].empty()) lines.push_back(labels[k] + " " + grouped(values[k]));
  if (mode == "full" && rate >= 0) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", rate);
    lines.push_back(std::string("steps/s ") + text);
  }
  return lines;
}

/// Shows a running simulation (see the file comment): after_step() counts the app's values,
/// has it paint the canvas, and writes a frame and/or presents the window when one is due;
/// finish() waits for the frame files and moves them into --frames.
class viewer {
 public:
  /// True when the options ask for a viewer at all.
  static bool wanted(const sim::run_options& o) { return !o.frames.empty() || o.window; }

  /// Throws window_error when --window cannot be had (a usage error: the app exits with 2).
  viewer(const sim::run_options& o, scene_spec spec)
      : o_(o), spec_(std::move(spec)), canvas_(spec_.width, spec_.height),
        values_(std::max<std::size_t>(1, spec_.labels.size())), started_(clock::now()) {
    const std::uint32_t panel = std::min(spec_.chart_height, spec_.height / 2);
    scene_ = {0, 0, spec_.width, spec_.height - panel};
    if (panel > 0 && !spec_.chart_colours.empty()) {
      chart_area_ = {0, spec_.height - panel, spec_.width, panel};
      // With frames, a sample with every frame, so the chart in a frame depends only on its step
      // and spans the whole run. With only the window, a sample with every picture shown (its
      // populations are counted anyway; counting every step would cost more than it shows) and
      // the chart spans the run so far.
      chart_.emplace(spec_.width, spec_.chart_colours, o.frames.empty() ? 0 : o.steps / o.frame_every + 1);
    }
    if (o.window) {
      window_ = std::make_unique<window>(spec_.app, spec_.width, spec_.height);
      frame_ = image(spec_.width, spec_.height);
      interval_ = std::chrono::duration<double>(1.0 / window_->refresh_rate());
    }
    if (!o.frames.empty()) {
      // PNG encoding is the slow part of a frame: 5-8 ms for the apps' frames with zlib (20-40
      // ms with stb; BENCHMARKS.md, "Viewer frames"). The most demanding --frame-every 10 runs
      // on the H100 need 3 to 4 cores of encoding (traffic: 630 frames/s x 6.6 ms, n-body:
      // 375 x 7.8 ms), so half the cores, up to 8, keep up with room to spare (a 16-core host:
      // 8 threads, twice the need) while the other half feed the device (or, on the cpu
      // backend, run the steps). More would only take cores from the step loop.
      const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency() / 2));
      // Staged and moved into --frames at finish(): a run that fails leaves the frames an earlier
      // run wrote there (same step numbers) as they were.
      try {
        staged_.emplace(o.frames, spec_.app + "-frames");
      } catch (const io::output_error& e) {
        throw write_error(e.what());
      }
      writer_ = std::make_unique<frame_writer>(
          staged_->path(), "frame", spec_.width, spec_.height, values_.size(),
          [this](image_view img, const unsigned long long* v, std::uint64_t step, double rate) {
            draw_overlay(img, overlay_lines(o_.overlay, spec_.labels, v, step, rate));
          },
          threads);
    }
  }

  /// The part of the canvas the app paints (above the chart).
  rect scene() const { return scene_; }
  /// The whole canvas (scene and chart panel), for device code.
  canvas_view canvas() const { return canvas_.view(); }

  /// Call after each step (and once before the first, for the starting state). Returns false
  /// when the user closed the window: the app ends the run there. With a phase timer, the
  /// viewer's device work on the steps that have any is timed as the phase "frame" (--timing).
  template <class Count, class Paint>
  bool after_step(std::uint64_t step, Count&& count, Paint&& paint, sim::phase_timer* timer = nullptr) {
    if (!first_step_) first_step_ = step;
    last_step_ = step;
    const bool to_file = writer_ != nullptr && step % o_.frame_every == 0;
    bool to_window = false, shot = false;
    if (window_) {
      if (!handle(poll_window())) return false;
      shot = shot_requested_ || (o_.screenshot_at != 0 && step == o_.screenshot_at);
      to_window = paused_ || shot || clock::now() - last_present_ >= std::max(interval_, 9 * present_cost_);
    }
    if (!to_file && !to_window) return true;
    const bool sample = chart_ && (writer_ != nullptr ? to_file : to_window);
    std::optional<timed_frame> timed;
    if (timer != nullptr) timed.emplace(*timer);
    const auto work_began = clock::now();
    if (last_capture_ != nullptr) last_capture_->before_next_drawing();  // its copy runs on
    arch::fill_bytes(values_.data(), 0, values_.bytes());
    count(values_.data());
    if (sample) chart_->offer(samples_++, values_.data() + spec_.chart_first);
    paint(canvas_.view(), scene_);
    if (chart_) draw_chart(canvas_.view(), chart_area_, chart_->view());
    if (to_file) {
      staging& slot = writer_->acquire();
      slot.capture(canvas_.view().pixels, values_.data());
      writer_->submit(slot, step, rate_now());
      last_capture_ = &slot;
    }
    if (to_window) return show(step, shot, work_began);
    return true;
  }

  /// Waits for the frame files still being written and moves them into --frames (throws
  /// write_error if one failed). Without finish(), as when a run fails, they are removed.
  void finish() {
    if (!writer_) return;
    writer_->finish();
    try {
      staged_->commit();
    } catch (const io::output_error& e) {
      throw write_error(e.what());
    }
  }
  /// Frame files written so far (0 without --frames).
  std::uint64_t frames_written() const { return writer_ ? writer_->written() : 0; }

 private:
  using clock = std::chrono::steady_clock;

  /// The "frame" phase while it lives (a scope can be neither copied nor moved into an optional).
  struct timed_frame {
    sim::phase_timer::scope scope;
    explicit timed_frame(sim::phase_timer& t) : scope(t.phase("frame")) {}
  };

  double rate_now() const {
    const double s = std::chrono::duration<double>(clock::now() - started_).count();
    // Before the first step there is no rate yet: the overlay leaves the line out.
    return s > 0 && last_step_ > *first_step_ ? static_cast<double>(last_step_ - *first_step_) / s : -1.0;
  }

  window_input poll_window() {
    // Polling costs microseconds; a few hundred times a second is enough for keys.
    const auto now = clock::now();
    if (!paused_ && now - last_poll_ < std::chrono::milliseconds(4)) return {};
    last_poll_ = now;
    return window_->poll();
  }

  /// Applies the user's input; false to quit.
  bool handle(const window_input& in) {
    if (in.quit) return false;
    if (in.toggle_pause) paused_ = !paused_;
    if (in.step && paused_) single_ = true;
    if (in.screenshot) shot_requested_ = true;
    if (in.redraw) window_->redraw();
    return true;
  }

  /// Presents the canvas painted for `step` (waits for it: the window is interactive, not fast).
  /// `work_began`: when painting it started.
  bool show(std::uint64_t step, bool shot, clock::time_point work_began) {
    const auto before_sync = clock::now();
    arch::synchronize();
    const auto after_sync = clock::now();
    arch::copy_to_host(frame_.pixels.data(), canvas_.view().pixels, canvas_.bytes());
    std::vector<unsigned long long> v(values_.size());
    arch::copy_to_host(v.data(), values_.data(), values_.bytes());
    draw_overlay(frame_.view(), overlay_lines(o_.overlay, spec_.labels, v.data(), step, rate_now()));
    image back;
    window_->present(frame_.view(), shot ? &back : nullptr);
    // The next picture waits at least 9 times what this one cost: however slow drawing is (a
    // software renderer, a slow link to the X server), the window takes at most a tenth of the time.
    // Waiting for the steps queued before the picture is not its cost (cuda); painting is (cpu).
    const auto now = clock::now();
    present_cost_ = (before_sync - work_began) + (now - after_sync);
    last_present_ = now;
    if (shot) {
      shot_requested_ = false;
      const std::string path = frame_path(o_.frames.empty() ? "." : o_.frames, spec_.app + "_screenshot", step);
      write_png(path, back.view());
      if (!o_.quiet) std::fprintf(stderr, "%s: screenshot %s\n", spec_.app.c_str(), path.c_str());
    }
    const bool was_paused = paused_;
    window_->set_title(spec_.app + "  step " + std::to_string(step) + (paused_ ? "  (paused: space, n, s, q)" : ""));
    // Paused: wait here for keys, the loop resumes for one step on n.
    while (paused_ && !single_) {
      if (!handle(window_->wait(50))) return false;
      if (shot_requested_) return show(step, true, clock::now());
    }
    single_ = false;
    if (was_paused && !paused_) window_->set_title(spec_.app + "  step " + std::to_string(step));
    return true;
  }

  const sim::run_options& o_;
  scene_spec spec_;
  shoal::viz::canvas canvas_;
  arch::device_buffer<unsigned long long> values_;
  rect scene_{}, chart_area_{};
  std::optional<chart> chart_;
  std::uint64_t samples_ = 0;
  std::optional<io::staging_directory> staged_;  // before writer_: its threads end first
  std::unique_ptr<frame_writer> writer_;
  std::unique_ptr<window> window_;
  image frame_;
  clock::time_point started_, last_present_{}, last_poll_{};
  std::chrono::duration<double> interval_{1.0 / 60};
  std::chrono::duration<double> present_cost_{0};
  std::optional<std::uint64_t> first_step_;
  std::uint64_t last_step_ = 0;
  staging* last_capture_ = nullptr;  // the frame whose copy the next drawing must wait for
  bool paused_ = false, single_ = false, shot_requested_ = false;
};

}  // namespace shoal::viz
