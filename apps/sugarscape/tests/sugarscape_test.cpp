// Sugarscape's rules in hand-built scenarios (moving to the richest free cell in sight, ties,
// contests, harvest, metabolism, starvation, old age, regrowth, diffusion, mating), its
// invariants over many steps, determinism (same seed, same run; one thread and many; pinned
// results the cuda build must reproduce), and checkpoints (a round trip, and resume refusing
// states a run cannot reach). Compiled for both backends; device code lives in free functions.
#include <array>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "backend/test_support.hpp"
#include "sugarscape_model.hpp"
#include "sugarscape_resume.hpp"

namespace sugarscape::test {

using shoal::test::oversubscribe;
using Runtime = shoal::runtime<Scape>;

model_flags flags_of(std::uint32_t width, std::uint32_t height) {
  model_flags f;
  f.width = width, f.height = height;
  return f;
}

/// A small world: heap, grid arrays, census, sums, disabled timer.
struct lab {
  model_flags flags;
  Runtime rt;
  scape sc;
  shoal::sim::census<Scape> census;
  shoal::sim::sums sums{5};
  shoal::sim::phase_timer timer{false};
  explicit lab(const model_flags& f, std::uint64_t seed = 1, std::size_t heap_mb = 2)
      : flags(f), rt(heap_mb << 20), sc(f, seed), census(rt) {}
  lab(std::uint32_t w, std::uint32_t h, std::uint64_t seed = 1) : lab(flags_of(w, h), seed) {}
  const world& w() const { return sc.view(); }
  std::uint32_t at(std::uint32_t x, std::uint32_t y) const { return y * w().g.width + x; }
  std::vector<cell_state> cells() { return snapshot(rt, w()); }
  totals measure() { return sugarscape::measure(rt, w(), sums); }
};

/// An agent to place by hand.
struct spec {
  bool female = false;
  std::int32_t sugar = 100, age = 30, vision = 1, max_age = 90, metabolism = 10, endowment = 120;
  std::int32_t max_children = 4, children = 0;  // a female's
};

void put(Runtime& rt, world w, std::uint32_t c, spec a) {
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    const traits t{a.vision, a.max_age, a.metabolism, a.endowment};
    Agent* x = nullptr;
    if (a.female) {
      Female* f = new Female(c, t, a.max_children);
      f->children = a.children;
      x = f;
    } else {
      x = new Male(c, t);
    }
    x->sugar = a.sugar;
    x->age = a.age;
    w.g.cells[c] = x;
  });
}
void set_sugar(const world& w, std::uint32_t c, std::int32_t s) {
  shoal::arch::copy_to_device(w.sugar + c, &s, sizeof s);
}
void set_rate(const world& w, std::uint32_t c, std::int32_t r) {
  shoal::arch::copy_to_device(w.grow_rate + c, &r, sizeof r);
}

/// What `a` looks like on a cell holding `cell_sugar`, after `steps` of ageing with `gained`
/// sugar (harvested minus burnt and given).
cell_state state(const spec& a, std::int32_t cell_sugar, std::int32_t gained = 0, std::int32_t aged = 0) {
  return {cell_sugar, a.female ? 2 : 1, a.sugar + gained, a.age + aged, a.vision, a.max_age,
          a.metabolism, a.endowment, a.female ? a.children : 0, a.female ? a.max_children : 0};
}
cell_state empty(std::int32_t cell_sugar = 0) { return {cell_sugar, 0, 0, 0, 0, 0, 0, 0, 0, 0}; }

void run_agents(lab& l, std::uint32_t step = 1) {
  agent_phase(l.rt, l.w(), step, l.timer);
  l.rt.synchronize();
}
void run_mating(lab& l, std::uint32_t step = 1) {
  mating_phase(l.rt, l.w(), step, l.timer);
  l.rt.synchronize();
}
void run_sugar(lab& l) {
  sugar_phase(l.rt, l.w(), l.timer);
  l.rt.synchronize();
}

// ---- moving and harvesting ----------------------------------------------------------------

