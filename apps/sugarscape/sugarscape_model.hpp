#pragma once
/// @file
/// Sugarscape (Epstein and Axtell, "Growing Artificial Societies", 1996) as DynaSOAr's benchmark
/// runs it, on Shoal: male and female agents on a bounded grid of sugar. The model (classes, grid,
/// step phases) lives here so that the app (sugarscape_app.hpp), the tests and the benchmark baseline
/// share it.
///
/// Rules. Every cell holds sugar and grows `grow_rate` a step (the maximum rate on 2% of the
/// cells, half of it on 2%, a quarter on 4%, nothing elsewhere) up to `capacity`; the grid starts
/// without sugar. Each step:
///  1. Sugar grows; then each cell gives an eighth of its sugar (at most `max_diffusion`) to its
///     Moore neighbours, each getting the same whole share (sugar is conserved; on the edges a
///     cell has fewer neighbours and gives less).
///  2. Every agent ages by 1 and burns `metabolism` sugar; one past its `max_age` or left with no
///     sugar dies (its cell is free from now on).
///  3. Every agent looks up to `vision` cells along the four axes for the free cell with the most
///     sugar (the nearest among equals, then a random one) and requests it; a cell requested by
///     several agents goes to one of them (below). The winners move; then every agent harvests
///     all the sugar of its cell.
///  4. Mating. A male that is ready (sugar at least 2/3 of its endowment, age at least
///     `min_mating_age`) courts the richest ready female within its vision on the axes that can
///     still have children (the nearest, then a random one, among equals); a courted female takes
///     the richest suitor (the lowest cell among equals). The pair then asks for a free cell on
///     the father's axes for the child (the nearest, then a random one); if the pair gets it, a
///     child is born there with `new`: a male or a female at even odds, its vision, maximum age,
///     metabolism and endowment the parents' means, its sugar its endowment, a daughter inheriting
///     the mother's `max_children`. Each parent gives half its endowment.
///
/// Initial agents: each cell holds a male with probability 0.12, a female with 0.15; vision is
/// uniform in 1..max_vision, maximum age in [2/3, 1] × max_age, endowment in [1/4, 1] ×
/// max_endowment, metabolism in [1/3, 1] × max_metabolism and a female's max_children in
/// [1/4, 1] × max_children. Defaults: DynaSOAr's example/sugarscape/configuration.h.
///
/// Where DynaSOAr's code differs: it looks over the (2v+1)² square around an agent where Epstein
/// and Axtell (and this model) look along the axes; its initial vision is always 1; its
/// diffusion adds an eighth of the 24 outflows of the 5 × 5 square to each cell, creating sugar.
///
/// Determinism: every random choice comes from sim::random keyed by (seed, cell, step, stream),
/// a contested cell goes to the lowest claim key through sim::grid's claims, and a courted female
/// to the richest suitor, then the lowest cell: never to the thread that came first. Sugar is
/// integer arithmetic. So a run is bit-identical across runs, thread counts and backends.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "shoal/shoal.hpp"
#include "shoal/sim/census.hpp"
#include "shoal/sim/claim.hpp"
#include "shoal/sim/grid.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"

