// The canvas painted on the device, on both backends: Wa-Tor's grid checked pixel by pixel
// against the grid's own state and pinned by checksum (the same scene must give the same bytes
// on cpu and cuda), n-body's splats, and the chart's lines and history.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "nbody_view.hpp"
#include "shoal/viz/canvas.hpp"
#include "shoal/viz/chart.hpp"
#include "test_support.hpp"
#include "wator_view.hpp"

namespace viz = shoal::viz;

namespace {

std::vector<viz::pixel> download(const viz::canvas& c) {
  std::vector<viz::pixel> px(std::size_t{c.width()} * c.height());
  shoal::arch::copy_to_host(px.data(), c.view().pixels, c.bytes());
  return px;
}

/// FNV-1a over the pixels' bytes.
std::uint64_t checksum(const std::vector<viz::pixel>& px) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (viz::pixel p : px)
    for (int k = 0; k < 4; ++k) h = (h ^ ((p >> (8 * k)) & 255u)) * 0x100000001b3ull;
  return h;
}

struct wator_scene {
  std::vector<wator::cell_state> cells;
  std::vector<viz::pixel> pixels;
};

/// A 24 x 16 Wa-Tor grid after 3 steps of seed 7, painted into a w x h frame.
wator_scene paint_wator(std::uint32_t w, std::uint32_t h) {
  shoal::runtime<wator::Ocean> rt(std::size_t{4} << 20);
  wator::ocean ocean(24, 16, 7);
  const wator::grid& g = ocean.view();
  shoal::sim::phase_timer timer(false);
  wator::populate(rt, g);
  for (std::uint32_t s = 1; s <= 3; ++s) wator::step(rt, g, s, timer);
  viz::canvas c(w, h);
  viz::clear(c.view(), c.view().whole(), viz::rgba(1, 2, 3));
  wator::view::paint(rt, g, c.view(), {0, 0, w, h - 4});  // the bottom 4 rows stay as cleared
  rt.synchronize();
  return {wator::snapshot(rt, g), download(c)};
}

/// Bodies placed by hand: (x, y, mass).
struct placed {
  float x, y, mass;
};

std::vector<viz::pixel> paint_bodies(const std::vector<placed>& bodies, std::uint32_t w, std::uint32_t h) {
  shoal::runtime<nbody::Space> rt(std::size_t{4} << 20);
  shoal::arch::device_buffer<placed> where(bodies.size());
  where.upload(bodies);
  const placed* p = where.data();
  rt.launch(bodies.size(), [=] SHOAL_DEVICE(std::size_t i) { new nbody::Body(p[i].x, p[i].y, 0.0f, 0.0f, p[i].mass); });
  viz::canvas c(w, h);
  nbody::view::painter painter(c.view().whole(), 1000.0f);
  painter.paint(rt, c.view());
  rt.synchronize();
  return download(c);
}

/// Offers `samples` (one value per sample, one series) to a chart `width` wide expecting
/// `expected` samples, and draws it into a width x height canvas.
struct chart_result {
  std::vector<viz::pixel> pixels;
  std::uint32_t samples;
};
chart_result draw_series(const std::vector<unsigned long long>& samples, std::uint32_t width, std::uint32_t height,
                         std::uint64_t expected) {
  viz::chart chart(width, {viz::rgba(255, 0, 0)}, expected);
  shoal::arch::device_buffer<unsigned long long> value(1);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    value.write(0, samples[k]);
    chart.offer(k, value.data());
  }
  viz::canvas c(width, height);
  viz::draw_chart(c.view(), c.view().whole(), chart.view());
  shoal::arch::synchronize();
  return {download(c), chart.samples()};
}

}  // namespace

TEST(VizCanvas, WatorPixelsShowTheCellsUnderThem) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t w = 48, h = 36;  // 2 x 2 pixels per cell, 4 rows below the grid
  const wator_scene s = paint_wator(w, h);
  const viz::pixel colour[3] = {wator::view::water, wator::view::fish, wator::view::shark};
  int kinds[3] = {0, 0, 0};
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) {
      const viz::pixel got = s.pixels[std::size_t{y} * w + x];
      if (y >= h - 4) {
        ASSERT_EQ(got, viz::rgba(1, 2, 3)) << "outside the area: untouched at " << x << "," << y;
        continue;
      }
      const std::uint32_t cx = x * 24 / w, cy = y * 16 / (h - 4);
      const int kind = s.cells[std::size_t{cy} * 24 + cx].kind;
      ASSERT_EQ(got, colour[kind]) << "pixel " << x << "," << y << " cell " << cx << "," << cy;
      ++kinds[kind];
    }
  EXPECT_GT(kinds[0], 0);  // the scene has all three, or the check above proves little
  EXPECT_GT(kinds[1], 0);
  EXPECT_GT(kinds[2], 0);
}