TEST(SugarscapeRules, AnAgentMovesToTheRichestCellInSightAndHarvestsIt) {
  SHOAL_REQUIRE_DEVICE();
  lab l(9, 9);
  const spec a{.vision = 2};
  const auto home = l.at(4, 4);
  put(l.rt, l.w(), home, a);
  set_sugar(l.w(), l.at(4, 2), 40);   // distance 2 up: the richest in sight
  set_sugar(l.w(), l.at(5, 4), 30);   // distance 1 right
  set_sugar(l.w(), l.at(5, 5), 100);  // diagonal: not on an axis
  set_sugar(l.w(), l.at(4, 7), 90);   // distance 3: beyond vision 2
  run_agents(l);
  const auto s = l.cells();
  EXPECT_EQ(s[l.at(4, 2)], state(a, 0, 40 - a.metabolism, 1)) << "moved, harvested all 40, burnt its metabolism";
  EXPECT_EQ(s[home], empty());
  EXPECT_EQ(s[l.at(5, 4)], empty(30));
  EXPECT_EQ(s[l.at(5, 5)], empty(100));
  EXPECT_EQ(s[l.at(4, 7)], empty(90));
}

TEST(SugarscapeRules, AnOccupiedCellIsNoCandidateHoweverRich) {
  SHOAL_REQUIRE_DEVICE();
  lab l(5, 1);  // one row: cells 0..4
  const spec a{.vision = 2}, b{.sugar = 70, .vision = 2};
  put(l.rt, l.w(), 2, a);
  put(l.rt, l.w(), 3, b);
  for (auto [c, s] : {std::pair{0u, 10}, {1u, 5}, {3u, 50}, {4u, 0}}) set_sugar(l.w(), c, s);
  // a sees 1 (5), 3 (b's), 0 (10), 4 (0): goes to 0. b sees 4 (0), 2 (a's), 1 (5): goes to 1.
  run_agents(l);
  const auto s = l.cells();
  EXPECT_EQ(s[0], state(a, 0, 10 - a.metabolism, 1));
  EXPECT_EQ(s[1], state(b, 0, 5 - b.metabolism, 1));
  EXPECT_EQ(s[2], empty());
  EXPECT_EQ(s[3], empty(50)) << "b's old cell keeps its sugar: b harvests where it ends up";
}

TEST(SugarscapeRules, AmongEquallyRichCellsTheNearestWins) {
  SHOAL_REQUIRE_DEVICE();
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    lab l(9, 9, seed);
    put(l.rt, l.w(), l.at(4, 4), spec{.vision = 2});
    set_sugar(l.w(), l.at(4, 2), 25);  // distance 2
    set_sugar(l.w(), l.at(3, 4), 25);  // distance 1
    run_agents(l);
    EXPECT_EQ(l.cells()[l.at(3, 4)].kind, 1) << "seed " << seed;
  }
}

/// Where an agent between two equally rich cells at the same distance goes, on `threads` threads.
std::uint32_t tie_choice(std::uint64_t seed, int threads) {
  oversubscribe t(threads);
  lab l(9, 9, seed);
  put(l.rt, l.w(), l.at(4, 4), spec{.vision = 2});
  set_sugar(l.w(), l.at(4, 2), 25);
  set_sugar(l.w(), l.at(6, 4), 25);
  run_agents(l);
  const auto s = l.cells();
  return s[l.at(4, 2)].kind != 0 ? l.at(4, 2) : s[l.at(6, 4)].kind != 0 ? l.at(6, 4) : 0;
}

TEST(SugarscapeRules, AmongEquallyRichEquallyNearCellsTheDrawDecides) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t up = 2 * 9 + 4, right = 4 * 9 + 6;
  int up_chosen = 0;
  for (std::uint64_t seed = 1; seed <= 32; ++seed) {
    const std::uint32_t c = tie_choice(seed, 8);
    ASSERT_TRUE(c == up || c == right) << "seed " << seed;
    up_chosen += c == up;
    EXPECT_EQ(tie_choice(seed, 1), c) << "same choice on one thread, seed " << seed;
  }
  EXPECT_GT(up_chosen, 4) << "a random draw per seed, not always the same cell";
  EXPECT_LT(up_chosen, 28);
}

/// Two agents whose richest cell in sight is the same: the cells of both after the phase.
std::array<cell_state, 3> contest(std::uint64_t seed, int threads) {
  oversubscribe t(threads);
  lab l(9, 9, seed);
  put(l.rt, l.w(), l.at(2, 4), spec{.vision = 2});
  put(l.rt, l.w(), l.at(6, 4), spec{.sugar = 90, .vision = 2});
  set_sugar(l.w(), l.at(4, 4), 50);
  set_sugar(l.w(), l.at(2, 4), 3);  // under the agents: the loser harvests its own cell
  set_sugar(l.w(), l.at(6, 4), 4);
  run_agents(l);
  const auto s = l.cells();
  return {s[l.at(2, 4)], s[l.at(4, 4)], s[l.at(6, 4)]};
}

