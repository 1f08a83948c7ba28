#pragma once
/// @file
/// DynaSOAr's "generation" model on Shoal: a Generations cellular automaton (Golly's rule family
/// S/B/C) on a bounded grid with the Moore neighbourhood. The model (classes, grid, step phases,
/// start patterns) lives here so that the program, the tests and a static baseline share it.
///
/// Rules. A cell is dead (state 0), live (state 1) or dying (states 2 .. C - 1).
///  - A live cell with n live neighbours stays live if n is in S, else it starts dying (state 2).
///  - A dying cell in state k goes to state k + 1; from state C - 1 it is dead (with C = 2 there
///    is no dying state: a live cell that does not survive is dead at once).
///  - A dead cell with n live neighbours is born (state 1) if n is in B (0 is never in B).
///  - Only live cells count as neighbours, dying ones do not. The grid does not wrap: a cell on an
///    edge has 5 neighbours, one in a corner 3.
/// The defaults are DynaSOAr's: S = {0, 2, 3, 5, 6, 7, 8}, B = {3, 4, 6, 8}, C = 257 (255 dying
/// states), started from its "burst" pattern (crosses with a diamond at the centre, tiled on two
/// interleaved lattices; `bursts` below).
///
/// Objects, as in DynaSOAr: a live or dying cell holds an `Alive`, created with `new` when the cell
/// is born and deleted when it is dead; a dead cell next to a live one holds a `Candidate` (it may
/// be born); every other cell holds nothing and costs nothing, so a step's work follows the live
/// cells and their surroundings, not the grid. A step is six do-alls:
///  1. candidate.prepare: every Candidate counts its live neighbours;
///  2. alive.prepare: every live Alive counts its own;
///  3. candidate.update: a Candidate whose count is in B makes an Alive in its place and deletes
///     itself; one without live neighbours empties its cell and deletes itself;
///  4. alive.update: a live Alive whose count is not in S starts dying, a dying one ages, and one
///     past state C - 1 puts a Candidate in its place (its cell is dead, and may be born again);
///  5. alive.request: every Alive born in this step requests each empty neighbour (a claim);
///  6. alive.spread: and puts a Candidate on each neighbour it won.
/// After a step every dead cell next to a live one therefore holds a Candidate (a cell it left
/// empty has no live neighbour and cannot be born), which the next step relies on; populate()
/// ends with phases 5 and 6 for the same reason.
///
/// The same objects and steps serve game_of_life (apps/game_of_life): Conway's Life is the rule
/// S23/B3/C2, and DynaSOAr's Game of Life is this design without dying states. Its `cells`
/// variant puts a `Cell` object on every grid cell, which holds the cell's agent (DynaSOAr's
/// `dynasoar` variant); so the grid the steps work on is a template, `basic_world<Slot>`, whose
/// array points to the agents themselves (Slot = Agent: generation, and Life's `no-cell`
/// variant) or to Cells (Slot = Cell), and every read and write of a cell goes through at() and
/// put(). Generation never makes a Cell.
///
/// Determinism: the counts (1, 2) read states that no thread writes in those phases, each update
/// (3, 4) writes its own cell only, and an empty cell that several newborns want gets exactly one
/// Candidate (the lowest claim key; whose it is does not matter, a Candidate is the same whoever
/// made it). The steps draw no random numbers; only --density's start does, from sim::random keyed
/// by (seed, cell). Which heap slot an object lives in never matters. So the states, the
/// Candidates and the state hash are bit-identical across runs, thread counts and backends.

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "shoal/shoal.hpp"
#include "shoal/sim/census.hpp"
#include "shoal/sim/claim.hpp"
#include "shoal/sim/grid.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"

