// Hierarchical bitmap and collaborative random walk: sequential semantics against a model,
// and adversarial concurrency (claim-all with ownership checks, hot-word churn, sparse and
// empty bitmaps). Compiled for both backends.
#include <algorithm>
#include <random>

#include "test_support.hpp"

namespace shoal::test {

enum op_kind : std::uint8_t { op_try_set, op_try_clear, op_set, op_clear, op_test };
struct bitmap_op {
  std::uint64_t index;
  op_kind kind;
};

/// Executes `ops` in order on one device thread; returns each op's boolean result.
std::vector<std::uint8_t> run_sequentially(bitmap_ref bm, const std::vector<bitmap_op>& ops) {
  arch::device_buffer<bitmap_op> d_ops(ops.size());
  d_ops.upload(ops);
  arch::device_buffer<std::uint8_t> d_out(ops.size());
  const bitmap_op* o = d_ops.data();
  std::uint8_t* out = d_out.data();
  const std::size_t n = ops.size();
  arch::for_each_index(1, [=] SHOAL_DEVICE(std::size_t) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t i = o[k].index;
      switch (o[k].kind) {
        case op_try_set: out[k] = bm.try_set(i); break;
        case op_try_clear: out[k] = bm.try_clear(i); break;
        case op_set: bm.set(i); out[k] = 1; break;
        case op_clear: bm.clear(i); out[k] = 1; break;
        case op_test: out[k] = bm.test(i); break;
      }
    }
  });
  arch::synchronize();
  return d_out.download();
}

/// Every thread claims one bit with the collaborative walk; returns what each thread got.
std::vector<std::uint64_t> claim_concurrently(bitmap_ref bm, std::uint64_t threads,
                                              std::vector<std::uint32_t>* rounds = nullptr) {
  arch::device_buffer<std::uint64_t> d_out(threads);
  arch::device_buffer<std::uint32_t> d_rounds(threads);
  std::uint64_t* out = d_out.data();
  std::uint32_t* r = d_rounds.data();
  arch::for_each_index(threads, [=] SHOAL_DEVICE(std::size_t i) {
    walk_rng rng = walk_rng::for_this_lane(i);
    walk_probes probes;
    out[i] = bm.claim(rng, &probes);
    r[i] = probes.rounds;
  });
  arch::synchronize();
  if (rounds) *rounds = d_rounds.download();
  return d_out.download();
}

/// Checks that the successful claims are distinct bits that were set before; returns the
/// number of successful claims.
std::uint64_t expect_exclusive(const std::vector<std::uint64_t>& got,
                               const std::vector<std::uint8_t>& was_set) {
  std::vector<std::uint8_t> owners(was_set.size(), 0);
  std::uint64_t ok = 0;
  for (std::uint64_t g : got) {
    if (g == bitmap_npos) continue;
    EXPECT_LT(g, was_set.size());
    if (g >= was_set.size()) continue;
    EXPECT_TRUE(was_set[g]) << "claimed bit " << g << " that was not set";
    EXPECT_EQ(owners[g]++, 0) << "bit " << g << " was handed out twice";
    ++ok;
  }
  return ok;
}

TEST(BitmapLayout, LevelsCoverSizes) {
  EXPECT_EQ(bitmap_layout::for_bits(1).levels, 1);
  EXPECT_EQ(bitmap_layout::for_bits(64).levels, 1);
  EXPECT_EQ(bitmap_layout::for_bits(65).levels, 2);
  EXPECT_EQ(bitmap_layout::for_bits(4096).levels, 2);
  EXPECT_EQ(bitmap_layout::for_bits(4097).levels, 3);
  const auto big = bitmap_layout::for_bits(std::uint64_t{1} << 30);
  EXPECT_EQ(big.levels, 5);
  EXPECT_EQ(big.words[0], std::uint64_t{1} << 24);
  EXPECT_EQ(big.words[4], 1u);
}

