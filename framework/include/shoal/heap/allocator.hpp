#pragma once
/// @file
/// Device-side allocation and deallocation of object slots (DESIGN §5).
///
/// Protocol invariants (exact after quiescence, see runtime::verify()):
///   free[b]         ⇔ block b is free (type no_type, free_slots 0)
///   allocated[t][b] ⇔ block b belongs to type t
///   active[t][b]    ⇔ block b belongs to t and free_slots != 0
/// Every change of free_slots between zero and non-zero is made by one atomic, and the thread
/// whose atomic made it owns the matching change of active[t][b] and performs it with the
/// retrying set()/clear(), so the pairs can never be lost, whatever the interleaving.

#include <cstdint>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/bitmap/bitmap_ref.hpp"
#include "shoal/bitmap/warp_claim.hpp"
#include "shoal/heap/heap_view.hpp"

namespace shoal::detail {

/// Gives `bits` of block b (of type t) back: the release half of the protocol, used by
/// destroy and by an allocation that found the block re-typed under its feet.
SHOAL_DEVICE inline void release_slots(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                       std::uint64_t bits) {
  block_header& hdr = h.headers[b];
  const std::uint64_t prev = arch::fetch_or(hdr.free_slots, bits);
  if (prev == 0) h.active(t).set(b);  // full → has room: we own the transition
  const std::uint64_t full = h.full_mask(t);
  if ((prev | bits) != full) return;
  // The block is empty. Invalidate it with one CAS (all free → nothing to take) so that no
  // concurrent allocation can slip in, then return it to the free blocks. If an allocation
  // got in first, the CAS fails and the block simply stays in use.
  std::uint64_t expected = full;
  if (!arch::compare_exchange(hdr.free_slots, expected, std::uint64_t{0})) return;
  h.active(t).clear(b);
  h.allocated(t).clear(b);
  arch::store_relaxed(hdr.type, no_type);
  h.free_blocks().set(b);
}

/// Takes a free block for type t and hands its first `taken` slots out (fresh blocks are filled
/// in slot order so that constructor writes of a warp are coalesced).
SHOAL_DEVICE inline void initialize_block(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                          std::uint32_t taken) {
  block_header& hdr = h.headers[b];
  const std::uint64_t taken_mask = taken >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << taken) - 1;
  const std::uint64_t free = h.full_mask(t) & ~taken_mask;
  arch::store_relaxed(hdr.type, t);
  arch::store_relaxed(hdr.iteration, std::uint64_t{0});
  arch::store_release(hdr.free_slots, free);  // publishes the type to whoever claims a slot
  h.allocated(t).set(b);
  if (free != 0) h.active(t).set(b);
}

SHOAL_DEVICE inline void record_failed_allocations(const heap_view& h, std::uint32_t t,
                                                   unsigned long long n) {
  arch::fetch_add_relaxed(h.errors->failed_allocations[t], n);
}

