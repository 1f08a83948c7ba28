#pragma once
/// @file
/// Device view of a lock-free hierarchical bitmap (seed 004 §3) and its collaborative random
/// walk (seed 000 §4.2). Trivially copyable: pass it to kernels by value.
///
/// Layout: level 0 holds the N bits in 64-bit leaf words; level l+1 holds one bit per word of
/// level l ("that word is non-zero"), up to a top level of one word. All levels live in one
/// array. The nested levels are *eventually consistent*: whoever turns a word from zero to
/// non-zero (or back) owns the matching transition of its parent bit and performs it with the
/// retrying set()/clear() (or, in flip_owned_bits(), a flip), so after all operations finish
/// every parent bit is exact.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/bitmap/walk_rng.hpp"
#include "shoal/bitmap/warp_claim.hpp"

namespace shoal {

/// What random_leaf(), find_random() and claim() return when they find no bit.
inline constexpr std::uint64_t bitmap_npos = ~std::uint64_t{0};

/// A word whose lowest k bits are set (all of them from k = 64 up).
SHOAL_HD constexpr std::uint64_t low_bits(std::uint64_t k) {
  return k >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1;
}

/// Sizes and offsets of the levels of a bitmap of `bits` bits.
struct bitmap_layout {
  /// Most levels a bitmap may have.
  static constexpr int max_levels = 6;  // 64^6 = 2^36 bits
  /// Most bits a bitmap may have (2^36).
  static constexpr std::uint64_t max_bits = std::uint64_t{1} << (6 * max_levels);
  std::uint64_t bits = 0;                 ///< bits at level 0: the bitmap's size
  int levels = 1;                         ///< levels, the leaf level included
  std::uint64_t offset[max_levels] = {};  ///< first word of each level in the array
  std::uint64_t words[max_levels] = {};   ///< words of each level
  std::uint64_t total_words = 0;          ///< words of all levels together

  /// The layout of a bitmap of `bits` bits; throws std::length_error above max_bits.
  static bitmap_layout for_bits(std::uint64_t bits);
  /// Index of the top level (a single word).
  SHOAL_HD int top() const { return levels - 1; }
  /// offset[level], computed from `bits` alone: for a level known only at run time on the device
  /// (parallel_new's descent), where indexing offset[] in a kernel parameter copies the whole
  /// layout to each thread's stack.
  SHOAL_HD std::uint64_t offset_of(int level) const {
    std::uint64_t at = 0, below = bits == 0 ? 1 : bits;  // the bits under the next level's words
#pragma unroll
    for (int l = 0; l < max_levels - 1; ++l) {
      below = (below + 63) / 64;  // the words of level l
      at += l < level ? below : 0;
    }
    return at;
  }
};

inline bitmap_layout bitmap_layout::for_bits(std::uint64_t bits) {
  if (bits > max_bits)
    throw std::length_error("shoal: a bitmap of " + std::to_string(bits) + " bits; at most 2^36");
  bitmap_layout l;
  l.bits = bits;
  l.levels = 0;
  std::uint64_t n = bits == 0 ? 1 : bits;
  std::uint64_t at = 0;
  while (true) {
    const std::uint64_t w = (n + 63) / 64;
    l.offset[l.levels] = at;
    l.words[l.levels] = w;
    at += w;
    ++l.levels;
    if (w == 1) break;
    n = w;
  }
  l.total_words = at;
  return l;
}

/// Statistics of one walk, for benchmarks (TAS/WAS of seed 000).
struct walk_probes {
  std::uint32_t rounds = 0;  ///< pooling rounds until this lane was served (or gave up)
};

/// Non-owning device view of a hierarchical bitmap: the words of all its levels and their layout.
class bitmap_ref {
 public:
  bitmap_ref() = default;
  /// Views `words` (layout.total_words of them) as a bitmap laid out as `layout`.
  SHOAL_HD bitmap_ref(std::uint64_t* words, const bitmap_layout& layout)
      : words_(words), layout_(layout) {}

  /// Number of bits.
  SHOAL_HD std::uint64_t size() const { return layout_.bits; }
  /// Sizes and offsets of the levels.
  SHOAL_HD const bitmap_layout& layout() const { return layout_; }
  /// The first word of level `level` (0: the leaves).
  SHOAL_HD std::uint64_t* level_words(int level) const { return words_ + layout_.offset[level]; }

  /// Whether bit i is set (a relaxed load of its leaf word).
  SHOAL_DEVICE bool test(std::uint64_t i) const {
    return (arch::load_relaxed(leaf(i)) >> (i % 64)) & 1u;
  }
  /// True when no bit is set (as seen by the top word; exact after quiescence).
  SHOAL_DEVICE bool empty() const { return arch::load_relaxed(*level_words(layout_.top())) == 0; }