// offset_of (the device's way to a level known only at run time) agrees with the offsets stored,
// at every level, for sizes at and around each level's boundary.
TEST(BitmapLayout, ComputedOffsetsMatchTheStoredOnes) {
  for (int e = 0; e <= 36; e += 6)
    for (const std::int64_t d : {-1, 0, 1, 4097}) {
      const std::int64_t bits = (std::int64_t{1} << e) + d;
      if (bits < 0 || static_cast<std::uint64_t>(bits) > bitmap_layout::max_bits) continue;
      const auto layout = bitmap_layout::for_bits(static_cast<std::uint64_t>(bits));
      for (int level = 0; level < layout.levels; ++level)
        EXPECT_EQ(layout.offset_of(level), layout.offset[level]) << bits << " bits, level " << level;
      EXPECT_EQ(layout.offset_of(layout.top()) + 1, layout.total_words) << bits << " bits";
    }
}

TEST(Bitmap, SequentialOpsMatchModel) {
  SHOAL_REQUIRE_DEVICE();
  for (std::uint64_t n : {1ull, 63ull, 64ull, 65ull, 4097ull, 300001ull}) {
    hierarchical_bitmap bm(n);
    std::vector<bool> model(n, false);
    std::mt19937_64 gen(n);
    std::vector<bitmap_op> ops;
    std::vector<std::uint8_t> expect;
    // Cluster indices in a few words so that words go empty and non-empty often.
    const std::uint64_t hot = std::min<std::uint64_t>(n, 256);
    for (int k = 0; k < 20000; ++k) {
      const std::uint64_t i = (gen() % 2) ? gen() % hot : gen() % n;
      const auto kind = static_cast<op_kind>(gen() % 5);
      bitmap_op op{i, kind};
      switch (kind) {
        case op_try_set: expect.push_back(!model[i]); model[i] = true; break;
        case op_try_clear: expect.push_back(model[i]); model[i] = false; break;
        case op_set:  // the retrying forms are only legal for the opposite state
          if (model[i]) op.kind = op_test, expect.push_back(1);
          else expect.push_back(1), model[i] = true;
          break;
        case op_clear:
          if (!model[i]) op.kind = op_test, expect.push_back(0);
          else expect.push_back(1), model[i] = false;
          break;
        case op_test: expect.push_back(model[i]); break;
      }
      ops.push_back(op);
    }
    const auto got = run_sequentially(bm.ref(), ops);
    for (std::size_t k = 0; k < ops.size(); ++k)
      ASSERT_EQ(got[k], expect[k]) << "n=" << n << " op " << k << " kind " << int(ops[k].kind)
                                   << " index " << ops[k].index;
    const auto leaves = bm.leaf_words();
    std::uint64_t set = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(((leaves[i / 64] >> (i % 64)) & 1) != 0, model[i]) << "bit " << i;
      set += model[i];
    }
    EXPECT_EQ(bm.count(), set);
    EXPECT_EQ(bm.check_consistency(), "") << "n=" << n;
  }
}

TEST(Bitmap, SetAllAndCount) {
  SHOAL_REQUIRE_DEVICE();
  for (std::uint64_t n : {1ull, 100ull, 4096ull, 1000003ull}) {
    hierarchical_bitmap bm(n, true);
    EXPECT_EQ(bm.count(), n);
    EXPECT_EQ(bm.check_consistency(), "");
    bm.clear_all();
    EXPECT_EQ(bm.count(), 0u);
    EXPECT_EQ(bm.check_consistency(), "");
  }
}

/// parallel_new's bulk updates of leaf words, on one device thread: empty masks on an empty
/// word and on a full one, a word filled in two steps and emptied in one, and one bit set.
void bulk_word_updates(bitmap_ref r) {
  arch::for_each_index(1, [=] SHOAL_DEVICE(std::size_t) {
    r.set_bits(3, 0);  // an empty word stays empty, and so does its parent bit
    r.set_bits(5, 0xF0);
    r.set_bits(5, 0x0F);
    r.clear_bits(5, 0);
    r.clear_bits(5, 0xFF);  // empty again
    r.set_bits(70, std::uint64_t{1} << 63);
    r.clear_bits(70, 0);
  });
  arch::synchronize();
}