TEST(SugarscapeRules, ACellWantedByTwoAgentsGoesToExactlyOneByAFixedRule) {
  SHOAL_REQUIRE_DEVICE();
  const spec left{.vision = 2}, right{.sugar = 90, .vision = 2};
  int left_won = 0;
  for (std::uint64_t seed = 1; seed <= 32; ++seed) {
    const auto s = contest(seed, 8);
    const bool left_moved = s[0].kind == 0;  // its old cell keeps its 3 sugar
    if (left_moved) {
      EXPECT_EQ(s[1], state(left, 0, 50 - left.metabolism, 1)) << "seed " << seed;
      EXPECT_EQ(s[2], state(right, 0, 4 - right.metabolism, 1)) << "the loser stays and harvests, seed " << seed;
    } else {
      EXPECT_EQ(s[1], state(right, 0, 50 - right.metabolism, 1)) << "seed " << seed;
      EXPECT_EQ(s[0], state(left, 0, 3 - left.metabolism, 1)) << "seed " << seed;
    }
    left_won += left_moved;
    EXPECT_EQ(contest(seed, 1), s) << "same winner on one thread, seed " << seed;
  }
  EXPECT_GT(left_won, 4) << "the winner is drawn at random per seed, not always the same side";
  EXPECT_LT(left_won, 28);
}

TEST(SugarscapeRules, AnAgentWithNowhereToGoHarvestsItsOwnCell) {
  SHOAL_REQUIRE_DEVICE();
  lab l(1, 1);
  const spec a{.sugar = 100, .metabolism = 7};
  put(l.rt, l.w(), 0, a);
  set_sugar(l.w(), 0, 25);
  run_agents(l);
  EXPECT_EQ(l.cells()[0], state(a, 0, 25 - 7, 1));
}

// ---- dying ----------------------------------------------------------------------------------

TEST(SugarscapeRules, AnAgentLeftWithoutSugarStarves) {
  SHOAL_REQUIRE_DEVICE();
  for (const std::int32_t sugar : {10, 11}) {  // metabolism 10: 0 left dies, 1 left lives
    lab l(1, 1);
    const spec a{.sugar = sugar, .metabolism = 10};
    put(l.rt, l.w(), 0, a);
    set_sugar(l.w(), 0, 6);
    run_agents(l);
    if (sugar == 10) {
      EXPECT_EQ(l.cells()[0], empty(6)) << "dead before the harvest: the sugar stays";
      EXPECT_EQ(l.measure().males, 0u);
      EXPECT_EQ(l.rt.verify(), "");
    } else {
      EXPECT_EQ(l.cells()[0], state(a, 0, 1 + 6 - sugar, 1));
    }
  }
}

TEST(SugarscapeRules, AnAgentDiesPastItsMaximumAge) {
  SHOAL_REQUIRE_DEVICE();
  for (const std::int32_t age : {59, 60}) {  // max_age 60: reaching it is fine, passing it is not
    lab l(1, 1);
    const spec a{.female = true, .sugar = 500, .age = age, .max_age = 60};
    put(l.rt, l.w(), 0, a);
    run_agents(l);
    const totals t = l.measure();
    EXPECT_EQ(t.females, age == 59 ? 1u : 0u) << "age " << age;
    if (age == 59) EXPECT_EQ(l.cells()[0], state(a, 0, -a.metabolism, 1));
  }
}

TEST(SugarscapeRules, ADeadAgentsCellIsFreeForTheMovesOfTheSameStep) {
  SHOAL_REQUIRE_DEVICE();
  lab l(3, 1);
  put(l.rt, l.w(), 0, spec{.sugar = 5, .metabolism = 10});  // starves in this step
  const spec b{.vision = 2};
  put(l.rt, l.w(), 2, b);
  set_sugar(l.w(), 0, 30);
  run_agents(l);
  const auto s = l.cells();
  EXPECT_EQ(s[0], state(b, 0, 30 - b.metabolism, 1)) << "moved onto the dead agent's cell";
  EXPECT_EQ(l.measure().males, 1u);
}

// ---- sugar ----------------------------------------------------------------------------------

