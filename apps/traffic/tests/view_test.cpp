// The traffic frame painter (traffic_view.hpp) on hand-built networks, pixel for pixel, on the
// active backend: the canvas is painted on the device, read back, and compared with an image
// worked out here from the painter's documented rules only (background, street, intersection and
// car colours; the slowest car on a pixel wins; a point (x, y) of the unit square lies on pixel
// (x * width, (1 - y) * height), clamped to the area). Compiled for both backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "scenario.hpp"
#include "shoal/viz/canvas.hpp"
#include "test_support.hpp"
#include "traffic_view.hpp"

namespace traffic::test {
namespace {

namespace viz = shoal::viz;

// The documented colours, written out rather than taken from the painter.
constexpr viz::pixel background = viz::rgba(14, 16, 20);
constexpr viz::pixel street_grey = viz::rgba(84, 90, 104);
constexpr viz::pixel intersection_white = viz::rgba(220, 220, 220);
constexpr viz::pixel untouched = viz::rgba(1, 2, 3);  // the canvas outside the painter's area

std::vector<viz::pixel> download(const viz::canvas& c) {
  std::vector<viz::pixel> px(std::size_t{c.width()} * c.height());
  shoal::arch::copy_to_host(px.data(), c.view().pixels, c.bytes());
  return px;
}

std::string colour_name(viz::pixel p) {
  std::ostringstream s;
  s << "rgba(" << viz::red(p) << "," << viz::green(p) << "," << viz::blue(p) << "," << ((p >> 24) & 255u) << ")";
  return s.str();
}

/// The expected image of an area of a w x h canvas: what each pixel of the area shows, by level
/// (background < street < intersection < car; among cars the slowest).
class expected_image {
 public:
  expected_image(std::uint32_t canvas_width, std::uint32_t canvas_height, viz::rect area, std::uint32_t top)
      : w_(canvas_width), h_(canvas_height), area_(area), top_(top), level_(area.area(), 0) {}

  void street(std::uint32_t x, std::uint32_t y) { raise(x, y, 1); }
  void intersection(std::uint32_t x, std::uint32_t y) { raise(x, y, 2); }
  void car(std::uint32_t x, std::uint32_t y, std::uint32_t speed) {
    raise(x, y, 3);
    const auto key = std::make_pair(x, y);
    const auto it = slowest_.find(key);
    if (it == slowest_.end() || speed < it->second) slowest_[key] = speed;
  }

  /// The whole canvas: untouched outside the area.
  std::vector<viz::pixel> pixels() const {
    std::vector<viz::pixel> px(std::size_t{w_} * h_, untouched);
    for (std::uint32_t y = 0; y < area_.height; ++y)
      for (std::uint32_t x = 0; x < area_.width; ++x) {
        viz::pixel p = background;
        switch (level_[std::size_t{y} * area_.width + x]) {
          case 1: p = street_grey; break;
          case 2: p = intersection_white; break;
          case 3: p = view::detail::car_colour(slowest_.at(std::make_pair(x, y)), top_); break;
          default: break;
        }
        px[std::size_t{area_.y + y} * w_ + area_.x + x] = p;
      }
    return px;
  }

 private:
  void raise(std::uint32_t x, std::uint32_t y, int level) {
    int& l = level_.at(std::size_t{y} * area_.width + x);
    l = std::max(l, level);
  }
  std::uint32_t w_, h_;
  viz::rect area_;
  std::uint32_t top_;
  std::vector<int> level_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> slowest_;  // (x, y) in the area
};

/// Every pixel of the canvas; the first difference, with both colours, fails the test.
::testing::AssertionResult same_pixels(const std::vector<viz::pixel>& got, const std::vector<viz::pixel>& want,
                                       std::uint32_t w, viz::rect area) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " pixels, expected " << want.size();
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && wrong++ == 0) first = i;
  if (wrong == 0) return ::testing::AssertionSuccess();
  const auto x = static_cast<std::uint32_t>(first % w), y = static_cast<std::uint32_t>(first / w);
  return ::testing::AssertionFailure()
         << wrong << " pixel(s) differ; the first at canvas (" << x << "," << y << ") = area ("
         << static_cast<std::int64_t>(x) - area.x << "," << static_cast<std::int64_t>(y) - area.y
         << "): painted " << colour_name(got[first]) << ", expected " << colour_name(want[first]);
}