namespace sugarscape {

class Agent;
class Male;
class Female;
using Scape = shoal::heap<Agent, Male, Female>;

/// Random streams: one per kind of decision, so that no two decisions share draws.
enum stream : std::uint32_t {
  sugar_stream = 1,  ///< a cell's grow rate
  init_stream = 2,   ///< the initial agent of a cell
  move_stream = 3,   ///< a tie among equally rich free cells, and the claim priority
  court_stream = 4,  ///< a tie among equally rich females
  birth_stream = 5,  ///< the child's cell and its claim priority
  child_stream = 6,  ///< the child's sex
};

/// The model's flags (DynaSOAr's defaults), also saved in checkpoints. All 8-byte fields: no
/// padding, so no undefined bytes in a file.
struct model_flags {
  std::uint64_t width = 1700, height = 1700;
  double male_probability = 0.12, female_probability = 0.15;
  std::uint64_t max_vision = 2, max_age = 100, max_endowment = 200, max_metabolism = 80;
  std::uint64_t sugar_capacity = 3500, max_grow_rate = 50, max_diffusion = 60;
  std::uint64_t min_mating_age = 22, max_children = 8;
};

/// An inclusive range of a trait.
struct range {
  std::int32_t lo, hi;
  SHOAL_HD bool holds(std::int32_t v) const { return v >= lo && v <= hi; }
  /// Uniform in [lo, hi].
  SHOAL_HD std::int32_t draw(shoal::sim::random& r) const {
    return lo + static_cast<std::int32_t>(r.below(static_cast<std::uint32_t>(hi - lo) + 1));
  }
};

/// Where initial agents' traits lie; children take their parents' means, so every agent's do.
struct trait_ranges {
  range vision, max_age, endowment, metabolism, max_children;
};
inline trait_ranges ranges_of(const model_flags& f) {
  const auto i = [](std::uint64_t v) { return static_cast<std::int32_t>(v); };
  return {{1, i(f.max_vision)},
          {i(f.max_age * 2 / 3), i(f.max_age)},
          {i(f.max_endowment / 4), i(f.max_endowment)},
          {i(f.max_metabolism / 3), i(f.max_metabolism)},
          {i(f.max_children / 4), i(f.max_children)}};
}

/// What an agent inherits: the parents' means.
struct traits {
  std::int32_t vision, max_age, metabolism, endowment;
};

/// The grid of agents (bounded: no wrap-around, as DynaSOAr's) with its claim words.
using cell_grid = shoal::sim::grid<Agent, shoal::sim::edges::bounded>;

/// The world as device code sees it (trivially copyable; the arrays belong to `scape`).
struct world {
  cell_grid g;
  std::int32_t* sugar;      ///< sugar on each cell
  std::int32_t* grow_rate;  ///< sugar each cell grows a step
  std::int32_t* share;      ///< diffusion: what each cell gives each neighbour this step
  std::uint64_t seed;
  std::int32_t capacity, max_diffusion, min_mating_age;

