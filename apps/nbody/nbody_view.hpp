#pragma once
/// @file
/// What n-body looks like in the viewer: every body splatted where it is in the unit box, as a
/// small cross whose brightness grows with its mass, added up with integer atomics (the same
/// picture in any thread order), then tone-mapped from black through blue to warm white.

#include <cstdint>

#include "nbody_model.hpp"
#include "shoal/viz/viewer.hpp"

namespace nbody::view {

namespace viz = shoal::viz;

/// The frame: --frame-size, else 768 x 768 (the box).
inline viz::scene_spec scene(const shoal::sim::run_options& o) {
  viz::scene_spec s;
  s.app = "nbody";
  s.width = o.frame_width != 0 ? o.frame_width : 768;
  s.height = o.frame_width != 0 ? o.frame_height : 768;
  s.labels = {"bodies"};  // the census's word for Body
  return s;
}

/// The do-all argument: adds one body's light to the accumulation buffer.
struct splat {
  std::uint32_t* light;
  viz::rect area;
  float max_mass;

  SHOAL_HD void add(long long x, long long y, std::uint32_t v) const {
    if (x >= 0 && y >= 0 && x < area.width && y < area.height)
      shoal::arch::fetch_add_relaxed(light[static_cast<std::size_t>(y) * area.width + static_cast<std::size_t>(x)], v);
  }
  SHOAL_HD void operator()(float bx, float by, float mass) const {
    const auto x = static_cast<long long>(bx * static_cast<float>(area.width));
    const auto y = static_cast<long long>((1.0f - by) * static_cast<float>(area.height));  // y up in the box
    const float m = mass > max_mass ? 1.0f : mass / max_mass;
    const auto centre = static_cast<std::uint32_t>(64.0f + 192.0f * m);
    add(x, y, centre);
    add(x - 1, y, centre / 3), add(x + 1, y, centre / 3), add(x, y - 1, centre / 3), add(x, y + 1, centre / 3);
  }
};

/// Colour of a pixel that received `v` light: dark blue for nothing, blue for a faint splat,
/// warm white where bodies crowd.
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
      light[i] = 0;  // dark again for the next frame: no clearing launch (n-body waits for its GPU
                     // every step, so every launch of a frame is step time)
    });
  }

 private:
  viz::rect area_;
  float max_mass_;
  shoal::arch::device_buffer<std::uint32_t> light_;
};

}  // namespace nbody::view
