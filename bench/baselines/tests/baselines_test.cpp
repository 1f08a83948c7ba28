// The static baselines of the apps benchmark reproduce the apps: a speed ratio means something
// only if both sides compute the same thing. Wa-Tor and traffic must agree exactly (same draws,
// same rules), n-body within rounding (another summation order than the tiled helper).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "backend/test_support.hpp"
#include "baselines/nbody_baseline.hpp"
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

}  // namespace
