// The static baselines of the apps benchmark reproduce the apps: a speed ratio means something
// only if both sides compute the same thing. Wa-Tor, traffic, Sugarscape and Life (bit for bit) must agree exactly
// (same draws, same rules), n-body within rounding (another summation order than the tiled helper).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/test_support.hpp"
#include "barnes_hut/barnes_hut_model.hpp"
#include "baselines/barnes_hut_baseline.hpp"
#include "baselines/collision_baseline.hpp"
#include "baselines/game_of_life_baseline.hpp"
#include "baselines/generation_baseline.hpp"
#include "baselines/nbody_baseline.hpp"
#include "baselines/sugarscape_baseline.hpp"
#include "baselines/traffic_baseline.hpp"
#include "baselines/wator_baseline.hpp"
#include "shoal/sim/census.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "shoal/sim/sums.hpp"

namespace {

struct wator_result {
  std::uint64_t fish, sharks, state_hash;
};

wator_result run_wator_app(std::uint32_t w, std::uint32_t h, std::uint64_t seed, std::uint32_t steps) {
  shoal::runtime<wator::Ocean> rt(std::size_t{16} << 20);
  wator::ocean ocean(w, h, seed);
  const wator::grid& g = ocean.view();
  shoal::sim::phase_timer timer(false);
  wator::populate(rt, g);
  for (std::uint32_t s = 1; s <= steps; ++s) wator::step(rt, g, s, timer);
  shoal::sim::census<wator::Ocean> census(rt);
  const wator::populations p = wator::count(census);
  shoal::arch::device_buffer<unsigned long long> sum(1);
  return {p.fish, p.sharks, wator::state_hash(rt, g, sum)};
}

template <class Cells>
wator_result run_wator_baseline(std::uint32_t w, std::uint32_t h, std::uint64_t seed, std::uint32_t steps) {
  wator_baseline::simulation<Cells> sim(w, h, seed);
  for (std::uint32_t s = 1; s <= steps; ++s) sim.step(s);
  const auto r = sim.measure();
  return {r.fish, r.sharks, r.state_hash};
}

void expect_wator_agrees(std::uint32_t steps) {
  const wator_result app = run_wator_app(64, 48, 7, steps);
  // Both species alive: a run where one died out would compare too little of the rules.
  ASSERT_GT(app.fish, 0u);
  ASSERT_GT(app.sharks, 0u);
  for (const wator_result& b : {run_wator_baseline<wator_baseline::soa_cells>(64, 48, 7, steps),
                                run_wator_baseline<wator_baseline::aos_cells>(64, 48, 7, steps)}) {
    EXPECT_EQ(b.fish, app.fish);
    EXPECT_EQ(b.sharks, app.sharks);
    EXPECT_EQ(b.state_hash, app.state_hash);
  }
}

TEST(Baselines, WatorInitialStateMatchesApp) {
  SHOAL_REQUIRE_DEVICE();
  expect_wator_agrees(0);
}

TEST(Baselines, WatorRunMatchesApp) {
  SHOAL_REQUIRE_DEVICE();
  expect_wator_agrees(40);
}

/// Generations: live and dying cells and the state hash after `steps` steps, from bursts and a
/// soup, with the app's default rule and one with few states (cells die and are reborn often).
generation::totals run_generation_app(std::uint32_t w, std::uint32_t h, const generation::rule& r,
                                      const generation::start& s, std::uint32_t steps) {
  shoal::runtime<generation::Board> rt(std::size_t{8} << 20);
  generation::board b(w, h, r);
  shoal::sim::phase_timer timer(false);
  generation::populate(rt, b.view(), s);
  for (std::uint32_t k = 1; k <= steps; ++k) generation::step(rt, b.view(), timer);
  shoal::sim::sums sums(4);
  return generation::measure(rt, b.view(), sums);
}

void expect_generation_agrees(const generation::rule& r, std::uint32_t steps) {
  const std::uint32_t w = 80, h = 60;
  const generation::start s{generation::bursts(w, h, 8), shoal::sim::probability(0.2), 17};
  const generation::totals app = run_generation_app(w, h, r, s, steps);
  ASSERT_GT(app.live, 0u);
  generation_baseline::automaton base(w, h, r);
  base.populate(s);
  for (std::uint32_t k = 1; k <= steps; ++k) base.step();
  shoal::sim::sums sums(4);
  const generation::totals b = base.measure(sums);
  EXPECT_EQ(b.live, app.live);
  EXPECT_EQ(b.dying, app.dying);
  EXPECT_EQ(b.state_hash, app.state_hash);
}

TEST(Baselines, GenerationRunMatchesApp) {
  SHOAL_REQUIRE_DEVICE();
  expect_generation_agrees(generation::dynasoar_rule, 0);
  expect_generation_agrees(generation::dynasoar_rule, 60);
  expect_generation_agrees(generation::rule{0b000001100, 0b000001000, 5}, 60);  // S23/B3/C5
}

/// Game of Life, both variants: after `steps` steps from a soup with gliders (on a width that is
/// not a multiple of 64, so the baseline's last word of a row is part full), the app's live cells
/// are the baseline's, bit for bit, and so are the count and the state hash.
template <class Slot>
void expect_game_of_life_agrees(std::uint32_t steps) {
  const std::uint32_t w = 150, h = 70;
  const game_of_life::start s{nullptr, game_of_life::gliders(6, w, h), shoal::sim::probability(0.3), 23};
  shoal::runtime<generation::Board> rt(std::size_t{8} << 20);
  generation::basic_board<Slot> b(w, h, game_of_life::life);
  shoal::sim::phase_timer timer(false);
  generation::populate(rt, b.view(), s);
  for (std::uint32_t k = 1; k <= steps; ++k) generation::step(rt, b.view(), timer);
  shoal::sim::sums sums(4);
  const generation::totals app = generation::measure(rt, b.view(), sums);
  ASSERT_GT(app.live, 0u);
  std::vector<std::uint8_t> app_cells;
  for (const generation::cell_state& c : generation::snapshot(rt, b.view())) app_cells.push_back(c.state == generation::live);

  game_of_life_baseline::automaton base(w, h);
  base.populate(s);
  for (std::uint32_t k = 1; k <= steps; ++k) base.step();
  const generation::totals t = base.measure(sums);
  EXPECT_EQ(base.live_cells(), app_cells) << "after " << steps << " steps";
  EXPECT_EQ(t.live, app.live);
  EXPECT_EQ(t.state_hash, app.state_hash);
}

TEST(Baselines, GameOfLifeRunMatchesAppBitForBit) {
  SHOAL_REQUIRE_DEVICE();
  for (std::uint32_t steps : {0u, 1u, 4u, 100u}) {
    expect_game_of_life_agrees<generation::Cell>(steps);     // --variant cells
    expect_game_of_life_agrees<generation::Agent>(steps);    // --variant no-cell
  }
}

TEST(Baselines, GameOfLifeWordStepIsLife) {
  // The bit-sliced count against a count cell by cell, on every arrangement of a cell's
  // neighbourhood: bit 1 of a word with its 8 neighbours and itself set from n's bits.
  for (std::uint32_t n = 0; n < 512; ++n) {
    game_of_life_baseline::rows3 r{};
    for (int k = 0; k < 9; ++k)
      if ((n >> k) & 1u) r.mid[k / 3] |= std::uint64_t{1} << (k % 3);  // cells 0..2 of each row
    int around = 0;
    for (int k = 0; k < 9; ++k) around += k != 4 && ((n >> k) & 1u);
    const bool alive = (n >> 4) & 1u;
    const bool want = around == 3 || (around == 2 && alive);
    EXPECT_EQ((game_of_life_baseline::next_word(r) >> 1) & 1u, want ? 1u : 0u) << "neighbourhood " << n;
  }
}

traffic::network small_network() {
  traffic::network_params p;
  p.intersections = 80;
  return traffic::generate(p);
}

template <class Cars>
traffic::census_result run_traffic_baseline(const traffic::network& net, const traffic::model_params& p,
                                            int steps) {
  traffic_baseline::simulation<Cars> sim(net, p);
  for (int s = 0; s < steps; ++s) sim.step();
  return sim.census();
}

TEST(Baselines, TrafficRunMatchesApp) {
  SHOAL_REQUIRE_DEVICE();
  const traffic::network net = small_network();
  traffic::model_params p;
  p.car_probability = 0.2;  // a busy network: cars meet, queue at lights and leave at targets
  constexpr int steps = 100;
  traffic::simulation app(net, p, std::size_t{32} << 20);
  for (int s = 0; s < steps; ++s) app.step();
  const traffic::census_result a = app.census();
  ASSERT_GT(a.cars, 0u);
  ASSERT_GT(a.removed, 0u);
  ASSERT_GT(a.stopped, 0u);
  for (const traffic::census_result& b :
       {run_traffic_baseline<traffic_baseline::soa_cars>(net, p, steps),
        run_traffic_baseline<traffic_baseline::aos_cars>(net, p, steps)}) {
    EXPECT_EQ(b.step, a.step);
    EXPECT_EQ(b.cars, a.cars);
    EXPECT_EQ(b.created, a.created);
    EXPECT_EQ(b.removed, a.removed);
    EXPECT_EQ(b.speed_sum, a.speed_sum);
    EXPECT_EQ(b.stopped, a.stopped);
    EXPECT_EQ(b.checksum, a.checksum);
  }
}

template <class Bodies>
nbody::totals run_nbody_baseline(std::uint64_t n, std::uint64_t seed, const nbody::parameters& p, int steps) {
  nbody_baseline::simulation<Bodies> sim(n, seed, p);
  for (int s = 0; s < steps; ++s) sim.step();
  return sim.measure();
}

/// Relative agreement, with an absolute floor for totals near zero (momentum).
void expect_close(double baseline, double app, double scale) {
  EXPECT_LE(std::fabs(baseline - app), 1e-4 * std::fabs(app) + 1e-6 * scale) << baseline << " vs " << app;
}

TEST(Baselines, NbodyRunMatchesAppWithinRounding) {
  SHOAL_REQUIRE_DEVICE();
  constexpr std::uint64_t n = 300, seed = 3;
  nbody::parameters p;
  p.gravity = 1e-6f;  // strong enough that forces change the energy visibly in a few steps
  constexpr int steps = 25;
  shoal::runtime<nbody::Space> rt(std::size_t{16} << 20);
  shoal::sim::sums scratch(4);
  nbody::populate(rt, n, seed, p);
  const nbody::totals start = nbody::measure(rt, scratch);
  shoal::sim::phase_timer timer(false);
  for (int s = 0; s < steps; ++s) nbody::step(rt, p, timer);
  const nbody::totals app = nbody::measure(rt, scratch);
  // The forces must matter, or the comparison would only test the integration.
  ASSERT_GT(std::fabs(app.kinetic_energy - start.kinetic_energy), 1e-3 * start.kinetic_energy);
  for (const nbody::totals& b : {run_nbody_baseline<nbody_baseline::soa_bodies>(n, seed, p, steps),
                                 run_nbody_baseline<nbody_baseline::aos_bodies>(n, seed, p, steps)}) {
    EXPECT_EQ(b.bodies, app.bodies);
    expect_close(b.kinetic_energy, app.kinetic_energy, app.kinetic_energy);
    expect_close(b.momentum_x, app.momentum_x, app.kinetic_energy);
    expect_close(b.momentum_y, app.momentum_y, app.kinetic_energy);
  }
}

// Collision: the same merges (body count, ids and masses exactly: each merge is the same
// absorb() of the same two bodies), positions within 1e-5 of the box and the kinetic energy
// within 1e-4 relative (the GPU sums partners in another association). The scenario is the
// app's reference test's (apps/collision/tests): no pair within 2e-4 of the radius² at any
// decision, so rounding cannot change a merge.
struct no_phase_timer {
  struct scope {};
  scope phase(const char*) { return {}; }
};

struct collision_body {
  std::uint32_t id;
  float x, y, mass;
};

/// The app's bodies, in id order.
std::vector<collision_body> app_bodies(shoal::runtime<collision::Space>& rt, std::uint64_t n) {
  shoal::arch::device_buffer<collision_body> out(n);
  shoal::arch::device_buffer<unsigned long long> count(1);
  collision_body* o = out.data();
  unsigned long long* c = count.data();
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    std::size_t k = 0;
    shoal::device_do<collision::Body>([&](collision::Body* b) {
      if (k < n) o[k] = {b->id, b->x, b->y, b->mass};
      ++k;
    });
    *c = k;
  });
  std::vector<collision_body> all = out.download();
  all.resize(std::min<std::uint64_t>(count.read(0), n));
  std::sort(all.begin(), all.end(), [](const collision_body& a, const collision_body& b) { return a.id < b.id; });
  return all;
}