  /// Sets bit i; true iff this call changed it from 0 to 1.
  SHOAL_DEVICE bool try_set(std::uint64_t i) const { return try_set_at(0, i); }
  /// Clears bit i; true iff this call changed it from 1 to 0.
  SHOAL_DEVICE bool try_clear(std::uint64_t i) const { return try_clear_at(0, i); }
  /// Changes bit i from 0 to 1, waiting while it is still 1. Only for a caller that owns this
  /// transition (a concurrent clear of the same bit is in flight or already done).
  SHOAL_DEVICE void set(std::uint64_t i) const {
    for (arch::spin_watch w; !try_set_at(0, i);) arch::spin_wait(w, "bitmap set");
  }
  /// Changes bit i from 1 to 0, waiting while it is still 0 (see set()).
  SHOAL_DEVICE void clear(std::uint64_t i) const {
    for (arch::spin_watch w; !try_clear_at(0, i);) arch::spin_wait(w, "bitmap clear");
  }

  /// Sets the bits `mask` of leaf word w, which the caller owns (they are clear and nobody else
  /// sets them); the word's parent bit follows if the word turned non-zero (an empty mask
  /// changes nothing). One atomic for many bits (bulk opening, parallel_new).
  ///
  /// Relaxed, at every level: only for a bitmap that nothing else reads or changes meanwhile,
  /// made visible afterwards by a barrier (a grid-wide sync, the kernel's end). The fence that an
  /// acquire-release atomic puts before itself waits for all of the thread's earlier stores; with
  /// those fences in its chains of one atomic per level, parallel_new took 9.0 instead of 5.6 µs
  /// on the H100 to open the blocks of 10^3 objects.
  ///
  /// With Relaxed = false the updates are acquire-release and the parent bits' transitions wait
  /// for concurrent opposite ones (set_at/clear_at): for a bitmap that others use meanwhile
  /// (the allocator's stocks opening and returning runs of blocks of one leaf word).
  template <bool Relaxed = true>
  SHOAL_DEVICE void set_bits(std::uint64_t w, std::uint64_t mask) const {
    if (mask == 0) return;
    const std::uint64_t prev = Relaxed ? arch::fetch_or_relaxed(level_words(0)[w], mask)
                                       : arch::fetch_or(level_words(0)[w], mask);
    if (prev == 0 && layout_.top() > 0) set_at<Relaxed>(1, w);
  }
  /// Clears the bits `mask` of leaf word w, which the caller owns (they are set and nobody else
  /// clears them); the word's parent bit follows if the word became zero. Relaxed, as set_bits.
  template <bool Relaxed = true>
  SHOAL_DEVICE void clear_bits(std::uint64_t w, std::uint64_t mask) const {
    if (mask == 0) return;
    const std::uint64_t prev = Relaxed ? arch::fetch_and_relaxed(level_words(0)[w], ~mask)
                                       : arch::fetch_and(level_words(0)[w], ~mask);
    if (prev != 0 && (prev & ~mask) == 0) clear_at<Relaxed>(1, w);
  }

  /// Flips the bits `mask` of leaf word w, each a transition that the caller owns (it changed
  /// the condition the bit stands for), and the parent bit of every word whose emptiness that
  /// changed, with one atomic per level and no waiting. The transitions of a bit alternate, so
  /// after all of them every bit is exact whatever order their flips arrived in; meanwhile a flip
  /// that overtook the opposite one it follows leaves the bit wrong until that one lands. For a
  /// bitmap whose every change is an owned flip (the allocator's active[t]): the waiting forms
  /// (set(), clear()) let a lane spin on a transition owed by a lane that the scheduler may not
  /// run for a long time (under compute-sanitizer racecheck, minutes).
  SHOAL_DEVICE void flip_owned_bits(std::uint64_t w, std::uint64_t mask) const {
    std::uint64_t word = w, flip = mask;
#pragma unroll
    for (int level = 0; level < bitmap_layout::max_levels; ++level) {  // unrolled: no run-time
      if (level > layout_.top()) break;                                  // index into the layout
      const std::uint64_t prev = arch::fetch_xor(level_words(level)[word], flip);
      if ((prev == 0) == ((prev ^ flip) == 0)) break;  // the word's emptiness did not change
      flip = std::uint64_t{1} << (word % 64);
      word /= 64;
    }
  }