// Bulk set_bits / clear_bits of one leaf word (parallel_new opens blocks this way): the parent
// bit follows the word's own transitions between zero and non-zero, and an empty mask changes
// nothing (it once marked an empty word's parent bit).
TEST(Bitmap, BulkSetAndClearOfAWordKeepTheLevelsExact) {
  SHOAL_REQUIRE_DEVICE();
  hierarchical_bitmap bm(64 * 64 * 4);  // three levels
  bulk_word_updates(bm.ref());
  EXPECT_EQ(bm.check_consistency(), "");
  const auto leaves = bm.leaf_words();
  EXPECT_EQ(leaves[3], 0u);
  EXPECT_EQ(leaves[5], 0u);
  EXPECT_EQ(leaves[70], std::uint64_t{1} << 63);
  EXPECT_EQ(bm.count(), 1u);
}

TEST(Bitmap, ConcurrentClaimTakesEveryBitExactlyOnce) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  for (std::uint64_t n : {1000ull, 100003ull, 10000000ull / scale_down}) {
    hierarchical_bitmap bm(n, true);
    const std::uint64_t requests = n + n / 8 + 33;  // more requests than bits
    const auto got = claim_concurrently(bm.ref(), requests);
    const std::uint64_t ok = expect_exclusive(got, std::vector<std::uint8_t>(n, 1));
    EXPECT_EQ(ok, n) << "every bit is claimed once";
    EXPECT_EQ(bm.count(), 0u);
    EXPECT_EQ(bm.check_consistency(), "") << "n=" << n;
  }
}

TEST(Bitmap, SparseBitmapStillTerminates) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  const std::uint64_t n = std::uint64_t{1} << 22;
  hierarchical_bitmap bm(n);
  std::vector<std::uint64_t> leaves(bm.layout().words[0], 0);
  std::vector<std::uint8_t> was_set(n, 0);
  std::mt19937_64 gen(7);
  std::uint64_t set = 0;
  for (std::uint64_t k = 0; k < n / 200; ++k) {  // 0.5% of the bits
    const std::uint64_t i = gen() % n;
    if (!was_set[i]) ++set, was_set[i] = 1, leaves[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  bm.assign_leaves(leaves);
  ASSERT_EQ(bm.check_consistency(), "");
  std::vector<std::uint32_t> rounds;
  const auto got = claim_concurrently(bm.ref(), set * 2, &rounds);
  EXPECT_EQ(expect_exclusive(got, was_set), set);
  EXPECT_EQ(bm.count(), 0u);
  EXPECT_EQ(bm.check_consistency(), "");
}

TEST(Bitmap, EmptyBitmapFailsFast) {
  SHOAL_REQUIRE_DEVICE();
  hierarchical_bitmap bm(1 << 20);
  std::vector<std::uint32_t> rounds;
  const auto got = claim_concurrently(bm.ref(), 4096, &rounds);
  for (std::uint64_t g : got) EXPECT_EQ(g, bitmap_npos);
  for (std::uint32_t r : rounds) EXPECT_EQ(r, 0u);  // nobody was served
}

/// Threads repeatedly claim a bit (walk or direct try_clear of a random bit), check that they
/// own it alone, and give it back with try_set. Few words → parent bits flip constantly.
std::uint64_t churn_hot_words(bitmap_ref bm, std::uint64_t threads, int iterations) {
  const std::uint64_t n = bm.size();
  arch::device_buffer<std::uint32_t> d_owner(n);
  d_owner.zero();
  arch::device_buffer<unsigned long long> d_violations(1);
  d_violations.zero();
  std::uint32_t* owner = d_owner.data();
  unsigned long long* violations = d_violations.data();
  arch::for_each_index(threads, [=] SHOAL_DEVICE(std::size_t t) {
    walk_rng rng = walk_rng::for_this_lane(t);
    for (int it = 0; it < iterations; ++it) {
      std::uint64_t i = bitmap_npos;
      if ((t + it) % 2 == 0) {
        i = bm.claim(rng);
      } else {
        const std::uint64_t cand = rng.below(n);
        if (bm.try_clear(cand)) i = cand;
      }
      if (i == bitmap_npos) continue;
      if (arch::fetch_add(owner[i], 1u) != 0) arch::fetch_add(*violations, 1ull);
      arch::fetch_sub(owner[i], 1u);
      if (!bm.try_set(i)) arch::fetch_add(*violations, 1ull);  // we owned it: must be clear
    }
  });
  arch::synchronize();
  return d_violations.read(0);
}

TEST(Bitmap, HotWordChurnKeepsLevelsConsistent) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  for (std::uint64_t n : {64ull, 200ull, 4160ull}) {
    hierarchical_bitmap bm(n, true);
    EXPECT_EQ(churn_hot_words(bm.ref(), static_cast<int>(contended(20000 / scale_down * 10, 100)), 20), 0u) << "n=" << n;
    EXPECT_EQ(bm.count(), n);
    EXPECT_EQ(bm.check_consistency(), "") << "n=" << n;
  }
}