  SHOAL_HD std::uint64_t size() const { return g.size(); }
};

/// Of the cells up to `reach` away from `home` along the four axes (distance 1 up, right, down,
/// left, then distance 2, ...), the one with the highest score (a score below 0: not a
/// candidate); among equal scores the nearest, among those a random one (a draw of r per tie,
/// so every draw depends only on the grid). `home` when there is no candidate.
template <class Score>
SHOAL_HD std::uint32_t best_on_axes(const cell_grid& g, std::uint32_t home, std::uint32_t reach,
                                    shoal::sim::random& r, Score score) {
  std::uint32_t best = home, best_distance = 0, ties = 0;
  std::int64_t best_score = -1;
  g.for_each_on_axes(home, reach, [&](std::uint32_t c, std::uint32_t d) {
    const std::int64_t s = score(c);
    if (s < 0 || s < best_score) return;
    if (s > best_score) {
      best = c, best_score = s, best_distance = d, ties = 1;
    } else if (d == best_distance && r.below(++ties) == 0) {
      best = c;
    }
  });
  return best;
}

/// A suitor's claim on a female's cell: the richest wins, then the lowest cell.
SHOAL_HD inline shoal::sim::claim_word suitor_key(std::int32_t sugar, std::uint32_t home) {
  return shoal::sim::claim_key(0xFFFFFFFFu - static_cast<std::uint32_t>(sugar), home);
}

/// Ready to mate: rich enough to give half its endowment and keep some, and old enough.
SHOAL_HD inline bool ready(std::int32_t sugar, std::int32_t endowment, std::int32_t age, std::int32_t min_age) {
  return sugar >= endowment * 2 / 3 && age >= min_age;
}

/// A child's traits: its parents' means.
SHOAL_HD inline traits child_traits(const traits& father, const traits& mother) {
  return {(father.vision + mother.vision) / 2, (father.max_age + mother.max_age) / 2,
          (father.metabolism + mother.metabolism) / 2, (father.endowment + mother.endowment) / 2};
}

/// Phase 1, part 1, on cell c: growth up to the capacity, then the share it gives each neighbour.
SHOAL_HD inline void grow(const world& w, std::uint64_t c) {
  const std::int32_t s = std::min(w.sugar[c] + w.grow_rate[c], w.capacity);
  w.sugar[c] = s;
  w.share[c] = std::min(s / 8, w.max_diffusion) / 8;
}

/// Phase 1, part 2, on cell c: the neighbours' shares in, its own to each neighbour out.
SHOAL_HD inline void diffuse(const world& w, std::uint32_t c) {
  std::uint32_t n[8];
  const std::uint32_t k = w.g.moore(c, n);
  std::int32_t in = 0;
  for (std::uint32_t j = 0; j < k; ++j) in += w.share[n[j]];
  w.sugar[c] += in - static_cast<std::int32_t>(k) * w.share[c];
}

/// The initial agent of a cell (none, a male or a female) and its traits, from the cell's draws.
struct newcomer {
  std::int32_t kind;  ///< 0 none, 1 male, 2 female
  traits t;
  std::int32_t max_children;  ///< a female's
};
/// Initial agents: the trait ranges and the chances of a male, and of a male or a female.
struct population_rules {
  trait_ranges ranges;
  shoal::sim::probability male, either;
};
inline population_rules population_rules_of(const model_flags& f) {
  return {ranges_of(f), shoal::sim::probability(f.male_probability),
          shoal::sim::probability(f.male_probability + f.female_probability)};
}
SHOAL_HD inline newcomer initial_agent(std::uint64_t seed, std::uint32_t c, const population_rules& p) {
  shoal::sim::random r(seed, c, 0, init_stream);
  const std::uint64_t u = r.next();
  if (u >= p.either.threshold()) return {0, {}, 0};
  const trait_ranges& t = p.ranges;
  const traits a{t.vision.draw(r), t.max_age.draw(r), t.metabolism.draw(r), t.endowment.draw(r)};  // in this order
  if (u < p.male.threshold()) return {1, a, 0};
  return {2, a, t.max_children.draw(r)};
}

/// A cell's grow rate: the maximum on 2% of the cells, half of it on 2%, a quarter on 4%.
SHOAL_HD inline std::int32_t grow_rate_of(std::uint64_t seed, std::uint64_t c, std::int32_t most) {
  shoal::sim::random r(seed, c, 0, sugar_stream);
  const std::uint64_t u = r.next();
  constexpr shoal::sim::probability p1(0.02), p2(0.04), p3(0.08);
  return u < p1.threshold() ? most : u < p2.threshold() ? most / 2 : u < p3.threshold() ? most / 4 : 0;
}

class Agent : public shoal::object<Scape, Agent> {
 public:
  SHOAL_ABSTRACT(Agent)
  /// `target == cell`: no request this phase. `priority`: the random part of the claim key.
  SHOAL_FIELDS(Agent, (std::uint32_t, cell), (std::uint32_t, target), (std::uint32_t, priority),
               (std::int32_t, sugar), (std::int32_t, age), (std::int32_t, vision), (std::int32_t, max_age),
               (std::int32_t, metabolism), (std::int32_t, endowment))

  /// Sets the fields of a new agent on cell c (the subclasses' constructors).
  SHOAL_HD void born(std::uint32_t c, traits t) {
    cell = c, target = c, priority = 0, sugar = t.endowment, age = 0;
    vision = t.vision, max_age = t.max_age, metabolism = t.metabolism, endowment = t.endowment;
  }

  /// Phase 2: age and burn sugar; die past the maximum age or without sugar.
  SHOAL_HD void metabolize(world w) {
    const std::int32_t a = age.get() + 1, s = sugar.get() - metabolism.get();
    if (a > max_age.get() || s <= 0) {
      w.g.cells[cell] = nullptr;
      delete this;
      return;
    }
    age = a;
    sugar = s;
  }

  /// Phase 3, part 1: request the richest free cell in sight (none if every cell is taken).
  SHOAL_HD void plan(world w, std::uint32_t step) {
    const std::uint32_t home = cell;
    shoal::sim::random r(w.seed, home, step, move_stream);
    const std::uint32_t t = best_on_axes(w.g, home, static_cast<std::uint32_t>(vision.get()), r, [&](std::uint32_t c) {
      return w.g.cells[c] == nullptr ? std::int64_t{w.sugar[c]} : std::int64_t{-1};
    });
    target = t;
    if (t == home) return;
    const std::uint32_t p = r.next();
    priority = p;
    w.g.request(t, shoal::sim::claim_key(p, home));
  }

