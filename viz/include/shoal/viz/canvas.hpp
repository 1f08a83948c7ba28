#pragma once
/// @file
/// The canvas: an RGBA8 image in device memory that apps draw into with do-alls and launches on
/// the active backend, where their data is; the viewer copies it to the host once per frame.
///
///   viz::canvas c(640, 480);
///   viz::clear(c.view(), c.view().whole(), viz::rgba(0, 0, 0));
///   shoal::arch::for_each_index(n, [=] SHOAL_DEVICE (std::size_t i) { ... v.set(x, y, colour); });

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/viz/color.hpp"

namespace shoal::viz {

/// A rectangle of the canvas, in pixels.
struct rect {
  /// @var x
  /// Left column.
  /// @var y
  /// Top row (row 0 is the top of the image).
  /// @var width
  /// Columns.
  /// @var height
  /// Rows.
  std::uint32_t x = 0, y = 0, width = 0, height = 0;
  /// Pixels in the rectangle.
  SHOAL_HD std::uint64_t area() const { return std::uint64_t{width} * height; }
};

/// The canvas as device code sees it (trivially copyable). Row y starts at pixels + y * width;
/// row 0 is the top of the image.
struct canvas_view {
  pixel* pixels;  ///< width * height pixels in device memory, row by row
  /// Columns.
  std::uint32_t width, height;  ///< rows

  /// The whole canvas as a rectangle.
  SHOAL_HD rect whole() const { return {0, 0, width, height}; }
  /// Sets pixel (x, y); unchecked, so (x, y) must lie on the canvas.
  SHOAL_HD void set(std::uint32_t x, std::uint32_t y, pixel p) const { pixels[std::size_t{y} * width + x] = p; }
  /// Pixel (x, y); unchecked, as set().
  SHOAL_HD pixel get(std::uint32_t x, std::uint32_t y) const { return pixels[std::size_t{y} * width + x]; }
};

/// Largest canvas side: a frame is meant to be looked at, and 2^14 keeps pixel counts in 2^28.
inline constexpr std::uint32_t max_side = 16384;

/// Owner of a canvas's device memory.
class canvas {
 public:
  /// A canvas of width x height pixels, not cleared; throws std::invalid_argument for a side
  /// outside 1..max_side.
  canvas(std::uint32_t width, std::uint32_t height) : pixels_(checked_area(width, height)), width_(width), height_(height) {}

  /// What device code draws through.
  canvas_view view() const { return {pixels_.data(), width_, height_}; }
  /// Columns.
  std::uint32_t width() const { return width_; }
  /// Rows.
  std::uint32_t height() const { return height_; }
  /// Size of the pixels in bytes (4 per pixel).
  std::size_t bytes() const { return pixels_.bytes(); }

 private:
  static std::size_t checked_area(std::uint32_t width, std::uint32_t height) {
    if (width == 0 || height == 0 || width > max_side || height > max_side)
      throw std::invalid_argument("canvas size " + std::to_string(width) + " x " + std::to_string(height) +
                                  " is outside 1.." + std::to_string(max_side));
    return std::size_t{width} * height;
  }
  arch::device_buffer<pixel> pixels_;
  std::uint32_t width_, height_;
};

/// Fills `area` of the canvas with one colour (a launch over its pixels).
inline void clear(canvas_view c, rect area, pixel colour) {
  arch::for_each_index(area.area(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto x = static_cast<std::uint32_t>(i % area.width), y = static_cast<std::uint32_t>(i / area.width);
    c.set(area.x + x, area.y + y, colour);
  });
}

}  // namespace shoal::viz
