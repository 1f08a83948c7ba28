// shoal::sim::grid: neighbourhoods on a torus and on a bounded grid (computed on the device and
// compared with coordinates worked out here), offsets, the cells along the axes, claims for
// contested cells (the lowest key wins in any thread order), and a Game of Life whose live cells
// are heap objects. Compiled for both backends; device code lives in free functions.
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "shoal/sim/grid.hpp"
#include "shoal/sim/rng.hpp"
#include "test_support.hpp"

namespace shoal::test {

class Life;
using LifeHeap = shoal::heap<Life>;
/// A live cell of a Game of Life: the grid holds a pointer to it while it lives.
class Life : public object<LifeHeap, Life> {
 public:
  SHOAL_FIELDS(Life, (std::uint32_t, cell), (std::uint32_t, born))
  SHOAL_HD Life(std::uint32_t c, std::uint32_t step) { cell = c, born = step; }
};

namespace {

using torus_grid = sim::grid<Life, sim::edges::torus>;
using bounded_grid = sim::grid<Life, sim::edges::bounded>;

/// Per cell: how many neighbours and which (unused entries no_cell).
struct neighbourhoods {
  std::vector<std::uint32_t> vn_count, moore_count;
  std::vector<std::array<std::uint32_t, 4>> vn;
  std::vector<std::array<std::uint32_t, 8>> moore;
};

template <class Grid>
neighbourhoods neighbourhoods_on_device(const Grid& g) {
  const std::uint64_t n = g.size();
  arch::device_buffer<std::uint32_t> vn(4 * n), moore(8 * n), counts(2 * n);
  std::uint32_t *v = vn.data(), *m = moore.data(), *k = counts.data();
  arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    std::uint32_t a[4] = {sim::no_cell, sim::no_cell, sim::no_cell, sim::no_cell};
    std::uint32_t b[8];
    for (auto& x : b) x = sim::no_cell;
    k[2 * i] = g.von_neumann(c, a);
    k[2 * i + 1] = g.moore(c, b);
    for (int d = 0; d < 4; ++d) v[4 * i + d] = a[d];
    for (int d = 0; d < 8; ++d) m[8 * i + d] = b[d];
    // The iterating forms visit the same cells in the same order.
    std::uint32_t seen = 0;
    g.for_each_von_neumann(c, [&](std::uint32_t x) {
      if (a[seen++] != x) k[2 * i] = 99;
    });
    seen = 0;
    g.for_each_moore(c, [&](std::uint32_t x) {
      if (b[seen++] != x) k[2 * i + 1] = 99;
    });
  });
  arch::synchronize();
  neighbourhoods out;
  const auto hv = vn.download(), hm = moore.download(), hk = counts.download();
  for (std::uint64_t i = 0; i < n; ++i) {
    out.vn_count.push_back(hk[2 * i]);
    out.moore_count.push_back(hk[2 * i + 1]);
    out.vn.push_back({hv[4 * i], hv[4 * i + 1], hv[4 * i + 2], hv[4 * i + 3]});
    std::array<std::uint32_t, 8> mm{};
    for (int d = 0; d < 8; ++d) mm[d] = hm[8 * i + d];
    out.moore.push_back(mm);
  }
  return out;
}

/// The cell at (x + dx, y + dy), worked out here: wrapped, or no_cell off a bounded grid.
std::uint32_t expected_at(std::uint32_t w, std::uint32_t h, bool torus, std::int64_t x, std::int64_t y) {
  if (torus) {
    x = ((x % w) + w) % w;
    y = ((y % h) + h) % h;
  } else if (x < 0 || y < 0 || x >= w || y >= h) {
    return sim::no_cell;
  }
  return static_cast<std::uint32_t>(y * w + x);
}

