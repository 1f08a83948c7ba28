// The generation model's rules in hand-built scenarios (birth and survival at each neighbour
// count, ageing through the dying states, death, Candidates coming and going, the grid's edges),
// agreement with a plain array of states stepped on the host, its invariants over many steps,
// DynaSOAr's burst pattern, determinism (same seed, same run; one thread and many; pinned results
// the cuda build must reproduce), checkpoints (a round trip, and resume refusing states a run
// cannot reach) and the rule flags. Compiled for both backends; device code lives in free
// functions.
#include <array>
#include <functional>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "backend/test_support.hpp"
#include "generation_app.hpp"
#include "generation_model.hpp"
#include "generation_resume.hpp"

namespace generation::test {

using shoal::test::oversubscribe;
using Runtime = shoal::runtime<Board>;

/// The set of neighbour counts `counts` as a 9-bit mask.
std::uint32_t counts(std::initializer_list<std::uint32_t> counts) {
  std::uint32_t m = 0;
  for (std::uint32_t n : counts) m |= 1u << n;
  return m;
}
const rule life{counts({2, 3}), counts({3}), 2};           // Conway's Life: S23/B3/C2
const rule brians_brain{0, counts({2}), 3};                 // S/B2/C3
const rule star_wars{counts({3, 4, 5}), counts({2}), 4};    // S345/B2/C4

/// A small grid: heap, grid arrays, census, sums, disabled timer.
struct lab {
  Runtime rt;
  board b;
  shoal::sim::census<Board> census;
  shoal::sim::sums sums{4};
  shoal::sim::phase_timer timer{false};
  lab(std::uint32_t w, std::uint32_t h, rule r, std::size_t heap_mb = 2) : rt(heap_mb << 20), b(w, h, r), census(rt) {
    register_cells(rt, b.view());  // as the app does: for defragment() and checkpoints
  }
  const world& w() const { return b.view(); }
  std::uint32_t at(std::uint32_t x, std::uint32_t y) const { return y * w().width + x; }
  void step() {
    generation::step(rt, w(), timer);
    rt.synchronize();
  }
  std::vector<cell_state> cells() { return snapshot(rt, w()); }
  std::vector<std::uint32_t> states() {
    std::vector<std::uint32_t> s;
    for (const cell_state& c : cells()) s.push_back(c.state);
    return s;
  }
  std::uint32_t state(std::uint32_t x, std::uint32_t y) { return cells()[at(x, y)].state; }
  totals measure() { return generation::measure(rt, w(), sums); }
  std::uint64_t objects() {
    const auto c = census.count();
    return shoal::sim::census<Board>::of<Agent>(c);
  }
};

/// Puts cells in the given states (one per cell, 0: dead) on the empty grid, then Candidates
/// around the live ones, as populate() does.
void place(lab& l, const std::vector<std::uint32_t>& states) {
  shoal::arch::device_buffer<std::uint32_t> d(states.size());
  d.upload(states);
  const std::uint32_t* s = d.data();
  const world w = l.w();
  l.rt.launch(w.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    if (s[c] == dead) return;
    Alive* a = new Alive(c);
    a->state = s[c];
    a->fresh = s[c] == live ? 1 : 0;  // only the live ones need Candidates around them
    w.cells[c] = a;
  });
  spread(l.rt, w, l.timer);
  l.rt.synchronize();
}

/// A grid of `l`'s size, all dead but for the cells listed as {x, y, state}.
std::vector<std::uint32_t> grid_of(const lab& l, std::initializer_list<std::array<std::uint32_t, 3>> cells) {
  std::vector<std::uint32_t> s(l.w().size(), dead);
  for (const auto& c : cells) s[l.at(c[0], c[1])] = c[2];
  return s;
}

/// The 8 neighbours of (2, 2), row by row.
constexpr std::array<std::array<std::uint32_t, 2>, 8> around_centre{
    {{1, 1}, {2, 1}, {3, 1}, {1, 2}, {3, 2}, {1, 3}, {2, 3}, {3, 3}}};