/// Paints `sim` into `area` of a w x h canvas cleared to `untouched`; returns the pixels.
std::vector<viz::pixel> paint(simulation& sim, const network& net, std::uint32_t w, std::uint32_t h, viz::rect area) {
  viz::canvas c(w, h);
  viz::clear(c.view(), c.view().whole(), untouched);
  view::painter painter(net, area, sim.params().max_speed);
  shoal::arch::device_buffer<unsigned long long> values(tally_count);
  values.zero();
  painter.count(sim, values.data());  // a frame is count() then paint(), as the viewer calls them
  painter.paint(sim, c.view());
  sim.runtime().synchronize();
  // What the overlay shows: the frame's own count of cars and standing cars against the census.
  const census_result census = sim.census();
  const std::vector<unsigned long long> shown = values.download();
  EXPECT_EQ(shown[tally_cars], census.cars);
  EXPECT_EQ(shown[tally_stopped], census.stopped);
  return download(c);
}

TEST(TrafficView, CarColoursRunFromRedToGreen) {
  // The ends of the scale, written out: standing is red, top speed green; the rest lies between.
  EXPECT_EQ(view::detail::car_colour(0, 9), viz::rgba(240, 40, 40));
  EXPECT_EQ(view::detail::car_colour(9, 9), viz::rgba(40, 240, 40));
  EXPECT_EQ(view::detail::car_colour(12, 9), viz::rgba(40, 240, 40)) << "above the top is green too";
  for (std::uint32_t v = 1; v < 9; ++v) {
    EXPECT_NE(view::detail::car_colour(v, 9), view::detail::car_colour(v - 1, 9)) << v;
    EXPECT_EQ(viz::blue(view::detail::car_colour(v, 9)), 40u);
  }
}

// The frame area is 64 x 16 pixels at (3, 2) of a 70 x 20 canvas. Intersections A (0.125, 0.5),
// B (0.875, 0.5), C (0.875, 0): pixels (8, 8), (56, 8) and (56, 15) (y = 0 gives row 16, clamped
// to 15). Streets, each cell on one pixel or sharing one:
//   A -> B, 48 cells over 48 pixels: cell k at x = 8 + k + 0.5 -> pixel (8 + k, 8);
//   B -> A, 96 cells over 48 pixels: cell k at x = 56 - (k + 0.5) / 2 -> pixel (55 - k / 2, 8),
//     so cells 2j and 2j + 1 share pixel (55 - j, 8), which A -> B's cell 47 - j covers too;
//   B -> C, 8 cells over 8 pixels: cell k at row 8 + k + 0.5 -> pixel (56, 8 + k);
//   C -> B, 8 cells: cell k at row 16 - (k + 0.5) -> pixel (56, 15 - k).
TEST(TrafficView, OneMarkPerCellStreetsIntersectionsAndCarsPixelForPixel) {
  SHOAL_REQUIRE_DEVICE();
  network_builder b;
  const std::uint32_t a = b.add_intersection(0.125f, 0.5f), bb = b.add_intersection(0.875f, 0.5f),
                      c = b.add_intersection(0.875f, 0.0f);
  const std::uint32_t ab = b.add_street(a, bb, 48, 9), ba = b.add_street(bb, a, 96, 9),
                      bc = b.add_street(bb, c, 8, 9), cb = b.add_street(c, bb, 8, 9);
  const network net = b.finish();
  simulation sim(net, calm(1000), test_heap);
  const std::uint32_t top = sim.params().max_speed - 1;
  ASSERT_EQ(top, 9u);
  const std::uint32_t w = 70, h = 20;
  const viz::rect area{3, 2, 64, 16};
  expected_image want(w, h, area, top);
  for (std::uint32_t k = 0; k < 48; ++k) want.street(8 + k, 8);
  for (std::uint32_t k = 0; k < 96; ++k) want.street(55 - k / 2, 8);
  for (std::uint32_t k = 0; k < 8; ++k) want.street(56, 8 + k);
  for (std::uint32_t k = 0; k < 8; ++k) want.street(56, 15 - k);
  want.intersection(8, 8);
  want.intersection(56, 8);
  want.intersection(56, 15);

  // First without cars: streets and intersections only.
  ASSERT_TRUE(same_pixels(paint(sim, net, w, h, area), want.pixels(), w, area)) << "no cars";

  const street& s_ab = net.streets[ab];
  const street& s_ba = net.streets[ba];
  const street& s_bc = net.streets[bc];
  const street& s_cb = net.streets[cb];
  std::uint64_t id = 1;
  auto put = [&](std::uint32_t cell, std::uint32_t speed) { sim.place(cell, id++, 9, speed); };
  put(s_ab.first + 0, 0);    // standing, on A's pixel (8, 8): the car shows over the intersection
  want.car(8, 8, 0);
  put(s_ab.first + 30, 9);   // top speed, alone on (38, 8)
  want.car(38, 8, 9);
  put(s_ab.first + 20, 9);   // (28, 8), shared with B -> A's cells 54 and 55 ...
  put(s_ba.first + 55, 4);   // ... where a car at 4 is: the slower shows
  want.car(28, 8, 9);
  want.car(28, 8, 4);
  put(s_ba.first + 14, 7);   // (48, 8): a car at 7 on B -> A's cell 14 ...
  put(s_ab.first + 40, 2);   // ... and one at 2 on A -> B's cell 40: the slower shows
  want.car(48, 8, 7);
  want.car(48, 8, 2);
  put(s_ba.first + 80, 6);   // B -> A's cells 80 and 81 share (15, 8): one car is enough
  want.car(15, 8, 6);
  put(s_bc.first + 3, 5);    // (56, 11) on the way down
  want.car(56, 11, 5);
  put(s_cb.first + 0, 1);    // C -> B's first cell: (56, 15), C's pixel
  want.car(56, 15, 1);
  put(s_bc.first + 7, 3);    // B -> C's end cell (56, 15) too, faster than the one above
  want.car(56, 15, 3);
  ASSERT_EQ(sim.cars().size(), 10u) << "every car placed";

  EXPECT_TRUE(same_pixels(paint(sim, net, w, h, area), want.pixels(), w, area)) << "with cars";
}