void expect_neighbourhoods(std::uint32_t w, std::uint32_t h, bool torus, const neighbourhoods& got) {
  const std::int64_t vn_dx[4] = {0, 1, 0, -1}, vn_dy[4] = {-1, 0, 1, 0};
  for (std::uint32_t c = 0; c < w * h; ++c) {
    const std::int64_t x = c % w, y = c / w;
    std::vector<std::uint32_t> vn, moore;
    for (int d = 0; d < 4; ++d)
      if (const auto n = expected_at(w, h, torus, x + vn_dx[d], y + vn_dy[d]); n != sim::no_cell) vn.push_back(n);
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if ((dx != 0 || dy != 0))
          if (const auto n = expected_at(w, h, torus, x + dx, y + dy); n != sim::no_cell) moore.push_back(n);
    ASSERT_EQ(got.vn_count[c], vn.size()) << "cell " << c;
    ASSERT_EQ(got.moore_count[c], moore.size()) << "cell " << c;
    EXPECT_TRUE(std::equal(vn.begin(), vn.end(), got.vn[c].begin())) << "cell " << c;
    EXPECT_TRUE(std::equal(moore.begin(), moore.end(), got.moore[c].begin())) << "cell " << c;
  }
}

std::vector<std::uint32_t> offsets_on_device(const torus_grid& t, const bounded_grid& b,
                                             const std::vector<std::array<std::int64_t, 3>>& cases) {
  arch::device_buffer<std::array<std::int64_t, 3>> in(cases.size());
  in.upload(cases);
  arch::device_buffer<std::uint32_t> out(2 * cases.size());
  const std::array<std::int64_t, 3>* q = in.data();
  std::uint32_t* o = out.data();
  arch::for_each_index(cases.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(q[i][0]);
    o[2 * i] = t.offset(c, q[i][1], q[i][2]);
    o[2 * i + 1] = b.offset(c, q[i][1], q[i][2]);
  });
  arch::synchronize();
  return out.download();
}

/// (cell, distance) pairs seen along the axes from `c`, in order.
template <class Grid>
std::vector<std::pair<std::uint32_t, std::uint32_t>> on_axes_on_device(const Grid& g, std::uint32_t c,
                                                                        std::uint32_t reach) {
  arch::device_buffer<std::uint32_t> out(2 * 4 * reach + 1);
  out.zero();
  std::uint32_t* o = out.data();
  arch::for_each_index(1, [=] SHOAL_DEVICE(std::size_t) {
    std::uint32_t k = 0;
    g.for_each_on_axes(c, reach, [&](std::uint32_t cell, std::uint32_t d) {
      o[1 + 2 * k] = cell;
      o[2 + 2 * k] = d;
      ++k;
    });
    o[0] = k;
  });
  arch::synchronize();
  const auto h = out.download();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (std::uint32_t k = 0; k < h[0]; ++k) seen.push_back({h[1 + 2 * k], h[2 + 2 * k]});
  return seen;
}

/// `requesters` threads each request one of the grid's cells with a random key; then each asks
/// whether it won. Returns, per cell, the winners' ids (one thread each) and the claim words
/// after the resolve phase.
struct contest_result {
  std::vector<std::uint32_t> target;          ///< per requester
  std::vector<sim::claim_word> key;           ///< per requester
  std::vector<unsigned> won;                  ///< per requester: 1 if it won
  std::vector<sim::claim_word> after;         ///< per cell, after the resolve phase
};
contest_result contest(const torus_grid& g, std::uint32_t requesters, std::uint64_t seed) {
  arch::device_buffer<std::uint32_t> target(requesters);
  arch::device_buffer<sim::claim_word> key(requesters);
  arch::device_buffer<unsigned> won(requesters);
  std::uint32_t* t = target.data();
  sim::claim_word* k = key.data();
  unsigned* w = won.data();
  const auto cells = static_cast<std::uint32_t>(g.size());
  arch::for_each_index(requesters, [=] SHOAL_DEVICE(std::size_t i) {
    sim::random r(seed, i, 1, 7);
    const std::uint32_t cell = r.below(cells);
    const sim::claim_word my = sim::claim_key(r.below(4), static_cast<std::uint32_t>(i));  // many equal priorities
    t[i] = cell;
    k[i] = my;
    g.request(cell, my);
  });
  arch::for_each_index(requesters, [=] SHOAL_DEVICE(std::size_t i) { w[i] = g.take(t[i], k[i]) ? 1u : 0u; });
  arch::synchronize();
  arch::device_buffer<sim::claim_word> claims_copy(g.size());
  arch::copy_on_device(claims_copy.data(), g.claims, claims_copy.bytes());
  return {target.download(), key.download(), won.download(), claims_copy.download()};
}

