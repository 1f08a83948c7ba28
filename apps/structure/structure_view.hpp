#pragma once
/// @file
/// What structure looks like in the viewer: the unit square the mesh starts in, every spring a
/// line from blue (slack) to red (near --max-force), every node a dot (free nodes white, anchors
/// orange); light added up with integer atomics, so the picture does not depend on thread order.
/// Under the square, a chart of the free nodes and the springs, which the census counts.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "shoal/viz/viewer.hpp"
#include "structure_model.hpp"

namespace structure::view {

namespace viz = shoal::viz;

/// The frame: --frame-size (a fifth of it the chart), else 768 x 768 for the square and 160 below.
inline viz::scene_spec scene(const shoal::sim::run_options& o) {
  viz::scene_spec s = viz::box_scene("structure", o.frame_width, o.frame_height);
  s.labels = {"", "anchors", "pulls", "nodes", "springs"};  // the census's words, by type id
  s.chart_first = 3;
  s.chart_colours = {viz::rgba(235, 235, 235), viz::rgba(90, 140, 255)};
  return s;
}

/// Where [0, 1]^2 lands in the area: a centred square, y up. Four light words per pixel:
/// spring hits, spring stress (0-255 per hit), free nodes, anchors.
struct frame {
  std::uint32_t* light;
  viz::rect area;
  float max_force;

  SHOAL_HD float side() const { return static_cast<float>(std::min(area.width, area.height)); }
  SHOAL_HD float px(float x) const { return static_cast<float>((area.width - std::min(area.width, area.height)) / 2) + x * side(); }
  SHOAL_HD float py(float y) const { return static_cast<float>((area.height - std::min(area.width, area.height)) / 2) + (1.0f - y) * side(); }
  SHOAL_HD void add(float x, float y, int word, std::uint32_t v) const {
    if (!(x >= 0.0f && y >= 0.0f && x < static_cast<float>(area.width) && y < static_cast<float>(area.height))) return;
    const std::size_t i = static_cast<std::size_t>(y) * area.width + static_cast<std::size_t>(x);
    shoal::arch::fetch_add_relaxed(light[4 * i + static_cast<std::size_t>(word)], v);
  }
};

/// The do-all argument for springs: a line of pixels, one point per pixel of its longer axis
/// (at most two frame sides: a spring dragged far off the square is clipped).
struct line {
  frame fr;
  SHOAL_HD void operator()(float x1, float y1, float x2, float y2, float force) const {
    const float ax = fr.px(x1), ay = fr.py(y1), bx = fr.px(x2), by = fr.py(y2);
    const float n = std::min(2.0f * fr.side(), std::ceil(std::fmax(std::fabs(bx - ax), std::fabs(by - ay))));
    const auto stress = static_cast<std::uint32_t>(255.0f * std::fmin(1.0f, force / fr.max_force));
    for (int t = 0; t <= static_cast<int>(n); ++t) {
      const float u = n > 0.0f ? static_cast<float>(t) / n : 0.0f;
      const float x = ax + (bx - ax) * u, y = ay + (by - ay) * u;
      fr.add(x, y, 0, 1);
      fr.add(x, y, 1, stress);
    }
  }
};

/// The do-all argument for nodes: one pixel each.
struct dot {
  frame fr;
  SHOAL_HD void operator()(float x, float y, std::uint32_t type) const {
    fr.add(fr.px(x), fr.py(y), type == Mesh::type_id<Node> ? 2 : 3, 1);
  }
};

/// Colour of a pixel from its four light words.
SHOAL_HD inline viz::pixel tone(const std::uint32_t* w) {
  if (w[3] != 0) return viz::rgba(255, 150, 40);
  if (w[2] != 0) return viz::rgba(240, 240, 240);
  if (w[0] == 0) return viz::rgba(6, 8, 16);
  const viz::pixel slack = viz::rgba(50, 90, 220), taut = viz::rgba(255, 60, 40);
  return viz::mix(slack, taut, std::min<std::uint32_t>(255, w[1] / w[0]));
}

class painter {
 public:
  painter(viz::rect area, float max_force) : fr_{nullptr, area, max_force}, light_(4 * static_cast<std::size_t>(area.area())) {
    light_.zero();
    fr_.light = light_.data();
  }

  /// Enqueues the painting of the mesh into the canvas. No wait.
  void paint(shoal::runtime<Mesh>& rt, viz::canvas_view c) {
    rt.parallel_do<&Spring::show<line>>(line{fr_});
    rt.parallel_do<NodeBase, &NodeBase::show<dot>>(dot{fr_});
    std::uint32_t* light = light_.data();
    const viz::rect area = fr_.area;
    shoal::arch::for_each_index(area.area(), [=] SHOAL_DEVICE(std::size_t i) {
      c.set(area.x + static_cast<std::uint32_t>(i % area.width), area.y + static_cast<std::uint32_t>(i / area.width),
            tone(light + 4 * i));
      for (int k = 0; k < 4; ++k) light[4 * i + static_cast<std::size_t>(k)] = 0;  // dark again for the next frame
    });
  }

 private:
  frame fr_;
  shoal::arch::device_buffer<std::uint32_t> light_;
};

}  // namespace structure::view