/// Allocates one slot of type t for every calling lane; nullptr when the heap is full.
/// Lanes asking for the same type share the work: one walk per lane over active[t], pooled
/// slots claimed with one atomic per block, and a leader that opens fresh blocks.
SHOAL_DEVICE inline void* allocate(const heap_view& h, std::uint32_t t) {
  const arch::lane_mask group = arch::match_any(arch::active_lanes(), t);
  const std::uint32_t capacity = h.capacity[t];
  const bitmap_ref active = h.active(t);
  walk_rng rng = walk_rng::for_this_lane(reinterpret_cast<std::uintptr_t>(&rng) + t);
  bool needs = true;
  void* result = nullptr;
  // A fresh block is opened only when no lane saw a block with room; if no free block is left
  // either, a few more looks at active[t] (whose bits may lag) precede the verdict "full".
  int empty_looks = 0;
  while (true) {
    bool offered = false;
    if (arch::ballot(group, !active.empty()) != 0) {
      const std::uint64_t b = active.find_random(rng);
      std::uint64_t* word = b == bitmap_npos ? nullptr : &h.headers[b].free_slots;
      const std::uint64_t seen = word ? arch::load_relaxed(*word) : 0;
      offered = arch::ballot(group, seen != 0) != 0;
      const claim_result c = claim_pooled(group, needs, word, seen);
      bool type_ok = true;
      if (c.claimed() != 0) {
        // The block may have been emptied, freed and re-typed since the walk saw it. Our atomic
        // holds slots now, so the block cannot change type any more: check, and if it is not
        // ours, behave exactly like an allocation and a destroy of that other type.
        const std::uint32_t bt = arch::load_relaxed(h.headers[b].type);
        if (c.emptied_word()) h.active(bt).clear(b);
        if (bt != t) {
          type_ok = false;
          release_slots(h, b, bt, c.claimed());
        }
      }
      const int src = c.owner >= 0 ? c.owner : arch::lane_id();
      const bool owner_ok = arch::shuffle(group, type_ok, src);
      const std::uint64_t owner_block = arch::shuffle(group, b, src);
      if (c.obtained && owner_ok) {
        result = reinterpret_cast<void*>(encode_pointer(h.block(owner_block), c.bit, capacity, t));
        needs = false;
      }
    }
    arch::lane_mask needers = arch::ballot(group, needs);
    if (needers == 0) break;
    if (offered) continue;

    const int leader = arch::lowest_bit(needers);
    std::uint64_t fresh = bitmap_npos;
    if (arch::lane_id() == leader) fresh = h.free_blocks().claim(rng);
    fresh = arch::shuffle(group, fresh, leader);
    if (fresh == bitmap_npos) {
      if (++empty_looks < 4 && arch::ballot(group, !active.empty()) != 0) continue;
      if (arch::lane_id() == leader) record_failed_allocations(h, t, arch::popc(needers));
      break;
    }
    const std::uint32_t taken = arch::popc(needers) < static_cast<int>(capacity)
                                    ? static_cast<std::uint32_t>(arch::popc(needers))
                                    : capacity;
    if (arch::lane_id() == leader) initialize_block(h, fresh, t, taken);
    const int rank = arch::rank_in(needers);
    if (needs && static_cast<std::uint32_t>(rank) < taken) {
      result = reinterpret_cast<void*>(encode_pointer(h.block(fresh), rank, capacity, t));
      needs = false;
    }
    if (arch::ballot(group, needs) == 0) break;
  }
  return result;
}

/// Checked mode: is `bits` a live object of a registered type in this heap?
SHOAL_DEVICE inline bool is_live_object(const heap_view& h, std::uint64_t bits) {
  const std::uintptr_t block = block_address_of(bits);
  const auto first = reinterpret_cast<std::uintptr_t>(h.data);
  if (proxy_offset_of(bits) != 0 || block < first || block >= first + h.blocks * h.block_bytes ||
      (block - first) % h.block_bytes != 0)
    return false;
  const std::uint64_t b = (block - first) / h.block_bytes;
  const std::uint32_t t = type_of(bits);
  if (t >= h.num_types || arch::load_relaxed(h.headers[b].type) != t) return false;
  if (capacity_of(bits) != h.capacity[t] || slot_of(bits) >= h.capacity[t]) return false;
  return ((arch::load_relaxed(h.headers[b].free_slots) >> slot_of(bits)) & 1u) == 0;
}

/// Frees the slot of `p` (its destructor has run). Lanes freeing slots of one block share one
/// atomic. In checked mode an invalid pointer is recorded and ignored.
SHOAL_DEVICE inline void deallocate(const heap_view& h, const void* p) {
  const std::uint64_t bits = bits_of(p);
#if defined(SHOAL_CHECKS)
  if (!is_live_object(h, bits)) {
    if (arch::fetch_add(h.errors->bad_destroys, 1ull) == 0)
      arch::store_relaxed(h.errors->first_bad_pointer, static_cast<unsigned long long>(bits));
    return;
  }
#endif
  const std::uint64_t b = h.block_of(bits);
  const arch::lane_mask same_block = arch::match_any(arch::active_lanes(), b);
  const std::uint64_t slots = arch::reduce_or(same_block, std::uint64_t{1} << slot_of(bits));
  if (arch::lowest_bit(same_block) == arch::lane_id()) release_slots(h, b, type_of(bits), slots);
}

}  // namespace shoal::detail
