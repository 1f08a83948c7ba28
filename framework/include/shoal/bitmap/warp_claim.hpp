#pragma once
/// @file
/// The pooling step of the collaborative random walk (CoRW, seed 000 §4.2), shared by the
/// bitmap and the heap's slot allocator.
///
/// Every lane of `mask` calls claim_pooled() together. Each lane offers the word it found
/// (its address and a snapshot of its set bits; a null address offers nothing) and says whether
/// it needs a bit. The found bits are pooled: the needer of rank s among the needers is assigned
/// the (s+1)-th offered bit, where bits are ordered by (owner lane, bit position from `start`),
/// so fresh words are handed out in slot order. Each distinct word is then claimed with ONE atomic by one
/// owner lane (fetch_and with the mask of bits it hands out); bits another thread took first are
/// simply not obtained, and their needers try again in the caller's next round. Nothing is ever
/// written back, so concurrent frees into the same word are never lost.

#include <cstdint>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"

namespace shoal::detail {

struct claim_result {
  int owner = -1;              ///< needer: the lane that claimed my bit (-1: none this round)
  int bit = -1;                ///< needer: my bit's position in the owner's word
  bool obtained = false;       ///< needer: the claim of my bit succeeded
  std::uint64_t handed = 0;    ///< owner: the bits I tried to claim (0 if I own nothing)
  std::uint64_t previous = 0;  ///< owner: the word's value just before my atomic
  /// owner: the bits this lane's atomic actually took.
  SHOAL_HD std::uint64_t claimed() const { return previous & handed; }
  /// owner: my atomic took the last set bits of the word (word went non-zero → zero).
  SHOAL_HD bool emptied_word() const { return claimed() != 0 && (previous & ~handed) == 0; }
};

/// Exclusive prefix sum over the lanes of `mask` of values in [0, 32]: one ballot per bit.
SHOAL_DEVICE inline int lane_prefix_sum(arch::lane_mask mask, int value, int& total) {
  int before = 0;
  total = 0;
  for (int b = 0; b < 6; ++b) {
    const arch::lane_mask has = arch::ballot(mask, (value >> b) & 1);
    before += arch::popc(has & arch::lanes_below()) << b;
    total += arch::popc(has) << b;
  }
  return before;
}

/// `start`: offered bits are taken from this bit position on, cyclically (allocations of warps
/// that read the same word at once start at different slots instead of all racing for its
/// lowest free bits).
/// `Acquire`: the claim is an acquire RMW (the bitmap's own claims). The heap's slot claims are
/// relaxed and order what they must read afterwards with arch::ordered_after (allocator.hpp).
template <bool Acquire = true>
SHOAL_DEVICE inline claim_result claim_pooled(arch::lane_mask mask, bool needs,
                                              std::uint64_t* word, std::uint64_t seen, int start = 0) {
  claim_result r;
  // Lanes that landed on the same word: only the lowest offers it, so one atomic per word.
  const arch::lane_mask same = arch::match_any(mask, reinterpret_cast<std::uintptr_t>(word));
  const std::uint64_t offer =
      (word != nullptr && arch::lowest_bit(same) == arch::lane_id()) ? seen : 0;

  // Offered bits are numbered lane by lane, lowest bits first; no lane needs more than 32.
  const arch::lane_mask needers = arch::ballot(mask, needs);
  const int want = arch::popc(needers);
  int offered_total = 0;
  const int count = arch::popc(offer) < 32 ? arch::popc(offer) : 32;
  const int first = lane_prefix_sum(mask, count, offered_total);
  const int take = want - first <= 0 ? 0 : (want - first < count ? want - first : count);

  // Needer of rank s gets offered bit number s: its owner is the lane whose range of numbers
  // [first, first + take) holds s. Owners mark where their ranges start.
  const arch::lane_mask owners = arch::ballot(mask, take > 0);
  const std::uint64_t starts = arch::reduce_or(mask, take > 0 ? std::uint64_t{1} << first : 0);
  const int s = arch::rank_in(needers);
  const bool served = needs && s < offered_total;
  int owner = arch::lane_id();
  int k = 0;
  if (served) {
    const std::uint64_t at_or_below = starts & ((std::uint64_t{2} << s) - 1);
    const int start = 63 - arch::count_leading_zeros(at_or_below);
    owner = arch::nth_set_bit(owners, arch::popc(starts & ((std::uint64_t{1} << start) - 1)));
    k = s - start;
  }
  if (take > 0) {
    r.handed = start == 0 ? arch::lowest_set_bits(offer, take) : arch::set_bits_from(offer, take, start);
    // Acquire only: a claim takes what the release that set these bits published (a block's
    // header, a freed slot) and publishes nothing; an acquire-release would cost a memory
    // barrier before every claim.
    r.previous = Acquire ? arch::fetch_and_acquire(*word, ~r.handed) : arch::fetch_and_relaxed(*word, ~r.handed);
  }
  const std::uint64_t owner_handed = arch::shuffle(mask, r.handed, owner);
  const std::uint64_t owner_claimed = arch::shuffle(mask, r.claimed(), owner);
  if (served) {
    r.owner = owner;
    r.bit = arch::nth_set_bit(owner_handed, k);
    r.obtained = (owner_claimed >> r.bit) & 1u;
  }
  return r;
}

}  // namespace shoal::detail