TEST(Baselines, CollisionRunMatchesAppWithinRounding) {
  SHOAL_REQUIRE_DEVICE();
  constexpr std::uint64_t n = 500, seed = 18;
  collision::parameters p;
  p.merge_radius = 0.05f;
  p.gravity = 1e-6f;
  constexpr int steps = 30;
  shoal::runtime<collision::Space> rt(std::size_t{8} << 20);
  collision::populate(rt, n, seed, p);
  no_phase_timer timer;
  for (int s = 0; s < steps; ++s) collision::step(rt, p, timer);
  shoal::sim::sums scratch(5);
  const collision::totals app = collision::measure(rt, scratch);
  ASSERT_LT(app.bodies, n * 3 / 4) << "the run must merge";
  const std::vector<collision_body> want = app_bodies(rt, n);

  collision_baseline::simulation sim(n, seed, p);
  for (int s = 0; s < steps; ++s) sim.step();
  const collision::totals base = sim.measure();
  EXPECT_EQ(base.bodies, app.bodies);
  EXPECT_EQ(base.mass, app.mass);
  expect_close(base.kinetic_energy, app.kinetic_energy, app.kinetic_energy);
  const auto got = sim.bodies();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].id, want[i].id);
    ASSERT_EQ(got[i].m.mass, want[i].mass) << "body " << want[i].id;
    ASSERT_NEAR(got[i].m.x, want[i].x, 1e-5) << "body " << want[i].id;
    ASSERT_NEAR(got[i].m.y, want[i].y, 1e-5) << "body " << want[i].id;
  }
}

