#pragma once
/// @file
/// What Wa-Tor looks like in the viewer: one pixel per cell (empty water, fish, shark), drawn by
/// a launch over the frame's pixels that reads the grid where it lies, and a chart of the fish
/// and shark populations under it, which the census counts on the device.

#include <cstdint>

#include "shoal/sim/census.hpp"
#include "shoal/viz/viewer.hpp"
#include "wator_model.hpp"

namespace wator::view {

namespace viz = shoal::viz;

inline constexpr viz::pixel water = viz::rgba(10, 22, 44);
inline constexpr viz::pixel fish = viz::rgba(70, 180, 250);
inline constexpr viz::pixel shark = viz::rgba(250, 110, 60);

/// The frame: --frame-size, else the grid one pixel per cell with the chart below it
/// (viz::grid_scene).
inline viz::scene_spec scene(const shoal::sim::run_options& o, std::uint64_t width, std::uint64_t height) {
  viz::scene_spec s = viz::grid_scene("wator", o.frame_width, o.frame_height, width, height);
  s.labels = {"", "fish", "sharks"};  // the census's words: Agent (abstract), Fish, Shark
  s.chart_first = 1;
  s.chart_colours = {fish, shark};
  return s;
}

/// Paints the grid into `area`, each pixel showing the cell under it (nearest cell when the
/// frame is not the grid's size). Enqueued, no wait.
inline void paint(shoal::runtime<Ocean>& rt, const grid& g, viz::canvas_view c, viz::rect area) {
  const viz::pixel colour[3] = {water, fish, shark};  // copied in: device code reads no host constants
  rt.launch_async(area.area(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto x = static_cast<std::uint32_t>(i % area.width), y = static_cast<std::uint32_t>(i / area.width);
    const std::uint64_t cx = std::uint64_t{x} * g.width / area.width, cy = std::uint64_t{y} * g.height / area.height;
    Agent* a = g.cells[cy * g.width + cx];
    c.set(area.x + x, area.y + y, colour[a == nullptr ? 0 : shoal::is<Fish>(a) ? 1 : 2]);
  });
}

}  // namespace wator::view