namespace generation {

class Agent;
class Alive;
class Candidate;
class Cell;
using Board = shoal::heap<Agent, Alive, Candidate, Cell>;  // Cell last: the others keep their type ids

/// The states of a cell: dead, live, and dying from 2 up to C - 1.
inline constexpr std::uint32_t dead = 0, live = 1;
/// Random streams (only the start draws).
enum stream : std::uint32_t { init_stream = 1 };

/// A rule: S and B as 9-bit sets of neighbour counts (bit n: n live neighbours), and C.
struct rule {
  std::uint32_t survive;  ///< S: a live cell with n live neighbours stays live if bit n is set
  std::uint32_t birth;    ///< B: a dead cell with n live neighbours is born if bit n is set (not bit 0)
  std::uint32_t states;   ///< C: dead, live and C - 2 dying states (C >= 2)
};

/// DynaSOAr's rule: S0235678/B3468/C257.
inline constexpr rule dynasoar_rule{0b111101101, 0b101011000, 257};

/// The grid as device code sees it (trivially copyable; the arrays belong to `basic_board`): the
/// framework's bounded grid (cells, claim words, width, height; cell c at x = c % width,
/// y = c / width) of `Slot`s, and the rule. at() and put() read and write the agent on a cell,
/// wherever the Slot keeps it.
template <class Slot>
struct basic_world : shoal::sim::grid<Slot, shoal::sim::edges::bounded> {
  static constexpr bool boxed = std::is_same_v<Slot, Cell>;  ///< a Cell object on every cell
  rule r;

  SHOAL_HD bool survives(std::uint32_t n) const { return (r.survive >> n) & 1u; }
  SHOAL_HD bool born(std::uint32_t n) const { return (r.birth >> n) & 1u; }
  SHOAL_HD Agent* at(std::uint32_t c) const;           // defined below Cell
  SHOAL_HD void put(std::uint32_t c, Agent* a) const;  // nullptr: the cell holds nothing
};
using world = basic_world<Agent>;

class Agent : public shoal::object<Board, Agent> {
 public:
  SHOAL_ABSTRACT(Agent)
  /// `cell`: where it lies. `live_around`: its live neighbours, counted in this step's prepare
  /// phase for its update phase.
  SHOAL_FIELDS(Agent, (std::uint32_t, cell), (std::uint8_t, live_around))
};

/// A live or dying cell. `fresh`: born in this step, its empty neighbours not yet given
/// Candidates (phases 5 and 6); 0 between steps.
class Alive : public shoal::object<Board, Alive, Agent> {
 public:
  SHOAL_FIELDS(Alive, (std::uint32_t, state), (std::uint8_t, fresh))
  SHOAL_HD explicit Alive(std::uint32_t c) {
    cell = c, live_around = 0, fresh = 1;
    state = std::uint32_t{live};  // by value: a constexpr bound to a reference is not visible in device code
  }

  template <class W> SHOAL_HD void prepare(W w);  // 2: a live one counts its live neighbours
  template <class W> SHOAL_HD void update(W w);   // 4: survive, start dying, age, or leave a Candidate
  template <class W> SHOAL_HD void request(W w);  // 5: a newborn requests its empty neighbours
  template <class W> SHOAL_HD void spread(W w);   // 6: and puts a Candidate on those it won
};

/// A grid cell as an object of its own, holding the agent on it (nullptr: none). Only Life's
/// `cells` variant makes them, one per cell at the start; they live as long as the grid.
class Cell : public shoal::object<Board, Cell> {
 public:
  SHOAL_FIELDS(Cell, (Agent*, agent))
  SHOAL_HD explicit Cell(Agent* a) { agent = a; }
};

template <class Slot>
SHOAL_HD inline Agent* basic_world<Slot>::at(std::uint32_t c) const {
  if constexpr (boxed) return this->cells[c]->agent.get();  // a second load
  else return this->cells[c];
}
template <class Slot>
SHOAL_HD inline void basic_world<Slot>::put(std::uint32_t c, Agent* a) const {
  if constexpr (boxed) this->cells[c]->agent = a;
  else this->cells[c] = a;
}

/// Live neighbours of cell c: cells holding an Alive in state `live`.
template <class W>
SHOAL_HD inline std::uint32_t live_neighbours(const W& w, std::uint32_t c) {
  std::uint32_t n = 0;
  w.for_each_moore(c, [&](std::uint32_t m) {
    Alive* a = shoal::cast<Alive>(w.at(m));
    n += a != nullptr && a->state.get() == live;
  });
  return n;
}

/// A dead cell next to a live one: it may be born.
class Candidate : public shoal::object<Board, Candidate, Agent> {
 public:
  SHOAL_HD explicit Candidate(std::uint32_t c) { cell = c, live_around = 0; }