// Cells longer than a pixel: A (0.125, 0.25) -> B (0.875, 0.25) in 12 cells over 48 pixels of row
// 12 of a 64 x 16 frame (the whole canvas) gets 4 marks per cell, so cell k covers pixels
// 8 + 4k .. 11 + 4k; B -> A the same backwards, cell k covering 52 - 4k .. 55 - 4k.
TEST(TrafficView, LongCellsSpanEveryPixelTheyCover) {
  SHOAL_REQUIRE_DEVICE();
  network_builder b;
  const std::uint32_t a = b.add_intersection(0.125f, 0.25f), bb = b.add_intersection(0.875f, 0.25f);
  const std::uint32_t ab = b.add_street(a, bb, 12, 9), ba = b.add_street(bb, a, 12, 9);
  const network net = b.finish();
  simulation sim(net, calm(1000), test_heap);
  const std::uint32_t w = 64, h = 16;
  const viz::rect area{0, 0, w, h};
  expected_image want(w, h, area, sim.params().max_speed - 1);
  for (std::uint32_t x = 8; x < 56; ++x) want.street(x, 12);
  want.intersection(8, 12);
  want.intersection(56, 12);
  sim.place(net.streets[ab].first + 5, 1, 9, 0);  // standing: pixels 28 .. 31
  for (std::uint32_t x = 28; x < 32; ++x) want.car(x, 12, 0);
  sim.place(net.streets[ba].first + 0, 2, 9, 9);  // top speed on B -> A's first cell: 52 .. 55
  for (std::uint32_t x = 52; x < 56; ++x) want.car(x, 12, 9);
  sim.place(net.streets[ab].first + 11, 3, 9, 6);  // A -> B's end cell, 52 .. 55 too: slower
  for (std::uint32_t x = 52; x < 56; ++x) want.car(x, 12, 6);

  EXPECT_TRUE(same_pixels(paint(sim, net, w, h, area), want.pixels(), w, area));
}

}  // namespace
}  // namespace traffic::test
