// PNG files: writing them out, reading them with stb, and stb's encoder (the only translation
// unit that holds stb's code). The zlib encoder is in png_zlib.cpp.

#include "shoal/viz/png.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include "shoal/io/temporary_files.hpp"

namespace shoal::viz {

namespace {
// By default stb tries all five PNG row filters on every row and keeps the best: five times the
// work. Simulation frames are flat areas of few colours, where no filter at all compresses as
// well or better (an 819 x 1280 Wa-Tor frame: 169 KB in 204 ms against 220 KB in 519 ms with
// the trials, measured on the 2-core build machine); the zlib level matters little.
struct set_compression {
  set_compression() {
    stbi_write_force_png_filter = 0;
    stbi_write_png_compression_level = 4;
  }
} const once;

void append(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<std::uint8_t>*>(context);
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  out->insert(out->end(), bytes, bytes + size);
}

image to_image(unsigned char* data, int w, int h) {
  image img(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h));
  std::memcpy(img.pixels.data(), data, img.pixels.size() * sizeof(pixel));
  stbi_image_free(data);
  return img;
}

}  // namespace

void encode_png_stb(const image_view& img, std::vector<std::uint8_t>& out) {
  out.clear();
  if (stbi_write_png_to_func(append, &out, static_cast<int>(img.width), static_cast<int>(img.height), 4, img.pixels,
                             static_cast<int>(img.width * sizeof(pixel))) == 0)
    throw write_error("stb_image_write cannot encode a " + std::to_string(img.width) + " x " +
                      std::to_string(img.height) + " image");
}

#if !defined(SHOAL_VIZ_ZLIB)
void encode_png(const image_view& img, std::vector<std::uint8_t>& out) { encode_png_stb(img, out); }
const char* png_encoder() { return "stb"; }
#endif

void write_png(const std::string& path, const image_view& img) {
  // Each writer thread keeps its buffer from frame to frame: no allocation per frame.
  thread_local std::vector<std::uint8_t> bytes;
  encode_png(img, bytes);
  // Beside the target, renamed over it when whole: a run that fails or is interrupted never
  // leaves a half-written frame (nor destroys the frame of an earlier run that was there).
  // Frames are many and cheap to redo: no fsync.
  try {
    io::temporary_file f(path, "the frame", false);
    f.write(bytes.data(), bytes.size());
    f.commit(false);
  } catch (const io::output_error& e) {
    throw write_error(e.what());
  }
}

image read_png(const std::string& path) {
  int w = 0, h = 0, channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &w, &h, &channels, 4);
  if (data == nullptr) throw write_error("cannot read '" + path + "': " + stbi_failure_reason());
  return to_image(data, w, h);
}

image decode_png(const std::uint8_t* data, std::size_t size) {
  int w = 0, h = 0, channels = 0;
  unsigned char* pixels = stbi_load_from_memory(data, static_cast<int>(size), &w, &h, &channels, 4);
  if (pixels == nullptr) throw write_error(std::string("cannot decode a PNG: ") + stbi_failure_reason());
  return to_image(pixels, w, h);
}

std::string frame_path(const std::string& dir, const std::string& prefix, unsigned long long step) {
  char name[64];
  std::snprintf(name, sizeof name, "%s_%06llu.png", prefix.c_str(), step);
  return (std::filesystem::path(dir) / name).string();
}

}  // namespace shoal::viz
