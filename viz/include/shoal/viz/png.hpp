#pragma once
/// @file
/// PNG files through stb_image_write (viz/src/png.cpp): no display and no SDL2 needed, so
/// frames can be written on a headless GPU node.

#include <stdexcept>
#include <string>

#include "shoal/viz/image.hpp"

namespace shoal::viz {

/// A frame that could not be written (disk full, directory gone).
struct write_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Writes img as an 8-bit RGBA PNG at `path` (replacing it). Throws write_error.
void write_png(const std::string& path, const image_view& img);

/// Reads a PNG as RGBA (tests and tools). Throws write_error naming the file when it cannot.
image read_png(const std::string& path);

/// "DIR/frame_000042.png": the name of step 42's frame (at least six digits, so that names
/// sort in step order).
std::string frame_path(const std::string& dir, const std::string& prefix, unsigned long long step);

}  // namespace shoal::viz