  /// Phase 1: counts its live neighbours.
  template <class W>
  SHOAL_HD void prepare(W w) { live_around = static_cast<std::uint8_t>(live_neighbours(w, cell)); }

  /// Phase 3: born (an Alive in its place), or gone when nothing around it lives.
  template <class W>
  SHOAL_HD void update(W w) {
    const std::uint32_t n = live_around, c = cell;
    if (w.born(n)) {
      w.put(c, new Alive(c));  // nullptr if the heap is full: the launch then throws
      delete this;
    } else if (n == 0) {
      w.put(c, nullptr);
      delete this;
    }
  }
};

template <class W>
SHOAL_HD inline void Alive::prepare(W w) {
  if (state.get() == live) live_around = static_cast<std::uint8_t>(live_neighbours(w, cell));
}

template <class W>
SHOAL_HD inline void Alive::update(W w) {
  if (fresh.get() != 0) return;  // born in phase 3 of this step
  const std::uint32_t s = state;
  if (s == live && w.survives(live_around)) return;
  if (s + 1 < w.r.states) {
    state = s + 1;  // live -> 2, or one state older
    return;
  }
  const std::uint32_t c = cell;  // past the last dying state: dead
  w.put(c, new Candidate(c));
  delete this;
}

template <class W>
SHOAL_HD inline void Alive::request(W w) {
  if (fresh.get() == 0) return;
  const std::uint32_t home = cell;
  w.for_each_moore(home, [&](std::uint32_t m) {
    if (w.at(m) == nullptr) w.request(m, shoal::sim::claim_key(0, home));
  });
}

template <class W>
SHOAL_HD inline void Alive::spread(W w) {
  if (fresh.get() == 0) return;
  fresh = 0;
  const std::uint32_t home = cell;
  // Every requested cell's winner asks here (take() resets its claim word); a cell this Alive
  // did not request, or lost, answers false.
  w.for_each_moore(home, [&](std::uint32_t m) {
    if (w.take(m, shoal::sim::claim_key(0, home))) w.put(m, new Candidate(m));
  });
}

/// The model's flags (the app's command line), also saved in checkpoints. `survive` and `birth`
/// are neighbour counts written as decimal digits (counts_mask() reads them).
struct model_flags {
  std::uint64_t width = 2500, height = 2500;
  std::uint64_t survive = 2356780;  ///< S as digits: {0, 2, 3, 5, 6, 7, 8} (0 last: see no_counts)
  std::uint64_t birth = 3468;       ///< B as digits: {3, 4, 6, 8}
  std::uint64_t states = 257;       ///< C
  double density = 0;               ///< chance that a cell starts live (besides the bursts)
  std::uint64_t burst_length = 100; ///< arm length of DynaSOAr's bursts (0: none)
};

/// A set of neighbour counts as a flag holds it: its digits, 1..8 ascending, then 0 if the set
/// has it (a number cannot begin with 0); the empty set is 99 (a number cannot be empty either,
/// and no set of counts is written 99). The command line takes the digits in any order, or
/// `none` (the app's neighbour_counts check), and rewrites them to this form.
inline constexpr std::uint64_t no_counts = 99;

/// The 9-bit set of a flag's digits (no_counts: empty). Digits are assumed 0..8, as the
/// command line's check leaves them.
constexpr std::uint32_t counts_mask(std::uint64_t digits) {
  if (digits == no_counts) return 0;
  std::uint32_t mask = 0;
  do {
    mask |= 1u << (digits % 10);
    digits /= 10;
  } while (digits != 0);
  return mask;
}

/// A 9-bit set as its digits in ascending order ("0235678"; "none" when empty): for the run
/// header and --help.
inline std::string counts_text(std::uint32_t mask) {
  std::string s;
  for (std::uint32_t n = 0; n <= 8; ++n)
    if ((mask >> n) & 1u) s += static_cast<char>('0' + n);
  return s.empty() ? "none" : s;
}

/// A 9-bit set in the flags' form (the inverse of counts_mask).
constexpr std::uint64_t counts_digits(std::uint32_t mask) {
  if (mask == 0) return no_counts;
  std::uint64_t d = 0;
  for (std::uint32_t n = 1; n <= 8; ++n)
    if ((mask >> n) & 1u) d = d * 10 + n;
  return mask & 1u ? d * 10 : d;
}

/// The rule of the flags.
inline rule rule_of(const model_flags& f) {
  return {counts_mask(f.survive), counts_mask(f.birth), static_cast<std::uint32_t>(f.states)};
}

/// "S0235678/B3468/C257".
inline std::string rule_text(const rule& r) {
  return "S" + counts_text(r.survive) + "/B" + counts_text(r.birth) + "/C" + std::to_string(r.states);
}

/// DynaSOAr's burst pattern on a grid, for arms of length L: bursts centred on two lattices with a
/// spacing of floor(2.1 L), the first starting L + 10 cells from the top left, the second
/// floor(1.05 L) further along both axes, each centre more than L + 10 cells from the right and
/// bottom edges. A burst is a horizontal and a vertical line of length 2L + 1 through its centre,
/// and a diamond around it: rows -5..5 from the centre are 1, 1, 3, 3, 5 (and row 0 L) cells wide
/// on each side.
struct bursts {
  std::uint32_t length;  ///< L (0: no bursts)
  std::uint32_t spacing, second;       ///< floor(2.1 L), floor(1.05 L)
  std::int64_t first;                  ///< L + 10
  std::int64_t limit_x, limit_y;       ///< centres lie below width - L - 10, height - L - 10

