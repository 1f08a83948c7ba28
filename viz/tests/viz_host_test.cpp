// The viewer's host side: the font, the overlay, PNG files and the frame writer threads.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "shoal/viz/font.hpp"
#include "shoal/viz/frame_writer.hpp"
#include "shoal/viz/overlay.hpp"
#include "shoal/viz/png.hpp"
#include "shoal/viz/viewer.hpp"
#include "test_support.hpp"

namespace viz = shoal::viz;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(testing::TempDir()) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST(VizFont, GlyphsFitTheirCellAndDiffer) {
  const std::string chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.,:/-+=%()_? ";
  std::set<viz::font::glyph> seen;
  for (char c : chars) {
    EXPECT_TRUE(viz::font::has(c)) << c;
    for (std::uint8_t row : viz::font::of(c)) EXPECT_LT(row, 32) << "glyph '" << c << "' is wider than 5";
    EXPECT_TRUE(seen.insert(viz::font::of(c)).second) << "glyph '" << c << "' looks like another";
  }
  EXPECT_EQ(viz::font::of('a'), viz::font::of('A'));
  EXPECT_FALSE(viz::font::has('#'));
  EXPECT_EQ(viz::font::of('#'), viz::font::of('?'));
  EXPECT_EQ(viz::font::text_width("ab", 1), 11);
  EXPECT_EQ(viz::font::text_width("ab", 2), 22);
}

TEST(VizOverlay, TextIsDrawnWhereTheGlyphSaysAndClipped) {
  viz::image img(20, 10, viz::rgba(0, 0, 0));
  const viz::pixel ink = viz::rgba(255, 255, 255);
  viz::draw_text(img.view(), 1, 2, "1-", ink);
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 5; ++x) {
      EXPECT_EQ(img.pixels[(2 + y) * 20 + 1 + x] == ink, viz::font::lit('1', x, y)) << x << "," << y;
      EXPECT_EQ(img.pixels[(2 + y) * 20 + 7 + x] == ink, viz::font::lit('-', x, y)) << x << "," << y;
    }
  EXPECT_EQ(img.pixels[0], viz::rgba(0, 0, 0));
  viz::draw_text(img.view(), 17, 8, "8", ink, 2);  // mostly outside: clipped, no write out of bounds
  EXPECT_EQ(img.pixels[8 * 20 + 19], ink) << "row 0, column 1 of the 8, scaled to x = 19";
  EXPECT_NE(img.pixels[9 * 20 + 17], ink) << "row 0, column 0 of the 8 is dark";
}

TEST(VizOverlay, LinesNameTheStepAndTheValues) {
  const unsigned long long v[3] = {5, 1234567, 42};
  EXPECT_EQ(viz::overlay_lines("stable", {"", "fish", "sharks"}, v, 1200, 99.5),
            (std::vector<std::string>{"step 1 200", "fish 1 234 567", "sharks 42"}));
  EXPECT_EQ(viz::overlay_lines("full", {"cars"}, v, 3, 12.25),
            (std::vector<std::string>{"step 3", "cars 5", "steps/s 12.2"}));
  EXPECT_EQ(viz::overlay_lines("full", {"cars"}, v, 0, -1.0), (std::vector<std::string>{"step 0", "cars 5"}));
  EXPECT_TRUE(viz::overlay_lines("none", {"cars"}, v, 3, 1.0).empty());
  viz::image img(200, 40, viz::rgba(200, 100, 40));
  viz::draw_overlay(img.view(), {"step 1"});
  EXPECT_EQ(img.pixels[199], viz::rgba(200, 100, 40)) << "right of the box: untouched";
  EXPECT_EQ(img.pixels[0], viz::rgba(50, 25, 10)) << "the box darkens the scene";
}

TEST(VizPng, WrittenFilesDecodeToThePixels) {
  const fs::path d = fresh_dir("viz_png");
  viz::image img(7, 5);
  for (std::size_t k = 0; k < img.pixels.size(); ++k)
    img.pixels[k] = viz::rgba(static_cast<std::uint32_t>(k * 37), static_cast<std::uint32_t>(k * 11), 200, 255);
  const std::string path = viz::frame_path(d.string(), "frame", 42);
  EXPECT_EQ(fs::path(path).filename(), "frame_000042.png");
  viz::write_png(path, img.view());
  const viz::image back = viz::read_png(path);
  EXPECT_EQ(back.width, 7u);
  EXPECT_EQ(back.height, 5u);
  EXPECT_EQ(back.pixels, img.pixels);
  EXPECT_THROW(viz::write_png((d / "missing" / "x.png").string(), img.view()), viz::write_error);
  EXPECT_THROW(viz::read_png((d / "nothing.png").string()), viz::write_error);
}

TEST(VizFrameWriter, WritesEveryFrameDecoratedWhileTheCallerGoesOn) {
  SHOAL_REQUIRE_DEVICE();
  const fs::path d = fresh_dir("viz_frames");
  std::atomic<int> decorated{0};
  viz::frame_writer w(d.string(), "frame", 16, 8, 1,
                      [&](viz::image_view img, const unsigned long long* v, std::uint64_t, double) {
                        img.at(0, 0) = viz::rgba(static_cast<std::uint32_t>(*v), 0, 0);
                        ++decorated;
                      },
                      2);
  shoal::arch::device_buffer<viz::pixel> canvas(16 * 8);
  shoal::arch::device_buffer<unsigned long long> value(1);
  std::vector<viz::pixel> host(16 * 8);
  // More frames than slots: acquire() must wait for a written one.
  const std::uint64_t frames = viz::frame_writer::slot_count(16, 8, 2) + 8;
  for (std::uint64_t step = 0; step < frames; ++step) {
    for (auto& p : host) p = viz::rgba(0, static_cast<std::uint32_t>(step * 3 % 256), 0);
    canvas.upload(host);
    value.write(0, step + 1);
    viz::staging& slot = w.acquire();
    slot.capture(canvas.data(), value.data());
    // As the viewer does: the next upload into the canvas and the values waits for this copy
    // (it runs on the slot's own stream; without this the next step's pixels could land in it).
    slot.before_next_drawing();
    w.submit(slot, step * 5, 1.0);
  }
  w.finish();
  EXPECT_EQ(w.written(), frames);
  EXPECT_EQ(decorated.load(), static_cast<int>(frames));
  for (std::uint64_t step = 0; step < frames; ++step) {
    const viz::image img = viz::read_png(viz::frame_path(d.string(), "frame", step * 5));
    ASSERT_EQ(img.width, 16u);
    ASSERT_EQ(img.height, 8u);
    EXPECT_EQ(img.pixels[0], viz::rgba(static_cast<std::uint32_t>(step + 1), 0, 0)) << "decorated with its values";
    EXPECT_EQ(img.pixels[5], viz::rgba(0, static_cast<std::uint32_t>(step * 3 % 256), 0)) << "its own canvas";
  }
}

TEST(VizFrameWriter, AFailedWriteIsReported) {
  SHOAL_REQUIRE_DEVICE();
  const fs::path d = fresh_dir("viz_frames_gone");
  viz::frame_writer w((d / "not-there").string(), "frame", 4, 4, 1, nullptr, 1);
  shoal::arch::device_buffer<viz::pixel> canvas(16);
  shoal::arch::device_buffer<unsigned long long> value(1);
  canvas.zero();
  value.zero();
  viz::staging& slot = w.acquire();
  slot.capture(canvas.data(), value.data());
  w.submit(slot, 0, 1.0);
  EXPECT_THROW(w.finish(), viz::write_error);
}
