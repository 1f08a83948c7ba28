// The toolkit's device helpers: census (live objects per class from the block headers), claims
// (lowest key wins, one winner per cell, word reset) and sums. Compiled for both backends.
#include <algorithm>
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

}  // namespace shoal::test