  bursts(std::uint64_t width, std::uint64_t height, std::uint64_t l)
      : length(static_cast<std::uint32_t>(l)), spacing(static_cast<std::uint32_t>(21 * l / 10)),
        second(static_cast<std::uint32_t>(21 * l / 20)), first(static_cast<std::int64_t>(l) + 10),
        limit_x(static_cast<std::int64_t>(width) - first), limit_y(static_cast<std::int64_t>(height) - first) {}

  /// Centres of a lattice starting at `origin` along an axis whose centres lie below `limit`.
  SHOAL_HD std::int64_t centres(std::int64_t origin, std::int64_t limit) const {
    if (length == 0 || limit <= origin) return 0;
    return (limit - origin + spacing - 1) / spacing;
  }
  /// Number of bursts on the grid.
  SHOAL_HD std::uint64_t count() const {
    const std::int64_t o2 = first + second;
    return static_cast<std::uint64_t>(centres(first, limit_x) * centres(first, limit_y) +
                                      centres(o2, limit_x) * centres(o2, limit_y));
  }
  /// Whether the cell at offset (dx, dy) from a centre belongs to its burst.
  SHOAL_HD bool in_shape(std::int64_t dx, std::int64_t dy) const {
    const std::int64_t a = dx < 0 ? -dx : dx, b = dy < 0 ? -dy : dy;
    if (b == 0) return a <= length;
    if (b <= 5) return a <= (b == 1 ? 5 : b <= 3 ? 3 : 1);
    return a == 0 && b <= length;
  }
  /// The first centre index whose centre lies at least `d` cells past the lattice's origin.
  SHOAL_HD std::int64_t first_centre(std::int64_t d) const { return d <= 0 ? 0 : (d + spacing - 1) / spacing; }
  /// Whether cell (x, y) belongs to a burst of the lattice starting at `origin`: only centres
  /// within reach (the arms, or the diamond's 5 cells when the arms are shorter) can hold it.
  SHOAL_HD bool on_lattice(std::int64_t x, std::int64_t y, std::int64_t origin) const {
    const std::int64_t reach = length > 5 ? length : 5;
    const std::int64_t nx = centres(origin, limit_x), ny = centres(origin, limit_y);
    for (std::int64_t i = first_centre(x - reach - origin); i < nx && origin + i * spacing <= x + reach; ++i)
      for (std::int64_t j = first_centre(y - reach - origin); j < ny && origin + j * spacing <= y + reach; ++j)
        if (in_shape(x - (origin + i * spacing), y - (origin + j * spacing))) return true;
    return false;
  }
  /// Whether cell (x, y) starts live.
  SHOAL_HD bool holds(std::uint32_t x, std::uint32_t y) const {
    return length != 0 && (on_lattice(x, y, first) || on_lattice(x, y, first + second));
  }
};

/// How a run starts: the bursts, plus each other cell live with probability `density`.
struct start {
  bursts pattern;
  shoal::sim::probability density;
  std::uint64_t seed;