/// A 5 x 5 grid whose centre is in `centre` and whose first `n` neighbours (around_centre) are
/// live, stepped once: the centre's state after the step.
std::uint32_t centre_after_one_step(const rule& r, std::uint32_t centre, std::uint32_t n) {
  lab l(5, 5, r);
  auto s = grid_of(l, {{2, 2, centre}});
  for (std::uint32_t k = 0; k < n; ++k) s[l.at(around_centre[k][0], around_centre[k][1])] = live;
  place(l, s);
  l.step();
  return l.state(2, 2);
}

// ---- the rules ------------------------------------------------------------------------------

TEST(GenerationRules, ADeadCellIsBornExactlyWhenItsLiveNeighboursAreInB) {
  SHOAL_REQUIRE_DEVICE();
  for (const rule& r : {dynasoar_rule, life, brians_brain})
    for (std::uint32_t n = 0; n <= 8; ++n)
      EXPECT_EQ(centre_after_one_step(r, dead, n), ((r.birth >> n) & 1u) ? live : dead)
          << rule_text(r) << ", " << n << " live neighbours";
}

TEST(GenerationRules, ALiveCellStaysLiveExactlyWhenItsLiveNeighboursAreInS) {
  SHOAL_REQUIRE_DEVICE();
  for (const rule& r : {dynasoar_rule, star_wars})
    for (std::uint32_t n = 0; n <= 8; ++n)
      EXPECT_EQ(centre_after_one_step(r, live, n), ((r.survive >> n) & 1u) ? live : 2u)
          << rule_text(r) << ", " << n << " live neighbours";
  // With two states there is no dying: a live cell that does not survive is dead at once.
  for (std::uint32_t n = 0; n <= 8; ++n)
    EXPECT_EQ(centre_after_one_step(life, live, n), (n == 2 || n == 3) ? live : dead) << n << " live neighbours";
}

TEST(GenerationRules, ADyingCellAgesThroughEveryStateThenIsDeadAndItsObjectsGo) {
  SHOAL_REQUIRE_DEVICE();
  const rule r{0, counts({1}), 6};  // nothing survives; a neighbour of a live cell is born
  lab l(5, 5, r);
  place(l, grid_of(l, {{2, 2, 4}}));  // a dying cell alone, in state 4 of 6
  EXPECT_EQ(l.objects(), 1u) << "no Candidates around a dying cell";
  l.step();
  EXPECT_EQ(l.state(2, 2), 5u);
  EXPECT_EQ(l.measure().dying, 1u);
  l.step();
  EXPECT_EQ(l.cells()[l.at(2, 2)], (cell_state{dead, 1})) << "past state C - 1: dead, a Candidate watches it";
  EXPECT_EQ(l.objects(), 1u);
  l.step();
  EXPECT_EQ(l.cells()[l.at(2, 2)], (cell_state{dead, 0})) << "no live neighbour: the Candidate is gone";
  EXPECT_EQ(l.objects(), 0u);
  EXPECT_EQ(l.rt.verify(), "");
}

TEST(GenerationRules, ALiveCellThatDoesNotSurviveGoesThroughStates2ToCMinus1) {
  SHOAL_REQUIRE_DEVICE();
  const rule r{0, 0, 5};  // nothing survives, nothing is born
  lab l(5, 5, r);
  place(l, grid_of(l, {{2, 2, live}}));
  EXPECT_EQ(l.measure().candidates, 8u) << "a Candidate on each neighbour of a live cell";
  l.step();
  EXPECT_EQ(l.state(2, 2), 2u);
  EXPECT_EQ(l.measure().candidates, 8u) << "they counted the cell while it was live";
  for (std::uint32_t want : {3u, 4u}) {
    l.step();
    EXPECT_EQ(l.state(2, 2), want);
    EXPECT_EQ(l.measure().candidates, 0u) << "no live neighbour: the Candidates are gone";
  }
  l.step();
  EXPECT_EQ(l.cells()[l.at(2, 2)], (cell_state{dead, 1})) << "past state C - 1 = 4: dead";
  EXPECT_EQ(l.objects(), 1u);
}

