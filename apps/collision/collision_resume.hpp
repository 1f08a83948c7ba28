#pragma once
/// @file
/// Resuming collision from a checkpoint, which may come from anyone: every body is checked on
/// the host before anything is copied to the device. The model flags were checked by the
/// command line's own rules (app_cli::adopt); the loader checks the heap's structure (every
/// saved pointer names a live body). Here, what a step of this model leaves behind: between 1
/// and --bodies bodies, each with its own id below --bodies; positions in the box and
/// velocities and accelerations finite; masses finite and in [--max-mass / 2, --bodies ×
/// --max-mass] (no body is lighter than the lightest drawn, none heavier than all of them
/// together); no partner held and none absorbed (phase 3 clears them). The app
/// (collision_app.hpp) and the checkpoint fuzz test call the same resume().

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "collision_model.hpp"
#include "shoal/checkpoint/saved_heap.hpp"

namespace collision {

/// Throws checkpoint_error (one line, naming the file and the first bad value) unless the saved
/// bodies are a state the steps can run from with the flags `m`.
inline void check_saved_state(const shoal::checkpoint::reader& r, const model_flags& m) {
  using saved = shoal::checkpoint::saved_heap<Space>;
  const saved heap(r);
  std::uint64_t count = 0;
  std::vector<bool> seen(m.bodies, false);
  auto bad = [&](const std::string& why) { throw shoal::checkpoint_error(heap.name() + " is invalid: " + why); };
  const double heaviest = static_cast<double>(m.bodies) * m.p.max_mass;
  heap.for_each<Body>([&](saved::object o) {
    if (++count > m.bodies) bad("it holds more bodies than its --bodies " + std::to_string(m.bodies));
    const std::uint32_t id = heap.read<Body>(o, &Body::id);
    if (id >= m.bodies) bad("a body has id " + std::to_string(id) + ", not below --bodies " + std::to_string(m.bodies));
    if (seen[id]) bad("two bodies have id " + std::to_string(id));
    seen[id] = true;
    for (const float v : {heap.read<Body>(o, &Body::x), heap.read<Body>(o, &Body::y)})
      if (!(v >= -1.0f && v <= 1.0f)) bad("a body is outside the box [-1, 1]^2");
    for (const float v : {heap.read<Body>(o, &Body::vx), heap.read<Body>(o, &Body::vy), heap.read<Body>(o, &Body::ax),
                          heap.read<Body>(o, &Body::ay)})
      if (!std::isfinite(v)) bad("a body has a velocity or acceleration that is not a finite number");
    const float mass = heap.read<Body>(o, &Body::mass);
    if (!(mass >= 0.5f * m.p.max_mass && mass <= heaviest))
      bad("a body has mass " + std::to_string(mass) + ", not in [--max-mass / 2, --bodies x --max-mass]");
    if (heap.read<Body>(o, &Body::partner) != nullptr) bad("a body holds a merge partner between steps");
    if (heap.read<Body>(o, &Body::absorbed) != 0) bad("a body is marked absorbed between steps");
  });
  if (count == 0) bad("it holds no bodies (merges leave at least one)");
}

/// What a collision checkpoint holds besides the run's sections: the model flags and the bodies.
inline void save_state(shoal::checkpoint::writer& w, shoal::runtime<Space>& rt, const model_flags& m) {
  w.value("collision.model", m);
  rt.save_heap(w);
}

/// Checks the checkpoint (check_saved_state), then loads its bodies into `rt`. Throws
/// checkpoint_error, having changed nothing, for a file that does not pass.
inline void resume(shoal::runtime<Space>& rt, const model_flags& m, const shoal::checkpoint::reader& r) {
  check_saved_state(r, m);
  rt.load_heap(r);
}

}  // namespace collision