  /// Claims the bits `mask` of leaf word w that are still set, with one acquire-release atomic,
  /// and returns them (others may have taken some first). The caller whose atomic emptied the
  /// word clears its parent bit (waiting for a concurrent set of it, as set_at does).
  SHOAL_DEVICE std::uint64_t take_bits(std::uint64_t w, std::uint64_t mask) const {
    const std::uint64_t prev = arch::fetch_and(level_words(0)[w], ~mask);
    if (prev != 0 && (prev & ~mask) == 0) clear_at(1, w);
    return prev & mask;
  }

  /// Sets the bits `mask` of leaf word w, and the bit of every word above it, each with a
  /// relaxed reduction that nothing waits for: the leaf word is non-empty after it, so every bit
  /// above it is set, whatever it was. Only for a bitmap that nothing clears meanwhile (bulk
  /// opening: parallel_new runs alone), made visible afterwards by a barrier. (set_bits waits for
  /// each level's old value: a chain of atomics up the levels, each a round trip to the L2.)
  SHOAL_DEVICE void mark_bits(std::uint64_t w, std::uint64_t mask) const {
    arch::or_relaxed(level_words(0)[w], mask);
#pragma unroll
    for (int level = 1; level < bitmap_layout::max_levels; ++level) {  // unrolled: no run-time
      if (level > layout_.top()) break;                                  // index into the layout
      const std::uint64_t below = w >> (6 * (level - 1));  // the word of level - 1, now non-empty
      arch::or_relaxed(level_words(level)[below / 64], std::uint64_t{1} << (below % 64));
    }
  }

  /// A leaf word with set bits, found at random: a uniformly random leaf word first (dense
  /// bitmaps end here, after one load), else a descent from the top word choosing a random set
  /// bit at each level. Both first loads are issued together, so the flat probe costs no
  /// latency. Returns the leaf word index and its snapshot in `bits`, or bitmap_npos when the
  /// walk met a zero word; `saw_empty` tells whether that was the top word (empty bitmap).
  SHOAL_DEVICE std::uint64_t random_leaf(walk_rng& rng, std::uint64_t& bits,
                                         bool* saw_empty = nullptr) const {
    const std::uint64_t flat_index = rng.below(layout_.words[0]);
    const std::uint64_t flat = arch::load_relaxed(level_words(0)[flat_index]);
    std::uint64_t word = arch::load_relaxed(*level_words(layout_.top()));
    if (saw_empty) *saw_empty = word == 0;
    if (flat != 0) {
      bits = flat;
      return flat_index;
    }
    std::uint64_t w = 0;
    for (int level = layout_.top();; --level) {
      if (word == 0) {
        bits = 0;
        return bitmap_npos;
      }
      if (level == 0) {
        bits = word;
        return w;
      }
      const int r = static_cast<int>(rng.next() & 63);
      w = w * 64 + ((arch::lowest_bit(arch::rotate_right(word, r)) + r) & 63);
      word = arch::load_relaxed(level_words(level - 1)[w]);
    }
  }

  /// One random_leaf() probe: a random set bit (not claimed), or bitmap_npos if the walk met a
  /// zero word (an empty bitmap, or a word emptied while the walk went down to it).
  SHOAL_DEVICE std::uint64_t find_random_once(walk_rng& rng) const {
    std::uint64_t bits;
    const std::uint64_t w = random_leaf(rng, bits);
    if (w == bitmap_npos) return bitmap_npos;
    const int r = static_cast<int>(rng.next() & 63);
    return w * 64 + ((arch::lowest_bit(arch::rotate_right(bits, r)) + r) & 63);
  }

  /// A random set bit (not claimed), or bitmap_npos if the walk met an empty bitmap.
  SHOAL_DEVICE std::uint64_t find_random(walk_rng& rng) const {
    for (;;) {
      std::uint64_t bits;
      const std::uint64_t w = random_leaf(rng, bits);
      if (w != bitmap_npos) {
        const int r = static_cast<int>(rng.next() & 63);
        return w * 64 + ((arch::lowest_bit(arch::rotate_right(bits, r)) + r) & 63);
      }
      if (empty()) return bitmap_npos;
      arch::spin_pause();
    }
  }

