#pragma once
/// @file
/// Deterministic conflict resolution: several agents request one cell in the same phase and the
/// lowest key wins, whatever order the threads run in. A key puts a random priority (drawn from
/// the requester's own counter-based stream) above the requester's id, so the winner is random
/// but reproducible, and equal priorities fall back to the lower id:
///
///   request phase:  sim::request(claims[target], sim::claim_key(r.next(), my_cell));
///   resolve phase:  if (sim::take(claims[target], my_key)) { move; }   // exactly one winner
///
/// take() resets the word to no_claim for the winner only, so the array is ready for the next
/// round without a separate reset pass: losers compare against either the winner's key or
/// no_claim, neither equal to their own. Every requester must call take() in the resolve phase
/// (or no later phase must depend on the word being reset).

#include <cstdint>

#include "shoal/arch/atomic.hpp"
#include "shoal/config.hpp"

namespace shoal::sim {

/// A cell's claim: the lowest key requested so far (a word that device atomics support).
using claim_word = unsigned long long;
/// A word nobody has claimed: above every key. Claim arrays start filled with it.
inline constexpr claim_word no_claim = ~claim_word{0};

/// Priority in the high 32 bits, requester id (< 2^32 - 1) in the low ones.
SHOAL_HD SHOAL_FORCEINLINE claim_word claim_key(std::uint32_t priority, std::uint32_t id) {
  return (static_cast<claim_word>(priority) << 32) | id;
}

/// Lowers `word` to `key` if key is lower (atomic min).
SHOAL_HD SHOAL_FORCEINLINE void request(claim_word& word, claim_word key) {
#if defined(SHOAL_BACKEND_CUDA) && defined(__CUDA_ARCH__)
  atomicMin(&word, key);
#else
  claim_word seen = arch::load_relaxed(word);
  while (key < seen && !arch::compare_exchange(word, seen, key)) {
  }
#endif
}

/// True for the one requester whose key won; that requester also resets the word.
SHOAL_HD SHOAL_FORCEINLINE bool take(claim_word& word, claim_word key) {
  if (arch::load_relaxed(word) != key) return false;
  arch::store_relaxed(word, no_claim);
  return true;
}

}  // namespace shoal::sim
