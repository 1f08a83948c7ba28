#pragma once
/// @file
/// Static Generations baseline for the apps benchmark (DynaSOAr's methodology): the automaton of
/// apps/generation/generation_model.hpp written the way one would without an object heap, one
/// state per cell in a fixed array of width × height entries, two arrays used in turn (the step
/// reads one and writes the other, so no cell waits for its neighbours). Every cell is visited
/// every step, where the app visits only live and dying cells and the dead cells next to them.
///
/// The rule, the start (bursts and the seeded soup, sim::random keyed as the app draws) and the
/// state hash are the app's, so a run reproduces the app's live and dying counts and state hash
/// exactly (bench/baselines/tests).

#include <cstdint>
#include <utility>

#include "generation/generation_model.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"

namespace generation_baseline {

/// The states of a width × height grid, two arrays used in turn.
class automaton {
 public:
  automaton(std::uint32_t width, std::uint32_t height, generation::rule r)
      : width_(width), height_(height), rule_(r), now_(std::uint64_t{width} * height), next_(std::uint64_t{width} * height) {}

  /// The app's start: the pattern's live cells, then the soup's (same draws as generation::populate).
  void populate(const generation::start& s) {
    std::uint32_t* now = now_.data();
    const std::uint32_t w = width_;
    shoal::arch::for_each_index(now_.size(), [=] SHOAL_DEVICE(std::size_t i) {
      const auto c = static_cast<std::uint32_t>(i);
      bool alive = s.pattern.holds(c % w, c / w);
      if (!alive && s.density.threshold() != 0)
        alive = shoal::sim::random(s.seed, c, 0, generation::init_stream).chance(s.density);
      now[i] = alive ? generation::live : generation::dead;
    });
  }

  /// One step (enqueued, not waited for).
  void step() {
    const std::uint32_t* now = now_.data();
    std::uint32_t* next = next_.data();
    const std::uint32_t w = width_, h = height_;
    const generation::rule r = rule_;
    shoal::arch::for_each_index(now_.size(), [=] SHOAL_DEVICE(std::size_t i) {
      const auto x = static_cast<std::int32_t>(i % w), y = static_cast<std::int32_t>(i / w);
      std::uint32_t n = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const std::int32_t nx = x + dx, ny = y + dy;
          if ((dx != 0 || dy != 0) && nx >= 0 && nx < static_cast<std::int32_t>(w) && ny >= 0 &&
              ny < static_cast<std::int32_t>(h))
            n += now[static_cast<std::uint64_t>(ny) * w + static_cast<std::uint64_t>(nx)] == generation::live;
        }
      const std::uint32_t c = now[i];
      std::uint32_t to;
      if (c == generation::dead) to = ((r.birth >> n) & 1u) != 0 ? generation::live : generation::dead;
      else if (c == generation::live && ((r.survive >> n) & 1u) != 0) to = generation::live;
      else to = c + 1 < r.states ? c + 1 : generation::dead;
      next[i] = to;
    });
    std::swap(now_, next_);
  }

  /// Live and dying cells and the state hash (generation::hash_cell summed; waits).
  generation::totals measure(shoal::sim::sums& sums) const {
    sums.zero();
    const shoal::sim::sums::ref out = sums.device();
    const std::uint32_t* now = now_.data();
    shoal::arch::for_each_index(now_.size(), [=] SHOAL_DEVICE(std::size_t c) {
      const std::uint32_t s = now[c];
      if (s == generation::dead) return;
      out.add(s == generation::live ? 0 : 1, 1);
      out.add(3, static_cast<long long>(generation::hash_cell(c, s)));
    });
    const auto v = sums.read();
    const auto u = [](long long x) { return static_cast<std::uint64_t>(x); };
    return {u(v[0]), u(v[1]), 0, u(v[3])};
  }

 private:
  std::uint32_t width_, height_;
  generation::rule rule_;
  shoal::arch::device_buffer<std::uint32_t> now_, next_;
};

}  // namespace generation_baseline
