#pragma once
/// @file
/// Wa-Tor (Dewdney, 1984) on Shoal: fish and sharks on a toroidal grid with a 4-neighbourhood.
/// The model (classes, grid, step phases) lives here so that main.cpp, the tests and benchmark
/// baselines share it.
///
/// Rules. Each step has a fish phase, then a shark phase; each phase is a request do-all followed
/// by a move do-all.
///  - Fish: the breeding timer grows by 1; the fish picks a random free neighbour and requests
///    it. A cell requested by several agents goes to one of them (below); the winner moves, and
///    if its timer exceeds `breed_after` it leaves a new fish behind and its timer restarts.
///  - Shark: energy drops by 1 and the timer grows by 1; a shark at energy 0 dies (at the move,
///    so that its cell counts as occupied for everyone's requests this step). Otherwise it picks
///    a random neighbour holding a fish, else a random free one; a winner that lands on a fish
///    eats it (+`energy_per_fish`); breeding as for fish, the newborn starting with `energy_start`.
///
/// Determinism: every random choice comes from sim::random keyed by (seed, cell index, step,
/// stream), and a cell requested by several agents goes to the lowest claim key (random priority,
/// then cell index) through the grid's claim words (shoal::sim::grid): never to the thread that
/// came first. Which heap slot an agent lives in never matters. So the populations and state hash
/// are bit-identical across runs, thread counts and backends.
///
/// The agents' phases are written against a grid type G (`grid` below, or wator_band.hpp's band of
/// rows on one of several ranks): G says what a cell holds (at), where claims go (request, take)
/// and whether a cell is this process's (owns; always, for `grid`). A winner whose target is not
/// ours moves there all the same (cell = target) and leaves its cell as on any move; the owner of
/// the target places it, and removes the fish a shark ate there (shoal::dist::band_space).

#include <cstdint>
#include <vector>

#include "shoal/shoal.hpp"
#include "shoal/sim/census.hpp"
#include "shoal/sim/claim.hpp"
#include "shoal/sim/grid.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "shoal/sim/rng.hpp"

namespace wator {

class Agent;
class Fish;
class Shark;
using Ocean = shoal::heap<Agent, Fish, Shark>;

inline constexpr int breed_after = 4;      ///< a mover whose timer exceeds this breeds
inline constexpr int energy_start = 2;     ///< a new shark's energy
inline constexpr int energy_per_fish = 4;  ///< energy gained by eating a fish

/// Random streams: one per kind of decision, so that no two decisions share draws.
enum stream : std::uint32_t { init_stream = 1, fish_stream = 2, shark_stream = 3 };

/// The grid as device code sees it (trivially copyable; the arrays belong to `ocean`): the
/// framework's toroidal grid of agents (cells, claim words, width, height; cell c at
/// x = c % width, y = c / width) and the run's seed. Claim words hold the requests of the running
/// phase, no_claim between phases.
struct grid : shoal::sim::grid<Agent, shoal::sim::edges::torus> {
  std::uint64_t seed;

  /// The four neighbours of c: up, right, down, left (von_neumann(); the static baseline's name).
  SHOAL_HD void neighbours(std::uint32_t c, std::uint32_t (&n)[4]) const { von_neumann(c, n); }
  /// The occupant of cell c.
  SHOAL_HD Agent*& at(std::uint32_t c) const { return cells[c]; }
  /// Every cell is this grid's own.
  static constexpr bool owns(std::uint32_t) { return true; }
};

class Agent : public shoal::object<Ocean, Agent> {
 public:
  SHOAL_ABSTRACT(Agent)
  /// `target == cell`: no request this phase. `priority`: the random part of the claim key.
  SHOAL_FIELDS(Agent, (std::uint32_t, cell), (std::uint32_t, target), (std::uint32_t, priority),
               (std::int32_t, timer))

  /// Requests one of the n candidate cells at random (none if n == 0). `home` is `cell`, read
  /// once by the caller: field reads are memory loads the compiler may not merge across stores.
  template <class G>
  SHOAL_HD void request_one_of(const G& g, std::uint32_t home, const std::uint32_t* candidates,
                               std::uint32_t n, shoal::sim::random& r) {
    if (n == 0) {
      target = home;
      return;
    }
    const std::uint32_t t = candidates[n == 1 ? 0 : r.below(n)];
    const std::uint32_t p = r.next();
    target = t;
    priority = p;
    g.request(t, shoal::sim::claim_key(p, home));
  }
  /// True if this agent requested a cell and won it (resets the claim for the next phase).
  template <class G>
  SHOAL_HD bool won(const G& g) {
    const std::uint32_t t = target, home = cell;
    return t != home && g.take(t, shoal::sim::claim_key(priority, home));
  }
};

class Fish : public shoal::object<Ocean, Fish, Agent> {
 public:
  SHOAL_HD Fish(std::uint32_t c, std::int32_t t) { cell = c, target = c, priority = 0, timer = t; }