TEST(SugarscapeRules, SugarGrowsBackAtEachCellsRateUpToTheCapacity) {
  SHOAL_REQUIRE_DEVICE();
  model_flags f = flags_of(3, 1);
  f.sugar_capacity = 120;
  f.max_diffusion = 0;  // growth alone
  lab l(f);
  set_rate(l.w(), 0, 50);
  set_rate(l.w(), 1, 0);
  set_sugar(l.w(), 2, 200);  // above the capacity (diffusion can bring it there): cut back
  const std::int32_t want[3][2] = {{50, 0}, {100, 0}, {120, 0}};
  for (const auto& w : want) {
    run_sugar(l);
    const auto s = l.cells();
    EXPECT_EQ(s[0].sugar, w[0]);
    EXPECT_EQ(s[1].sugar, w[1]);
    EXPECT_EQ(s[2].sugar, 120);
  }
}

TEST(SugarscapeRules, EachCellGivesItsNeighboursAnEqualShareOfAnEighth) {
  SHOAL_REQUIRE_DEVICE();
  lab l(5, 5);
  set_sugar(l.w(), l.at(2, 2), 800);  // an eighth is 100, capped at 60: 7 to each of 8 neighbours
  set_sugar(l.w(), l.at(0, 0), 400);  // an eighth is 50: 6 to each of its 3 neighbours
  run_sugar(l);
  const auto s = l.cells();
  EXPECT_EQ(s[l.at(2, 2)].sugar, 800 - 8 * 7);
  EXPECT_EQ(s[l.at(0, 0)].sugar, 400 - 3 * 6);
  EXPECT_EQ(s[l.at(1, 1)].sugar, 7 + 6) << "a neighbour of both";
  EXPECT_EQ(s[l.at(1, 0)].sugar, 6);
  EXPECT_EQ(s[l.at(3, 3)].sugar, 7);
  EXPECT_EQ(s[l.at(4, 4)].sugar, 0);
  std::int64_t total = 0;
  for (const auto& c : s) total += c.sugar;
  EXPECT_EQ(total, 1200) << "diffusion moves sugar, it does not make or lose any";
}

// ---- mating ---------------------------------------------------------------------------------

const spec father{.sugar = 150, .age = 30, .vision = 1, .max_age = 80, .metabolism = 30, .endowment = 120};
const spec mother{.female = true, .sugar = 150, .age = 25, .vision = 2, .max_age = 90, .metabolism = 41,
                  .endowment = 100, .max_children = 3, .children = 1};

/// The child of `father` and `mother`, born on a cell holding `cell_sugar`.
cell_state child_of(const spec& m, const spec& f, bool female, std::int32_t cell_sugar = 0) {
  const std::int32_t e = (m.endowment + f.endowment) / 2;
  return {cell_sugar, female ? 2 : 1, e, 0, (m.vision + f.vision) / 2, (m.max_age + f.max_age) / 2,
          (m.metabolism + f.metabolism) / 2, e, 0, female ? f.max_children : 0};
}

TEST(SugarscapeRules, AReadyPairHasAChildOnAFreeCellNextToTheFather) {
  SHOAL_REQUIRE_DEVICE();
  std::set<std::uint32_t> cells_seen;
  int daughters = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    lab l(7, 7, seed);
    const auto m = l.at(3, 3), f = l.at(4, 3);
    put(l.rt, l.w(), m, father);
    put(l.rt, l.w(), f, mother);
    run_mating(l);
    const auto s = l.cells();
    spec mom = mother;
    mom.children += 1;
    EXPECT_EQ(s[m], state(father, 0, -father.endowment / 2)) << "gave half its endowment";
    EXPECT_EQ(s[f], state(mom, 0, -mother.endowment / 2));
    const totals t = l.measure();
    ASSERT_EQ(t.males + t.females, 3u) << "one child, seed " << seed;
    int children = 0;
    for (const auto c : {l.at(3, 2), l.at(2, 3), l.at(3, 4)}) {  // the father's free neighbours
      if (s[c].kind == 0) continue;
      ++children;
      cells_seen.insert(c);
      daughters += s[c].kind == 2;
      EXPECT_EQ(s[c], child_of(father, mother, s[c].kind == 2)) << "the parents' means, seed " << seed;
    }
    EXPECT_EQ(children, 1) << "seed " << seed;
    EXPECT_EQ(check_consistency(l.rt, l.w()).courting, 0u);
  }
  EXPECT_EQ(cells_seen.size(), 3u) << "the child's cell is drawn among the nearest free ones";
  EXPECT_GT(daughters, 3) << "sons and daughters at even odds";
  EXPECT_LT(daughters, 21);
}

