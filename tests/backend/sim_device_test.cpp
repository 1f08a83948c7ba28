// The toolkit's device helpers: census (live objects per class from the block headers), claims
// (lowest key wins, one winner per cell, word reset) and sums. Compiled for both backends.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "heap_model.hpp"
#include "shoal/sim/census.hpp"
#include "shoal/sim/claim.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"
#include "test_support.hpp"

namespace shoal::test {

void make_cats_and_dogs(runtime<TestHeap>& rt, destructor_counts* counts, std::size_t cats, std::size_t dogs) {
  rt.launch(cats + dogs, [=] SHOAL_DEVICE(std::size_t i) {
    if (i < cats) new Cat(counts, 1.0f);
    else new Dog(counts, 2);
  });
}

TEST(SimCensus, CountsEveryClassAndItsSubclasses) {
  SHOAL_REQUIRE_DEVICE();
  runtime<TestHeap> rt(std::size_t{16} << 20);
  arch::device_buffer<destructor_counts> counts(1);
  counts.zero();
  make_cats_and_dogs(rt, counts.data(), 1000, 333);
  rt.parallel_new<Small>(77);
  sim::census<TestHeap> census(rt);
  const auto c = census.count();
  EXPECT_EQ(c.size(), TestHeap::num_types);
  EXPECT_EQ(census.of<Cat>(c), 1000u);
  EXPECT_EQ(census.of<Dog>(c), 333u);
  EXPECT_EQ(census.of<Animal>(c), 1333u);
  EXPECT_EQ(census.of<Small>(c), 77u);
  EXPECT_EQ(census.of<Large>(c), 0u);
  const auto s = rt.stats();
  for (std::uint32_t t = 0; t < TestHeap::num_types; ++t) EXPECT_EQ(c[t], s.types[t].live) << s.types[t].name;
}

/// Requester i asks for cell i % cells with a key drawn from its own stream; then every
/// requester tries to take its cell. wins[i] = 1 for the winners.
void claim_round(sim::claim_word* claims, std::uint32_t* wins, std::size_t requesters, std::size_t cells) {
  arch::for_each_index(requesters, [=] SHOAL_DEVICE(std::size_t i) {
    sim::random r(3, i, 0, 0);
    sim::request(claims[i % cells], sim::claim_key(r.next() & 0xFu, static_cast<std::uint32_t>(i)));
  });
  arch::for_each_index(requesters, [=] SHOAL_DEVICE(std::size_t i) {
    sim::random r(3, i, 0, 0);
    wins[i] = sim::take(claims[i % cells], sim::claim_key(r.next() & 0xFu, static_cast<std::uint32_t>(i))) ? 1u : 0u;
  });
  arch::synchronize();
}

TEST(SimClaim, LowestKeyWinsExactlyOncePerCellAndTheWordIsReset) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;  // cpu: more threads than cores, so requests really interleave
  const std::size_t cells = 97, requesters = 20000;
  arch::device_buffer<sim::claim_word> claims(cells);
  arch::fill_bytes(claims.data(), 0xFF, claims.bytes());  // no_claim everywhere
  arch::device_buffer<std::uint32_t> wins(requesters);
  for (int round = 0; round < 2; ++round) {  // the second round relies on the first's reset
    claim_round(claims.data(), wins.data(), requesters, cells);
    const auto w = wins.download();
    std::map<std::size_t, std::pair<sim::claim_word, std::size_t>> best;  // cell -> (lowest key, who)
    for (std::size_t i = 0; i < requesters; ++i) {
      const auto key = sim::claim_key(sim::random(3, i, 0, 0).next() & 0xFu, static_cast<std::uint32_t>(i));
      auto [it, fresh] = best.try_emplace(i % cells, key, i);
      if (!fresh && key < it->second.first) it->second = {key, i};
    }
    for (std::size_t i = 0; i < requesters; ++i)
      ASSERT_EQ(w[i], best[i % cells].second == i ? 1u : 0u) << "requester " << i << ", round " << round;
    for (sim::claim_word c : claims.download()) ASSERT_EQ(c, sim::no_claim);
  }
}

void add_up(sim::sums::ref totals, std::size_t n) {
  arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    totals.add(0, static_cast<long long>(i));
    totals.add(1, -2);
  });
}

/// Lanes of one warp add to different sums, under divergence, with values whose 64-bit sum wraps.
void add_mixed(sim::sums::ref totals, std::size_t n) {
  arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const std::uint64_t big = 0xFFFF'FFFF'0000'0000ull + i * 0x1'0001'0001ull;
    if (i % 3 == 0) totals.add(0, static_cast<long long>(big));
    else totals.add(1 + i % 2, static_cast<long long>(i));
    if (i % 7 == 0) totals.add(3, -static_cast<long long>(i));
  });
}