/// Pull form: each cell reads its winner and releases the word.
std::vector<sim::claim_word> pull_winners(const torus_grid& g) {
  arch::device_buffer<sim::claim_word> out(g.size());
  sim::claim_word* o = out.data();
  arch::for_each_index(g.size(), [=] SHOAL_DEVICE(std::size_t c) {
    o[c] = g.winner(static_cast<std::uint32_t>(c));
    if (o[c] != sim::no_claim) g.release(static_cast<std::uint32_t>(c));
  });
  arch::synchronize();
  return out.download();
}
void request_all(const torus_grid& g, const std::vector<std::pair<std::uint32_t, sim::claim_word>>& requests) {
  arch::device_buffer<std::pair<std::uint32_t, sim::claim_word>> in(requests.size());
  in.upload(requests);
  const auto* q = in.data();
  arch::for_each_index(requests.size(), [=] SHOAL_DEVICE(std::size_t i) { g.request(q[i].first, q[i].second); });
  arch::synchronize();
}

// ---- Game of Life: live cells are objects, created and destroyed by device code ----

void place_life(runtime<LifeHeap>& rt, torus_grid g, std::vector<std::uint32_t> cells) {
  arch::device_buffer<std::uint32_t> in(cells.size());
  in.upload(cells);
  const std::uint32_t* c = in.data();
  rt.launch(cells.size(), [=] SHOAL_DEVICE(std::size_t i) { g.cells[c[i]] = new Life(c[i], 0); });
}

/// One generation: every cell counts its live Moore neighbours into `next` (1: alive next),
/// then cells are born and die.
void generation(runtime<LifeHeap>& rt, torus_grid g, std::uint8_t* next, std::uint32_t step) {
  rt.launch(g.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    std::uint32_t live = 0;
    g.for_each_moore(c, [&](std::uint32_t n) { live += g.cells[n] != nullptr; });
    next[c] = live == 3 || (live == 2 && g.cells[c] != nullptr);
  });
  rt.launch(g.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    Life* here = g.cells[c];
    if (next[c] && here == nullptr) g.cells[c] = new Life(c, step);
    if (!next[c] && here != nullptr) {
      delete here;
      g.cells[c] = nullptr;
    }
  });
}

std::set<std::uint32_t> live_cells(const torus_grid& g) {
  std::vector<Life*> cells(g.size());
  arch::copy_to_host(cells.data(), g.cells, cells.size() * sizeof(Life*));
  std::set<std::uint32_t> live;
  for (std::uint32_t c = 0; c < cells.size(); ++c)
    if (cells[c] != nullptr) live.insert(c);
  return live;
}

}  // namespace

TEST(SimGrid, TorusNeighboursWrapAtEveryEdge) {
  SHOAL_REQUIRE_DEVICE();
  for (auto [w, h] : {std::pair{5u, 4u}, std::pair{3u, 3u}, std::pair{7u, 1u}}) {
    sim::device_grid<Life> space(w, h);
    expect_neighbourhoods(w, h, true, neighbourhoods_on_device(space.view()));
  }
}

