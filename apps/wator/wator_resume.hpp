#pragma once
/// @file
/// Resuming Wa-Tor from a checkpoint, which may come from anyone: every value the step code
/// trusts is checked on the host before anything is copied to the device. The loader checks
/// the heap's structure and that each cell holds null or a live Fish or Shark; here, what only
/// Wa-Tor knows: each agent is on exactly one cell and its `cell` field names that cell (the
/// step code indexes the grid with it), timers and energies are in the range a run can reach.
/// main.cpp and the checkpoint fuzz test call the same resume().

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/checkpoint/saved_heap.hpp"
#include "wator_model.hpp"

namespace wator {

/// Timers grow by one a step (reset on breeding), energies by at most energy_per_fish: a run of
/// at most sim::max_steps steps stays below this, and an int32 never overflows adding to it.
inline constexpr std::int32_t max_saved_counter = 1 << 30;

/// Throws checkpoint_error (one line, naming the file and the first bad value) unless the
/// checkpoint's agents and cells are a state Wa-Tor's steps can run from.
inline void check_saved_state(const shoal::checkpoint::reader& r, const grid_size& size) {
  using saved = shoal::checkpoint::saved_heap<Ocean>;
  const saved heap(r);
  const std::uint64_t n = size.width * size.height;
  const auto cells = heap.pointers(r, "wator.cells", n);
  std::vector<std::uint8_t> placed(heap.blocks() * 64, 0);
  auto bad = [&](const std::string& why) { throw shoal::checkpoint_error(heap.name() + " is invalid: " + why); };
  for (std::uint64_t c = 0; c < n; ++c) {
    if (!cells[c]) continue;
    const saved::object o = *cells[c];
    if (placed[saved::ordinal(o)]++ != 0) bad("two cells hold the same agent (cell " + std::to_string(c) + ")");
    const bool shark = o.type == Ocean::type_id<Shark>;
    const std::uint32_t home = shark ? heap.read<Shark>(o, &Agent::cell) : heap.read<Fish>(o, &Agent::cell);
    const std::int32_t timer = shark ? heap.read<Shark>(o, &Agent::timer) : heap.read<Fish>(o, &Agent::timer);
    if (home != c) bad("the agent on cell " + std::to_string(c) + " says it is on cell " + std::to_string(home));
    if (timer < 0 || timer > max_saved_counter)
      bad("the agent on cell " + std::to_string(c) + " has timer " + std::to_string(timer));
    if (shark) {
      const std::int32_t energy = heap.read<Shark>(o, &Shark::energy);
      if (energy < 1 || energy > max_saved_counter)
        bad("the shark on cell " + std::to_string(c) + " has energy " + std::to_string(energy));
    }
  }
  auto on_no_cell = [&](saved::object o) {
    if (placed[saved::ordinal(o)] == 0) bad("an agent is on no cell of the grid");
  };
  heap.for_each<Fish>(on_no_cell);
  heap.for_each<Shark>(on_no_cell);
}

/// What a Wa-Tor checkpoint holds besides the run's sections: the grid size, the agents and the
/// grid's cells (main.cpp writes it with sim::write_checkpoint).
inline void save_state(shoal::checkpoint::writer& w, shoal::runtime<Ocean>& rt, const grid& g, const grid_size& size) {
  w.value("wator.grid", size);
  rt.save_heap(w);
  rt.save_pointers(w, "wator.cells", g.cells, g.size());
}

/// Checks the checkpoint (check_saved_state), then loads its agents and grid into `rt` and `g`
/// (a grid of `size`). Throws checkpoint_error, having changed nothing, for a file that does
/// not pass.
inline void resume(shoal::runtime<Ocean>& rt, const grid& g, const grid_size& size, const shoal::checkpoint::reader& r) {
  check_saved_state(r, size);
  rt.load_heap(r);
  rt.load_pointers(r, "wator.cells", g.cells, g.size());
}

}  // namespace wator
