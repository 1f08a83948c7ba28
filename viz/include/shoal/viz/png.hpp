#pragma once
/// @file
/// PNG files: no display and no SDL2 needed, so frames can be written on a headless GPU node.
/// With zlib in the build (viz/src/png_zlib.cpp) frames are encoded for speed: zlib level 1
/// with run-length matching, no row filters, and an indexed-colour image when the frame has at
/// most 256 colours (as simulation frames do). Without zlib, stb_image_write encodes them
/// (viz/src/png.cpp). Either way the file decodes to exactly the pixels given, alpha included.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

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

/// The PNG file of img, in `out` (replaced; its capacity is reused). The encoder write_png uses.
void encode_png(const image_view& img, std::vector<std::uint8_t>& out);
/// The same image encoded by stb_image_write, the encoder of builds without zlib (benchmarks
/// compare the two).
void encode_png_stb(const image_view& img, std::vector<std::uint8_t>& out);
/// "zlib" or "stb": which encoder encode_png is in this build.
const char* png_encoder();

/// Decodes a PNG held in memory as RGBA (tests). Throws write_error.
image decode_png(const std::uint8_t* data, std::size_t size);

/// "DIR/frame_000042.png": the name of step 42's frame (at least six digits, so that names
/// sort in step order).
std::string frame_path(const std::string& dir, const std::string& prefix, unsigned long long step);

}  // namespace shoal::viz