TEST(SimGrid, BoundedGridLeavesOutCellsPastTheEdge) {
  SHOAL_REQUIRE_DEVICE();
  sim::device_grid<Life, sim::edges::bounded> space(5, 4);
  const neighbourhoods got = neighbourhoods_on_device(space.view());
  EXPECT_EQ(got.vn_count[0], 2u) << "a corner: right and down";
  EXPECT_EQ(got.moore_count[0], 3u);
  EXPECT_EQ(got.vn_count[6], 4u) << "inside";
  EXPECT_EQ(got.moore_count[6], 8u);
  EXPECT_EQ(got.moore_count[2], 5u) << "on the top edge";
  expect_neighbourhoods(5, 4, false, got);
  sim::device_grid<Life, sim::edges::bounded> line(1, 1);
  const neighbourhoods alone = neighbourhoods_on_device(line.view());
  EXPECT_EQ(alone.vn_count[0], 0u);
  EXPECT_EQ(alone.moore_count[0], 0u);
}

TEST(SimGrid, OffsetWrapsAnyDistanceOnATorusAndStopsAtABoundedEdge) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t w = 6, h = 5;
  sim::device_grid<Life> t(w, h);
  sim::device_grid<Life, sim::edges::bounded> b(w, h);
  std::vector<std::array<std::int64_t, 3>> cases;
  for (std::int64_t c : {0, 7, 29})
    for (std::int64_t dx : {-13, -6, -1, 0, 1, 5, 6, 20})
      for (std::int64_t dy : {-11, -1, 0, 2, 4, 5})
        cases.push_back({c, dx, dy});
  const auto got = offsets_on_device(t.view(), b.view(), cases);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto [c, dx, dy] = cases[i];
    const std::int64_t x = c % w, y = c / w;
    EXPECT_EQ(got[2 * i], expected_at(w, h, true, x + dx, y + dy)) << c << " " << dx << " " << dy;
    EXPECT_EQ(got[2 * i + 1], expected_at(w, h, false, x + dx, y + dy)) << c << " " << dx << " " << dy;
  }
}

TEST(SimGrid, OnAxesSeesUpRightDownLeftByDistanceUpToTheReach) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t w = 7, h = 6;
  sim::device_grid<Life> t(w, h);
  sim::device_grid<Life, sim::edges::bounded> b(w, h);
  const std::uint32_t c = 2 * w + 1;  // x = 1, y = 2
  using seen = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  const seen torus{{1 * w + 1, 1}, {2 * w + 2, 1}, {3 * w + 1, 1}, {2 * w + 0, 1},
                   {0 * w + 1, 2}, {2 * w + 3, 2}, {4 * w + 1, 2}, {2 * w + 6, 2},
                   {5 * w + 1, 3}, {2 * w + 4, 3}, {5 * w + 1, 3}, {2 * w + 5, 3}};
  EXPECT_EQ(on_axes_on_device(t.view(), c, 3), torus) << "at distance 3 up and down meet on a 6-row torus";
  const seen bounded{{1 * w + 1, 1}, {2 * w + 2, 1}, {3 * w + 1, 1}, {2 * w + 0, 1},
                     {0 * w + 1, 2}, {2 * w + 3, 2}, {4 * w + 1, 2},
                     {2 * w + 4, 3}, {5 * w + 1, 3}};
  EXPECT_EQ(on_axes_on_device(b.view(), c, 3), bounded);
  EXPECT_TRUE(on_axes_on_device(b.view(), c, 0).empty());
}