TEST(VizCanvas, WatorCanvasChecksumIsPinnedOnBothBackends) {
  SHOAL_REQUIRE_DEVICE();
  // Recorded on the cpu backend; the cuda build must paint the same bytes (deterministic model,
  // integer colours).
  EXPECT_EQ(checksum(paint_wator(48, 36).pixels), 3739561291511036557ull);
}

TEST(VizCanvas, BodiesAreSplattedByMass) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t w = 40, h = 20;
  // x = 0.5 -> column 20; y = 0.5 -> row 10 (y grows upwards). Two heavy bodies share a pixel.
  const auto px = paint_bodies({{0.5f, 0.5f, 1000.0f}, {0.125f, 0.875f, 0.0f}, {0.75f, 0.25f, 500.0f}, {0.75f, 0.25f, 500.0f}},
                               w, h);
  auto at = [&](std::uint32_t x, std::uint32_t y) { return px[std::size_t{y} * w + x]; };
  EXPECT_EQ(at(20, 10), nbody::view::tone(256));       // centre of the heaviest: 64 + 192
  EXPECT_EQ(at(21, 10), nbody::view::tone(256 / 3));   // its cross
  EXPECT_EQ(at(20, 9), nbody::view::tone(256 / 3));
  EXPECT_EQ(at(21, 11), nbody::view::tone(0));         // not its diagonal
  EXPECT_EQ(at(5, 2), nbody::view::tone(64));          // x = 0.125 -> 5, y = 0.875 -> row 2: the lightest
  EXPECT_EQ(at(30, 15), nbody::view::tone(2 * 160));   // two bodies of mass 500 add up
  EXPECT_EQ(at(0, 19), nbody::view::tone(0));
  EXPECT_NE(nbody::view::tone(2 * 160), nbody::view::tone(160)) << "brightness must grow with light";
}

TEST(VizChart, LinesJoinTheSamplesAcrossThePanel) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t w = 8, h = 9;
  const auto r = draw_series({0, 10, 5}, w, h, 4);  // 4 samples expected over 8 columns
  ASSERT_EQ(r.samples, 3u);
  const viz::pixel line = viz::rgba(255, 0, 0);
  auto lit = [&](std::uint32_t x, std::uint32_t y) { return r.pixels[std::size_t{y} * w + x] == line; };
  // Peak 10 at row 0, 0 at row 8. Column x is at sample x * 3 / 7, interpolated: values 0, 4,
  // 8, 9, 7 in columns 0..4 (rows 8, 5, 2, 1, 3); column 5 lies past the last sample.
  auto column = [&](std::uint32_t x, std::uint32_t top, std::uint32_t bottom) {
    for (std::uint32_t y = 0; y < h; ++y)
      EXPECT_EQ(lit(x, y), y >= top && y <= bottom) << "column " << x << " row " << y;
  };
  column(0, 8, 8);
  column(1, 5, 8);
  column(2, 2, 5);
  column(3, 1, 2);
  column(4, 1, 3);
  for (std::uint32_t x = 5; x < w; ++x) column(x, h, h);  // nothing drawn
}

TEST(VizChart, AFullHistoryKeepsEverySecondSample) {
  SHOAL_REQUIRE_DEVICE();
  // Width 4: the fifth sample halves the history to samples 0, 2 and keeps 4: 100, 50, 25.
  const auto r = draw_series({100, 0, 50, 0, 25}, 4, 5, 5);
  EXPECT_EQ(r.samples, 3u);
  const viz::pixel line = viz::rgba(255, 0, 0);
  auto lit = [&](std::uint32_t x, std::uint32_t y) { return r.pixels[std::size_t{y} * 4 + x] == line; };
  // Peak 100 at row 0. Columns at samples 0, 2/3, 4/3, 2: values 100, 67, 42, 25 (rows 0, 2, 3, 3).
  EXPECT_TRUE(lit(0, 0));
  EXPECT_TRUE(lit(1, 2));
  EXPECT_FALSE(lit(1, 3)) << "the dropped sample 1 (0) would pull the line down";
  EXPECT_FALSE(lit(1, 4));
  EXPECT_TRUE(lit(2, 3));
  EXPECT_FALSE(lit(2, 4));
  EXPECT_TRUE(lit(3, 3));
  EXPECT_FALSE(lit(3, 4));
}
