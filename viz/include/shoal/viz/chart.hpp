#pragma once
/// @file
/// A line chart of a few time series (Wa-Tor's fish and sharks), kept and drawn on the device:
/// each frame appends the values the app counted there (no copy to the host, no wait), and a
/// launch over the panel's pixels draws the lines. When the history fills the panel's width it
/// keeps every second sample and from then on records every second frame, so the chart always
/// spans the whole run in at most one sample per column.

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/viz/canvas.hpp"

namespace shoal::viz {

/// What the panel launch reads (trivially copyable).
struct chart_view {
  const unsigned long long* history;  ///< sample k, series s at history[k * series + s]
  const unsigned long long* peak;     ///< largest value recorded (the top of the panel)
  const pixel* colours;               ///< one per series
  /// Time series drawn (values per sample).
  std::uint32_t series, samples;  ///< samples recorded so far
  std::uint32_t span;  ///< samples the panel's width stands for (>= samples): the run's length
};

namespace detail {

/// Raises `word` to v if v is larger (atomic max from compare-exchange).
SHOAL_HD inline void raise_to(unsigned long long& word, unsigned long long v) {
  unsigned long long seen = arch::load_relaxed(word);
  while (v > seen && !arch::compare_exchange(word, seen, v)) {
  }
}

/// Row of the panel (0 at the top) for value v, with `peak` at the top row and 0 at the bottom.
SHOAL_HD inline std::uint32_t chart_row(unsigned long long v, unsigned long long peak, std::uint32_t height) {
  if (peak == 0) return height - 1;
  const unsigned long long span = height - 1;
  return static_cast<std::uint32_t>(span - (v > peak ? peak : v) * span / peak);
}

/// Sample position of column x in 1/256 of a sample (fixed point: the same on every backend).
SHOAL_HD inline std::uint64_t chart_position(const chart_view& ch, std::uint32_t x, std::uint32_t width) {
  return width <= 1 || ch.span <= 1 ? 0 : std::uint64_t{x} * (ch.span - 1) * 256 / (width - 1);
}
/// True when column x lies within the samples recorded so far.
SHOAL_HD inline bool chart_drawn(const chart_view& ch, std::uint32_t x, std::uint32_t width) {
  const std::uint64_t pos = chart_position(ch, x, width);
  return (pos >> 8) + ((pos & 255) != 0 ? 1 : 0) < ch.samples;
}
/// Series s at column x, linearly interpolated between the two samples around it.
SHOAL_HD inline unsigned long long chart_value(const chart_view& ch, std::uint32_t s, std::uint32_t x,
                                               std::uint32_t width) {
  const std::uint64_t pos = chart_position(ch, x, width), j = pos >> 8, frac = pos & 255;
  const long long a = static_cast<long long>(ch.history[j * ch.series + s]);
  if (frac == 0) return static_cast<unsigned long long>(a);
  const long long b = static_cast<long long>(ch.history[(j + 1) * ch.series + s]);
  return static_cast<unsigned long long>(a + (b - a) * static_cast<long long>(frac) / 256);
}

/// Copies the frame's values into sample `k` and raises the peak (one thread: a few words).
inline void record_sample(unsigned long long* history, unsigned long long* peak, const unsigned long long* values,
                          std::uint32_t series, std::uint32_t k) {
  arch::for_each_index(1, [=] SHOAL_DEVICE(std::size_t) {
    for (std::uint32_t s = 0; s < series; ++s) {
      history[std::size_t{k} * series + s] = values[s];
      raise_to(*peak, values[s]);
    }
  });
}

/// Keeps samples 0, 2, 4, ... of `samples` as 0, 1, 2, ...: gathered into scratch first, since
/// in place one thread would overwrite a sample that another has still to read.
inline void halve_samples(unsigned long long* history, unsigned long long* scratch, std::uint32_t series,
                          std::uint32_t samples) {
  const std::size_t kept = (samples + 1) / 2;
  arch::for_each_index(kept * series, [=] SHOAL_DEVICE(std::size_t i) {
    const std::size_t k = i / series, s = i % series;
    scratch[i] = history[2 * k * series + s];
  });
  arch::copy_on_device(history, scratch, kept * series * sizeof(unsigned long long));
}

}  // namespace detail

/// Draws the chart into `area`: a dark background, a faint line at half the peak, and one
/// line per series joining each column's sample to the previous one.
inline void draw_chart(canvas_view c, rect area, chart_view ch) {
  const pixel background = rgba(16, 18, 24), rule = rgba(48, 52, 64);
  arch::for_each_index(area.area(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto x = static_cast<std::uint32_t>(i % area.width), y = static_cast<std::uint32_t>(i / area.width);
    pixel p = y == 0 ? rule : background;
    const unsigned long long peak = *ch.peak;
    if (y == area.height / 2) p = rule;
    // Column x shows the run at sample position x * (span - 1) / (width - 1), interpolated
    // between samples; a line joins it to the previous column.
    if (detail::chart_drawn(ch, x, area.width))
      for (std::uint32_t s = 0; s < ch.series; ++s) {
        const std::uint32_t r1 = detail::chart_row(detail::chart_value(ch, s, x, area.width), peak, area.height);
        const std::uint32_t r0 =
            detail::chart_row(detail::chart_value(ch, s, x == 0 ? 0 : x - 1, area.width), peak, area.height);
        const std::uint32_t lo = r0 < r1 ? r0 : r1, hi = r0 < r1 ? r1 : r0;
        if (y >= lo && y <= hi) p = ch.colours[s];
      }
    c.set(area.x + x, area.y + y, p);
  });
}

/// The history of a chart `width` columns wide.
class chart {
 public:
  /// `expected`: samples the run will offer (the x axis spans them; more are fine).
  chart(std::uint32_t width, const std::vector<pixel>& colours, std::uint64_t expected)
      : expected_(expected), width_(width), series_(static_cast<std::uint32_t>(colours.size())),
        history_(std::size_t{width} * colours.size()), scratch_(std::size_t{width} * colours.size()), peak_(1),
        colours_(colours.size()) {
    if (width == 0 || colours.empty()) throw std::invalid_argument("a chart needs a width and a series");
    colours_.upload(colours);
    peak_.zero();
  }