TEST(SugarscapeRules, NoChildWhenEitherParentIsNotReady) {
  SHOAL_REQUIRE_DEVICE();
  spec young = father, poor = mother, done = mother;
  young.age = 21;                              // below --min-mating-age 22
  poor.sugar = mother.endowment * 2 / 3 - 1;   // too poor to give half her endowment
  done.children = done.max_children;           // no more children
  for (const auto& [m, f] : {std::pair{young, mother}, {father, poor}, {father, done}}) {
    lab l(7, 7);
    put(l.rt, l.w(), l.at(3, 3), m);
    put(l.rt, l.w(), l.at(4, 3), f);
    run_mating(l);
    const auto s = l.cells();
    EXPECT_EQ(s[l.at(3, 3)], state(m, 0));
    EXPECT_EQ(s[l.at(4, 3)], state(f, 0));
    const totals t = l.measure();
    EXPECT_EQ(t.males + t.females, 2u);
  }
}

TEST(SugarscapeRules, AMaleCourtsTheRichestFertileFemaleInSight) {
  SHOAL_REQUIRE_DEVICE();
  lab l(7, 7);
  spec near = mother, far = mother, seen_not = mother;
  spec m = father;
  m.vision = 2;
  near.sugar = 100, far.sugar = 140, seen_not.sugar = 149;
  put(l.rt, l.w(), l.at(3, 3), m);
  put(l.rt, l.w(), l.at(4, 3), near);      // distance 1
  put(l.rt, l.w(), l.at(3, 1), far);       // distance 2, richer: courted
  put(l.rt, l.w(), l.at(4, 4), seen_not);  // diagonal: not in sight
  run_mating(l);
  const auto s = l.cells();
  EXPECT_EQ(s[l.at(3, 1)].children, far.children + 1);
  EXPECT_EQ(s[l.at(4, 3)].children, near.children);
  EXPECT_EQ(s[l.at(4, 4)].children, seen_not.children);
}

TEST(SugarscapeRules, AFemaleCourtedByTwoTakesTheRicherThenTheLowerCell) {
  SHOAL_REQUIRE_DEVICE();
  for (const std::int32_t right_sugar : {180, 200}) {  // left has 190: first poorer, then richer
    lab l(7, 7);
    spec left = father, right = father;
    left.sugar = 190, right.sugar = right_sugar;
    put(l.rt, l.w(), l.at(2, 3), left);   // cell 23
    put(l.rt, l.w(), l.at(3, 3), mother);
    put(l.rt, l.w(), l.at(4, 3), right);  // cell 25
    run_mating(l);
    const auto s = l.cells();
    const bool left_won = right_sugar < 190;
    EXPECT_EQ(s[l.at(2, 3)].agent_sugar, 190 - (left_won ? father.endowment / 2 : 0));
    EXPECT_EQ(s[l.at(4, 3)].agent_sugar, right_sugar - (left_won ? 0 : father.endowment / 2));
    EXPECT_EQ(l.measure().males + l.measure().females, 4u) << "one child";
  }
  lab l(7, 7);  // equally rich: the lower cell wins
  put(l.rt, l.w(), l.at(2, 3), father);
  put(l.rt, l.w(), l.at(3, 3), mother);
  put(l.rt, l.w(), l.at(4, 3), father);
  run_mating(l);
  const auto s = l.cells();
  EXPECT_EQ(s[l.at(2, 3)].agent_sugar, father.sugar - father.endowment / 2);
  EXPECT_EQ(s[l.at(4, 3)].agent_sugar, father.sugar);
}

TEST(SugarscapeRules, NoChildWithoutAFreeCellOnTheFathersAxes) {
  SHOAL_REQUIRE_DEVICE();
  lab l(3, 1);  // [male, female, male]: the left male's only neighbour is the female
  spec poorer = father;
  poorer.sugar = 140;
  put(l.rt, l.w(), 0, father);
  put(l.rt, l.w(), 1, mother);
  put(l.rt, l.w(), 2, poorer);
  run_mating(l);
  const totals t = l.measure();
  EXPECT_EQ(t.males + t.females, 3u);
  EXPECT_EQ(l.cells()[0], state(father, 0)) << "the richer suitor won, but there is no cell for the child";
  EXPECT_EQ(check_consistency(l.rt, l.w()).courting, 0u);
}

