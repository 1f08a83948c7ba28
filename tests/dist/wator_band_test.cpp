// Wa-Tor over 1 to 4 ranks (apps/wator/wator_band.hpp) against the one-process model of
// wator_model.hpp, which every rank also runs on its own: after every step the populations and
// the state hash of the whole torus must be the same, bit for bit. Bands of 1 to 9 rows, so
// fish and sharks cross band edges and the torus's seam, eat across them and are born beside them.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "shoal/dist/context.hpp"
#include "wator/wator_band.hpp"

namespace shoal::test {

extern dist::context* ctx;

namespace {

void expect_same_run_as_one_process(std::uint32_t width, std::uint32_t height, std::uint64_t seed, std::uint32_t steps) {
  runtime<wator::Ocean> one(std::size_t{8} << 20);
  wator::ocean whole(width, height, seed);
  wator::populate(one, whole.view());
  sim::census<wator::Ocean> census(one);
  arch::device_buffer<unsigned long long> sum(1);
  sim::phase_timer untimed(false);

  runtime<wator::Ocean> rt(std::size_t{8} << 20);
  wator::band_ocean part(rt, *ctx, width, height, seed);
  part.populate();
  const std::string where = std::to_string(width) + "x" + std::to_string(height) + " over " +
                            std::to_string(ctx->size()) + " ranks, rank " + std::to_string(ctx->rank());
  EXPECT_EQ(part.state_hash(), wator::state_hash(one, whole.view(), sum)) << where << ", populated";
  for (std::uint32_t s = 1; s <= steps; ++s) {
    wator::step(one, whole.view(), s, untimed);
    part.step(s, untimed);
    const wator::populations want = wator::count(census), got = part.count();
    EXPECT_EQ(got.fish, want.fish) << where << ", step " << s;
    EXPECT_EQ(got.sharks, want.sharks) << where << ", step " << s;
    EXPECT_EQ(part.state_hash(), wator::state_hash(one, whole.view(), sum)) << where << ", step " << s;
  }
  EXPECT_EQ(rt.verify(), "") << where;
}

TEST(DistWator, EveryStepIsTheOneProcessStep) {
  expect_same_run_as_one_process(40, 36, 5, 25);  // bands of 9 to 36 rows
}

TEST(DistWator, BandsOfOneRowCrossEveryEdge) {
  expect_same_run_as_one_process(24, 4, 11, 25);  // 4 ranks: one row each, the halos are neighbours' only rows
}

}  // namespace
}  // namespace shoal::test