  /// Appends the values of frame `frame` (0, 1, 2, ...; every frame is offered, and every
  /// stride-th is kept). `values`: device words, one per series. Enqueued, no wait.
  void offer(std::uint64_t frame, const unsigned long long* values) {
    if (frame % stride_ != 0) return;
    if (samples_ == width_) {
      detail::halve_samples(history_.data(), scratch_.data(), series_, samples_);
      samples_ = (samples_ + 1) / 2;
      stride_ *= 2;
      if (frame % stride_ != 0) return;
    }
    detail::record_sample(history_.data(), peak_.data(), values, series_, samples_);
    ++samples_;
  }

  /// What draw_chart() takes: the history as it stands.
  chart_view view() const {
    const std::uint64_t span = std::max<std::uint64_t>((expected_ + stride_ - 1) / stride_, samples_);
    return {history_.data(), peak_.data(), colours_.data(), series_, samples_,
            static_cast<std::uint32_t>(std::min<std::uint64_t>(std::max<std::uint64_t>(span, 1), width_))};
  }
  /// Samples held now (at most the width: older ones are thinned as the run goes on).
  std::uint32_t samples() const { return samples_; }

 private:
  std::uint64_t expected_;
  std::uint32_t width_, series_;
  arch::device_buffer<unsigned long long> history_, scratch_, peak_;
  arch::device_buffer<pixel> colours_;
  std::uint32_t samples_ = 0;
  std::uint64_t stride_ = 1;
};

}  // namespace shoal::viz
