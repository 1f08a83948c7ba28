// The Game of Life's rules on tiny scenarios (a blinker, a glider, a block, a lone cell, the
// grid's edge), every step against Life stepped on the host, both variants giving the same run,
// its starts (gliders, a PGM pattern) and checkpoints (a round trip per variant, a checkpoint of
// one variant refused by the other). Each test runs for both variants: a typed test over the
// grid's Slot (generation::Cell: --variant cells; generation::Agent: --variant no-cell). Device
// code lives in the model's free functions.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backend/test_support.hpp"
#include "game_of_life/game_of_life_app.hpp"
#include "game_of_life/game_of_life_model.hpp"

namespace game_of_life::test {

using Runtime = shoal::runtime<Board>;
using xy = std::pair<std::uint32_t, std::uint32_t>;
using live_set = std::set<xy>;

/// A small grid of one variant: heap, grid arrays, sums, disabled timer.
template <class Slot>
struct lab {
  Runtime rt;
  generation::basic_board<Slot> b;
  shoal::sim::sums sums{4};
  shoal::sim::phase_timer timer{false};
  lab(std::uint32_t w, std::uint32_t h) : rt(std::size_t{4} << 20), b(w, h, life) { generation::register_cells(rt, b.view()); }
  const generation::basic_world<Slot>& w() const { return b.view(); }

  /// Populates with the given live cells, as the app does from a pattern.
  void place(const live_set& cells) {
    std::vector<std::uint64_t> words((w().size() + 63) / 64, 0);
    for (const auto& [x, y] : cells) {
      const std::uint64_t c = std::uint64_t{y} * w().width + x;
      words[c / 64] |= std::uint64_t{1} << (c % 64);
    }
    shoal::arch::device_buffer<std::uint64_t> bits(words.size());
    bits.upload(words);
    generation::populate(rt, w(), start{bits.data(), gliders(), shoal::sim::probability(0.0), 0});
    rt.synchronize();
  }
  void step(std::uint32_t n = 1) {
    for (std::uint32_t k = 0; k < n; ++k) generation::step(rt, w(), timer);
    rt.synchronize();
  }
  live_set live() {
    live_set out;
    const auto cells = generation::snapshot(rt, w());
    for (std::uint64_t c = 0; c < cells.size(); ++c)
      if (cells[c].state == generation::live) out.insert({static_cast<std::uint32_t>(c % w().width), static_cast<std::uint32_t>(c / w().width)});
    return out;
  }
  generation::totals measure() { return generation::measure(rt, w(), sums); }
};

/// `cells` moved by (dx, dy).
live_set shifted(const live_set& cells, std::uint32_t dx, std::uint32_t dy) {
  live_set out;
  for (const auto& [x, y] : cells) out.insert({x + dx, y + dy});
  return out;
}

/// Life on the host, a plain array of bits: the reference the objects must follow.
live_set host_step(const live_set& cells, std::uint32_t w, std::uint32_t h) {
  live_set out;
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) {
      int n = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const std::int64_t nx = std::int64_t{x} + dx, ny = std::int64_t{y} + dy;
          if ((dx != 0 || dy != 0) && nx >= 0 && ny >= 0 && nx < w && ny < h)
            n += cells.count({static_cast<std::uint32_t>(nx), static_cast<std::uint32_t>(ny)}) != 0;
        }
      if (n == 3 || (n == 2 && cells.count({x, y}) != 0)) out.insert({x, y});
    }
  return out;
}

template <class Slot>
class GameOfLife : public ::testing::Test {};
using variants = ::testing::Types<generation::Cell, generation::Agent>;
TYPED_TEST_SUITE(GameOfLife, variants);

const live_set glider{{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}};  // heading down and right

// ---- the rules ------------------------------------------------------------------------------

TYPED_TEST(GameOfLife, ABlinkerOscillatesWithPeriodTwo) {
  SHOAL_REQUIRE_DEVICE();
  lab<TypeParam> l(7, 7);
  const live_set across{{2, 3}, {3, 3}, {4, 3}}, down{{3, 2}, {3, 3}, {3, 4}};
  l.place(across);
  for (int k = 0; k < 3; ++k) {
    l.step();
    EXPECT_EQ(l.live(), down) << "odd step " << 2 * k + 1;
    l.step();
    EXPECT_EQ(l.live(), across) << "even step " << 2 * k + 2;
  }
  // Its Candidates: the dead cells next to either phase (a Candidate counted in a step's first
  // phase, before the blinker turned, stays for that step): the 5 x 5 square around its centre
  // less the corners and the 3 live cells.
  EXPECT_EQ(l.measure().candidates, 18u);
}

TYPED_TEST(GameOfLife, AGliderMovesOneCellDiagonallyEveryFourGenerations) {
  SHOAL_REQUIRE_DEVICE();
  lab<TypeParam> l(16, 16);
  const live_set start = shifted(glider, 2, 2);
  l.place(start);
  for (std::uint32_t k = 1; k <= 6; ++k) {
    for (int s = 1; s <= 3; ++s) {
      l.step();
      EXPECT_NE(l.live(), shifted(start, k - 1, k - 1)) << "a glider changes shape in between";
      EXPECT_EQ(l.live().size(), 5u);
    }
    l.step();
    EXPECT_EQ(l.live(), shifted(start, k, k)) << "after " << 4 * k << " generations";
  }
}

