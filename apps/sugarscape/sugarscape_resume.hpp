#pragma once
/// @file
/// Checkpoints of Sugarscape, and resuming from one, which may come from anyone: every value
/// the step code trusts is checked on the host before anything is copied to the device. The
/// loader checks the heap's structure and that each cell holds null or a live Male or Female
/// (and a male's partner null or a live Female); here, what only Sugarscape knows: each agent is
/// on exactly one cell and its `cell` field names that cell (the step code indexes the grid with
/// it), its traits lie where the flags put them, its age and sugar are ones a run can reach (so
/// no int32 overflows later), and every cell's sugar is in [0, capacity + max_diffusion].
/// The grow rates are not saved: they are recomputed from the seed. The app (sugarscape_app.hpp)
/// and the tests call the same resume().

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "shoal/checkpoint/saved_heap.hpp"
#include "sugarscape_model.hpp"

namespace sugarscape {

/// Throws checkpoint_error (one line, naming the file and the first bad value) unless the
/// checkpoint's agents, cells and sugar are a state the steps can run from with the flags `f`
/// (already adopted from the file and checked by the command line's rules).
inline void check_saved_state(const shoal::checkpoint::reader& r, const model_flags& f) {
  using saved = shoal::checkpoint::saved_heap<Scape>;
  const saved heap(r);
  const std::uint64_t n = f.width * f.height;
  auto bad = [&](const std::string& why) { throw shoal::checkpoint_error(heap.name() + " is invalid: " + why); };

  const auto sugar_bytes = r.blob("sugarscape.sugar");
  if (sugar_bytes.size() != n * sizeof(std::int32_t))
    bad("section 'sugarscape.sugar' holds " + std::to_string(sugar_bytes.size()) + " bytes, expected " +
        std::to_string(n * sizeof(std::int32_t)));
  const std::int64_t most_on_cell = static_cast<std::int64_t>(f.sugar_capacity + f.max_diffusion);
  for (std::uint64_t c = 0; c < n; ++c) {
    std::int32_t s;
    std::memcpy(&s, sugar_bytes.data() + c * sizeof s, sizeof s);
    if (s < 0 || s > most_on_cell) bad("cell " + std::to_string(c) + " holds " + std::to_string(s) + " sugar");
  }

  const trait_ranges t = ranges_of(f);
  const std::int64_t harvest = static_cast<std::int64_t>(f.sugar_capacity + f.max_diffusion);
  const auto cells = heap.pointers(r, "sugarscape.cells", n);
  std::vector<std::uint8_t> placed(heap.blocks() * 64, 0);
  for (std::uint64_t c = 0; c < n; ++c) {
    if (!cells[c]) continue;
    const saved::object o = *cells[c];
    const std::string who = "the agent on cell " + std::to_string(c);
    if (placed[saved::ordinal(o)]++ != 0) bad("two cells hold the same agent (cell " + std::to_string(c) + ")");
    const bool female = o.type == Scape::type_id<Female>;
    auto field = [&](auto member) { return female ? heap.read<Female>(o, member) : heap.read<Male>(o, member); };
    const std::uint32_t home = field(&Agent::cell);
    if (home != c) bad(who + " says it is on cell " + std::to_string(home));
    const std::int32_t vision = field(&Agent::vision), max_age = field(&Agent::max_age);
    const std::int32_t metabolism = field(&Agent::metabolism), endowment = field(&Agent::endowment);
    const std::int32_t age = field(&Agent::age), sugar = field(&Agent::sugar);
    if (!t.vision.holds(vision)) bad(who + " has vision " + std::to_string(vision));
    if (!t.max_age.holds(max_age)) bad(who + " has maximum age " + std::to_string(max_age));
    if (!t.metabolism.holds(metabolism)) bad(who + " has metabolism " + std::to_string(metabolism));
    if (!t.endowment.holds(endowment)) bad(who + " has endowment " + std::to_string(endowment));
    if (age < 0 || age > max_age) bad(who + " has age " + std::to_string(age) + " of at most " + std::to_string(max_age));
    // One harvest a step of its life, each at most what a cell can hold.
    if (sugar < 0 || sugar > endowment + age * harvest) bad(who + " holds " + std::to_string(sugar) + " sugar");
    if (female) {
      const std::int32_t most = heap.read<Female>(o, &Female::max_children), had = heap.read<Female>(o, &Female::children);
      if (!t.max_children.holds(most)) bad(who + " may have " + std::to_string(most) + " children");
      if (had < 0 || had > most) bad(who + " has " + std::to_string(had) + " children of at most " + std::to_string(most));
    } else if (heap.read<Male>(o, &Male::partner) != nullptr) {
      bad(who + " courts a female between two steps");
    }
  }
  auto on_no_cell = [&](saved::object o) {
    if (placed[saved::ordinal(o)] == 0) bad("an agent is on no cell of the grid");
  };
  heap.for_each<Male>(on_no_cell);
  heap.for_each<Female>(on_no_cell);
}

/// What a Sugarscape checkpoint holds besides the run's sections: the flags, the agents, the
/// grid's cells and its sugar (the app writes it with sim::write_checkpoint).
inline void save_state(shoal::checkpoint::writer& w, shoal::runtime<Scape>& rt, const world& g, const model_flags& f) {
  rt.synchronize();
  w.value("sugarscape.model", f);
  rt.save_heap(w);
  rt.save_pointers(w, "sugarscape.cells", g.g.cells, g.size());
  std::vector<std::int32_t> sugar(g.size());
  shoal::arch::copy_to_host(sugar.data(), g.sugar, sugar.size() * sizeof(std::int32_t));
  w.blob("sugarscape.sugar", std::as_bytes(std::span(sugar)));
}

/// Checks the checkpoint (check_saved_state), then loads its agents, cells and sugar into `rt`
/// and `g` (a world of the flags `f`) and recomputes the grow rates. Throws checkpoint_error,
/// having changed nothing, for a file that does not pass.
inline void resume(shoal::runtime<Scape>& rt, const world& g, const model_flags& f, const shoal::checkpoint::reader& r) {
  check_saved_state(r, f);
  rt.load_heap(r);
  rt.load_pointers(r, "sugarscape.cells", g.g.cells, g.size());
  const auto sugar = r.blob("sugarscape.sugar");
  shoal::arch::copy_to_device(g.sugar, sugar.data(), sugar.size());
  seed_grow_rates(rt, g, f);
}

}  // namespace sugarscape