TEST(GenerationRules, DyingCellsAreNotLiveNeighbours) {
  SHOAL_REQUIRE_DEVICE();
  for (std::uint32_t third : {live, 2u, 3u}) {
    lab l(5, 5, rule{counts({2, 3}), counts({3}), 4});
    place(l, grid_of(l, {{1, 1, live}, {3, 1, live}, {2, 3, third}}));
    l.step();
    EXPECT_EQ(l.state(2, 2), third == live ? live : dead) << "third neighbour in state " << third;
  }
}

TEST(GenerationRules, TheGridDoesNotWrap) {
  SHOAL_REQUIRE_DEVICE();
  {  // a corner has 3 neighbours, all of them live: born under B3
    lab l(5, 5, life);
    place(l, grid_of(l, {{1, 0, live}, {0, 1, live}, {1, 1, live}}));
    l.step();
    EXPECT_EQ(l.state(0, 0), live);
  }
  {  // the cells across the edges are not neighbours of the corner (on a torus they would be 3)
    lab l(5, 5, life);
    place(l, grid_of(l, {{4, 0, live}, {0, 4, live}, {4, 4, live}}));
    l.step();
    EXPECT_EQ(l.state(0, 0), dead);
    EXPECT_EQ(l.measure().live, 0u);
  }
  {  // a cell on an edge has 5 neighbours
    lab l(5, 5, rule{0, counts({5}), 2});
    place(l, grid_of(l, {{1, 0, live}, {3, 0, live}, {1, 1, live}, {2, 1, live}, {3, 1, live}}));
    l.step();
    EXPECT_EQ(l.state(2, 0), live);
  }
  {  // Life's blinker on the left edge loses the cell that would lie outside
    lab l(6, 6, life);
    place(l, grid_of(l, {{0, 1, live}, {0, 2, live}, {0, 3, live}}));
    l.step();
    EXPECT_EQ(l.states(), grid_of(l, {{0, 2, live}, {1, 2, live}}));
  }
}

TEST(GenerationRules, LifesBlinkerOscillatesAndItsCandidatesFollowIt) {
  SHOAL_REQUIRE_DEVICE();
  lab l(7, 7, life);
  const auto vertical = grid_of(l, {{3, 2, live}, {3, 3, live}, {3, 4, live}});
  const auto horizontal = grid_of(l, {{2, 3, live}, {3, 3, live}, {4, 3, live}});
  place(l, vertical);
  for (int s = 1; s <= 6; ++s) {
    l.step();
    EXPECT_EQ(l.states(), s % 2 == 1 ? horizontal : vertical) << "step " << s;
    const consistency c = check_consistency(l.rt, l.w());
    EXPECT_EQ(c.unwatched, 0u) << "step " << s;
  }
  EXPECT_EQ(l.rt.verify(), "");
}

// ---- against a plain array of states ------------------------------------------------------------

/// One step of the rule on a plain array of states (bounded grid, Moore neighbourhood).
std::vector<std::uint32_t> reference_step(const std::vector<std::uint32_t>& s, std::uint32_t w, std::uint32_t h, const rule& r) {
  std::vector<std::uint32_t> next(s.size());
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) {
      std::uint32_t n = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int nx = static_cast<int>(x) + dx, ny = static_cast<int>(y) + dy;
          if ((dx != 0 || dy != 0) && nx >= 0 && nx < static_cast<int>(w) && ny >= 0 && ny < static_cast<int>(h))
            n += s[static_cast<std::size_t>(ny) * w + static_cast<std::size_t>(nx)] == live;
        }
      const std::uint32_t c = s[std::size_t{y} * w + x];
      std::uint32_t to;
      if (c == dead) to = ((r.birth >> n) & 1u) ? live : dead;
      else if (c == live && ((r.survive >> n) & 1u)) to = live;
      else to = c + 1 < r.states ? c + 1 : dead;
      next[std::size_t{y} * w + x] = to;
    }
  return next;
}

