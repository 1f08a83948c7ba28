// viz_png_tool: checks PNG files for the viewer's command-line tests (decoded with the same stb).
//   viz_png_tool size FILE W H     exit 0 when FILE decodes to a W x H image
//   viz_png_tool same A B          exit 0 when A and B decode to the same pixels
// Anything else: one line on stderr, exit 1.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "shoal/viz/png.hpp"

int main(int argc, char** argv) {
  namespace viz = shoal::viz;
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "size" && argc == 5) {
      const viz::image img = viz::read_png(argv[2]);
      const auto w = std::strtoul(argv[3], nullptr, 10), h = std::strtoul(argv[4], nullptr, 10);
      if (img.width == w && img.height == h) return 0;
      std::fprintf(stderr, "%s is %u x %u, expected %lu x %lu\n", argv[2], img.width, img.height, w, h);
      return 1;
    }
    if (mode == "same" && argc == 4) {
      const viz::image a = viz::read_png(argv[2]), b = viz::read_png(argv[3]);
      if (a.width != b.width || a.height != b.height) {
        std::fprintf(stderr, "%s is %u x %u, %s is %u x %u\n", argv[2], a.width, a.height, argv[3], b.width, b.height);
        return 1;
      }
      std::size_t differ = 0, first = 0;
      for (std::size_t k = a.pixels.size(); k-- > 0;)
        if (a.pixels[k] != b.pixels[k]) ++differ, first = k;
      if (differ == 0) return 0;
      std::fprintf(stderr, "%s and %s differ in %zu pixels, the first at (%zu, %zu)\n", argv[2], argv[3], differ,
                   first % a.width, first / a.width);
      return 1;
    }
    std::fprintf(stderr, "usage: viz_png_tool size FILE W H | same A B\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "viz_png_tool: %s\n", e.what());
  }
  return 1;
}
