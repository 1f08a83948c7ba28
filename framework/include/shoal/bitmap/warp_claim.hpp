#pragma once
/// @file
/// The pooling step of the collaborative random walk (CoRW, seed 000 §4.2), shared by the
/// bitmap and the heap's slot allocator.
///
/// Every lane of `mask` calls claim_pooled() together. Each lane offers the word it found
/// (its address and a snapshot of its set bits; a null address offers nothing) and says whether
/// it needs a bit. The found bits are pooled: the needer of rank s among the needers is assigned
/// the (s+1)-th offered bit, where bits are ordered by (owner lane, bit position), so fresh words
/// are handed out lowest bits first. Each distinct word is then claimed with ONE atomic by one
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

SHOAL_DEVICE inline claim_result claim_pooled(arch::lane_mask mask, bool needs,
                                              std::uint64_t* word, std::uint64_t seen) {
  claim_result r;
  // Lanes that landed on the same word: only the lowest offers it, so one atomic per word.
  const arch::lane_mask same =
      arch::match_any(mask, reinterpret_cast<std::uintptr_t>(word));
  std::uint64_t remaining =
      (word != nullptr && arch::lowest_bit(same) == arch::lane_id()) ? seen : 0;

  arch::lane_mask pending = arch::ballot(mask, needs);
  std::uint64_t hand_out = 0;
  // Each round every owner offers its lowest remaining bit and every pending needer takes
  // one offer; a round serves min(#owners, #needers). Rounds ≤ number of needers.
  while (true) {
    const bool offers = remaining != 0;
    const arch::lane_mask has = arch::ballot(mask, offers);
    if (has == 0 || pending == 0) break;
    const bool pending_me = (pending >> arch::lane_id()) & 1u;
    const int need_rank = arch::rank_in(pending);
    const bool served = pending_me && need_rank < arch::popc(has);
    const int src = served ? arch::nth_set_bit(has, need_rank) : arch::lane_id();
    const int offered_bit = offers ? arch::lowest_bit(remaining) : -1;
    const int got_bit = arch::shuffle(mask, offered_bit, src);
    if (served) {
      r.owner = src;
      r.bit = got_bit;
    }
    if (offers && arch::rank_in(has) < arch::popc(pending)) {
      const std::uint64_t b = std::uint64_t{1} << offered_bit;
      hand_out |= b;
      remaining &= ~b;
    }
    pending &= ~arch::ballot(mask, served);
  }

  if (hand_out != 0) {
    r.handed = hand_out;
    r.previous = arch::fetch_and(*word, ~hand_out);
  }
  const std::uint64_t owner_claimed =
      arch::shuffle(mask, r.claimed(), r.owner >= 0 ? r.owner : arch::lane_id());
  r.obtained = r.owner >= 0 && ((owner_claimed >> r.bit) & 1u);
  return r;
}

}  // namespace shoal::detail