  /// Whether cell c of `w` starts live (populate's question to any start).
  template <class W>
  SHOAL_HD bool live_at(const W& w, std::uint32_t c) const {
    if (pattern.holds(w.x_of(c), w.y_of(c))) return true;
    return density.threshold() != 0 && shoal::sim::random(seed, c, 0, init_stream).chance(density);
  }
};

inline start start_of(const model_flags& f, std::uint64_t seed) {
  return {bursts(f.width, f.height, f.burst_length), shoal::sim::probability(f.density), seed};
}

/// The grid's device arrays (owner of what `basic_world` points to): every cell empty (no Cells
/// yet either: populate() makes them), every claim word no_claim.
template <class Slot>
class basic_board {
 public:
  basic_board(std::uint32_t width, std::uint32_t height, rule r) : space_(width, height), view_{space_.view(), r} {}
  const basic_world<Slot>& view() const { return view_; }

 private:
  shoal::sim::device_grid<Slot, shoal::sim::edges::bounded> space_;
  basic_world<Slot> view_;
};
using board = basic_board<Agent>;

/// Phases 5 and 6: the newborns put Candidates on their empty neighbours.
template <class W>
inline void spread(shoal::runtime<Board>& rt, const W& w, shoal::sim::phase_timer& timer) {
  {
    auto p = timer.phase("alive.request");
    rt.parallel_do<&Alive::request<W>>(w);
  }
  auto p = timer.phase("alive.spread");
  rt.parallel_do<&Alive::spread<W>>(w);
}

/// Fills the empty grid with the live cells of a start (anything with `live_at(w, c)`, as
/// `start`), their neighbours with Candidates, and, on a grid of Cells, every cell with its Cell.
template <class W, class Start>
inline void populate(shoal::runtime<Board>& rt, const W& w, const Start& s) {
  rt.launch(w.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    Agent* a = s.live_at(w, c) ? new Alive(c) : nullptr;
    if constexpr (W::boxed) w.cells[c] = new Cell(a);
    else w.cells[c] = a;
  });
  shoal::sim::phase_timer untimed(false);
  spread(rt, w, untimed);
}

/// One whole step: six do-alls, enqueued, not waited for (errors surface at the next synchronize).
template <class W>
inline void step(shoal::runtime<Board>& rt, const W& w, shoal::sim::phase_timer& timer) {
  {
    auto p = timer.phase("candidate.prepare");
    rt.parallel_do<&Candidate::prepare<W>>(w);
  }
  {
    auto p = timer.phase("alive.prepare");
    rt.parallel_do<&Alive::prepare<W>>(w);
  }
  {
    auto p = timer.phase("candidate.update");
    rt.parallel_do<&Candidate::update<W>>(w);
  }
  {
    auto p = timer.phase("alive.update");
    rt.parallel_do<&Alive::update<W>>(w);
  }
  spread(rt, w, timer);
}