  /// Fish phase, part 1: age and request a random free neighbour.
  template <class G = grid>
  SHOAL_HD void request(G g, std::uint32_t step) {
    timer += 1;
    const std::uint32_t home = cell;
    std::uint32_t n[4], free[4], k = 0;
    g.von_neumann(home, n);
    for (std::uint32_t d = 0; d < 4; ++d)
      if (g.at(n[d]) == nullptr) free[k++] = n[d];
    shoal::sim::random r(g.seed, home, step, fish_stream);
    request_one_of(g, home, free, k, r);
  }

  /// Fish phase, part 2: the winner moves; a ripe one leaves a new fish behind.
  template <class G = grid>
  SHOAL_HD void move(G g) {
    if (!won(g)) return;
    const std::uint32_t from = cell, to = target;
    if (g.owns(to)) g.at(to) = this;
    cell = to;
    if (timer.get() > breed_after) {
      timer = 0;
      g.at(from) = new Fish(from, 0);  // nullptr if the heap is full: the launch then throws
    } else {
      g.at(from) = nullptr;
    }
  }
};

class Shark : public shoal::object<Ocean, Shark, Agent> {
 public:
  SHOAL_FIELDS(Shark, (std::int32_t, energy))
  SHOAL_HD Shark(std::uint32_t c, std::int32_t t, std::int32_t e) {
    cell = c, target = c, priority = 0, timer = t, energy = e;
  }

  /// Shark phase, part 1: lose energy, age, and request a neighbour holding a fish (else a free
  /// one). A shark at energy 0 requests nothing: it dies in part 2.
  template <class G = grid>
  SHOAL_HD void request(G g, std::uint32_t step) {
    energy -= 1;
    timer += 1;
    const std::uint32_t home = cell;
    if (energy <= 0) {
      target = home;
      return;
    }
    std::uint32_t n[4], fish[4], free[4], kf = 0, ke = 0;
    g.von_neumann(home, n);
    for (std::uint32_t d = 0; d < 4; ++d) {
      Agent* a = g.at(n[d]);
      if (a == nullptr) free[ke++] = n[d];
      else if (shoal::is<Fish>(a)) fish[kf++] = n[d];
    }
    shoal::sim::random r(g.seed, home, step, shark_stream);
    if (kf > 0) request_one_of(g, home, fish, kf, r);
    else request_one_of(g, home, free, ke, r);
  }

  /// Shark phase, part 2: starve, or move (eating the fish there) and maybe breed.
  template <class G = grid>
  SHOAL_HD void move(G g) {
    if (energy <= 0) {
      g.at(cell) = nullptr;
      delete this;
      return;
    }
    if (!won(g)) return;
    const std::uint32_t from = cell, to = target;
    if (Agent* prey = g.at(to)) {  // only a fish can be there: requests go to fish or free cells
      if (g.owns(to)) delete prey;  // else its owner removes it
      energy = energy.get() + energy_per_fish;  // by value: a constexpr bound to a reference is not visible in device code
    }
    if (g.owns(to)) g.at(to) = this;
    cell = to;
    if (timer.get() > breed_after) {
      timer = 0;
      g.at(from) = new Shark(from, 0, energy_start);
    } else {
      g.at(from) = nullptr;
    }
  }
};

/// The grid size (the app's own flags), also saved in checkpoints.
struct grid_size {
  std::uint64_t width = 2048, height = 2560;
};

/// The grid's device arrays (owner of what `grid` points to): every cell empty, every claim
/// word no_claim.
class ocean {
 public:
  ocean(std::uint32_t width, std::uint32_t height, std::uint64_t seed)
      : space_(width, height), view_{space_.view(), seed} {}
  const grid& view() const { return view_; }

 private:
  shoal::sim::device_grid<Agent, shoal::sim::edges::torus> space_;
  grid view_;
};

/// Fills the empty grid: each cell holds a fish with probability 1/4, a shark with 1/4. Timers
/// start at random in [0, breed_after) so that the first generation does not breed in lockstep.
inline void populate(shoal::runtime<Ocean>& rt, const grid& g) {
  rt.launch(g.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    shoal::sim::random r(g.seed, c, 0, init_stream);
    const std::uint32_t kind = r.below(4);
    const auto timer = static_cast<std::int32_t>(r.below(breed_after));
    if (kind == 0) g.cells[c] = new Fish(c, timer);
    else if (kind == 1) g.cells[c] = new Shark(c, timer, energy_start);
  });
}

