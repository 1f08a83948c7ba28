#pragma once
/// @file
/// What Barnes–Hut looks like in the viewer: the quadtree's cells as faint green outlines (those
/// at least 6 pixels wide: the step's tree, built from the positions at its start) under the
/// bodies, each splatted as a small cross whose brightness grows with its mass, added up with
/// integer atomics (the same picture in any thread order) and tone-mapped from black through
/// blue to warm white.

#include <cstdint>

#include "barnes_hut_model.hpp"
#include "shoal/viz/viewer.hpp"

namespace barnes_hut::view {

namespace viz = shoal::viz;

/// The frame: --frame-size, else 768 x 768 (the box).
inline viz::scene_spec scene(const shoal::sim::run_options& o) {
  viz::scene_spec s;
  s.app = "barnes_hut";
  s.width = o.frame_width != 0 ? o.frame_width : 768;
  s.height = o.frame_width != 0 ? o.frame_height : 768;
  s.labels = {"", "bodies", "cells"};  // the census's words: Node (abstract), Body, Cell
  return s;
}

/// The do-all argument for the bodies: adds one body's light to the accumulation buffer.
struct splat {
  std::uint32_t* light;
  viz::rect area;
  float max_mass;

  SHOAL_HD void add(long long x, long long y, std::uint32_t v) const {
    if (x >= 0 && y >= 0 && x < area.width && y < area.height)
      shoal::arch::fetch_add_relaxed(light[static_cast<std::size_t>(y) * area.width + static_cast<std::size_t>(x)], v);
  }
  SHOAL_HD void operator()(float bx, float by, float mass) const {
    const auto x = static_cast<long long>((bx + 1.0f) * 0.5f * static_cast<float>(area.width));
    const auto y = static_cast<long long>((1.0f - by) * 0.5f * static_cast<float>(area.height));  // y up in the box
    const float m = mass > max_mass ? 1.0f : mass / max_mass;
    const auto centre = static_cast<std::uint32_t>(64.0f + 192.0f * m);
    add(x, y, centre);
    add(x - 1, y, centre / 3), add(x + 1, y, centre / 3), add(x, y - 1, centre / 3), add(x, y + 1, centre / 3);
  }
};

/// The do-all argument for the cells: marks the outline of a cell wide enough to see.
struct outline {
  std::uint32_t* edges;
  viz::rect area;

  SHOAL_HD void mark(std::uint64_t x, std::uint64_t y) const {
    shoal::arch::store_relaxed(edges[y * area.width + x], 1u);  // many cells share an edge
  }
  SHOAL_HD void operator()(std::uint32_t level, std::uint32_t ix, std::uint32_t iy) const {
    const std::uint64_t w = area.width, h = area.height;
    const std::uint64_t x0 = w * ix >> level, x1 = w * (ix + 1) >> level;
    const std::uint64_t y0 = h - (h * (iy + 1) >> level), y1 = h - (h * iy >> level);  // y up in the box
    if (x1 - x0 < 6 || y1 - y0 < 6) return;
    for (std::uint64_t x = x0; x < x1; ++x) mark(x, y0), mark(x, y1 - 1);
    for (std::uint64_t y = y0; y < y1; ++y) mark(x0, y), mark(x1 - 1, y);
  }
};

/// Colour of a pixel that received `v` light, over a cell outline or not: dark blue for nothing,
/// blue for a faint splat, warm white where bodies crowd.
SHOAL_HD inline viz::pixel tone(std::uint32_t v, bool edge) {
  const viz::pixel night = viz::rgba(4, 6, 14), line = viz::rgba(28, 72, 52), blue = viz::rgba(70, 110, 230),
                   white = viz::rgba(255, 240, 210);
  if (v == 0) return edge ? line : night;
  if (v < 128) return viz::mix(edge ? line : night, blue, 2 * v);
  return viz::mix(blue, white, v >= 638 ? 255 : (v - 128) / 2);
}

class painter {
 public:
  painter(viz::rect area, float max_mass) : area_(area), max_mass_(max_mass), light_(area.area()), edges_(area.area()) {
    light_.zero();
    edges_.zero();
  }

  /// Enqueues the painting of the tree and the bodies into the canvas. No wait.
  void paint(shoal::runtime<Space>& rt, viz::canvas_view c) {
    rt.parallel_do<&Cell::show<outline>>(outline{edges_.data(), area_});
    rt.parallel_do<&Body::show<splat>>(splat{light_.data(), area_, max_mass_});
    std::uint32_t* light = light_.data();
    std::uint32_t* edges = edges_.data();
    const viz::rect area = area_;
    shoal::arch::for_each_index(area.area(), [=] SHOAL_DEVICE(std::size_t i) {
      c.set(area.x + static_cast<std::uint32_t>(i % area.width), area.y + static_cast<std::uint32_t>(i / area.width),
            tone(light[i], edges[i] != 0));
      light[i] = 0, edges[i] = 0;  // blank again for the next frame, without a clearing launch
    });
  }

 private:
  viz::rect area_;
  float max_mass_;
  shoal::arch::device_buffer<std::uint32_t> light_;
  shoal::arch::device_buffer<std::uint32_t> edges_;
};

}  // namespace barnes_hut::view