TYPED_TEST(GameOfLife, ABlockIsStable) {
  SHOAL_REQUIRE_DEVICE();
  lab<TypeParam> l(6, 6);
  const live_set block{{2, 2}, {3, 2}, {2, 3}, {3, 3}};
  l.place(block);
  const generation::totals first = l.measure();
  for (int s = 1; s <= 5; ++s) {
    l.step();
    EXPECT_EQ(l.live(), block);
    EXPECT_EQ(l.measure().state_hash, first.state_hash);
    EXPECT_EQ(l.measure().candidates, 12u);
  }
}

TYPED_TEST(GameOfLife, ALoneCellDiesAndItsCandidatesGo) {
  SHOAL_REQUIRE_DEVICE();
  lab<TypeParam> l(5, 5);
  l.place({{2, 2}});
  EXPECT_EQ(l.measure().candidates, 8u);
  l.step();
  EXPECT_TRUE(l.live().empty());
  l.step();
  const generation::totals t = l.measure();
  EXPECT_EQ(t.live, 0u);
  EXPECT_EQ(t.candidates, 0u) << "nothing lives around them: deleted";
  EXPECT_EQ(t.state_hash, 0u);
}

TYPED_TEST(GameOfLife, TheGridDoesNotWrap) {
  SHOAL_REQUIRE_DEVICE();
  // A blinker standing on the left edge: its other half would be past the edge, so it becomes a
  // pair, then dies. On a torus it would go on blinking across the edge.
  lab<TypeParam> l(6, 6);
  l.place({{0, 1}, {0, 2}, {0, 3}});
  l.step();
  EXPECT_EQ(l.live(), (live_set{{0, 2}, {1, 2}}));
  l.step();
  EXPECT_TRUE(l.live().empty());
  // A glider flying into the bottom right corner ends as a block there (it does not reappear).
  lab<TypeParam> g(8, 8);
  g.place(shifted(glider, 2, 2));
  g.step(40);
  EXPECT_EQ(g.live(), (live_set{{6, 6}, {7, 6}, {6, 7}, {7, 7}}));
}

TYPED_TEST(GameOfLife, EveryStepEqualsLifeOnTheHost) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t w = 40, h = 30;
  lab<TypeParam> l(w, h);
  generation::populate(l.rt, l.w(), start{nullptr, gliders(), shoal::sim::probability(0.35), 5});
  l.rt.synchronize();
  live_set want = l.live();
  ASSERT_GT(want.size(), 300u);
  for (int s = 1; s <= 60; ++s) {
    l.step();
    want = host_step(want, w, h);
    ASSERT_EQ(l.live(), want) << "step " << s;
  }
  EXPECT_EQ(generation::check_consistency(l.rt, l.w()).unwatched, 0u);
  EXPECT_EQ(l.rt.verify(), "");
}

// ---- the variants agree, the starts -------------------------------------------------------------

/// live, candidates and state hash at steps 0, 50 and 100 of a soup with gliders.
template <class Slot>
std::vector<std::array<std::uint64_t, 3>> run(std::uint64_t seed) {
  lab<Slot> l(64, 48);
  generation::populate(l.rt, l.w(), start{nullptr, gliders(4, 64, 48), shoal::sim::probability(0.25), seed});
  std::vector<std::array<std::uint64_t, 3>> rows;
  for (int s = 0; s <= 100; ++s) {
    if (s % 50 == 0) {
      const generation::totals t = l.measure();
      rows.push_back({t.live, t.candidates, t.state_hash});
    }
    if (s < 100) l.step();
  }
  return rows;
}

TEST(GameOfLifeVariants, CellsAndNoCellGiveTheSameRunAndPinnedNumbers) {
  SHOAL_REQUIRE_DEVICE();
  const auto cells = run<generation::Cell>(11), no_cell = run<generation::Agent>(11);
  EXPECT_EQ(cells, no_cell);
  EXPECT_EQ(cells, run<generation::Cell>(11)) << "the same run twice";
  EXPECT_NE(cells, run<generation::Cell>(12)) << "another seed, another soup";
  // Computed once on the cpu backend; the cuda build must give the very same numbers.
  const std::vector<std::array<std::uint64_t, 3>> pinned{
      {738, 2047, 6312663981045472718ull}, {268, 791, 11290817968360753765ull}, {148, 499, 8642522515871084468ull}};
  EXPECT_EQ(cells, pinned);
}

