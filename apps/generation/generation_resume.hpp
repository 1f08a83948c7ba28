#pragma once
/// @file
/// Checkpoints of the generation model, and resuming from one, which may come from anyone: every
/// value the step code trusts is checked on the host before anything is copied to the device.
/// The loader checks the heap's structure and that each cell holds null or a live Alive or
/// Candidate; here, what only this model knows: each object is on exactly one cell and its `cell`
/// field names that cell (the step code indexes the grid with it), an Alive's state is one of the
/// rule's (1 .. C - 1) and it is not fresh (no step is half done), counts are at most 8, and every
/// empty cell has no live neighbour (else a birth there would be missed: the steps rely on a
/// Candidate watching every dead cell next to a live one). On a grid of Cells (Life's `cells`
/// variant) each cell must hold its own Cell and the agent is the Cell's; on a grid of agents
/// there must be no Cell at all. The app (generation_app.hpp), game_of_life and the tests call
/// the same resume().

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "generation_model.hpp"
#include "shoal/checkpoint/saved_heap.hpp"

namespace generation {

/// Throws checkpoint_error (one line, naming the file and the first bad value) unless the
/// checkpoint's objects and cells are a state the steps can run from with the flags `f`
/// (already adopted from the file and checked by the command line's rules).
/// (already adopted from the file and checked by the command line's rules). `Slot` is the grid's
/// (basic_world<Slot>).
template <class Slot = Agent>
inline void check_saved_state(const shoal::checkpoint::reader& r, const model_flags& f) {
  using saved = shoal::checkpoint::saved_heap<Board>;
  const saved heap(r);
  const rule rl = rule_of(f);
  const std::uint64_t n = f.width * f.height;
  auto cells = heap.pointers(r, "generation.cells", n);
  auto bad = [&](const std::string& why) { throw shoal::checkpoint_error(heap.name() + " is invalid: " + why); };

  std::vector<std::uint8_t> placed(heap.blocks() * 64, 0);
  if constexpr (std::is_same_v<Slot, Cell>) {
    // Each cell holds its own Cell; from here on, cells[c] is the agent that Cell holds.
    for (std::uint64_t c = 0; c < n; ++c) {
      if (!cells[c] || cells[c]->type != Board::type_id<Cell>) bad("the cell " + std::to_string(c) + " holds no Cell");
      if (placed[saved::ordinal(*cells[c])]++ != 0) bad("two cells hold the same Cell (cell " + std::to_string(c) + ")");
      const auto agent = std::bit_cast<std::uint64_t>(heap.read<Cell>(*cells[c], &Cell::agent));
      cells[c] = heap.pointer(agent, "the agent of the Cell on cell " + std::to_string(c));
    }
    heap.for_each<Cell>([&](saved::object o) {
      if (placed[saved::ordinal(o)] == 0) bad("a Cell is on no cell of the grid");
    });
  } else {
    heap.for_each<Cell>([&](saved::object) { bad("a grid without Cells holds a Cell object"); });
  }
  std::vector<std::uint8_t> live_cell(n, 0);
  for (std::uint64_t c = 0; c < n; ++c) {
    if (!cells[c]) continue;
    const saved::object o = *cells[c];
    const std::string what = "the object on cell " + std::to_string(c);
    if (o.type != Board::type_id<Alive> && o.type != Board::type_id<Candidate>) bad(what + " is not an Alive or a Candidate");
    if (placed[saved::ordinal(o)]++ != 0) bad("two cells hold the same object (cell " + std::to_string(c) + ")");
    const bool alive = o.type == Board::type_id<Alive>;
    const std::uint32_t home = alive ? heap.read<Alive>(o, &Agent::cell) : heap.read<Candidate>(o, &Agent::cell);
    const std::uint8_t around = alive ? heap.read<Alive>(o, &Agent::live_around) : heap.read<Candidate>(o, &Agent::live_around);
    if (home != c) bad(what + " says it is on cell " + std::to_string(home));
    if (around > 8) bad(what + " counted " + std::to_string(around) + " live neighbours");
    if (!alive) continue;
    const std::uint32_t state = heap.read<Alive>(o, &Alive::state);
    if (state < live || state >= rl.states)
      bad("the cell " + std::to_string(c) + " is in state " + std::to_string(state) + " of a rule with " +
          std::to_string(rl.states) + " states");
    if (heap.read<Alive>(o, &Alive::fresh) != 0) bad("the cell " + std::to_string(c) + " is marked as born in an unfinished step");
    live_cell[c] = state == live;
  }
  auto on_no_cell = [&](saved::object o) {
    if (placed[saved::ordinal(o)] == 0) bad("an object is on no cell of the grid");
  };
  heap.for_each<Alive>(on_no_cell);
  heap.for_each<Candidate>(on_no_cell);

  // Every dead cell next to a live one holds a Candidate.
  const auto w = static_cast<std::int64_t>(f.width), h = static_cast<std::int64_t>(f.height);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      if (cells[static_cast<std::uint64_t>(y * w + x)]) continue;
      for (std::int64_t dy = -1; dy <= 1; ++dy)
        for (std::int64_t dx = -1; dx <= 1; ++dx) {
          const std::int64_t nx = x + dx, ny = y + dy;
          if ((dx != 0 || dy != 0) && nx >= 0 && nx < w && ny >= 0 && ny < h && live_cell[static_cast<std::uint64_t>(ny * w + nx)])
            bad("the empty cell " + std::to_string(y * w + x) + " has a live neighbour but no Candidate");
        }
    }
}

/// Registers the grid's cells with `rt` (section "generation.cells"): defragment() rewrites them,
/// save_heap() saves them and load_heap() fills them. Every runtime of a board does this once.
template <class Slot>
inline void register_cells(shoal::runtime<Board>& rt, const basic_world<Slot>& w) {
  rt.register_pointers("generation.cells", w.cells, w.size());
}

/// What a checkpoint holds besides the run's sections: the flags, the objects and the grid's
/// cells (registered, register_cells; sim::run_model writes it with the run's sections).
inline void save_state(shoal::checkpoint::writer& cw, shoal::runtime<Board>& rt, const model_flags& f) {
  cw.value("generation.model", f);
  rt.save_heap(cw);
}

/// Checks the checkpoint (check_saved_state), then loads its objects into `rt` and its cells into
/// the grid registered with it (register_cells; a grid of `Slot`s of the flags `f`). Throws
/// checkpoint_error, having changed nothing, for a file that does not pass.
template <class Slot = Agent>
inline void resume(shoal::runtime<Board>& rt, const model_flags& f, const shoal::checkpoint::reader& r) {
  check_saved_state<Slot>(r, f);
  rt.load_heap(r);
}

}  // namespace generation