  /// Phase 3, part 2: the winner moves; every agent harvests its cell.
  SHOAL_HD void move(world w) {
    const std::uint32_t home = cell, t = target;
    std::uint32_t here = home;
    if (t != home && w.g.take(t, shoal::sim::claim_key(priority, home))) {
      w.g.cells[t] = this;
      w.g.cells[home] = nullptr;
      cell = t;
      here = t;
    }
    target = here;
    sugar = sugar.get() + w.sugar[here];
    w.sugar[here] = 0;
  }
};

class Female : public shoal::object<Scape, Female, Agent> {
 public:
  SHOAL_FIELDS(Female, (std::int32_t, max_children), (std::int32_t, children))
  SHOAL_HD Female(std::uint32_t c, traits t, std::int32_t most) {
    born(c, t);
    max_children = most, children = 0;
  }

  /// Ready to mate and may still have children (read by males courting her).
  SHOAL_HD bool fertile(const world& w) {
    return children.get() < max_children.get() && ready(sugar, endowment, age, w.min_mating_age);
  }
};

class Male : public shoal::object<Scape, Male, Agent> {
 public:
  /// The female this male courts, between the mating phases of a step; nullptr otherwise.
  SHOAL_FIELDS(Male, (Female*, partner))
  SHOAL_HD Male(std::uint32_t c, traits t) {
    born(c, t);
    partner = nullptr;
  }

  /// Phase 4, part 1: a ready male courts the richest fertile female in sight.
  SHOAL_HD void propose(world w, std::uint32_t step) {
    const std::uint32_t home = cell;
    const std::int32_t s = sugar;
    partner = nullptr;
    if (!ready(s, endowment, age, w.min_mating_age)) return;
    shoal::sim::random r(w.seed, home, step, court_stream);
    const std::uint32_t f = best_on_axes(w.g, home, static_cast<std::uint32_t>(vision.get()), r, [&](std::uint32_t c) {
      Female* x = shoal::cast<Female>(w.g.cells[c]);
      return x != nullptr && x->fertile(w) ? std::int64_t{x->sugar.get()} : std::int64_t{-1};
    });
    if (f == home) return;
    partner = shoal::cast<Female>(w.g.cells[f]);
    w.g.request(f, suitor_key(s, home));
  }

  /// Phase 4, part 2: a male the female took asks for a cell for the child.
  SHOAL_HD void accept(world w, std::uint32_t step) {
    Female* f = partner;
    if (f == nullptr) return;
    const std::uint32_t home = cell;
    if (!w.g.take(f->cell, suitor_key(sugar, home))) {
      partner = nullptr;
      return;
    }
    shoal::sim::random r(w.seed, home, step, birth_stream);
    const std::uint32_t b = best_on_axes(w.g, home, static_cast<std::uint32_t>(vision.get()), r, [&](std::uint32_t c) {
      return w.g.cells[c] == nullptr ? std::int64_t{0} : std::int64_t{-1};
    });
    if (b == home) {
      partner = nullptr;
      return;
    }
    const std::uint32_t p = r.next();
    target = b;
    priority = p;
    w.g.request(b, shoal::sim::claim_key(p, home));
  }

  /// Phase 4, part 3: a pair that got its cell has a child there; each parent gives half its
  /// endowment.
  SHOAL_HD void mate(world w, std::uint32_t step) {
    Female* f = partner;
    if (f == nullptr) return;
    partner = nullptr;
    const std::uint32_t home = cell, b = target;
    target = home;
    if (!w.g.take(b, shoal::sim::claim_key(priority, home))) return;
    const std::int32_t mine = endowment, hers = f->endowment;
    const traits t = child_traits({vision, max_age, metabolism, mine}, {f->vision, f->max_age, f->metabolism, hers});
    shoal::sim::random r(w.seed, home, step, child_stream);
    Agent* child = nullptr;  // nullptr if the heap is full: the launch then throws
    if (r.below(2) == 0) child = new Male(b, t);
    else child = new Female(b, t, f->max_children);
    w.g.cells[b] = child;
    f->children = f->children.get() + 1;
    f->sugar = f->sugar.get() - hers / 2;
    sugar = sugar.get() - mine / 2;
  }
};

/// Heap a grid of `cells` needs if every cell held the largest agent, with room for blocks that
/// are only partly full (each block holds one class): 1.5 × the exact fill.
inline std::uint64_t heap_bytes_needed(std::uint64_t cells) {
  const auto g = shoal::detail::compute_geometry<Scape>();
  const std::uint64_t per_slot = std::max(g.block_bytes / g.capacity[Scape::type_id<Male>],
                                          g.block_bytes / g.capacity[Scape::type_id<Female>]) + 1;
  return cells * per_slot * 3 / 2 + (std::uint64_t{1} << 20);
}

/// The world's device arrays (owner of what `world` points to).
class scape {
 public:
  scape(const model_flags& f, std::uint64_t seed)
      : grid_(static_cast<std::uint32_t>(f.width), static_cast<std::uint32_t>(f.height)),
        sugar_(grid_.size()), grow_rate_(grid_.size()), share_(grid_.size()) {
    sugar_.zero();
    grow_rate_.zero();
    share_.zero();
    view_ = world{grid_.view(), sugar_.data(), grow_rate_.data(), share_.data(), seed,
                  static_cast<std::int32_t>(f.sugar_capacity), static_cast<std::int32_t>(f.max_diffusion),
                  static_cast<std::int32_t>(f.min_mating_age)};
  }
  const world& view() const { return view_; }