// ---- whole runs -----------------------------------------------------------------------------

/// Per-cell bounds a run must keep.
void expect_in_bounds(const model_flags& f, const std::vector<cell_state>& s, std::uint32_t step) {
  const trait_ranges t = ranges_of(f);
  const auto most = static_cast<std::int32_t>(f.sugar_capacity + f.max_diffusion);
  for (std::size_t c = 0; c < s.size(); ++c) {
    const cell_state& x = s[c];
    ASSERT_TRUE(x.sugar >= 0 && x.sugar <= most) << "step " << step << " cell " << c << " sugar " << x.sugar;
    if (x.kind == 0) continue;
    ASSERT_TRUE(x.agent_sugar >= 0 && x.age >= 0 && x.age <= x.max_age) << "step " << step << " cell " << c;
    ASSERT_TRUE(t.vision.holds(x.vision) && t.max_age.holds(x.max_age) && t.metabolism.holds(x.metabolism) &&
                t.endowment.holds(x.endowment))
        << "step " << step << " cell " << c;
    if (x.kind == 2) ASSERT_TRUE(t.max_children.holds(x.max_children) && x.children <= x.max_children);
  }
}

TEST(SugarscapeRun, PopulationsAndSugarStayConsistentOverManySteps) {
  SHOAL_REQUIRE_DEVICE();
  lab l(flags_of(64, 64), 11, 4);
  populate(l.rt, l.w(), l.flags);
  const totals start = l.measure();
  EXPECT_NEAR(static_cast<double>(start.males), 64 * 64 * 0.12, 80);
  EXPECT_NEAR(static_cast<double>(start.females), 64 * 64 * 0.15, 80);
  EXPECT_EQ(start.grid_sugar, 0u) << "the grid starts without sugar";
  std::uint64_t births = 0;
  for (std::uint32_t s = 1; s <= 200; ++s) {
    step(l.rt, l.w(), s, l.timer);
    const totals t = l.measure();
    const auto counts = l.census.count();
    ASSERT_EQ(t.males, shoal::sim::census<Scape>::of<Male>(counts)) << "step " << s << ": grid and heap disagree";
    ASSERT_EQ(t.females, shoal::sim::census<Scape>::of<Female>(counts)) << "step " << s;
    const consistency c = check_consistency(l.rt, l.w());
    ASSERT_EQ(c.misplaced, 0u) << "step " << s << ": an agent's cell field disagrees with the grid";
    ASSERT_EQ(c.occupied, t.males + t.females) << "step " << s;
    ASSERT_EQ(c.courting, 0u) << "step " << s;
    const auto cells = l.cells();
    expect_in_bounds(l.flags, cells, s);
    for (const auto& x : cells) births += x.kind != 0 && x.age == 0;  // born in this step
    if (s % 50 == 0) ASSERT_EQ(l.rt.verify(), "") << "step " << s;
  }
  EXPECT_GT(births, 20u) << "agents mate";
  const totals end = l.measure();
  EXPECT_GT(end.males + end.females, 0u) << "the population lives on";
}

/// Per step: males, females, grid sugar, agent sugar, state hash; after `steps` steps.
struct series {
  std::vector<std::array<std::uint64_t, 5>> rows;
  std::vector<cell_state> final_state;
};

std::array<std::uint64_t, 5> row(const totals& t) {
  return {t.males, t.females, t.grid_sugar, t.agent_sugar, t.state_hash};
}

series simulate(std::uint32_t width, std::uint32_t height, std::uint64_t seed, std::uint32_t steps) {
  lab l(flags_of(width, height), seed, 4);
  populate(l.rt, l.w(), l.flags);
  series out;
  for (std::uint32_t s = 0; s <= steps; ++s) {
    if (s > 0) step(l.rt, l.w(), s, l.timer);
    out.rows.push_back(row(l.measure()));
  }
  out.final_state = l.cells();
  return out;
}

TEST(SugarscapeRun, SameSeedSameRunAndAnotherSeedAnotherRun) {
  SHOAL_REQUIRE_DEVICE();
  const series a = simulate(40, 30, 21, 60), b = simulate(40, 30, 21, 60), c = simulate(40, 30, 22, 60);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.final_state, b.final_state);
  EXPECT_NE(a.rows, c.rows);
}

