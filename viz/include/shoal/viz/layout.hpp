#pragma once
/// @file
/// Default frame sizes, used when --frame-size is not given.

#include <algorithm>
#include <cstdint>

namespace shoal::viz {

/// A frame size in pixels.
struct extent {
  /// Pixels across.
  std::uint32_t width, height;  ///< pixels down
};

/// A grid of w x h cells drawn one pixel per cell, enlarged by a whole factor while its larger
/// side stays within 512 pixels (small grids stay visible and the overlay fits), or shrunk to
/// 1024 pixels on its larger side (a frame is for looking at, and stays cheap to encode).
inline extent grid_frame(std::uint64_t w, std::uint64_t h) {
  const std::uint64_t side = std::max<std::uint64_t>({w, h, 1});
  if (side <= 1024) {
    const std::uint64_t k = std::max<std::uint64_t>(1, 512 / side);
    return {static_cast<std::uint32_t>(w * k), static_cast<std::uint32_t>(h * k)};
  }
  return {static_cast<std::uint32_t>(std::max<std::uint64_t>(1, w * 1024 / side)),
          static_cast<std::uint32_t>(std::max<std::uint64_t>(1, h * 1024 / side))};
}

}  // namespace shoal::viz
