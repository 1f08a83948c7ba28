#pragma once
/// @file
/// What the traffic benchmark looks like in the viewer: the streets of the unit square drawn
/// cell by cell, each cell where it lies on its street, coloured by what is on it: nothing (grey),
/// a car (red when standing, through yellow, to green at top speed); intersections in white.
/// Many cells can fall on one pixel: the pixel shows the highest level among them (an atomic max),
/// so a standing car shows over a moving one, a car over an empty street. Where each cell lies is
/// worked out once on the host, and so is the picture without cars (streets and intersections
/// never change). A frame visits the cars only, in one do-all that also counts them for the
/// overlay, and then colours the area in one launch: frames come every 10 steps of ~0.2 ms, and a
/// pass over the network's 4.6 million cells per frame cost more than that do-all.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "network.hpp"
#include "shoal/viz/viewer.hpp"
#include "traffic_model.hpp"

namespace traffic::view {

namespace viz = shoal::viz;

/// Pixel levels: what a pixel shows, larger wins.
inline constexpr std::uint32_t level_street = 1, level_intersection = 2, level_car = 3;  // car: 3 + (15 - speed)

/// The frame: --frame-size, else 768 x 768 (the square).
inline viz::scene_spec scene(const shoal::sim::run_options& o) {
  viz::scene_spec s;
  s.app = "traffic";
  s.width = o.frame_width != 0 ? o.frame_width : 768;
  s.height = o.frame_width != 0 ? o.frame_height : 768;
  s.labels = {"cars", "", "standing"};  // Car::count's sums: cars, speed sum, standing, checksum
  s.labels.resize(tally_count);
  return s;
}

namespace detail {
/// Colour of a car at `speed` of at most `top`: red, yellow, green.
SHOAL_HD inline viz::pixel car_colour(std::uint32_t speed, std::uint32_t top) {
  const std::uint32_t t = top == 0 ? 0 : (speed >= top ? 510 : speed * 510 / top);
  return t <= 255 ? viz::rgba(240, 40 + t * 200 / 255, 40) : viz::rgba(240 - (t - 255) * 200 / 255, 240, 40);
}
}  // namespace detail

/// The do-all argument of a frame (Car::show): raises each pixel of the car's cell to the car's
/// level and counts the car, and standing cars, for the overlay.
struct car_marks {
  /// Cars and standing cars go into this many pairs of words, picked by processor: a million cars
  /// counted into two words were ~185 µs of same-address atomics per frame on the H100 (even added
  /// up per warp first), more than the rest of the frame.
  static constexpr std::uint32_t stripes = 32;
  const std::uint32_t* first;   // cell c's pixels: pixel[first[c] .. first[c + 1])
  const std::uint32_t* pixel;
  std::uint32_t* level;         // per pixel; highest wins
  unsigned long long* tallies;  // stripes x (cars, standing cars)

