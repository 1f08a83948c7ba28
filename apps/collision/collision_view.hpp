#pragma once
/// @file
/// What collision looks like in the viewer: every body a disc in the box whose area grows with
/// its mass (merged bodies grow), its light added up with integer atomics (the same picture in
/// any thread order) and tone-mapped from black through blue to warm white; under the box a
/// chart of the body count, which the census counts on the device.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "collision_model.hpp"
#include "shoal/viz/viewer.hpp"

namespace collision::view {

namespace viz = shoal::viz;

inline const viz::pixel chart_colour = viz::rgba(120, 170, 255);

/// The frame: --frame-size (a fifth of it the chart), else 768 x 768 for the box and 160 below.
inline viz::scene_spec scene(const shoal::sim::run_options& o) {
  viz::scene_spec s = viz::box_scene("collision", o.frame_width, o.frame_height);
  s.labels = {"bodies"};  // the census's word for Body
  s.chart_colours = {chart_colour};
  return s;
}

/// The do-all argument: adds one body's disc to the accumulation buffer.
struct splat {
  std::uint32_t* light;
  viz::rect area;
  float max_mass;  ///< a body drawn at max_mass gets a disc of radius 1 pixel

  SHOAL_HD void operator()(float bx, float by, float mass) const {
    const std::uint32_t side = std::min(area.width, area.height);  // the box, centred
    const float scale = 0.5f * static_cast<float>(side);
    const float cx = static_cast<float>((area.width - side) / 2) + (bx + 1.0f) * scale;
    const float cy = static_cast<float>((area.height - side) / 2) + (1.0f - by) * scale;  // y up in the box
    // Area proportional to mass, up to a radius of 12 pixels (a body of 144 initial ones).
    const float r = std::min(12.0f, std::sqrt(mass / max_mass));
    const auto reach = static_cast<long long>(std::ceil(r));
    const auto px = static_cast<long long>(cx), py = static_cast<long long>(cy);
    for (long long y = py - reach; y <= py + reach; ++y)
      for (long long x = px - reach; x <= px + reach; ++x) {
        const float dx = static_cast<float>(x) + 0.5f - cx, dy = static_cast<float>(y) + 0.5f - cy;
        const float d = std::sqrt(dx * dx + dy * dy);
        // Full light inside the disc, fading over one pixel at its edge; the centre pixel
        // always lit, so a small body is never invisible.
        const float cover = x == px && y == py ? 1.0f : std::max(0.0f, std::min(1.0f, r + 0.5f - d));
        if (cover > 0.0f && x >= 0 && y >= 0 && x < area.width && y < area.height)
          shoal::arch::fetch_add_relaxed(light[static_cast<std::size_t>(y) * area.width + static_cast<std::size_t>(x)],
                                         static_cast<std::uint32_t>(160.0f * cover));
      }
  }
};

/// Colour of a pixel that received `v` light: dark blue for nothing, blue for one body, warm
/// white where bodies overlap.
SHOAL_HD inline viz::pixel tone(std::uint32_t v) {
  const viz::pixel night = viz::rgba(4, 6, 14), blue = viz::rgba(70, 110, 230), white = viz::rgba(255, 240, 210);
  if (v == 0) return night;
  if (v < 128) return viz::mix(night, blue, 2 * v);
  return viz::mix(blue, white, v >= 638 ? 255 : (v - 128) / 2);
}

class painter {
 public:
  painter(viz::rect area, float max_mass) : area_(area), max_mass_(max_mass), light_(area.area()) { light_.zero(); }

  /// Enqueues the painting of the bodies into the canvas. No wait.
  void paint(shoal::runtime<Space>& rt, viz::canvas_view c) {
    rt.parallel_do<&Body::show<splat>>(splat{light_.data(), area_, max_mass_});
    std::uint32_t* light = light_.data();
    const viz::rect area = area_;
    shoal::arch::for_each_index(area.area(), [=] SHOAL_DEVICE(std::size_t i) {
      c.set(area.x + static_cast<std::uint32_t>(i % area.width), area.y + static_cast<std::uint32_t>(i / area.width),
            tone(light[i]));
      light[i] = 0;  // dark again for the next frame, without a clearing launch
    });
  }

 private:
  viz::rect area_;
  float max_mass_;
  shoal::arch::device_buffer<std::uint32_t> light_;
};

}  // namespace collision::view