/// What one cell holds, for tests and state comparison: its state (dead, live or dying) and
/// whether a Candidate watches it (a dead cell only).
struct cell_state {
  std::uint32_t state;
  std::uint32_t candidate;
  bool operator==(const cell_state&) const = default;
};

SHOAL_HD inline cell_state state_of(Agent* a) {
  if (a == nullptr) return {dead, 0};
  if (Alive* l = shoal::cast<Alive>(a)) return {l->state.get(), 0};
  return {dead, 1};
}

/// SplitMix64's finaliser: spreads every input bit over the hash.
SHOAL_HD inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/// A cell's part of the state hash: 0 for a dead cell, so that only the automaton's states count
/// (not where the Candidates are, which a plain array of states does not know).
SHOAL_HD inline std::uint64_t hash_cell(std::uint64_t c, std::uint32_t state) {
  return state == dead ? 0 : mix(c * 0x9E3779B97F4A7C15ull ^ mix(state));
}

/// The counts and hash of a CSV row and the summary.
struct totals {
  std::uint64_t live = 0, dying = 0, candidates = 0;
  std::uint64_t state_hash = 0;  ///< a sum of per-cell hashes: the order of the adds does not matter
};

/// Adds up every cell (one launch; waits for it). `sums` needs 4 sums.
template <class W>
inline totals measure(shoal::runtime<Board>& rt, const W& w, shoal::sim::sums& sums) {
  sums.zero();
  const shoal::sim::sums::ref out = sums.device();
  rt.launch_async(w.size(), [=] SHOAL_DEVICE(std::size_t c) {
    const cell_state s = state_of(w.at(static_cast<std::uint32_t>(c)));
    if (s.candidate != 0) out.add(2, 1);
    if (s.state == dead) return;
    out.add(s.state == live ? 0 : 1, 1);
    out.add(3, static_cast<long long>(hash_cell(c, s.state)));
  });
  const auto v = sums.read();
  const auto u = [](long long x) { return static_cast<std::uint64_t>(x); };
  return {u(v[0]), u(v[1]), u(v[2]), u(v[3])};
}

/// Every cell's state, downloaded (tests, small grids).
template <class W>
inline std::vector<cell_state> snapshot(shoal::runtime<Board>& rt, const W& w) {
  shoal::arch::device_buffer<cell_state> out(w.size());
  cell_state* o = out.data();
  rt.launch(w.size(), [=] SHOAL_DEVICE(std::size_t c) { o[c] = state_of(w.at(static_cast<std::uint32_t>(c))); });
  return out.download();
}

/// Between steps, for tests: objects whose `cell` field does not name their cell, occupied cells
/// (to compare with the census), Alives still fresh, states out of 1..C-1, and dead cells with a
/// live neighbour but no Candidate (the invariant the steps rely on).
struct consistency {
  unsigned long long misplaced, occupied, fresh, bad_state, unwatched;
};
template <class W>
inline consistency check_consistency(shoal::runtime<Board>& rt, const W& w) {
  shoal::arch::device_buffer<consistency> out(1);
  out.zero();
  consistency* o = out.data();
  rt.launch(w.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    Agent* a = w.at(c);
    if (a == nullptr) {
      if (live_neighbours(w, c) != 0) shoal::arch::fetch_add_relaxed(o->unwatched, 1ull);
      return;
    }
    shoal::arch::fetch_add_relaxed(o->occupied, 1ull);
    const std::uint32_t home = a->cell;
    if (home != c) shoal::arch::fetch_add_relaxed(o->misplaced, 1ull);
    if (Alive* l = shoal::cast<Alive>(a)) {
      if (l->fresh.get() != 0) shoal::arch::fetch_add_relaxed(o->fresh, 1ull);
      const std::uint32_t s = l->state;
      if (s < live || s >= w.r.states) shoal::arch::fetch_add_relaxed(o->bad_state, 1ull);
    }
  });
  return out.read(0);
}

}  // namespace generation
