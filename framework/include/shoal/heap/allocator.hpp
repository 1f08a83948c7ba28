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

/// Takes up to `want` from a reservation counter; returns how many it took (exact: CAS loop).
SHOAL_DEVICE inline long long take_up_to(long long& counter, long long want) {
  long long seen = arch::load_relaxed(counter);
  while (seen > 0) {
    const long long take = seen < want ? seen : want;
    if (arch::compare_exchange(counter, seen, seen - take)) return take;
  }
  return 0;
}
/// Takes exactly `want` or nothing.
SHOAL_DEVICE inline bool take_exactly(long long& counter, long long want) {
  long long seen = arch::load_relaxed(counter);
  while (seen >= want) {
    if (arch::compare_exchange(counter, seen, seen - want)) return true;
  }
  return false;
}

/// Gives `bits` of block b (of type t) back: the release half of the protocol, used by
/// destroy (`credit`: the slots become available to reservations) and by an allocation that
/// found the block re-typed under its feet (no credit: those slots were never reserved).
SHOAL_DEVICE inline void release_slots(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                       std::uint64_t bits, bool credit) {
  block_header& hdr = h.headers[b];
  heap_counters& n = *h.counters;
  const std::uint64_t prev = arch::fetch_or(hdr.free_slots, bits);
  if (prev == 0) h.active(t).set(b);  // full → has room: we own the transition
  // Count the slots only now that their block is findable through active[t].
  if (credit) arch::fetch_add(n.available[t], static_cast<long long>(arch::popc(bits)));
  const std::uint64_t full = h.full_mask(t);
  if ((prev | bits) != full) return;
  // The block is empty. Un-count its slots (if nobody has reserved them), then invalidate it
  // with one CAS (all free → nothing to take) so no allocation can slip in, and return it.
  // Another freer of this block may not have counted its slot yet: wait for it, unless an
  // allocation takes a slot of this block meanwhile (then the block stays in use). Both
  // happen: reservations that drain the count must claim slots, some of them here.
  const long long capacity = h.capacity[t];
  while (!take_exactly(n.available[t], capacity)) {
    if (arch::load_relaxed(hdr.free_slots) != full) return;
    arch::spin_pause();
  }
  std::uint64_t expected = full;
  if (!arch::compare_exchange(hdr.free_slots, expected, std::uint64_t{0})) {
    arch::fetch_add(n.available[t], capacity);  // an allocation got in first: keep the block
    return;
  }
  h.active(t).clear(b);
  h.allocated(t).clear(b);
  arch::store_relaxed(hdr.type, no_type);
  h.free_blocks().set(b);
  arch::fetch_add(n.free_blocks, 1ll);  // after the bit: a reserved block is always findable
}

/// Turns free block b into a block of type t whose first `taken` slots are in use (fresh
/// blocks are filled in slot order so that constructor writes of a warp are coalesced), and
/// makes its spare slots available.
SHOAL_DEVICE inline void initialize_block(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                          std::uint32_t taken) {
  block_header& hdr = h.headers[b];
  const std::uint64_t taken_mask = taken >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << taken) - 1;
  const std::uint64_t free = h.full_mask(t) & ~taken_mask;
  arch::store_relaxed(hdr.type, t);
  arch::store_relaxed(hdr.iteration, std::uint64_t{0});
  arch::store_release(hdr.free_slots, free);  // publishes the type to whoever claims a slot
  h.allocated(t).set(b);
  if (free != 0) {
    h.active(t).set(b);
    arch::fetch_add(h.counters->available[t], static_cast<long long>(arch::popc(free)));
  }
}

SHOAL_DEVICE inline void record_failed_allocations(const heap_view& h, std::uint32_t t,
                                                   unsigned long long n) {
  arch::fetch_add_relaxed(h.errors->failed_allocations[t], n);
}

/// The leader's reservation for a group of `want` lanes: slots in existing blocks first, then
/// fresh blocks. While another warp is opening a block of t (its spare slots not yet counted),
/// a shortfall is not final: look again.
struct reservation {
  std::uint32_t in_active = 0;    ///< lanes served from available slots
  std::uint32_t fresh_blocks = 0;  ///< blocks reserved for the next lanes
  std::uint32_t in_fresh = 0;     ///< lanes served from those blocks
};

