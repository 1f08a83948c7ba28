#pragma once
/// @file
/// What Sugarscape looks like in the viewer: one pixel per cell (a male, a female, or the cell's
/// sugar from dark soil to bright yellow at capacity), drawn by a launch over the frame's pixels
/// that reads the grid where it lies, and a chart of the male and female populations under it,
/// which the census counts on the device.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "shoal/sim/census.hpp"
#include "shoal/viz/viewer.hpp"
#include "sugarscape_model.hpp"

namespace sugarscape::view {

namespace viz = shoal::viz;

inline constexpr viz::pixel male = viz::rgba(80, 170, 255);
inline constexpr viz::pixel female = viz::rgba(255, 90, 150);

/// The frame: --frame-size, else the grid one pixel per cell with the chart below it
/// (viz::grid_scene).
inline viz::scene_spec scene(const shoal::sim::run_options& o, std::uint64_t width, std::uint64_t height) {
  viz::scene_spec s = viz::grid_scene("sugarscape", o.frame_width, o.frame_height, width, height);
  s.labels = {"", "males", "females"};  // the census's words: Agent (abstract), Male, Female
  s.chart_first = 1;
  s.chart_colours = {male, female};
  return s;
}

/// Paints the grid into `area`, each pixel showing the cell under it (nearest cell when the
/// frame is not the grid's size). Enqueued, no wait.
inline void paint(shoal::runtime<Scape>& rt, const world& w, viz::canvas_view c, viz::rect area) {
  const viz::pixel agent[2] = {male, female};  // copied in: device code reads no host constants
  rt.launch_async(area.area(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto x = static_cast<std::uint32_t>(i % area.width), y = static_cast<std::uint32_t>(i / area.width);
    const std::uint64_t cx = std::uint64_t{x} * w.g.width / area.width, cy = std::uint64_t{y} * w.g.height / area.height;
    const std::uint64_t cell = cy * w.g.width + cx;
    viz::pixel p;
    if (Agent* a = w.g.cells[cell]) {
      p = agent[shoal::is<Female>(a) ? 1 : 0];
    } else {
      // Soil (30, 20, 10) to yellow (250, 210, 40) with the square root of the sugar, full at
      // capacity: most cells hold a few percent of it, which a linear scale leaves dark.
      const float fill = static_cast<float>(std::min(w.sugar[cell], w.capacity)) / static_cast<float>(w.capacity);
      const auto level = static_cast<int>(sqrtf(fill) * 255.0f);
      const auto mixc = [&](int from, int to) { return static_cast<std::uint8_t>(from + (to - from) * level / 256); };
      p = viz::rgba(mixc(30, 250), mixc(20, 210), mixc(10, 40));
    }
    c.set(area.x + x, area.y + y, p);
  });
}

}  // namespace sugarscape::view