/// A random start of `density` on a w x h grid (no bursts).
start soup(std::uint32_t w, std::uint32_t h, double density, std::uint64_t seed) {
  return {bursts(w, h, 0), shoal::sim::probability(density), seed};
}

TEST(GenerationRules, EveryStepEqualsAPlainArrayOfStatesSteppedOnTheHost) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t w = 37, h = 23;
  for (const rule& r : {dynasoar_rule, life, brians_brain, star_wars, rule{counts({0, 1, 8}), counts({1, 2}), 7}}) {
    lab l(w, h, r);
    populate(l.rt, l.w(), soup(w, h, 0.4, 17));
    std::vector<std::uint32_t> want = l.states();
    for (int s = 1; s <= 80; ++s) {
      want = reference_step(want, w, h, r);
      l.step();
      ASSERT_EQ(l.states(), want) << rule_text(r) << ", step " << s;
      const consistency c = check_consistency(l.rt, l.w());
      ASSERT_EQ(c.unwatched, 0u) << rule_text(r) << ", step " << s;
    }
    EXPECT_EQ(l.rt.verify(), "") << rule_text(r);
  }
}

// ---- DynaSOAr's bursts ----------------------------------------------------------------------------

/// DynaSOAr's burst pattern, enumerated the way its data set lists it: a burst's rows and
/// columns around each centre of the two lattices.
std::set<std::uint64_t> listed_bursts(std::int64_t w, std::int64_t h, std::int64_t len) {
  std::set<std::uint64_t> cells;
  const auto burst = [&](std::int64_t cx, std::int64_t cy) {
    const auto add = [&](std::int64_t x, std::int64_t y) { cells.insert(static_cast<std::uint64_t>((cy + y) * w + cx + x)); };
    for (std::int64_t y = -len; y <= -6; ++y) add(0, y);
    for (std::int64_t y = 6; y <= len; ++y) add(0, y);
    for (std::int64_t x = -len; x <= len; ++x) add(x, 0);
    const std::int64_t half[6] = {0, 5, 3, 3, 1, 1};
    for (std::int64_t y = 1; y <= 5; ++y)
      for (std::int64_t x = -half[y]; x <= half[y]; ++x) add(x, y), add(x, -y);
  };
  const std::int64_t step = 21 * len / 10, first = len + 10;
  for (std::int64_t origin : {first, first + 21 * len / 20})
    for (std::int64_t cx = origin; cx < w - len - 10; cx += step)
      for (std::int64_t cy = origin; cy < h - len - 10; cy += step) burst(cx, cy);
  return cells;
}

TEST(GenerationBursts, OneBurstIsACrossWithADiamondAtItsCentre) {
  const bursts b(300, 300, 100);
  EXPECT_EQ(b.count(), 1u);
  std::uint64_t cells = 0;
  for (std::uint32_t y = 0; y < 300; ++y)
    for (std::uint32_t x = 0; x < 300; ++x) cells += b.holds(x, y);
  EXPECT_EQ(cells, 201u + 190u + 2 * (11u + 7u + 7u + 3u + 3u)) << "two arms, the centre row and the diamond";
  EXPECT_TRUE(b.holds(10, 110) && b.holds(210, 110) && b.holds(110, 10) && b.holds(110, 210));
  EXPECT_FALSE(b.holds(9, 110) || b.holds(211, 110) || b.holds(111, 104));
  EXPECT_EQ(bursts(5000, 5000, 100).count(), 2u * 23 * 23) << "DynaSOAr's last configuration";
  EXPECT_EQ(bursts(2500, 2500, 100).count(), 2u * 11 * 11) << "the app's default grid";
  EXPECT_EQ(bursts(219, 219, 100).count(), 0u);
  EXPECT_EQ(bursts(5000, 5000, 0).count(), 0u);
}