TEST(SimSums, LanesAddingToDifferentSumsAndWrappingValuesAddUpExactly) {
  SHOAL_REQUIRE_DEVICE();
  const std::size_t n = 100'003;
  std::uint64_t want[4] = {};
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t big = 0xFFFF'FFFF'0000'0000ull + i * 0x1'0001'0001ull;
    if (i % 3 == 0) want[0] += big;
    else want[1 + i % 2] += i;
    if (i % 7 == 0) want[3] -= i;
  }
  sim::sums totals(4);
  add_mixed(totals.device(), n);
  const auto v = totals.read();
  for (int k = 0; k < 4; ++k) EXPECT_EQ(static_cast<std::uint64_t>(v[k]), want[k]) << "sum " << k;
}

TEST(SimSums, AddsSignedValuesOnTheDevice) {
  SHOAL_REQUIRE_DEVICE();
  sim::sums totals(2);
  add_up(totals.device(), 1000);
  auto v = totals.read();
  EXPECT_EQ(v[0], 999 * 1000 / 2);
  EXPECT_EQ(v[1], -2000);
  totals.zero();
  add_up(totals.device(), 10);
  v = totals.read();
  EXPECT_EQ(v[0], 45);
  EXPECT_EQ(v[1], -20);
}

/// Real values far beyond 64-bit fixed point (up to ±2^86 units: a mass of 1e9 at speed 1 is
/// 5e20 units of 1e-12) and small ones, positive and negative, in sums 0 and 1 (split by
/// lane parity so a warp adds to both); the exact totals as 128-bit integers.
void add_reals(sim::sums::ref totals, std::size_t n) {
  arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const double sign = i % 3 == 0 ? -1.0 : 1.0;
    const double huge = std::ldexp(static_cast<double>(i % 1000 + 1), 76);  // < 2^86, a whole number
    totals.add_real(i % 2, sign * (i % 5 == 0 ? huge : static_cast<double>(i) + 0.5));
  });
}

/// Values with halves (2.5 i), rounded half away from zero, all negative, into sum 0.
void add_halves(sim::sums::ref totals, std::size_t n) {
  arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) { totals.add_real(0, -2.5 * static_cast<double>(i)); });
}

/// 1000 lanes add 1 to integer sum 0 and to real sum 1, lane 517 adds `bad` instead of 1.0.
void add_one_bad(sim::sums::ref totals, double bad) {
  arch::for_each_index(1000, [=] SHOAL_DEVICE(std::size_t i) {
    totals.add_real(1, i == 517 ? bad : 1.0);
    totals.add(0, 1);
  });
}

TEST(SimSums, RealValuesBeyondSixtyFourBitsAddUpExactlyInAnyOrder) {
  SHOAL_REQUIRE_DEVICE();
  const std::size_t n = 200'003;
  __int128 want[2] = {};
  for (std::size_t i = 0; i < n; ++i) {
    const __int128 sign = i % 3 == 0 ? -1 : 1;
    // round(i + 0.5) is i + 1 half away from zero: -(i + 1) for the negative ones.
    const __int128 v = i % 5 == 0 ? (static_cast<__int128>(i % 1000 + 1) << 76) : static_cast<__int128>(i) + 1;
    want[i % 2] += sign * v;
  }
  sim::sums totals(2);
  add_reals(totals.device(), n);
  const auto v = totals.read_real(1.0);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(v[k], static_cast<double>(want[k])) << "sum " << k;
    EXPECT_GT(std::fabs(v[k]), 0x1p80) << "sum " << k << " lost its high part";
  }
  // Halves round away from zero, as llround does (the apps' sums before add_real).
  totals.zero();
  add_halves(totals.device(), n);
  long long exact = 0;
  for (std::size_t i = 0; i < n; ++i) exact += std::llround(-2.5 * static_cast<double>(i));
  EXPECT_EQ(totals.read_real(1e-3)[0], static_cast<double>(exact) * 1e-3);
}

TEST(SimSums, ARealValueThatIsNotFiniteOrTooLargeIsAnErrorNotAWrongTotal) {
  SHOAL_REQUIRE_DEVICE();
  for (const double bad : {std::ldexp(1.0, 88), -std::ldexp(1.0, 90), std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()}) {
    sim::sums totals(2);
    add_one_bad(totals.device(), bad);
    EXPECT_THROW(totals.read_real(1e-12), sim::sums_overflow) << bad;
    EXPECT_EQ(totals.read()[0], 1000) << "the integer sums are not affected";
    totals.zero();
    add_one_bad(totals.device(), 2.0);
    EXPECT_EQ(totals.read_real(1.0)[1], 1001.0) << "zero() clears the error";
  }
}

}  // namespace shoal::test
