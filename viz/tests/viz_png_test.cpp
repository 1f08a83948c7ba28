// The PNG encoders: whatever the image (a few colours or many, transparent or not, any size),
// the file decodes to exactly its pixels. With zlib, also the form the fast encoder chose
// (indexed at the smallest bit depth, else RGB or RGBA), which is what makes it fast.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <string>
#include <vector>

#include "shoal/viz/png.hpp"

namespace viz = shoal::viz;

namespace {

/// An image of w x h whose pixel k is colours[f(k) % colours.size()], f scrambling k so that
/// neighbours differ (the palette's slow path) while every colour appears when w * h allows.
viz::image scrambled(std::uint32_t w, std::uint32_t h, const std::vector<viz::pixel>& colours) {
  viz::image img(w, h);
  for (std::size_t k = 0; k < img.pixels.size(); ++k)
    img.pixels[k] = colours[(k < colours.size() ? k : k * 2654435761u >> 7) % colours.size()];
  return img;
}

/// n distinct opaque colours (distinct in red and green).
std::vector<viz::pixel> distinct(std::uint32_t n, std::uint32_t alpha = 255) {
  std::vector<viz::pixel> c;
  for (std::uint32_t k = 0; k < n; ++k) c.push_back(viz::rgba(k & 255, (k >> 8) * 40 + 7, 90, alpha));
  return c;
}

struct form {
  int bit_depth, colour_type;
};
/// The IHDR's bit depth and colour type (it is always the first chunk: bytes 24 and 25).
form form_of(const std::vector<std::uint8_t>& png) { return {png.at(24), png.at(25)}; }

bool has_chunk(const std::vector<std::uint8_t>& png, const char* type) {
  return std::search(png.begin(), png.end(), type, type + 4) != png.end();
}

/// Encodes img with encode_png and with stb, and checks that both decode to its pixels.
std::vector<std::uint8_t> round_trip(viz::image& img, const std::string& what) {
  std::vector<std::uint8_t> png, stb;
  viz::encode_png(img.view(), png);
  viz::encode_png_stb(img.view(), stb);
  for (const auto* bytes : {&png, &stb}) {
    const viz::image back = viz::decode_png(bytes->data(), bytes->size());
    EXPECT_EQ(back.width, img.width) << what;
    EXPECT_EQ(back.height, img.height) << what;
    EXPECT_TRUE(back.pixels == img.pixels) << what << (bytes == &png ? ": encode_png" : ": stb");
  }
  return png;
}

bool zlib_encoder() { return std::string(viz::png_encoder()) == "zlib"; }

}  // namespace

TEST(VizPngEncoder, FewColoursAreIndexedAtTheSmallestBitDepth) {
  // Colour counts at the edges of each bit depth; widths that fill whole bytes and that do not.
  const struct {
    std::uint32_t colours;
    int depth;
  } cases[] = {{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 4}, {16, 4}, {17, 8}, {200, 8}, {256, 8}};
  for (const auto& c : cases)
    for (const std::uint32_t w : {1u, 3u, 7u, 8u, 9u, 31u, 64u, 101u}) {
      viz::image img = scrambled(w, 37, distinct(c.colours));
      const std::string what = std::to_string(c.colours) + " colours, width " + std::to_string(w);
      const auto png = round_trip(img, what);
      // With fewer pixels than colours, not all colours appear (1 x 37 holds at most 37).
      if (zlib_encoder() && img.pixels.size() >= c.colours) {
        EXPECT_EQ(form_of(png).colour_type, 3) << what;
        EXPECT_EQ(form_of(png).bit_depth, c.depth) << what;
        EXPECT_FALSE(has_chunk(png, "tRNS")) << what << ": all opaque";
      }
    }
}

TEST(VizPngEncoder, ManyColoursAreWrittenAsRgbOrRgba) {
  viz::image opaque = scrambled(61, 47, distinct(257));  // one colour too many for a palette
  const auto rgb = round_trip(opaque, "257 opaque colours");
  viz::image gradient(300, 200);
  for (std::uint32_t y = 0; y < 200; ++y)
    for (std::uint32_t x = 0; x < 300; ++x) gradient.pixels[y * 300 + x] = viz::rgba(x, y, x ^ y);
  const auto rgb2 = round_trip(gradient, "a gradient of 60 000 colours");
  viz::image translucent = scrambled(61, 47, distinct(257, 128));
  const auto rgba = round_trip(translucent, "257 translucent colours");
  if (zlib_encoder()) {
    EXPECT_EQ(form_of(rgb).colour_type, 2);
    EXPECT_EQ(form_of(rgb2).colour_type, 2);
    EXPECT_EQ(form_of(rgba).colour_type, 6);
    EXPECT_EQ(form_of(rgba).bit_depth, 8);
  }
}

TEST(VizPngEncoder, TransparencyIsKeptExactly) {
  // Fully transparent pixels keep their colour too (a PNG could store them all as one entry).
  viz::image img = scrambled(13, 11, {viz::rgba(0, 0, 0, 0), viz::rgba(10, 20, 30, 0), viz::rgba(10, 20, 30, 255),
                                      viz::rgba(200, 100, 50, 77), viz::rgba(1, 2, 3, 254)});
  const auto png = round_trip(img, "indexed with alpha");
  if (zlib_encoder()) {
    EXPECT_EQ(form_of(png).colour_type, 3);
    EXPECT_TRUE(has_chunk(png, "tRNS"));
  }
  // One translucent pixel in an opaque frame of many colours: RGBA, not RGB.
  viz::image many = scrambled(40, 40, distinct(300));
  many.pixels[777] = viz::rgba(5, 5, 5, 254);
  const auto png2 = round_trip(many, "many colours, one translucent");
  if (zlib_encoder()) EXPECT_EQ(form_of(png2).colour_type, 6);
}

TEST(VizPngEncoder, TinyAndOddSizes) {
  for (const auto& [w, h] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {1, 1}, {1, 9}, {9, 1}, {2, 3}, {5, 7}, {17, 3}, {255, 1}, {1, 255}, {819, 5}}) {
    const std::string what = std::to_string(w) + " x " + std::to_string(h);
    viz::image one(w, h, viz::rgba(0, 0, 0, 0));
    round_trip(one, what + ", one transparent black colour");
    viz::image few = scrambled(w, h, distinct(6));
    round_trip(few, what + ", 6 colours");
    viz::image many = scrambled(w, h, distinct(1000, 200));
    round_trip(many, what + ", up to 1000 colours");
  }
}

TEST(VizPngEncoder, TheSameImageGivesTheSameBytes) {
  // Frames of a run with --overlay stable must be the same files every time; the encoder's
  // per-thread state (the deflate stream, the buffers) must not leak from one image to the next.
  viz::image a = scrambled(64, 32, distinct(9)), b = scrambled(50, 20, distinct(400));
  std::vector<std::uint8_t> first, other, again;
  viz::encode_png(a.view(), first);
  viz::encode_png(b.view(), other);
  viz::encode_png(a.view(), again);
  EXPECT_EQ(first, again);
}