TEST(GenerationBursts, PopulateDrawsTheBurstsOfDynaSOArsDataSet) {
  SHOAL_REQUIRE_DEVICE();
  for (const auto& [w, h, len] : {std::array<std::uint32_t, 3>{700, 500, 100}, {97, 131, 7}, {64, 64, 3}, {60, 40, 1}}) {
    lab l(w, h, dynasoar_rule, 8);
    populate(l.rt, l.w(), start{bursts(w, h, len), shoal::sim::probability(0.0), 1});
    const auto cells = l.cells();
    std::set<std::uint64_t> got;
    for (std::uint64_t c = 0; c < cells.size(); ++c)
      if (cells[c].state == live) got.insert(c);
    EXPECT_EQ(got, listed_bursts(w, h, len)) << w << " x " << h << ", length " << len;
    EXPECT_GT(got.size(), 0u);
    EXPECT_EQ(check_consistency(l.rt, l.w()).unwatched, 0u);
  }
}

// ---- runs --------------------------------------------------------------------------------------

TEST(GenerationRun, ObjectsAndCellsStayConsistentOverManySteps) {
  SHOAL_REQUIRE_DEVICE();
  lab l(96, 80, dynasoar_rule, 8);
  populate(l.rt, l.w(), start{bursts(96, 80, 12), shoal::sim::probability(0.05), 11});
  bool dying_seen = false, died_seen = false;
  std::uint64_t most_dying = 0;
  for (std::uint32_t s = 1; s <= 320; ++s) {  // past the 255 dying states of the first deaths
    l.step();
    const totals t = l.measure();
    const auto counts = l.census.count();
    ASSERT_EQ(t.live + t.dying, shoal::sim::census<Board>::of<Alive>(counts)) << "step " << s << ": grid and heap disagree";
    ASSERT_EQ(t.candidates, shoal::sim::census<Board>::of<Candidate>(counts)) << "step " << s;
    const consistency c = check_consistency(l.rt, l.w());
    ASSERT_EQ(c.misplaced, 0u) << "step " << s << ": an object's cell field disagrees with the grid";
    ASSERT_EQ(c.occupied, t.live + t.dying + t.candidates) << "step " << s;
    ASSERT_EQ(c.fresh, 0u) << "step " << s;
    ASSERT_EQ(c.bad_state, 0u) << "step " << s;
    ASSERT_EQ(c.unwatched, 0u) << "step " << s << ": a dead cell next to a live one without a Candidate";
    dying_seen |= t.dying > 0;
    died_seen |= t.dying < most_dying;
    most_dying = std::max(most_dying, t.dying);
    if (s % 80 == 0) ASSERT_EQ(l.rt.verify(), "") << "step " << s;
  }
  EXPECT_TRUE(dying_seen);
  EXPECT_TRUE(died_seen) << "dying cells reach the end of their states";
}

/// Per step: live, dying, candidates, state hash; after `steps` steps from a random start.
struct series {
  std::vector<std::array<std::uint64_t, 4>> rows;
  std::vector<cell_state> final_state;
};

std::array<std::uint64_t, 4> row(const totals& t) { return {t.live, t.dying, t.candidates, t.state_hash}; }

