#pragma once
/// @file
/// A frame on the host: RGBA8 pixels, rows top to bottom, as the canvas's copy lands there and
/// as PNG files and SDL textures take it.

#include <cstdint>
#include <vector>

#include "shoal/viz/color.hpp"

namespace shoal::viz {

/// A view of host pixels owned elsewhere (a staging buffer, a vector).
struct image_view {
  pixel* pixels = nullptr;  ///< width * height pixels, row by row from the top
  /// Pixels across.
  std::uint32_t width = 0, height = 0;  ///< pixels down

  /// Pixel (x, y), unchecked: (x, y) must lie inside the image.
  pixel& at(std::uint32_t x, std::uint32_t y) const { return pixels[static_cast<std::size_t>(y) * width + x]; }
  /// Sets (x, y) if it lies inside the image (text and boxes may be clipped at the edges).
  void put(long long x, long long y, pixel p) const {
    if (x >= 0 && y >= 0 && x < width && y < height) at(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)) = p;
  }
};

/// An owning host image.
struct image {
  /// Pixels across.
  std::uint32_t width = 0, height = 0;  ///< pixels down
  std::vector<pixel> pixels;  ///< width * height pixels, row by row from the top

  image() = default;
  /// A w x h image with every pixel `fill` (transparent black by default).
  image(std::uint32_t w, std::uint32_t h, pixel fill = 0) : width(w), height(h), pixels(std::size_t{w} * h, fill) {}
  /// A view of its pixels, valid while the image keeps its size.
  image_view view() { return {pixels.data(), width, height}; }
};

}  // namespace shoal::viz