TEST(SugarscapeRun, OneThreadAndManyThreadsGiveTheSameRun) {
  SHOAL_REQUIRE_DEVICE();
  series one, many;
  {
    oversubscribe t(1);
    one = simulate(40, 30, 5, 60);
  }
  {
    oversubscribe t(8);
    many = simulate(40, 30, 5, 60);
  }
  EXPECT_EQ(one.rows, many.rows);
  EXPECT_EQ(one.final_state, many.final_state);
}

TEST(SugarscapeRun, PinnedResultsThatEveryBackendReproduces) {
  SHOAL_REQUIRE_DEVICE();
  // Computed once on the cpu backend; the cuda build must give the very same numbers.
  const series s = simulate(96, 64, 2026, 80);
  const std::array<std::uint64_t, 5> want0{761, 924, 0, 210909, 13071192115013759737ull},
      want40{90, 84, 149503, 132353, 5771183530349695860ull},
      want80{117, 105, 170909, 243270, 2064460733610743574ull};
  EXPECT_EQ(s.rows[0], want0);
  EXPECT_EQ(s.rows[40], want40);
  EXPECT_EQ(s.rows[80], want80);
}

// ---- checkpoints ------------------------------------------------------------------------------

/// A checkpoint of `l`'s state, as main.cpp writes it (without the run's sections).
shoal::checkpoint::reader saved(lab& l) {
  shoal::checkpoint::writer w;
  save_state(w, l.rt, l.w(), l.flags);
  return shoal::checkpoint::reader(w.bytes(), "checkpoint 'test'");
}

TEST(SugarscapeCheckpoint, SavedAndResumedRunEqualsOneRun) {
  SHOAL_REQUIRE_DEVICE();
  const model_flags f = flags_of(48, 40);
  lab whole(f, 9, 4), first(f, 9, 4), second(f, 9, 4);
  populate(whole.rt, whole.w(), f);
  populate(first.rt, first.w(), f);
  for (std::uint32_t s = 1; s <= 30; ++s) {
    step(whole.rt, whole.w(), s, whole.timer);
    step(first.rt, first.w(), s, first.timer);
  }
  const auto r = saved(first);
  resume(second.rt, second.w(), f, r);
  EXPECT_EQ(row(second.measure()), row(whole.measure())) << "the same state after loading";
  for (std::uint32_t s = 31; s <= 60; ++s) {
    step(whole.rt, whole.w(), s, whole.timer);
    step(second.rt, second.w(), s, second.timer);
  }
  const totals t = whole.measure();
  EXPECT_GT(t.males + t.females, 0u);
  EXPECT_EQ(row(second.measure()), row(t));
  EXPECT_EQ(second.cells(), whole.cells());
  EXPECT_EQ(second.rt.verify(), "");
}

/// A state a run cannot reach, made by `edit` (device code on the world), must be refused on
/// resume with a message containing `words`.
void expect_refused(const std::function<void(lab&)>& edit, const std::string& words) {
  const model_flags f = flags_of(16, 12);
  lab l(f, 3);
  populate(l.rt, l.w(), f);
  for (std::uint32_t s = 1; s <= 3; ++s) step(l.rt, l.w(), s, l.timer);
  l.rt.synchronize();
  edit(l);
  l.rt.synchronize();
  const auto r = saved(l);
  lab target(f, 3);
  try {
    resume(target.rt, target.w(), f, r);
    ADD_FAILURE() << "resumed a checkpoint that should be refused (" << words << ")";
  } catch (const shoal::checkpoint_error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("checkpoint 'test'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(target.measure().males + target.measure().females, 0u) << "nothing was loaded";
}

/// Applies f(agent) to the first agent of the grid (device code, one thread).
template <class F>
void edit_first_agent(lab& l, F f) {
  const world w = l.w();
  l.rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    for (std::uint64_t c = 0; c < w.size(); ++c)
      if (Agent* a = w.g.cells[c]) {
        f(a, w, c);
        return;
      }
  });
}
template <class F>
void edit_first_female(lab& l, F f) {
  const world w = l.w();
  l.rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    for (std::uint64_t c = 0; c < w.size(); ++c)
      if (Female* a = shoal::cast<Female>(w.g.cells[c])) {
        f(a, w, c);
        return;
      }
  });
}