series simulate(std::uint32_t width, std::uint32_t height, std::uint64_t seed, std::uint32_t steps, const rule& r = dynasoar_rule,
                std::uint32_t defrag_every = 0, std::uint64_t* moved = nullptr) {
  lab l(width, height, r, 4);
  populate(l.rt, l.w(), start{bursts(width, height, 8), shoal::sim::probability(0.2), seed});
  series out;
  for (std::uint32_t s = 0; s <= steps; ++s) {
    if (s > 0) l.step();
    if (s > 0 && defrag_every != 0 && s % defrag_every == 0) {
      const shoal::defrag_stats d = l.rt.defragment();
      if (moved != nullptr) *moved += d.moved;
      EXPECT_LE(d.blocks_after, d.blocks_before);
      EXPECT_EQ(l.rt.verify(), "") << "step " << s;
      const consistency c = check_consistency(l.rt, l.w());
      EXPECT_EQ(c.misplaced, 0u) << "step " << s << ": an object's cell field disagrees with the grid";
    }
    out.rows.push_back(row(l.measure()));
  }
  out.final_state = l.cells();
  return out;
}

TEST(GenerationRun, SameSeedSameRunAndAnotherSeedAnotherRun) {
  SHOAL_REQUIRE_DEVICE();
  const series a = simulate(40, 30, 21, 60), b = simulate(40, 30, 21, 60), c = simulate(40, 30, 22, 60);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.final_state, b.final_state);
  EXPECT_NE(a.rows, c.rows);
}

// Defragmenting moves objects and rewrites the grid's pointers: the run is the same, step by step.
TEST(GenerationRun, DefragmentingEveryFewStepsChangesNothingButTheBlocks) {
  SHOAL_REQUIRE_DEVICE();
  std::uint64_t moved = 0;
  const series a = simulate(60, 50, 5, 90), b = simulate(60, 50, 5, 90, dynasoar_rule, 7, &moved);
  EXPECT_GT(moved, 0u) << "nothing was sparse enough to move: the test shows nothing";
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.final_state, b.final_state);
}

TEST(GenerationRun, OneThreadAndManyThreadsGiveTheSameRun) {
  SHOAL_REQUIRE_DEVICE();
  series one, many;
  {
    oversubscribe t(1);
    one = simulate(40, 30, 5, 60, star_wars);
  }
  {
    oversubscribe t(8);
    many = simulate(40, 30, 5, 60, star_wars);
  }
  EXPECT_EQ(one.rows, many.rows);
  EXPECT_EQ(one.final_state, many.final_state);
}

TEST(GenerationRun, PinnedResultsThatEveryBackendReproduces) {
  SHOAL_REQUIRE_DEVICE();
  // Computed once on the cpu backend; the cuda build must give the very same numbers. 300 steps:
  // the first cells to die are dead again (255 dying states), and their Candidates gone.
  const series s = simulate(96, 64, 2026, 300);
  const std::array<std::uint64_t, 4> want0{2287, 0, 3285, 6111697388643582462ull},
      want100{1418, 3663, 309, 8084722020490256944ull}, want300{1155, 1273, 1070, 650337461532510748ull};
  EXPECT_EQ(s.rows[0], want0);
  EXPECT_EQ(s.rows[100], want100);
  EXPECT_EQ(s.rows[300], want300);
}

// ---- checkpoints ------------------------------------------------------------------------------

model_flags flags_of(std::uint32_t width, std::uint32_t height) {
  model_flags f;
  f.width = width, f.height = height;
  f.density = 0.25;
  f.burst_length = 0;
  return f;
}

/// A checkpoint of `l`'s state, as the app writes it (without the run's sections).
shoal::checkpoint::reader saved(lab& l, const model_flags& f) {
  l.rt.synchronize();
  shoal::checkpoint::writer w;
  save_state(w, l.rt, f);
  return shoal::checkpoint::reader(w.bytes(), "checkpoint 'test'");
}