 private:
  shoal::sim::device_grid<Agent, shoal::sim::edges::bounded> grid_;
  shoal::arch::device_buffer<std::int32_t> sugar_, grow_rate_, share_;
  world view_{};
};

/// Each cell's grow rate, from its own draw (so a resumed run recomputes them from the seed).
/// The sugar itself is left as it is.
inline void seed_grow_rates(shoal::runtime<Scape>& rt, const world& w, const model_flags& f) {
  const auto most = static_cast<std::int32_t>(f.max_grow_rate);
  rt.launch(w.size(), [=] SHOAL_DEVICE(std::size_t c) { w.grow_rate[c] = grow_rate_of(w.seed, c, most); });
}

/// Fills the empty grid with the initial agents (rules above); the sugar is left at 0.
inline void populate(shoal::runtime<Scape>& rt, const world& w, const model_flags& f) {
  seed_grow_rates(rt, w, f);
  const population_rules p = population_rules_of(f);
  rt.launch(w.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    const newcomer a = initial_agent(w.seed, c, p);
    if (a.kind == 1) w.g.cells[c] = new Male(c, a.t);
    else if (a.kind == 2) w.g.cells[c] = new Female(c, a.t, a.max_children);
  });
}

/// Phase 1 (two launches, no wait): growth and diffusion.
inline void sugar_phase(shoal::runtime<Scape>& rt, const world& w, shoal::sim::phase_timer& timer) {
  {
    auto p = timer.phase("sugar.grow");
    rt.launch_async(w.size(), [=] SHOAL_DEVICE(std::size_t c) { grow(w, c); });
  }
  auto p = timer.phase("sugar.diffuse");
  rt.launch_async(w.size(), [=] SHOAL_DEVICE(std::size_t c) { diffuse(w, static_cast<std::uint32_t>(c)); });
}

/// Phases 2 and 3: metabolism and deaths, then moves and harvest (do-alls, no wait).
inline void agent_phase(shoal::runtime<Scape>& rt, const world& w, std::uint32_t step, shoal::sim::phase_timer& timer) {
  {
    auto p = timer.phase("agent.metabolize");
    rt.parallel_do<Agent, &Agent::metabolize>(w);
  }
  {
    auto p = timer.phase("agent.plan");
    rt.parallel_do<Agent, &Agent::plan>(w, step);
  }
  auto p = timer.phase("agent.move");
  rt.parallel_do<Agent, &Agent::move>(w);
}

/// Phase 4: mating (do-alls over the males, no wait).
inline void mating_phase(shoal::runtime<Scape>& rt, const world& w, std::uint32_t step, shoal::sim::phase_timer& timer) {
  {
    auto p = timer.phase("male.propose");
    rt.parallel_do<&Male::propose>(w, step);
  }
  {
    auto p = timer.phase("male.accept");
    rt.parallel_do<&Male::accept>(w, step);
  }
  auto p = timer.phase("male.mate");
  rt.parallel_do<&Male::mate>(w, step);
}

/// One whole step (1, 2, ...): enqueued, not waited for (errors surface at the next synchronize).
inline void step(shoal::runtime<Scape>& rt, const world& w, std::uint32_t step, shoal::sim::phase_timer& timer) {
  sugar_phase(rt, w, timer);
  agent_phase(rt, w, step, timer);
  mating_phase(rt, w, step, timer);
}

