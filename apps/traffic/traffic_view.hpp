#pragma once
/// @file
/// What the traffic benchmark looks like in the viewer: the streets of the unit square drawn
/// cell by cell, each cell where it lies on its street, coloured by what is on it: nothing (grey),
/// a car (red when standing, through yellow, to green at top speed); intersections in white.
/// Many cells can fall on one pixel: the pixel shows the highest level among them, so a standing
/// car shows over a moving one, a car over an empty street. Which cells lie on which pixel is
/// worked out once on the host, and so is the picture without cars (streets and intersections
/// never change); a frame is one launch in which every pixel looks at its own cells' occupants.
/// (Frames are every 10 steps of ~0.2 ms each: a frame must cost far less than a step.)

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

/// Most (pixel, cell) marks: a cell longer than a pixel gets a mark per pixel it spans, so
/// streets are unbroken lines, as long as the marks stay this few; a network this dense fills
/// the frame with one mark per cell anyway.
inline constexpr std::uint64_t max_marks = std::uint64_t{1} << 22;

/// Paints the network of a simulation into a frame area fixed at construction.
class painter {
 public:
  painter(const network& net, viz::rect area, std::uint32_t max_speed)
      : area_(area), top_(max_speed - 1), first_cell_(std::size_t{area.area()} + 1), background_(area.area()) {
    auto pixel_at = [&](double x, double y) {
      const auto px = static_cast<std::uint32_t>(std::clamp(x * area.width, 0.0, area.width - 1.0));
      const auto py = static_cast<std::uint32_t>(std::clamp((1.0 - y) * area.height, 0.0, area.height - 1.0));
      return py * area.width + px;  // y grows upwards in the square, downwards in the image
    };
    const std::uint64_t per_cell_cap = std::max<std::uint64_t>(1, max_marks / std::max<std::uint64_t>(1, net.cells()));
    // Every (pixel, cell) mark, street after street, cell after cell.
    std::vector<std::uint32_t> mark_pixel, mark_cell, background(area.area(), 0);
    for (const street& s : net.streets) {
      const double x0 = net.x[s.from], y0 = net.y[s.from], x1 = net.x[s.to], y1 = net.y[s.to];
      const double length_px = std::hypot((x1 - x0) * area.width, (y1 - y0) * area.height);
      const auto marks = static_cast<std::uint32_t>(
          std::clamp<double>(std::ceil(length_px / s.cells), 1.0, static_cast<double>(per_cell_cap)));
      for (std::uint32_t k = 0; k < s.cells; ++k)
        for (std::uint32_t m = 0; m < marks; ++m) {
          const double t = (k + (m + 0.5) / marks) / s.cells;
          const std::uint32_t p = pixel_at(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
          mark_pixel.push_back(p);
          mark_cell.push_back(s.first + k);
          background[p] = std::max(background[p], level_street);
        }
    }
    for (std::uint32_t i = 0; i < net.intersections(); ++i) {
      const std::uint32_t p = pixel_at(net.x[i], net.y[i]);
      background[p] = std::max(background[p], level_intersection);
    }
    // The cells of pixel p are cells[first[p] .. first[p + 1]), each once: the marks sorted by
    // pixel (a stable counting sort keeps a cell's marks on one pixel next to each other).
    std::vector<std::uint32_t> first(std::size_t{area.area()} + 1, 0), cells(mark_pixel.size());
    for (const std::uint32_t p : mark_pixel) ++first[p + 1];
    for (std::size_t p = 0; p < area.area(); ++p) first[p + 1] += first[p];
    std::vector<std::uint32_t> next(first.begin(), first.end() - 1);
    for (std::size_t m = 0; m < mark_pixel.size(); ++m) cells[next[mark_pixel[m]]++] = mark_cell[m];
    std::uint32_t kept = 0;
    for (std::size_t p = 0; p < area.area(); ++p) {
      const std::uint32_t begin = first[p], end = first[p + 1];
      first[p] = kept;
      for (std::uint32_t k = begin; k < end; ++k)
        if (k == begin || cells[k] != cells[k - 1]) cells[kept++] = cells[k];
    }
    first[area.area()] = kept;
    cells.resize(kept);
    cells_ = shoal::arch::device_buffer<std::uint32_t>(std::max<std::size_t>(1, cells.size()));
    if (!cells.empty()) cells_.upload(cells);
    first_cell_.upload(first);
    background_.upload(background);
  }

  /// Enqueues the painting of the current state into the canvas. No wait.
  /// One thread per pixel gathers what is on its cells: no atomics, and one launch.
  void paint(simulation& sim, viz::canvas_view c) {
    const std::uint32_t* cells = cells_.data();
    const std::uint32_t* first_cell = first_cell_.data();
    const std::uint32_t* background = background_.data();
    const network_view net = sim.view();
    const viz::rect area = area_;
    const std::uint32_t top = top_;
    sim.runtime().launch_async(area.area(), [=] SHOAL_DEVICE(std::size_t i) {
      std::uint32_t l = background[i];
      for (std::uint32_t k = first_cell[i]; k < first_cell[i + 1]; ++k) {
        Car* car = net.occupant[cells[k]];
        if (car == nullptr) continue;
        const std::uint32_t level = level_car + (15 - static_cast<std::uint32_t>(car->velocity));
        l = level > l ? level : l;
      }
      viz::pixel p = viz::rgba(14, 16, 20);
      if (l == level_street) p = viz::rgba(84, 90, 104);
      else if (l == level_intersection) p = viz::rgba(220, 220, 220);
      else if (l >= level_car) p = detail::car_colour(15 - (l - level_car), top);
      c.set(area.x + static_cast<std::uint32_t>(i % area.width), area.y + static_cast<std::uint32_t>(i / area.width), p);
    });
  }

  /// Enqueues the count of cars into `values` (Car::count's sums). No wait.
  static void count(simulation& sim, unsigned long long* values) {
    sim.runtime().parallel_do<&Car::count>(shoal::sim::sums::ref{values});
  }

 private:
  viz::rect area_;
  std::uint32_t top_;
  shoal::arch::device_buffer<std::uint32_t> first_cell_;  // pixel p's cells: [first[p], first[p + 1])
  shoal::arch::device_buffer<std::uint32_t> cells_;       // the cells on each pixel, pixel after pixel
  shoal::arch::device_buffer<std::uint32_t> background_;  // levels without cars: streets, intersections
};

}  // namespace traffic::view