TEST(GenerationCheckpoint, SavedAndResumedRunEqualsOneRun) {
  SHOAL_REQUIRE_DEVICE();
  const model_flags f = flags_of(48, 40);
  lab whole(48, 40, rule_of(f)), first(48, 40, rule_of(f)), second(48, 40, rule_of(f));
  populate(whole.rt, whole.w(), start_of(f, 9));
  populate(first.rt, first.w(), start_of(f, 9));
  for (std::uint32_t s = 1; s <= 30; ++s) {
    whole.step();
    first.step();
  }
  const auto r = saved(first, f);
  resume(second.rt, f, r);
  EXPECT_EQ(row(second.measure()), row(whole.measure())) << "the same state after loading";
  EXPECT_EQ(second.cells(), whole.cells()) << "Candidates included";
  for (std::uint32_t s = 31; s <= 60; ++s) {
    whole.step();
    second.step();
  }
  const totals t = whole.measure();
  EXPECT_GT(t.live, 0u);
  EXPECT_EQ(row(second.measure()), row(t));
  EXPECT_EQ(second.cells(), whole.cells());
  EXPECT_EQ(second.rt.verify(), "");
}

/// Applies f(object, world, cell) to the first object of class T on the grid (device code, one
/// thread) whose test(object) holds.
template <class T, class F>
void edit_first(lab& l, F f) {
  const world w = l.w();
  l.rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    for (std::uint64_t c = 0; c < w.size(); ++c)
      if (T* a = shoal::cast<T>(w.cells[c]); a != nullptr && f.applies(a, w)) {
        f(a, w, c);
        return;
      }
  });
}

/// Edits that apply to any object of their class.
struct any {
  SHOAL_HD bool applies(Agent*, const world&) const { return true; }
};
struct state_zero : any {
  SHOAL_HD void operator()(Alive* a, const world&, std::uint64_t) const { a->state = 0; }
};
struct state_past_c : any {
  SHOAL_HD void operator()(Alive* a, const world& w, std::uint64_t) const { a->state = w.r.states; }
};
struct half_born : any {
  SHOAL_HD void operator()(Alive* a, const world&, std::uint64_t) const { a->fresh = 1; }
};
struct counted_nine : any {
  SHOAL_HD void operator()(Agent* a, const world&, std::uint64_t) const { a->live_around = 9; }
};
struct elsewhere : any {
  SHOAL_HD void operator()(Agent* a, const world&, std::uint64_t c) const { a->cell = static_cast<std::uint32_t>(c + 1); }
};
struct twice : any {
  SHOAL_HD void operator()(Agent* a, const world& w, std::uint64_t c) const {
    for (std::uint64_t d = c + 1; d < w.size(); ++d)
      if (w.cells[d] == nullptr) {
        w.cells[d] = a;
        return;
      }
  }
};
struct lost : any {
  SHOAL_HD void operator()(Agent*, const world& w, std::uint64_t c) const { w.cells[c] = nullptr; }
};
/// A Candidate next to a live cell, deleted with its cell emptied: a birth there would be missed.
struct unwatched {
  SHOAL_HD bool applies(Candidate* a, const world& w) const { return live_neighbours(w, a->cell) != 0; }
  SHOAL_HD void operator()(Candidate* a, const world& w, std::uint64_t c) const {
    w.cells[c] = nullptr;
    delete a;
  }
};

