// PNG writing and reading with stb (the only translation unit that holds stb's code).

#include "shoal/viz/png.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

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
}  // namespace

void write_png(const std::string& path, const image_view& img) {
  // stb reports failure without a reason: errno from fopen is the likeliest one.
  errno = 0;
  const int ok = stbi_write_png(path.c_str(), static_cast<int>(img.width), static_cast<int>(img.height), 4,
                                img.pixels, static_cast<int>(img.width * sizeof(pixel)));
  if (ok == 0)
    throw write_error("cannot write '" + path + "'" + (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
}

image read_png(const std::string& path) {
  int w = 0, h = 0, channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &w, &h, &channels, 4);
  if (data == nullptr) throw write_error("cannot read '" + path + "': " + stbi_failure_reason());
  image img(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h));
  std::memcpy(img.pixels.data(), data, img.pixels.size() * sizeof(pixel));
  stbi_image_free(data);
  return img;
}

std::string frame_path(const std::string& dir, const std::string& prefix, unsigned long long step) {
  char name[64];
  std::snprintf(name, sizeof name, "%s_%06llu.png", prefix.c_str(), step);
  return (std::filesystem::path(dir) / name).string();
}

}  // namespace shoal::viz