struct too_old {
  SHOAL_HD void operator()(Agent* a, const world&, std::uint64_t) const { a->age = a->max_age.get() + 1; }
};
struct blind {
  SHOAL_HD void operator()(Agent* a, const world&, std::uint64_t) const { a->vision = 0; }
};
struct far_sighted {
  SHOAL_HD void operator()(Agent* a, const world&, std::uint64_t) const { a->vision = 3; }
};
struct in_debt {
  SHOAL_HD void operator()(Agent* a, const world&, std::uint64_t) const { a->sugar = -5; }
};
struct too_rich {
  SHOAL_HD void operator()(Agent* a, const world&, std::uint64_t) const { a->sugar = 2000000000; }
};
struct elsewhere {
  SHOAL_HD void operator()(Agent* a, const world&, std::uint64_t c) const { a->cell = static_cast<std::uint32_t>(c + 1); }
};
struct twice {
  SHOAL_HD void operator()(Agent* a, const world& w, std::uint64_t c) const {
    for (std::uint64_t d = c + 1; d < w.size(); ++d)
      if (w.g.cells[d] == nullptr) {
        w.g.cells[d] = a;
        return;
      }
  }
};
struct lost {
  SHOAL_HD void operator()(Agent*, const world& w, std::uint64_t c) const { w.g.cells[c] = nullptr; }
};
struct too_many_children {
  SHOAL_HD void operator()(Female* f, const world&, std::uint64_t) const { f->children = f->max_children.get() + 1; }
};
struct courted {
  SHOAL_HD void operator()(Female* f, const world& w, std::uint64_t) const {
    for (std::uint64_t d = 0; d < w.size(); ++d)
      if (Male* m = shoal::cast<Male>(w.g.cells[d])) {
        m->partner = f;
        return;
      }
  }
};

TEST(SugarscapeCheckpoint, ResumeRefusesStatesARunCannotReach) {
  SHOAL_REQUIRE_DEVICE();
  expect_refused([](lab& l) { edit_first_agent(l, too_old{}); }, "has age");
  expect_refused([](lab& l) { edit_first_agent(l, blind{}); }, "has vision 0");
  expect_refused([](lab& l) { edit_first_agent(l, far_sighted{}); }, "has vision 3");
  expect_refused([](lab& l) { edit_first_agent(l, in_debt{}); }, "holds -5 sugar");
  expect_refused([](lab& l) { edit_first_agent(l, too_rich{}); }, "holds 2000000000 sugar");
  expect_refused([](lab& l) { edit_first_agent(l, elsewhere{}); }, "says it is on cell");
  expect_refused([](lab& l) { edit_first_agent(l, twice{}); }, "two cells hold the same agent");
  expect_refused([](lab& l) { edit_first_agent(l, lost{}); }, "an agent is on no cell");
  expect_refused([](lab& l) { edit_first_female(l, too_many_children{}); }, "children of at most");
  expect_refused([](lab& l) { edit_first_female(l, courted{}); }, "courts a female");
  expect_refused([](lab& l) { set_sugar(l.w(), 5, -1); }, "cell 5 holds -1 sugar");
  expect_refused([](lab& l) { set_sugar(l.w(), 7, 3561); }, "cell 7 holds 3561 sugar");
}

TEST(SugarscapeCheckpoint, ResumeRefusesASugarSectionOfTheWrongSize) {
  SHOAL_REQUIRE_DEVICE();
  const model_flags f = flags_of(16, 12);
  lab l(f, 3);
  populate(l.rt, l.w(), f);
  shoal::checkpoint::writer w;
  w.value("sugarscape.model", f);
  l.rt.save_heap(w);
  l.rt.save_pointers(w, "sugarscape.cells", l.w().g.cells, l.w().size());
  const std::vector<std::int32_t> short_sugar(16 * 12 - 1, 0);
  w.blob("sugarscape.sugar", std::as_bytes(std::span(short_sugar)));
  const shoal::checkpoint::reader r(w.bytes(), "checkpoint 'test'");
  lab target(f, 3);
  try {
    resume(target.rt, target.w(), f, r);
    ADD_FAILURE() << "resumed a checkpoint with a short sugar section";
  } catch (const shoal::checkpoint_error& e) {
    EXPECT_NE(std::string(e.what()).find("'sugarscape.sugar' holds 764 bytes, expected 768"), std::string::npos) << e.what();
  }
}

}  // namespace sugarscape::test