/// A state a run cannot reach, made by `edit` (device code on the grid), must be refused on
/// resume with a message containing `words`.
void expect_refused(const std::function<void(lab&)>& edit, const std::string& words) {
  const model_flags f = flags_of(16, 12);
  lab l(16, 12, rule_of(f));
  populate(l.rt, l.w(), start_of(f, 3));
  for (std::uint32_t s = 1; s <= 3; ++s) l.step();
  ASSERT_GT(l.measure().live, 0u);
  edit(l);
  l.rt.synchronize();
  const auto r = saved(l, f);
  lab target(16, 12, rule_of(f));
  try {
    resume(target.rt, f, r);
    ADD_FAILURE() << "resumed a checkpoint that should be refused (" << words << ")";
  } catch (const shoal::checkpoint_error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("checkpoint 'test'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(target.objects(), 0u) << "nothing was loaded";
}

TEST(GenerationCheckpoint, ResumeRefusesStatesARunCannotReach) {
  SHOAL_REQUIRE_DEVICE();
  expect_refused([](lab& l) { edit_first<Alive>(l, state_zero{}); }, "in state 0 of a rule with 257 states");
  expect_refused([](lab& l) { edit_first<Alive>(l, state_past_c{}); }, "in state 257 of a rule with 257 states");
  expect_refused([](lab& l) { edit_first<Alive>(l, half_born{}); }, "born in an unfinished step");
  expect_refused([](lab& l) { edit_first<Candidate>(l, counted_nine{}); }, "counted 9 live neighbours");
  expect_refused([](lab& l) { edit_first<Alive>(l, elsewhere{}); }, "says it is on cell");
  expect_refused([](lab& l) { edit_first<Candidate>(l, twice{}); }, "two cells hold the same object");
  expect_refused([](lab& l) { edit_first<Alive>(l, lost{}); }, "an object is on no cell");
  expect_refused([](lab& l) { edit_first<Candidate>(l, unwatched{}); }, "has a live neighbour but no Candidate");
}

// ---- the rule flags ------------------------------------------------------------------------------

TEST(GenerationFlags, ASetOfCountsRoundTripsThroughItsDigits) {
  for (std::uint32_t mask = 0; mask < 512; ++mask) {
    const std::uint64_t d = counts_digits(mask);
    EXPECT_EQ(counts_mask(d), mask) << mask;
    if (mask == 0) EXPECT_EQ(d, no_counts);
    else EXPECT_EQ(d % 10 == 0, (mask & 1u) != 0) << "0 is written last, and only when the set has it: " << mask;
  }
  EXPECT_EQ(counts_mask(model_flags{}.survive), dynasoar_rule.survive);
  EXPECT_EQ(counts_mask(model_flags{}.birth), dynasoar_rule.birth);
  EXPECT_EQ(model_flags{}.states, dynasoar_rule.states);
  EXPECT_EQ(rule_text(dynasoar_rule), "S0235678/B3468/C257");
  EXPECT_EQ(rule_text(brians_brain), "Snone/B2/C3");
}

/// Parses a command line with the program's own parser: -1 to run, else the exit status.
int parse(std::vector<const char*> args, model_flags& f) {
  args.insert(args.begin(), "generation");
  shoal::sim::app_cli cli(app::name, app::description, shoal::sim::model_defaults<app>());
  return shoal::sim::parse_model_command_line<app>(cli, f, static_cast<int>(args.size()), args.data());
}

TEST(GenerationFlags, NeighbourCountsAreDigitsInAnyOrderOrNone) {
  model_flags f;
  ASSERT_EQ(parse({"--survive", "8765320", "--birth", "63"}, f), -1);
  EXPECT_EQ(counts_mask(f.survive), dynasoar_rule.survive);
  EXPECT_EQ(f.survive, model_flags{}.survive) << "one form per set, whatever the order typed";
  EXPECT_EQ(counts_mask(f.birth), counts({3, 6}));
  ASSERT_EQ(parse({"--survive", "none", "--birth", "2", "--states", "3"}, f), -1);
  EXPECT_EQ(rule_of(f).survive, 0u);
  EXPECT_EQ(rule_text(rule_of(f)), "Snone/B2/C3");
  ASSERT_EQ(parse({"--survive", "0"}, f), -1);
  EXPECT_EQ(counts_mask(f.survive), 1u);
  for (const char* bad : {"", "9", "33", "3a", "-3", "0x3", "3 4", "012345678 "}) {
    model_flags g;
    EXPECT_EQ(parse({"--survive", bad}, g), 2) << "'" << bad << "'";
  }
  model_flags g;
  EXPECT_EQ(parse({"--birth", "03"}, g), 2) << "a birth with no live neighbour";
}

}  // namespace generation::test