/// What one cell holds, for tests, the state hash and the baseline's comparison.
struct cell_state {
  std::int32_t sugar;  ///< on the cell
  std::int32_t kind;   ///< 0 empty, 1 male, 2 female; the rest is 0 on an empty cell
  std::int32_t agent_sugar, age, vision, max_age, metabolism, endowment;
  std::int32_t children, max_children;  ///< a female's
  bool operator==(const cell_state&) const = default;
};

/// SplitMix64's finaliser: spreads every input bit over the hash.
SHOAL_HD inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
SHOAL_HD inline std::uint64_t hash_cell(std::uint64_t c, const cell_state& s) {
  const std::int32_t v[10] = {s.sugar, s.kind, s.agent_sugar, s.age, s.vision,
                              s.max_age, s.metabolism, s.endowment, s.children, s.max_children};
  std::uint64_t h = mix(c * 0x9E3779B97F4A7C15ull);
  for (const std::int32_t x : v) h = mix(h ^ static_cast<std::uint32_t>(x));
  return h;
}

SHOAL_HD inline cell_state state_of(const world& w, std::uint64_t c) {
  cell_state s{w.sugar[c], 0, 0, 0, 0, 0, 0, 0, 0, 0};
  Agent* a = w.g.cells[c];
  if (a == nullptr) return s;
  s.agent_sugar = a->sugar, s.age = a->age, s.vision = a->vision, s.max_age = a->max_age;
  s.metabolism = a->metabolism, s.endowment = a->endowment;
  if (Female* f = shoal::cast<Female>(a)) {
    s.kind = 2, s.children = f->children, s.max_children = f->max_children;
  } else {
    s.kind = 1;
  }
  return s;
}

/// The numbers of a CSV row and of the summary line.
struct totals {
  std::uint64_t males = 0, females = 0;
  std::uint64_t grid_sugar = 0, agent_sugar = 0;
  std::uint64_t state_hash = 0;  ///< a sum of per-cell hashes: the order of the adds does not matter
};

/// Adds up every cell (one launch; waits for it). `sums` needs 5 sums.
inline totals measure(shoal::runtime<Scape>& rt, const world& w, shoal::sim::sums& sums) {
  sums.zero();
  const shoal::sim::sums::ref out = sums.device();
  rt.launch_async(w.size(), [=] SHOAL_DEVICE(std::size_t c) {
    const cell_state s = state_of(w, c);
    out.add(2, s.sugar);
    if (s.kind == 0) return;
    out.add(s.kind == 1 ? 0 : 1, 1);
    out.add(3, s.agent_sugar);
    out.add(4, static_cast<long long>(hash_cell(c, s)));
  });
  const auto v = sums.read();
  const auto u = [](long long x) { return static_cast<std::uint64_t>(x); };
  return {u(v[0]), u(v[1]), u(v[2]), u(v[3]), u(v[4])};
}

/// Every cell's state, downloaded (tests, small grids).
inline std::vector<cell_state> snapshot(shoal::runtime<Scape>& rt, const world& w) {
  shoal::arch::device_buffer<cell_state> out(w.size());
  cell_state* o = out.data();
  rt.launch(w.size(), [=] SHOAL_DEVICE(std::size_t c) { o[c] = state_of(w, c); });
  return out.download();
}

/// Agents whose `cell` field does not point back at them, occupied cells (for the caller to
/// compare with the census), and males still holding a partner between steps.
struct consistency {
  unsigned long long misplaced, occupied, courting;
};
inline consistency check_consistency(shoal::runtime<Scape>& rt, const world& w) {
  shoal::arch::device_buffer<consistency> out(1);
  out.zero();
  consistency* o = out.data();
  rt.launch(w.size(), [=] SHOAL_DEVICE(std::size_t c) {
    Agent* a = w.g.cells[c];
    if (a == nullptr) return;
    shoal::arch::fetch_add_relaxed(o->occupied, 1ull);
    const std::uint32_t home = a->cell;
    if (home != c) shoal::arch::fetch_add_relaxed(o->misplaced, 1ull);
    if (Male* m = shoal::cast<Male>(a); m != nullptr && m->partner.get() != nullptr)
      shoal::arch::fetch_add_relaxed(o->courting, 1ull);
  });
  return out.read(0);
}

}  // namespace sugarscape