  SHOAL_DEVICE void operator()(std::uint32_t cell, std::uint32_t velocity) const {
    for (std::uint32_t k = first[cell]; k < first[cell + 1]; ++k)
      shoal::arch::fetch_max_relaxed(level[pixel[k]], level_car + (15 - velocity));
    // Two integer sums of a stripe (add_real is not used: no words beyond them).
    const shoal::sim::sums::ref t{tallies + 2 * (static_cast<std::uint32_t>(shoal::arch::processor_id()) % stripes), 2};
    t.add(0, 1);
    if (velocity == 0) t.add(1, 1);
  }
};

/// Most (pixel, cell) marks: a cell longer than a pixel gets a mark per pixel it spans, so
/// streets are unbroken lines, as long as the marks stay this few; a network this dense fills
/// the frame with one mark per cell anyway.
inline constexpr std::uint64_t max_marks = std::uint64_t{1} << 22;

/// Paints the network of a simulation into a frame area fixed at construction. A frame is
/// count() then paint(), as the viewer calls them: count()'s do-all also raises every car's
/// pixels, and paint() colours the area from those levels and the static background.
class painter {
 public:
  painter(const network& net, viz::rect area, std::uint32_t max_speed)
      : area_(area), top_(max_speed - 1), first_mark_(net.cells() + 1), background_(area.area()),
        level_(area.area()), tallies_(2 * car_marks::stripes) {
    auto pixel_at = [&](double x, double y) {
      const auto px = static_cast<std::uint32_t>(std::clamp(x * area.width, 0.0, area.width - 1.0));
      const auto py = static_cast<std::uint32_t>(std::clamp((1.0 - y) * area.height, 0.0, area.height - 1.0));
      return py * area.width + px;  // y grows upwards in the square, downwards in the image
    };
    const std::uint64_t per_cell_cap = std::max<std::uint64_t>(1, max_marks / std::max<std::uint64_t>(1, net.cells()));
    // The marks of cell c are pixels[first[c] .. first[c + 1]): counted, then placed.
    std::vector<std::uint32_t> marks_of(net.cells(), 0);
    for (const street& s : net.streets) {
      const double length_px = std::hypot((net.x[s.to] - net.x[s.from]) * area.width,
                                          (net.y[s.to] - net.y[s.from]) * area.height);
      const auto marks = static_cast<std::uint32_t>(
          std::clamp<double>(std::ceil(length_px / s.cells), 1.0, static_cast<double>(per_cell_cap)));
      for (std::uint32_t k = 0; k < s.cells; ++k) marks_of[s.first + k] = marks;
    }
    std::vector<std::uint32_t> first(net.cells() + 1, 0);
    for (std::uint64_t c = 0; c < net.cells(); ++c) first[c + 1] = first[c] + marks_of[c];
    std::vector<std::uint32_t> pixels(first.back()), background(area.area(), 0);
    for (const street& s : net.streets) {
      const double x0 = net.x[s.from], y0 = net.y[s.from], x1 = net.x[s.to], y1 = net.y[s.to];
      const std::uint32_t marks = marks_of[s.first];
      for (std::uint32_t k = 0; k < s.cells; ++k)
        for (std::uint32_t m = 0; m < marks; ++m) {
          const double t = (k + (m + 0.5) / marks) / s.cells;
          const std::uint32_t p = pixel_at(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
          pixels[first[s.first + k] + m] = p;
          background[p] = std::max(background[p], level_street);
        }
    }
    for (std::uint32_t i = 0; i < net.intersections(); ++i) {
      const std::uint32_t p = pixel_at(net.x[i], net.y[i]);
      background[p] = std::max(background[p], level_intersection);
    }
    mark_pixel_ = shoal::arch::device_buffer<std::uint32_t>(std::max<std::size_t>(1, pixels.size()));
    if (!pixels.empty()) mark_pixel_.upload(pixels);
    first_mark_.upload(first);
    background_.upload(background);
    level_.zero();
    tallies_.zero();
  }

  /// Enqueues the count of cars and of standing cars into `values` (at Car::count's places for
  /// them; the overlay shows no other), which also raises the cars' pixels for the next paint().
  /// No wait.
  void count(simulation& sim, unsigned long long* values) {
    unsigned long long* tallies = tallies_.data();
    sim.runtime().parallel_do<&Car::show<car_marks>>(
        car_marks{first_mark_.data(), mark_pixel_.data(), level_.data(), tallies});
    sim.runtime().launch_async(1, [=] SHOAL_DEVICE(std::size_t) {
      unsigned long long cars = 0, standing = 0;
      for (std::uint32_t s = 0; s < car_marks::stripes; ++s) {
        cars += tallies[2 * s], standing += tallies[2 * s + 1];
        tallies[2 * s] = tallies[2 * s + 1] = 0;  // ready for the next frame
      }
      values[tally_cars] += cars;
      values[tally_stopped] += standing;
    });
  }

  /// Enqueues the painting of the area from the levels that count() raised (and resets them).
  /// No wait.
  void paint(simulation& sim, viz::canvas_view c) {
    std::uint32_t* level = level_.data();
    const std::uint32_t* background = background_.data();
    const viz::rect area = area_;
    const std::uint32_t top = top_;
    sim.runtime().launch_async(area.area(), [=] SHOAL_DEVICE(std::size_t i) {
      const std::uint32_t l = level[i] > background[i] ? level[i] : background[i];
      level[i] = 0;  // ready for the next frame's cars: no clearing launch
      viz::pixel p = viz::rgba(14, 16, 20);
      if (l == level_street) p = viz::rgba(84, 90, 104);
      else if (l == level_intersection) p = viz::rgba(220, 220, 220);
      else if (l >= level_car) p = detail::car_colour(15 - (l - level_car), top);
      c.set(area.x + static_cast<std::uint32_t>(i % area.width), area.y + static_cast<std::uint32_t>(i / area.width), p);
    });
  }

 private:
  viz::rect area_;
  std::uint32_t top_;
  shoal::arch::device_buffer<std::uint32_t> first_mark_;  // cell c's marks: [first[c], first[c + 1])
  shoal::arch::device_buffer<std::uint32_t> mark_pixel_;  // every cell's pixels, cell after cell
  shoal::arch::device_buffer<std::uint32_t> background_;  // levels without cars: streets, intersections
  shoal::arch::device_buffer<std::uint32_t> level_;       // cars' levels, raised by count() (0 between frames)
  shoal::arch::device_buffer<unsigned long long> tallies_;  // car_marks::tallies (0 between frames)
};

}  // namespace traffic::view