TEST(SimGrid, AContestedCellGoesToTheLowestKeyInAnyThreadOrder) {
  SHOAL_REQUIRE_DEVICE();
  sim::device_grid<Life> space(8, 8);
  const std::uint32_t requesters = 4096;
  contest_result first;
  for (int threads : {1, 8}) {
    oversubscribe t(threads);
    const contest_result r = contest(space.view(), requesters, 42);
    std::map<std::uint32_t, sim::claim_word> lowest;
    for (std::uint32_t i = 0; i < requesters; ++i) {
      auto [it, fresh] = lowest.emplace(r.target[i], r.key[i]);
      if (!fresh) it->second = std::min(it->second, r.key[i]);
    }
    std::map<std::uint32_t, unsigned> winners;
    for (std::uint32_t i = 0; i < requesters; ++i) {
      if (!r.won[i]) continue;
      winners[r.target[i]] += 1;
      EXPECT_EQ(r.key[i], lowest[r.target[i]]) << "requester " << i << " won without the lowest key";
    }
    EXPECT_EQ(winners.size(), lowest.size()) << "every requested cell has a winner";
    for (auto [cell, n] : winners) EXPECT_EQ(n, 1u) << "cell " << cell;
    for (sim::claim_word w : r.after) EXPECT_EQ(w, sim::no_claim) << "take() reset every claimed word";
    if (threads == 1) first = r;
    else EXPECT_EQ(r.won, first.won) << "the same winners on one thread and on eight";
  }
}

TEST(SimGrid, PulledMovesReadTheWinnerAndReleaseTheCell) {
  SHOAL_REQUIRE_DEVICE();
  sim::device_grid<Life> space(4, 4);
  const auto k = [](std::uint32_t p, std::uint32_t id) { return sim::claim_key(p, id); };
  request_all(space.view(), {{5, k(9, 1)}, {5, k(3, 7)}, {5, k(3, 2)}, {11, k(0, 4)}});
  const auto winners = pull_winners(space.view());
  for (std::uint32_t c = 0; c < 16; ++c) {
    const sim::claim_word want = c == 5 ? k(3, 2) : c == 11 ? k(0, 4) : sim::no_claim;
    EXPECT_EQ(winners[c], want) << "cell " << c << ": equal priorities fall back to the lower id";
  }
  EXPECT_EQ(pull_winners(space.view()), std::vector<sim::claim_word>(16, sim::no_claim)) << "released";
}

TEST(SimGrid, RefusesAnEmptyGridAndOneTooLargeForItsIndices) {
  EXPECT_THROW(sim::device_grid<Life>(0, 5), error);
  EXPECT_THROW(sim::device_grid<Life>(5, 0), error);
  try {
    sim::device_grid<Life> g(65536, 65536);
    ADD_FAILURE() << "2^32 cells accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("65536 x 65536"), std::string::npos) << e.what();
  }
  SHOAL_REQUIRE_DEVICE();
  sim::device_grid<Life> no_claims(3, 3, sim::grid_claims::without);
  EXPECT_EQ(no_claims.view().claims, nullptr);
  EXPECT_NE(no_claims.view().cells, nullptr);
}

TEST(SimGrid, AGliderOfHeapObjectsCrossesATorus) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t w = 8, h = 6;
  runtime<LifeHeap> rt(std::size_t{1} << 20);
  sim::device_grid<Life> space(w, h, sim::grid_claims::without);
  const torus_grid g = space.view();
  arch::device_buffer<std::uint8_t> next(g.size());
  auto at = [&](std::uint32_t x, std::uint32_t y) { return (y % h) * w + (x % w); };
  std::set<std::uint32_t> glider;
  for (auto [x, y] : {std::pair{1u, 0u}, std::pair{2u, 1u}, std::pair{0u, 2u}, std::pair{1u, 2u}, std::pair{2u, 2u}})
    glider.insert(at(x, y));
  place_life(rt, g, {glider.begin(), glider.end()});
  // A glider moves one cell right and one down every 4 generations; 24 generations take it
  // 6 cells across, over both edges of the torus.
  for (std::uint32_t s = 1; s <= 24; ++s) {
    generation(rt, g, next.data(), s);
    if (s % 4 != 0) continue;
    std::set<std::uint32_t> want;
    for (std::uint32_t c : glider) want.insert(at(c % w + s / 4, c / w + s / 4));
    ASSERT_EQ(live_cells(g), want) << "generation " << s;
    ASSERT_EQ(rt.stats().live(), 5u) << "generation " << s;
  }
  EXPECT_EQ(rt.verify(), "");
}

}  // namespace shoal::test
