// sim::random (Philox keyed by seed, id, step, stream) and sim::probability: the published
// Philox answer, determinism, independence of the keys, ranges, and the device drawing exactly
// what the host draws (the point of a counter-based generator). Compiled for both backends.
#include <array>
#include <cmath>
#include <set>

#include "shoal/sim/rng.hpp"
#include "test_support.hpp"

namespace shoal::test {

using sim::probability;
using sim::random;

TEST(SimRandom, MatchesThePublishedPhilox4x32KnownAnswer) {
  // Random123's kat_vectors: philox4x32 10 rounds, counter 0 and key 0.
  random r(0, 0, 0, 0);
  const std::array<std::uint32_t, 4> want{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
  for (std::uint32_t w : want) EXPECT_EQ(r.next(), w);
  EXPECT_NE(r.next(), want[0]) << "the fifth word comes from the next block";
}

TEST(SimRandom, SameKeysSameWordsDifferentKeysDifferentWords) {
  auto first_words = [](std::uint64_t seed, std::uint64_t id, std::uint32_t step, std::uint32_t stream) {
    random r(seed, id, step, stream);
    std::array<std::uint32_t, 12> w{};
    for (auto& x : w) x = r.next();
    return w;
  };
  const auto base = first_words(42, 1000, 7, 3);
  EXPECT_EQ(base, first_words(42, 1000, 7, 3));
  EXPECT_NE(base, first_words(43, 1000, 7, 3)) << "seed";
  EXPECT_NE(base, first_words(42, 1001, 7, 3)) << "id";
  EXPECT_NE(base, first_words(42, 1000 + (1ull << 32), 7, 3)) << "high bits of the id";
  EXPECT_NE(base, first_words(42, 1000, 8, 3)) << "step";
  EXPECT_NE(base, first_words(42, 1000, 7, 4)) << "stream";
  EXPECT_NE(base, first_words(42ull << 32, 1000, 7, 3)) << "high bits of the seed";
}

TEST(SimRandom, StreamsDoNotOverlapAcrossBlocks) {
  // Words 4.. of stream s come from later blocks: they must not repeat stream s+1's first words.
  std::set<std::uint32_t> seen;
  for (std::uint32_t stream = 0; stream < 4; ++stream) {
    random r(9, 5, 1, stream);
    for (int k = 0; k < 64; ++k) seen.insert(r.next());
  }
  EXPECT_GT(seen.size(), 250u) << "256 words drawn; a collision or two is chance, many is overlap";
}

TEST(SimRandom, BelowStaysInRangeAndIsRoughlyUniform) {
  for (std::uint32_t n : {1u, 2u, 3u, 4u, 7u, 1000u, 0x80000001u, 0xFFFFFFFFu}) {
    for (std::uint64_t id = 0; id < 2000; ++id) {
      random r(1, id, 0, 0);
      ASSERT_LT(r.below(n), n) << "n = " << n;
    }
  }
  std::array<int, 6> hist{};
  const int draws = 60000;
  for (int id = 0; id < draws; ++id) hist[random(3, id, 2, 1).below(6)] += 1;
  for (int h : hist) EXPECT_NEAR(h, draws / 6, 400) << "each of 6 values about 10000 times";
}

TEST(SimRandom, ChanceFollowsTheIntegerThreshold) {
  EXPECT_EQ(probability(0.0).threshold(), 0u);
  EXPECT_EQ(probability(-1.0).threshold(), 0u);
  EXPECT_EQ(probability(1.0).threshold(), probability::one);
  EXPECT_EQ(probability(0.25).threshold(), probability::one / 4);
  EXPECT_EQ(probability(0.02).threshold(), 85899345u) << "floor(0.02 * 2^32)";
  EXPECT_EQ(probability::ratio(1, 4).threshold(), probability::one / 4);
  EXPECT_EQ(probability::ratio(5, 4).threshold(), probability::one);
  int always = 0, never = 0, quarter = 0;
  const int draws = 40000;
  for (int id = 0; id < draws; ++id) {
    random r(11, id, 0, 0);
    always += r.chance(probability(1.0));
    never += r.chance(probability(0.0));
    quarter += r.chance(probability(0.25));
  }
  EXPECT_EQ(always, draws);
  EXPECT_EQ(never, 0);
  EXPECT_NEAR(quarter, draws / 4, 400);
}

TEST(SimRandom, UniformIsInTheHalfOpenUnitInterval) {
  double sum = 0;
  for (int id = 0; id < 20000; ++id) {
    random r(5, id, 0, 0);
    const float f = r.uniform();
    const double d = r.uniform_double();
    ASSERT_GE(f, 0.0f);
    ASSERT_LT(f, 1.0f);
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
    ASSERT_EQ(f * 16777216.0f, std::floor(f * 16777216.0f)) << "a multiple of 2^-24";
    sum += d;
  }
  EXPECT_NEAR(sum / 20000, 0.5, 0.01);
}

/// Per id: 3 words, below(10), chance(0.3), uniform() bits. Device code: a free function.
struct draw {
  std::uint32_t w[3];
  std::uint32_t below;
  std::uint32_t chance;
  float uniform;
};

void draw_on_device(draw* out, std::size_t n, std::uint64_t seed, std::uint32_t step) {
  const probability p(0.3);
  arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t id) {
    random r(seed, id, step, 2);
    draw d;
    for (auto& x : d.w) x = r.next();
    d.below = r.below(10);
    d.chance = r.chance(p) ? 1u : 0u;
    d.uniform = r.uniform();
    out[id] = d;
  });
  arch::synchronize();
}

TEST(SimRandom, DeviceDrawsExactlyWhatTheHostDraws) {
  SHOAL_REQUIRE_DEVICE();
  const std::size_t n = 4096;
  arch::device_buffer<draw> buffer(n);
  draw_on_device(buffer.data(), n, 0xfeedbeefcafeull, 77);
  const auto got = buffer.download();
  for (std::size_t id = 0; id < n; ++id) {
    random r(0xfeedbeefcafeull, id, 77, 2);
    for (int k = 0; k < 3; ++k) ASSERT_EQ(got[id].w[k], r.next()) << "id " << id;
    ASSERT_EQ(got[id].below, r.below(10)) << "id " << id;
    ASSERT_EQ(got[id].chance, r.chance(probability(0.3)) ? 1u : 0u) << "id " << id;
    ASSERT_EQ(got[id].uniform, r.uniform()) << "id " << id;
  }
}

}  // namespace shoal::test
