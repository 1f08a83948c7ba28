// n-body over 1 to 4 ranks (apps/nbody/nbody_ranks.hpp) against one process (nbody_model.hpp),
// which every rank also runs: after 30 steps with forces that matter, every body (matched by its
// mass, which never changes) is where one process puts it to within the tolerance of the cpu and
// cuda backends against each other (positions 1e-5, velocities 1e-3 of the fastest body), and
// the bodies, kinetic energy and momentum agree likewise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "nbody/nbody_ranks.hpp"

namespace shoal::test {

extern dist::context* ctx;

namespace {

struct state {
  float x, y, vx, vy, mass;
};

std::vector<state> states_of(runtime<nbody::Space>& rt) {
  const auto b = rt.download<nbody::Body>();
  std::vector<state> out(b.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = {b.get<&nbody::Body::x>()[i], b.get<&nbody::Body::y>()[i], b.get<&nbody::Body::vx>()[i],
              b.get<&nbody::Body::vy>()[i], b.get<&nbody::Body::mass>()[i]};
  return out;
}

std::vector<state> by_mass(std::vector<state> v) {
  std::sort(v.begin(), v.end(), [](const state& a, const state& b) { return a.mass < b.mass; });
  return v;
}

struct no_timer {
  struct scope {};
  scope phase(const char*) { return {}; }
};

TEST(DistNBody, EveryBodyEndsWhereOneProcessPutsIt) {
  const std::uint64_t n = 700, seed = 42;
  nbody::parameters p;
  p.gravity = 1e-7f;  // strong enough that the forces matter over the run
  const int steps = 30;
  sim::sums scratch(4);

  runtime<nbody::Space> one(std::size_t{4} << 20);
  nbody::populate(one, n, seed, p);
  no_timer timer;
  for (int s = 0; s < steps; ++s) nbody::step(one, p, timer);
  const auto want = by_mass(states_of(one));
  const nbody::totals want_totals = nbody::measure(one, scratch);

  runtime<nbody::Space> rt(std::size_t{4} << 20);
  nbody::ranked_bodies part(rt, *ctx, n, seed, p);
  part.populate();
  const auto initial = states_of(rt);
  for (int s = 0; s < steps; ++s) part.step();
  const nbody::totals got_totals = part.measure(scratch);

  // Every rank's bodies, to every rank.
  const auto mine = states_of(rt);
  std::vector<std::byte> bytes(mine.size() * sizeof(state));
  if (!bytes.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
  std::vector<state> all;
  for (const auto& m : ctx->exchange(std::vector<std::vector<std::byte>>(static_cast<std::size_t>(ctx->size()), bytes))) {
    const std::size_t at = all.size();
    all.resize(at + m.size() / sizeof(state));
    if (!m.empty()) std::memcpy(all.data() + at, m.data(), m.size());
  }
  const auto got = by_mass(all);
  const std::string where = std::to_string(ctx->size()) + " ranks, rank " + std::to_string(ctx->rank());
  ASSERT_EQ(got.size(), want.size()) << where;
  EXPECT_EQ(got_totals.bodies, n) << where;
  double max_dv = 0, max_v = 0, max_dx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(got[i].mass, want[i].mass) << where << ": the same bodies";
    max_dx = std::max({max_dx, double(std::abs(got[i].x - want[i].x)), double(std::abs(got[i].y - want[i].y))});
    max_dv = std::max({max_dv, double(std::abs(got[i].vx - want[i].vx)), double(std::abs(got[i].vy - want[i].vy))});
    max_v = std::max({max_v, double(std::abs(want[i].vx)), double(std::abs(want[i].vy))});
  }
  EXPECT_LT(max_dx, 1e-5) << where;
  EXPECT_LT(max_dv, 1e-3 * max_v) << where;
  EXPECT_NEAR(got_totals.kinetic_energy, want_totals.kinetic_energy, 1e-3 * std::abs(want_totals.kinetic_energy)) << where;
  // The forces were not negligible: this rank's first body changed speed.
  if (!initial.empty()) {
    const auto now = states_of(rt);
    bool moved = false;
    for (const state& s : now)
      if (s.mass == initial[0].mass) moved = s.vx != initial[0].vx;
    EXPECT_TRUE(moved) << where;
  }
}

}  // namespace
}  // namespace shoal::test
