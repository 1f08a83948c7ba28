#pragma once
/// @file
/// Resuming n-body from a checkpoint, which may come from anyone: every body is checked on the
/// host before anything is copied to the device. The model flags were checked by the command
/// line's own rules (app_cli::adopt); the loader checks the heap's structure. Here: as many
/// bodies as the saved --bodies, every coordinate, velocity and acceleration finite, and every
/// mass in (0, --max-mass] (a body of mass 0 or NaN would turn every force into NaN). The app
/// (nbody_app.hpp) and the checkpoint fuzz test call the same resume().

#include <cmath>
#include <cstdint>
#include <string>

#include "nbody_model.hpp"
#include "shoal/checkpoint/saved_heap.hpp"

namespace nbody {

/// Throws checkpoint_error (one line, naming the file and the first bad value) unless the saved
/// bodies are a state the steps can run from with the flags `m`: `bodies` of them (a rank's part
/// of an nbody_mpi checkpoint holds its share of --bodies).
inline void check_saved_state(const shoal::checkpoint::reader& r, const model_flags& m, std::uint64_t bodies) {
  using saved = shoal::checkpoint::saved_heap<Space>;
  const saved heap(r);
  std::uint64_t count = 0;
  auto bad = [&](const std::string& why) { throw shoal::checkpoint_error(heap.name() + " is invalid: " + why); };
  heap.for_each<Body>([&](saved::object o) {
    ++count;
    for (const float v : {heap.read<Body>(o, &Body::x), heap.read<Body>(o, &Body::y), heap.read<Body>(o, &Body::vx),
                          heap.read<Body>(o, &Body::vy), heap.read<Body>(o, &Body::ax), heap.read<Body>(o, &Body::ay)})
      if (!std::isfinite(v)) bad("a body has a position, velocity or acceleration that is not a finite number");
    const float mass = heap.read<Body>(o, &Body::mass);
    if (!(mass > 0.0f && mass <= m.p.max_mass)) bad("a body has mass " + std::to_string(mass) + ", not in (0, --max-mass]");
  });
  if (count != bodies)
    bad("it holds " + std::to_string(count) + " bodies, not " + std::to_string(bodies) + " (--bodies " +
        std::to_string(m.bodies) + ")");
}

/// What an n-body checkpoint holds besides the run's sections: the model flags and the bodies.
inline void save_state(shoal::checkpoint::writer& w, shoal::runtime<Space>& rt, const model_flags& m) {
  w.value("nbody.model", m);
  rt.save_heap(w);
}

/// Checks the checkpoint (check_saved_state), then loads its bodies into `rt`. Throws
/// checkpoint_error, having changed nothing, for a file that does not pass.
inline void resume(shoal::runtime<Space>& rt, const model_flags& m, const shoal::checkpoint::reader& r,
                   std::uint64_t bodies) {
  check_saved_state(r, m, bodies);
  rt.load_heap(r);
}

}  // namespace nbody