TEST(GameOfLifeStart, GlidersSitOneInEachTile) {
  const gliders g(5, 30, 20);  // 3 columns of 10 cells, 2 rows of 10
  EXPECT_TRUE(g.fit());
  live_set cells;
  for (std::uint32_t y = 0; y < 20; ++y)
    for (std::uint32_t x = 0; x < 30; ++x)
      if (g.holds(x, y)) cells.insert({x, y});
  live_set want;
  for (const auto& [tx, ty] : std::vector<xy>{{0, 0}, {10, 0}, {20, 0}, {0, 10}, {10, 10}})
    for (const xy& c : shifted(glider, tx + 1, ty + 1)) want.insert(c);
  EXPECT_EQ(cells, want);
  EXPECT_FALSE(gliders(10, 16, 16).fit()) << "4 x 4 tiles";
  EXPECT_TRUE(gliders(9, 15, 15).fit());
}

TYPED_TEST(GameOfLife, APatternFileStartsItsBlackPixelsLive) {
  SHOAL_REQUIRE_DEVICE();
  // DynaSOAr's layout: P2, a comment line, the size, maxval 255, black (0) live.
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("gol_pattern_" + std::to_string(::getpid()) + ".pgm");
  {
    std::ofstream out(file);
    out << "P2\n# a blinker and a block\n6 5\n255\n"
           "255 255 255 255 255 255\n"
           "255 0 255 255 255 255\n"
           "255 0 255 255 0 0\n"
           "255 0 255 255 0 0\n"
           "255 255 255 255 255 255\n";
  }
  model_flags f;
  std::snprintf(f.pattern, sizeof f.pattern, "%s", file.string().c_str());
  f.width = 6, f.height = 5, f.density = 0;
  lab<TypeParam> l(6, 5);
  shoal::arch::device_buffer<std::uint64_t> bits;
  generation::populate(l.rt, l.w(), start_of(f, 1, bits));
  l.rt.synchronize();
  std::filesystem::remove(file);
  EXPECT_EQ(l.live(), (live_set{{1, 1}, {1, 2}, {1, 3}, {4, 2}, {5, 2}, {4, 3}, {5, 3}}));
}

// ---- checkpoints ------------------------------------------------------------------------------

/// A checkpoint of `l`'s state, as the app writes it (without the run's sections).
template <class Slot>
shoal::checkpoint::reader saved(lab<Slot>& l, const model_flags& f) {
  l.rt.synchronize();
  shoal::checkpoint::writer w;
  w.value(app::saved_flags, f);
  l.rt.save_heap(w);
  return shoal::checkpoint::reader(w.bytes(), "checkpoint 'test'");
}

model_flags flags_of(std::uint32_t w, std::uint32_t h, variant v) {
  model_flags f;
  f.width = w, f.height = h, f.variant = static_cast<std::uint64_t>(v);
  return f;
}

TYPED_TEST(GameOfLife, SavedAndResumedRunEqualsOneRun) {
  SHOAL_REQUIRE_DEVICE();
  const model_flags f = flags_of(48, 40, std::is_same_v<TypeParam, Cell> ? variant::cells : variant::no_cell);
  lab<TypeParam> whole(48, 40), first(48, 40), second(48, 40);
  const start s{nullptr, gliders(2, 48, 40), shoal::sim::probability(0.3), 9};
  generation::populate(whole.rt, whole.w(), s);
  generation::populate(first.rt, first.w(), s);
  whole.step(30);
  first.step(30);
  generation::resume<TypeParam>(second.rt, generation_flags(f), saved(first, f));
  EXPECT_EQ(second.live(), whole.live());
  whole.step(30);
  second.step(30);
  const generation::totals t = whole.measure(), u = second.measure();
  EXPECT_GT(t.live, 0u);
  EXPECT_EQ(u.live, t.live);
  EXPECT_EQ(u.candidates, t.candidates);
  EXPECT_EQ(u.state_hash, t.state_hash);
  EXPECT_EQ(second.rt.verify(), "");
}

/// The message of resuming `from`'s checkpoint into a grid of the other variant ("" if it loads).
template <class From, class Into>
std::string resumed_as_other_variant() {
  lab<From> l(16, 12);
  generation::populate(l.rt, l.w(), start{nullptr, gliders(), shoal::sim::probability(0.3), 3});
  l.step(2);
  const model_flags f = flags_of(16, 12, variant::cells);
  const auto r = saved(l, f);
  lab<Into> target(16, 12);
  try {
    generation::resume<Into>(target.rt, generation_flags(f), r);
  } catch (const shoal::checkpoint_error& e) {
    for (const shoal::type_stats& t : target.rt.stats().types) EXPECT_EQ(t.live, 0u) << "nothing was loaded: " << t.name;
    return e.what();
  }
  return "";
}

TEST(GameOfLifeCheckpoint, ACheckpointOfOneVariantIsRefusedByTheOther) {
  SHOAL_REQUIRE_DEVICE();
  EXPECT_NE((resumed_as_other_variant<generation::Cell, generation::Agent>().find("holds a Cell object")), std::string::npos);
  EXPECT_NE((resumed_as_other_variant<generation::Agent, generation::Cell>().find("holds no Cell")), std::string::npos);
}

}  // namespace game_of_life::test