  /// The collaborative random walk. All lanes that call it together (the active lanes of the
  /// warp) each obtain one set bit, which they clear (claim), or bitmap_npos once the bitmap is
  /// seen empty. In round 1 every lane walks, even lanes that need nothing, so a round finds up
  /// to 32 words; later rounds use the needers and as many helpers. Found bits are pooled and
  /// handed to the lanes that still need one, with one atomic per (warp, word); a round in which
  /// every needer found a non-empty word skips the pooling and each claims from its own word.
  SHOAL_DEVICE std::uint64_t claim(walk_rng& rng, walk_probes* probes = nullptr) const {
    const arch::lane_mask mask = arch::active_lanes();
    std::uint64_t result = bitmap_npos;
    bool needs = true;
    for (std::uint32_t round = 1;; ++round) {
      // Round 1: every lane walks (the flat probe is nearly free). Later rounds: the lanes in
      // need and as many helpers; more walkers would only add memory traffic.
      const arch::lane_mask needers = arch::ballot(mask, needs);
      const bool walks = round == 1 || needs ||
                         arch::rank_in(mask & ~needers) < arch::popc(needers);
      std::uint64_t bits = 0;
      bool saw_empty = false;
      const std::uint64_t w = walks ? random_leaf(rng, bits, &saw_empty) : bitmap_npos;
      std::uint64_t* word = w == bitmap_npos ? nullptr : level_words(0) + w;
      if (arch::ballot(mask, needs && bits == 0) == 0) {
        // Dense: every lane in need found a non-empty word, so pooling would only add
        // latency (lanes that found the same word simply race; a loser retries). Each claims a random set bit of its word with one atomic (as RW-BM does);
        // a lane that loses a race goes on to the next round.
        if (needs) {
          const int r = static_cast<int>(rng.next() & 63);
          const std::uint64_t bit =
              std::uint64_t{1} << ((arch::lowest_bit(arch::rotate_right(bits, r)) + r) & 63);
          const std::uint64_t prev = arch::fetch_and(*word, ~bit);
          if (prev & bit) {
            if (prev == bit) clear_at(1, w);  // took the word's last bit
            result = w * 64 + arch::lowest_bit(bit);
            needs = false;
            if (probes) probes->rounds = round;
          }
        }
        if (arch::ballot(mask, needs) == 0) break;
        continue;
      }
      const detail::claim_result c = detail::claim_pooled(mask, needs, word, bits);
      if (c.emptied_word()) clear_at(1, w);  // this lane's atomic emptied the word
      const std::uint64_t owner_word = arch::shuffle(mask, w, c.owner >= 0 ? c.owner : arch::lane_id());
      if (c.obtained) {
        result = owner_word * 64 + c.bit;
        needs = false;
        if (probes) probes->rounds = round;
      }
      // Uniform across the lanes of `mask`: everyone leaves together.
      if (arch::ballot(mask, needs) == 0) break;
      if (arch::ballot(mask, saw_empty) != 0) break;  // fail fast: nothing left to find
    }
    if (needs && probes) probes->rounds = 0;
    return result;
  }

 private:
  SHOAL_DEVICE std::uint64_t& leaf(std::uint64_t i) const { return level_words(0)[i / 64]; }

  // Relaxed: the bulk updates' chains (set_bits, clear_bits), which a barrier publishes.
  template <bool Relaxed = false>
  SHOAL_DEVICE bool try_set_at(int level, std::uint64_t i) const {
    std::uint64_t& word = level_words(level)[i / 64];
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    const std::uint64_t prev = Relaxed ? arch::fetch_or_relaxed(word, bit) : arch::fetch_or(word, bit);
    if (prev & bit) return false;
    if (prev == 0 && level < layout_.top()) set_at<Relaxed>(level + 1, i / 64);
    return true;
  }
  template <bool Relaxed = false>
  SHOAL_DEVICE bool try_clear_at(int level, std::uint64_t i) const {
    std::uint64_t& word = level_words(level)[i / 64];
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    const std::uint64_t prev = Relaxed ? arch::fetch_and_relaxed(word, ~bit) : arch::fetch_and(word, ~bit);
    if (!(prev & bit)) return false;
    if (prev == bit && level < layout_.top()) clear_at<Relaxed>(level + 1, i / 64);
    return true;
  }
  // The retrying forms used for parent bits: the transition is ours, a concurrent opposite
  // transition of the same parent bit may still be in flight, so wait for it.
  template <bool Relaxed = false>
  SHOAL_DEVICE void set_at(int level, std::uint64_t i) const {
    for (arch::spin_watch w; !try_set_at<Relaxed>(level, i);) arch::spin_wait(w, "bitmap parent set");
  }
  template <bool Relaxed = false>
  SHOAL_DEVICE void clear_at(int level, std::uint64_t i) const {
    if (level > layout_.top()) return;
    for (arch::spin_watch w; !try_clear_at<Relaxed>(level, i);) arch::spin_wait(w, "bitmap parent clear");
  }

  std::uint64_t* words_ = nullptr;
  bitmap_layout layout_{};
};

}  // namespace shoal