/// Sugarscape: the app and both baselines, compared every 10 steps (populations, sugar on the
/// grid and held by agents, state hash). The run must see births, deaths and contested moves.
template <class Cells>
void expect_sugarscape_agrees(const sugarscape::model_flags& f, std::uint64_t seed, std::uint32_t steps,
                              const std::vector<std::array<std::uint64_t, 5>>& app) {
  sugarscape_baseline::simulation<Cells> sim(f, seed);
  for (std::uint32_t s = 0; s <= steps; ++s) {
    if (s > 0) sim.step(s);
    if (s % 10 != 0) continue;
    const sugarscape::totals t = sim.measure();
    EXPECT_EQ((std::array<std::uint64_t, 5>{t.males, t.females, t.grid_sugar, t.agent_sugar, t.state_hash}), app[s / 10])
        << "step " << s;
  }
}

TEST(Baselines, SugarscapeRunMatchesApp) {
  SHOAL_REQUIRE_DEVICE();
  sugarscape::model_flags f;
  f.width = 64, f.height = 48;
  constexpr std::uint64_t seed = 7;
  constexpr std::uint32_t steps = 120;
  shoal::runtime<sugarscape::Scape> rt(std::size_t{8} << 20);
  sugarscape::scape scape(f, seed);
  const sugarscape::world& w = scape.view();
  shoal::sim::phase_timer timer(false);
  shoal::sim::sums sums(5);
  sugarscape::populate(rt, w, f);
  std::vector<std::array<std::uint64_t, 5>> app;
  std::uint64_t births = 0;
  for (std::uint32_t s = 0; s <= steps; ++s) {
    if (s > 0) sugarscape::step(rt, w, s, timer);
    if (s > 0)
      for (const sugarscape::cell_state& c : sugarscape::snapshot(rt, w)) births += c.kind != 0 && c.age == 0;
    if (s % 10 != 0) continue;
    const sugarscape::totals t = sugarscape::measure(rt, w, sums);
    app.push_back({t.males, t.females, t.grid_sugar, t.agent_sugar, t.state_hash});
  }
  // A run with no births or where everyone died would compare too little of the rules.
  ASSERT_GT(births, 10u);
  ASSERT_GT(app.back()[0], 0u);
  ASSERT_GT(app.back()[1], 0u);
  ASSERT_LT(app.back()[0] + app.back()[1], app.front()[0] + app.front()[1]) << "deaths";
  expect_sugarscape_agrees<sugarscape_baseline::soa_cells>(f, seed, steps, app);
  expect_sugarscape_agrees<sugarscape_baseline::aos_cells>(f, seed, steps, app);
}

