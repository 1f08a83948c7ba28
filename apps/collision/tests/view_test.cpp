// The collision frame painter (collision_view.hpp) on hand-placed bodies, on the active backend:
// the canvas is painted on the device, read back and checked against the painter's documented
// rules (a body is a disc of radius sqrt(mass / max_mass) pixels, at least its centre pixel;
// the box [-1, 1]² fills the square area; light adds up where discs overlap). Compiled for both
// backends.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "collision_view.hpp"
#include "shoal/viz/canvas.hpp"
#include "test_support.hpp"

namespace collision::test {
namespace {

namespace viz = shoal::viz;

struct dot {
  float x, y, mass;
};

std::vector<viz::pixel> paint(const std::vector<dot>& bodies, std::uint32_t side, float max_mass) {
  shoal::runtime<Space> rt(std::size_t{2} << 20);
  shoal::arch::device_buffer<dot> where(bodies.size());
  where.upload(bodies);
  const dot* d = where.data();
  rt.launch(bodies.size(), [=] SHOAL_DEVICE(std::size_t i) {
    new Body(static_cast<std::uint32_t>(i), motion{d[i].x, d[i].y, 0, 0, 0, 0, d[i].mass});
  });
  viz::canvas c(side, side);
  view::painter painter(c.view().whole(), max_mass);
  painter.paint(rt, c.view());
  rt.synchronize();
  std::vector<viz::pixel> px(std::size_t{side} * side);
  shoal::arch::copy_to_host(px.data(), c.view().pixels, c.bytes());
  return px;
}

TEST(CollisionView, BodiesAreDiscsThatGrowWithTheirMass) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t side = 64;  // 32 pixels per unit of the box
  // A light body at (-0.5, 0.5): pixel (16, 16). A body of 16 masses at (0.5, -0.5): pixel
  // (48, 48), a disc of radius 4. Two light bodies on one pixel at (-0.5, -0.5): (16, 48).
  const auto px = paint({{-0.5f + 1.0f / 64, 0.5f - 1.0f / 64, 75.0f},
                         {0.5f + 1.0f / 64, -0.5f - 1.0f / 64, 16 * 75.0f},
                         {-0.5f + 1.0f / 64, -0.5f - 1.0f / 64, 75.0f},
                         {-0.5f + 1.0f / 64, -0.5f - 1.0f / 64, 75.0f}},
                        side, 75.0f);
  auto at = [&](std::uint32_t x, std::uint32_t y) { return px[std::size_t{y} * side + x]; };
  const viz::pixel dark = view::tone(0), lit = view::tone(160);
  EXPECT_EQ(at(16, 16), lit) << "the light body's centre";
  EXPECT_EQ(at(18, 16), dark) << "two pixels off a body of radius 1";
  EXPECT_EQ(at(48, 48), lit) << "the heavy body's centre";
  EXPECT_EQ(at(51, 48), lit) << "3 pixels from its centre: inside a disc of radius 4";
  EXPECT_EQ(at(48, 45), lit);
  EXPECT_EQ(at(54, 48), dark) << "6 pixels away: outside it";
  EXPECT_EQ(at(16, 48), view::tone(2 * 160)) << "two bodies on one pixel add up";
  EXPECT_NE(view::tone(2 * 160), lit) << "brightness must grow with light";
  EXPECT_EQ(at(0, 0), dark);
  EXPECT_EQ(at(63, 63), dark);
}

}  // namespace
}  // namespace collision::test