/// The fish phase of step `step` (1, 2, ...): two do-alls, no host synchronisation.
inline void fish_phase(shoal::runtime<Ocean>& rt, const grid& g, std::uint32_t step, shoal::sim::phase_timer& timer) {
  {
    auto p = timer.phase("fish.request");
    rt.parallel_do<&Fish::request<grid>>(g, step);
  }
  auto p = timer.phase("fish.move");
  rt.parallel_do<&Fish::move<grid>>(g);
}

/// The shark phase of step `step`: two do-alls, no host synchronisation.
inline void shark_phase(shoal::runtime<Ocean>& rt, const grid& g, std::uint32_t step, shoal::sim::phase_timer& timer) {
  {
    auto p = timer.phase("shark.request");
    rt.parallel_do<&Shark::request<grid>>(g, step);
  }
  auto p = timer.phase("shark.move");
  rt.parallel_do<&Shark::move<grid>>(g);
}

/// One whole step: enqueued, not waited for (errors surface at the next synchronize).
inline void step(shoal::runtime<Ocean>& rt, const grid& g, std::uint32_t step, shoal::sim::phase_timer& timer) {
  fish_phase(rt, g, step, timer);
  shark_phase(rt, g, step, timer);
}

struct populations {
  std::uint64_t fish = 0, sharks = 0;
  /// The checksum of the summary line.
  std::uint64_t checksum() const { return 3 * fish + 7 * sharks; }
};

/// Counts fish and sharks on the device (waits for the queued steps).
inline populations count(shoal::sim::census<Ocean>& census) {
  const auto c = census.count();
  return {shoal::sim::census<Ocean>::of<Fish>(c), shoal::sim::census<Ocean>::of<Shark>(c)};
}

/// What one cell holds, for tests and state comparison.
struct cell_state {
  std::int32_t kind;  ///< 0 empty, 1 fish, 2 shark
  std::int32_t timer, energy;
  bool operator==(const cell_state&) const = default;
};

/// SplitMix64's finaliser: spreads every input bit over the hash.
SHOAL_HD inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
SHOAL_HD inline std::uint64_t hash_cell(std::uint64_t c, cell_state s) {
  return mix(c * 0x9E3779B97F4A7C15ull ^ mix((std::uint64_t(std::uint32_t(s.kind)) << 48) ^
                                               (std::uint64_t(std::uint32_t(s.timer)) << 24) ^
                                               std::uint64_t(std::uint32_t(s.energy))));
}

SHOAL_HD inline cell_state state_of(Agent* a) {
  if (a == nullptr) return {0, 0, 0};
  if (Shark* s = shoal::cast<Shark>(a)) return {2, s->timer.get(), s->energy.get()};
  return {1, a->timer.get(), 0};
}

/// A hash of the whole grid (every cell's kind, timer and energy): a sum of per-cell hashes, so
/// the order of the adds does not matter. Equal states give equal hashes on every backend.
inline std::uint64_t state_hash(shoal::runtime<Ocean>& rt, const grid& g, shoal::arch::device_buffer<unsigned long long>& sum) {
  sum.zero();
  unsigned long long* out = sum.data();
  rt.launch(g.size(), [=] SHOAL_DEVICE(std::size_t c) {
    Agent* a = g.cells[c];
    if (a != nullptr) shoal::arch::fetch_add_relaxed(*out, static_cast<unsigned long long>(hash_cell(c, state_of(a))));
  });
  return sum.read(0);
}

/// Every cell's state, downloaded (tests, small grids).
inline std::vector<cell_state> snapshot(shoal::runtime<Ocean>& rt, const grid& g) {
  shoal::arch::device_buffer<cell_state> out(g.size());
  cell_state* o = out.data();
  rt.launch(g.size(), [=] SHOAL_DEVICE(std::size_t c) { o[c] = state_of(g.cells[c]); });
  return out.download();
}

/// Agents whose `cell` field does not point back at them, plus occupied cells (for the caller to
/// compare with the census): {misplaced, occupied}.
struct consistency {
  unsigned long long misplaced, occupied;
};
inline consistency check_consistency(shoal::runtime<Ocean>& rt, const grid& g) {
  shoal::arch::device_buffer<consistency> out(1);
  out.zero();
  consistency* o = out.data();
  rt.launch(g.size(), [=] SHOAL_DEVICE(std::size_t c) {
    Agent* a = g.cells[c];
    if (a == nullptr) return;
    shoal::arch::fetch_add_relaxed(o->occupied, 1ull);
    const std::uint32_t home = a->cell;
    if (home != c) shoal::arch::fetch_add_relaxed(o->misplaced, 1ull);
  });
  return out.read(0);
}

}  // namespace wator