/// Two threads per bit i flip it `rounds` times each, except that bits i % 3 == 0 get one flip
/// from one thread (for OwnedFlipsInAnyOrderEndExact).
void flip_concurrently(bitmap_ref r, std::uint64_t n, int rounds) {
  arch::for_each_index(2 * n, [=] SHOAL_DEVICE(std::size_t k) {
    const std::uint64_t i = k / 2;
    if (k % 2 == 1 && i % 3 == 0) return;
    const int flips = i % 3 == 0 ? 1 : rounds;
    for (int f = 0; f < flips; ++f) r.flip_owned_bits(i / 64, std::uint64_t{1} << (i % 64));
  });
  arch::synchronize();
}

/// Owned transitions as flips (bitmap_ref::flip_owned_bits), racing in any order: on a set
/// bitmap two threads flip each bit `rounds` times (an even count in all: it ends set) while a
/// third of the bits get a single flip from one thread (they end clear). Words empty and refill
/// many times over, so the parents' flips race too. After quiescence the bits and every level
/// must be exact.
TEST(Bitmap, OwnedFlipsInAnyOrderEndExact) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  for (std::uint64_t n : {64ull, 4160ull, 300000ull}) {
    hierarchical_bitmap bm(n, true);
    flip_concurrently(bm.ref(), n, static_cast<int>(scaled(8)));
    const std::vector<std::uint64_t> leaves = bm.leaf_words();
    std::uint64_t wrong = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const bool want = i % 3 != 0;
      wrong += ((leaves[i / 64] >> (i % 64)) & 1u) != static_cast<unsigned>(want);
    }
    EXPECT_EQ(wrong, 0u) << "n=" << n;
    EXPECT_EQ(bm.check_consistency(), "") << "n=" << n;
  }
}

TEST(Bitmap, HugeBitmapLastBit) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t n = std::uint64_t{1} << 30;
  hierarchical_bitmap bm(n);
  const auto got_none = claim_concurrently(bm.ref(), 64);
  for (auto g : got_none) EXPECT_EQ(g, bitmap_npos);
  run_sequentially(bm.ref(), {{n - 1, op_try_set}, {12345, op_try_set}});
  EXPECT_EQ(bm.count(), 2u);
  EXPECT_EQ(bm.check_consistency(), "");
  auto got = claim_concurrently(bm.ref(), 3);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got[0], 12345u);
  EXPECT_EQ(got[1], n - 1);
  EXPECT_EQ(got[2], bitmap_npos);
  EXPECT_EQ(bm.check_consistency(), "");
}

}  // namespace shoal::test
