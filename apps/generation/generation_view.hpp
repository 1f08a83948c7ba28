#pragma once
/// @file
/// What the generation model looks like in the viewer: one pixel per cell (live cells white,
/// dying ones from orange fading to dark red as they age, Candidates a dark blue, other dead
/// cells black), drawn by a launch over the frame's pixels that reads the grid where it lies, and
/// a chart of the live, dying and Candidate cells under it, counted on the device. A rule without
/// dying states (C = 2: Life, apps/game_of_life) charts only the live and Candidate cells.

#include <algorithm>
#include <cstdint>

#include "generation_model.hpp"
#include "shoal/sim/sums.hpp"
#include "shoal/viz/color.hpp"
#include "shoal/viz/viewer.hpp"

namespace generation::view {

namespace viz = shoal::viz;

inline constexpr viz::pixel empty = viz::rgba(0, 0, 0);
inline constexpr viz::pixel watched = viz::rgba(20, 28, 60);  // a Candidate
inline constexpr viz::pixel live_cell = viz::rgba(250, 250, 235);
inline constexpr viz::pixel young = viz::rgba(255, 150, 40);  // state 2
inline constexpr viz::pixel old = viz::rgba(70, 10, 10);      // state C - 1

/// The frame of program `name`: --frame-size, else the grid one pixel per cell with the chart
/// below it (viz::grid_scene); a dying line only for a rule that has dying states.
inline viz::scene_spec scene(const shoal::sim::run_options& o, std::uint64_t width, std::uint64_t height,
                             const rule& r, const char* name = "generation") {
  viz::scene_spec s = viz::grid_scene(name, o.frame_width, o.frame_height, width, height);
  s.chart_first = 0;
  if (r.states > 2) {
    s.labels = {"live", "dying", "candidates"};  // count()'s words
    s.chart_colours = {live_cell, young, watched};
  } else {
    s.labels = {"live", "candidates"};
    s.chart_colours = {live_cell, watched};
  }
  return s;
}

/// Adds the live, dying and Candidate cells to values[0..2] (device words; without dying states
/// the live and Candidate cells to values[0..1], as scene() labels them), without waiting.
template <class W>
inline void count(shoal::runtime<Board>& rt, const W& w, unsigned long long* values) {
  const bool ages = w.r.states > 2;
  const shoal::sim::sums::ref out{values, ages ? 3u : 2u};
  rt.launch_async(w.size(), [=] SHOAL_DEVICE(std::size_t c) {
    const cell_state s = state_of(w.at(static_cast<std::uint32_t>(c)));
    if (s.candidate != 0) out.add(ages ? 2 : 1, 1);
    else if (s.state != dead) out.add(s.state == live ? 0 : 1, 1);
  });
}

/// Paints the grid into `area`, each pixel showing the cell under it (nearest cell when the
/// frame is not the grid's size). Enqueued, no wait.
template <class W>
inline void paint(shoal::runtime<Board>& rt, const W& w, viz::canvas_view c, viz::rect area) {
  const viz::pixel colour[5] = {empty, watched, live_cell, young, old};  // copied in: device code reads no host constants
  rt.launch_async(area.area(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto x = static_cast<std::uint32_t>(i % area.width), y = static_cast<std::uint32_t>(i / area.width);
    const std::uint64_t cx = std::uint64_t{x} * w.width / area.width, cy = std::uint64_t{y} * w.height / area.height;
    const cell_state s = state_of(w.at(static_cast<std::uint32_t>(cy * w.width + cx)));
    viz::pixel p;
    if (s.state == dead) {
      p = colour[s.candidate != 0 ? 1 : 0];
    } else if (s.state == live) {
      p = colour[2];
    } else {
      // Dying: from `young` at state 2 to `old` at state C - 1.
      const std::uint32_t span = w.r.states > 3 ? w.r.states - 3 : 1;
      p = viz::mix(colour[3], colour[4], std::min<std::uint32_t>((s.state - 2) * 255 / span, 255));
    }
    c.set(area.x + x, area.y + y, p);
  });
}

}  // namespace generation::view