SHOAL_DEVICE inline reservation reserve(const heap_view& h, std::uint32_t t, std::uint32_t want) {
  heap_counters& n = *h.counters;
  const std::uint32_t capacity = h.capacity[t];
  reservation r;
  while (true) {
    r.in_active += static_cast<std::uint32_t>(take_up_to(n.available[t], want - r.in_active));
    const std::uint32_t rest = want - r.in_active;
    if (rest == 0) break;
    if (arch::load_relaxed(n.free_blocks) > 0) {
      // Announce the opening before taking blocks, so that a reserver that sees no blocks left
      // also sees that spare slots are on their way.
      arch::fetch_add(n.opening[t], 1ll);
      const long long blocks = take_up_to(n.free_blocks, (rest + capacity - 1) / capacity);
      if (blocks > 0) {  // `opening` is withdrawn once the blocks' spare slots are counted
        r.fresh_blocks = static_cast<std::uint32_t>(blocks);
        r.in_fresh = rest < blocks * capacity ? rest : static_cast<std::uint32_t>(blocks * capacity);
        break;
      }
      arch::fetch_sub(n.opening[t], 1ll);
      continue;
    }
    // No block left. Full, unless an opening is in flight or its spare slots just arrived
    // (read in this order: an opening counts its spares before it withdraws).
    if (arch::load_relaxed(n.opening[t]) == 0 && arch::load_relaxed(n.available[t]) == 0) break;
    arch::spin_pause();
  }
  return r;
}

/// Allocates one slot of type t for every calling lane; nullptr when the heap is full.
/// Lanes asking for the same type are served together: their leader reserves for all of them,
/// lanes open the reserved fresh blocks, and every lane walks active[t] to pool the slots found
/// for the lanes served from existing blocks (one atomic per block).
SHOAL_DEVICE inline void* allocate(const heap_view& h, std::uint32_t t) {
  const arch::lane_mask group = arch::match_any(arch::active_lanes(), t);
  const int leader = arch::lowest_bit(group);
  const std::uint32_t capacity = h.capacity[t];
  const int rank = arch::rank_in(group);
  walk_rng rng = walk_rng::for_this_lane(reinterpret_cast<std::uintptr_t>(&rng) + t);

  reservation r;
  if (arch::lane_id() == leader) r = reserve(h, t, static_cast<std::uint32_t>(arch::popc(group)));
  r.in_active = arch::shuffle(group, r.in_active, leader);
  r.fresh_blocks = arch::shuffle(group, r.fresh_blocks, leader);
  r.in_fresh = arch::shuffle(group, r.in_fresh, leader);
  const std::uint32_t served = r.in_active + r.in_fresh;
  if (arch::lane_id() == leader && served < static_cast<std::uint32_t>(arch::popc(group)))
    record_failed_allocations(h, t, arch::popc(group) - served);

  void* result = nullptr;
  // Fresh blocks: lane j (by rank) claims and initialises block j; it exists, it was reserved.
  if (r.fresh_blocks > 0) {
    std::uint64_t block = bitmap_npos;
    if (static_cast<std::uint32_t>(rank) < r.fresh_blocks) {
      const bitmap_ref free_blocks = h.free_blocks();
      while ((block = free_blocks.claim(rng)) == bitmap_npos) arch::spin_pause();
      const std::uint32_t first = rank * capacity;
      const std::uint32_t taken = r.in_fresh - first < capacity ? r.in_fresh - first : capacity;
      initialize_block(h, block, t, taken);
    }
    arch::sync_lanes(group);  // every fresh block of this group has counted its spare slots
    if (arch::lane_id() == leader) arch::fetch_sub(h.counters->opening[t], 1ll);
    const std::uint32_t k = static_cast<std::uint32_t>(rank) - r.in_active;  // my fresh slot
    const bool fresh_me = static_cast<std::uint32_t>(rank) >= r.in_active &&
                          static_cast<std::uint32_t>(rank) < served;
    const int holder = fresh_me ? arch::nth_set_bit(group, static_cast<int>(k / capacity)) : arch::lane_id();
    const std::uint64_t my_block = arch::shuffle(group, block, holder);
    if (fresh_me)
      result = reinterpret_cast<void*>(encode_pointer(h.block(my_block), k % capacity, capacity, t));
  }

  // Reserved slots in existing blocks: walk until every reserving lane has one.
  bool needs = static_cast<std::uint32_t>(rank) < r.in_active;
  const bitmap_ref active = h.active(t);
  while (arch::ballot(group, needs) != 0) {
    const std::uint64_t b = active.find_random(rng);
    std::uint64_t* word = b == bitmap_npos ? nullptr : &h.headers[b].free_slots;
    const std::uint64_t seen = word ? arch::load_relaxed(*word) : 0;
    const claim_result c = claim_pooled(group, needs, word, seen);
    bool type_ok = true;
    if (c.claimed() != 0) {
      // The block may have been emptied, freed and re-typed since the walk saw it. Our atomic
      // holds slots now, so it cannot change type any more: check, and if it is not ours,
      // behave exactly like an allocation and a destroy of that other type.
      const std::uint32_t bt = arch::load_relaxed(h.headers[b].type);
      if (c.emptied_word()) h.active(bt).clear(b);
      if (bt != t) {
        type_ok = false;
        release_slots(h, b, bt, c.claimed(), false);
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
  if (arch::lowest_bit(same_block) == arch::lane_id()) release_slots(h, b, type_of(bits), slots, true);
}

}  // namespace shoal::detail
