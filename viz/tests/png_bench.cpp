// viz_png_bench: times the PNG encoders on real frames (files an app wrote with --frames).
//   viz_png_bench [--repeat N] [--no-stb] FILE...
// For each file: its colours, then per encoder (stb_image_write, the fallback; encode_png, the
// one this build uses) the time per encode (best of N, in memory: no disk) and the size, after
// checking that the encoded file decodes to the same pixels. A summary line per encoder sums
// the times and sizes. Exit 1 when an encoding does not decode to its pixels.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <unordered_set>
#include <vector>

#include "shoal/viz/png.hpp"

namespace viz = shoal::viz;

namespace {

using encoder = void (*)(const viz::image_view&, std::vector<std::uint8_t>&);

struct result {
  double seconds = 0;
  std::size_t bytes = 0;
};

result measure(encoder encode, viz::image& img, int repeat, const char* file, const char* name) {
  std::vector<std::uint8_t> out;
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    encode(img.view(), out);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const viz::image back = viz::decode_png(out.data(), out.size());
  if (back.width != img.width || back.height != img.height || back.pixels != img.pixels) {
    std::fprintf(stderr, "%s: the %s encoding does not decode to the same pixels\n", file, name);
    std::exit(1);
  }
  return {best, out.size()};
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5, first = 1;
  bool skip_stb = false;
  for (;;) {
    if (first + 1 < argc && std::string(argv[first]) == "--repeat") {
      repeat = std::max(1, std::atoi(argv[first + 1]));
      first += 2;
    } else if (first < argc && std::string(argv[first]) == "--no-stb") {
      skip_stb = true;
      ++first;
    } else {
      break;
    }
  }
  if (first >= argc) {
    std::fprintf(stderr, "usage: viz_png_bench [--repeat N] [--no-stb] FILE...\n");
    return 1;
  }
  try {
    result stb_sum, new_sum;
    std::printf("%-40s %11s %7s %11s %10s %11s %10s\n", "file", "size", "colours", "stb ms", "stb bytes",
                (viz::png_encoder() + std::string(" ms")).c_str(), "bytes");
    for (int k = first; k < argc; ++k) {
      viz::image img = viz::read_png(argv[k]);
      const std::unordered_set<viz::pixel> colours(img.pixels.begin(), img.pixels.end());
      const result s = skip_stb ? result{} : measure(viz::encode_png_stb, img, repeat, argv[k], "stb");
      const result n = measure(viz::encode_png, img, repeat, argv[k], viz::png_encoder());
      std::printf("%-40s %5ux%-5u %7zu %11.2f %10zu %11.2f %10zu\n", argv[k], img.width, img.height, colours.size(),
                  s.seconds * 1e3, s.bytes, n.seconds * 1e3, n.bytes);
      stb_sum.seconds += s.seconds, stb_sum.bytes += s.bytes;
      new_sum.seconds += n.seconds, new_sum.bytes += n.bytes;
    }
    const double frames = argc - first;
    std::printf("mean per frame: stb %.2f ms %.0f bytes, %s %.2f ms %.0f bytes (%.1fx faster, %.2fx the size)\n",
                stb_sum.seconds * 1e3 / frames, stb_sum.bytes / frames, viz::png_encoder(),
                new_sum.seconds * 1e3 / frames, new_sum.bytes / frames, stb_sum.seconds / new_sum.seconds,
                static_cast<double>(new_sum.bytes) / static_cast<double>(stb_sum.bytes));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "viz_png_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