/// The app's bodies in heap order (parallel_new's: body i is the i-th), as the baseline's fields.
std::vector<std::array<float, 7>> barnes_hut_bodies(shoal::runtime<barnes_hut::Space>& rt, std::uint64_t n) {
  shoal::arch::device_buffer<std::array<float, 7>> out(n);
  std::array<float, 7>* o = out.data();
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    std::uint64_t k = 0;
    shoal::device_do<barnes_hut::Body>([&](barnes_hut::Body* b) {
      if (k < n) o[k] = {b->x, b->y, b->vx, b->vy, b->mass, b->ax, b->ay};
      ++k;
    });
  });
  return out.download();
}

TEST(Baselines, BarnesHutRunMatchesApp) {
  SHOAL_REQUIRE_DEVICE();
  constexpr std::uint64_t n = 3000, seed = 3;
  constexpr int steps = 20;
  barnes_hut::parameters p;
  p.gravity = 1e-6f;  // strong enough that the bodies' paths bend visibly in 20 steps
  shoal::runtime<barnes_hut::Space> rt(barnes_hut::heap_bytes_needed(n) * 2);
  barnes_hut::quadtree tree(n);
  barnes_hut::populate(rt, n, seed, p);
  const auto start = barnes_hut_bodies(rt, n);
  shoal::sim::phase_timer timer(false);
  for (int s = 0; s < steps; ++s) barnes_hut::step(rt, tree, p, timer);
  const auto app = barnes_hut_bodies(rt, n);
  barnes_hut_baseline::simulation sim(n, seed, p);
  for (int s = 0; s < steps; ++s) sim.step();
  ASSERT_EQ(sim.error(), "");
  shoal::sim::census<barnes_hut::Space> census(rt);
  EXPECT_EQ(sim.cells(), shoal::sim::census<barnes_hut::Space>::of<barnes_hut::Cell>(census.count())) << "the same tree";
  // Stated tolerance: the same operations in the same order, so bit for bit where the compiler
  // fuses alike (the cpu backend: every body equal); else positions within 1e-6 and velocities
  // and accelerations within 1e-5 of the largest.
  float fastest = 0, strongest = 0, bent = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    fastest = std::max({fastest, std::fabs(app[i][2]), std::fabs(app[i][3])});
    strongest = std::max({strongest, std::fabs(app[i][5]), std::fabs(app[i][6])});
    bent = std::max(bent, std::fabs(app[i][2] - start[i][2]));
  }
  ASSERT_GT(bent, 0.1f * fastest) << "the forces must matter";
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::vector<float> b = sim.body(i);
    ASSERT_EQ(b[4], app[i][4]) << "body " << i << ": another body";
    ASSERT_NEAR(b[0], app[i][0], 1e-6) << "body " << i;
    ASSERT_NEAR(b[1], app[i][1], 1e-6) << "body " << i;
    ASSERT_NEAR(b[2], app[i][2], 1e-5 * fastest) << "body " << i;
    ASSERT_NEAR(b[3], app[i][3], 1e-5 * fastest) << "body " << i;
    ASSERT_NEAR(b[5], app[i][5], 1e-5 * strongest) << "body " << i;
    ASSERT_NEAR(b[6], app[i][6], 1e-5 * strongest) << "body " << i;
#if !defined(SHOAL_BACKEND_CUDA)
    ASSERT_EQ(b[0], app[i][0]) << "body " << i << ": the cpu backend computes the same bits";
    ASSERT_EQ(b[3], app[i][3]) << "body " << i;
#endif
  }
}

}  // namespace
