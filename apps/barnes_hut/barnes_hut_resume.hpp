#pragma once
/// @file
/// Checkpoints of a Barnes–Hut run. The tree is derived state: every step builds it anew from
/// the positions, so a checkpoint holds the bodies only (save_state deletes the cells first) and
/// a resumed run builds its first tree in its first step, as the uninterrupted run does.
///
/// A checkpoint may come from anyone: every body is checked on the host before anything is
/// copied to the device. The model flags were checked by the command line's own rules
/// (app_cli::adopt); the loader checks the heap's structure (every pointer names a live object
/// of its class). Here: no cells, as many bodies as the saved --bodies, every position inside
/// the box [-1, 1)² (the tree's keys cover nothing else), every velocity and acceleration
/// finite, and every mass in (0, --max-mass] (a mass of 0 or NaN would make centres of mass
/// NaN). The app (barnes_hut_app.hpp) and the tests call the same resume().

#include <cmath>
#include <cstdint>
#include <string>

#include "barnes_hut_model.hpp"
#include "shoal/checkpoint/saved_heap.hpp"

namespace barnes_hut {

/// Throws checkpoint_error (one line, naming the file and the first bad value) unless the saved
/// bodies are a state the steps can run from with the flags `m`.
inline void check_saved_state(const shoal::checkpoint::reader& r, const model_flags& m) {
  using saved = shoal::checkpoint::saved_heap<Space>;
  const saved heap(r);
  auto bad = [&](const std::string& why) { throw shoal::checkpoint_error(heap.name() + " is invalid: " + why); };
  std::uint64_t cells = 0, count = 0;
  heap.for_each<Cell>([&](saved::object) { ++cells; });
  if (cells != 0) bad("it holds " + std::to_string(cells) + " tree cells; a checkpoint holds bodies only");
  heap.for_each<Body>([&](saved::object o) {
    ++count;
    for (const float p : {heap.read<Body>(o, &Body::x), heap.read<Body>(o, &Body::y)})
      if (!(p >= -1.0f && p < 1.0f)) bad("a body lies at " + std::to_string(p) + ", outside the box [-1, 1)");
    for (const float v : {heap.read<Body>(o, &Body::vx), heap.read<Body>(o, &Body::vy), heap.read<Body>(o, &Body::ax),
                          heap.read<Body>(o, &Body::ay)})
      if (!std::isfinite(v)) bad("a body has a velocity or acceleration that is not a finite number");
    const float mass = heap.read<Body>(o, &Body::mass);
    if (!(mass > 0.0f && mass <= m.p.max_mass)) bad("a body has mass " + std::to_string(mass) + ", not in (0, --max-mass]");
  });
  if (count != m.bodies)
    bad("it holds " + std::to_string(count) + " bodies; its --bodies is " + std::to_string(m.bodies));
}

/// What a Barnes–Hut checkpoint holds besides the run's sections: the model flags and the
/// bodies. Deletes the tree first (the next step builds it again from the same positions).
inline void save_state(shoal::checkpoint::writer& w, shoal::runtime<Space>& rt, quadtree& tree, const model_flags& m) {
  tree.clear(rt);
  w.value("barnes_hut.model", m);
  rt.save_heap(w);
}

/// Checks the checkpoint (check_saved_state), then loads its bodies into `rt`. Throws
/// checkpoint_error, having changed nothing, for a file that does not pass.
inline void resume(shoal::runtime<Space>& rt, const model_flags& m, const shoal::checkpoint::reader& r) {
  check_saved_state(r, m);
  rt.load_heap(r);
}

}  // namespace barnes_hut
