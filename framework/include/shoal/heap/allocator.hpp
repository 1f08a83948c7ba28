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
#include "shoal/arch/launch.hpp"
#include "shoal/bitmap/bitmap_ref.hpp"
#include "shoal/bitmap/warp_claim.hpp"
#include "shoal/heap/heap_view.hpp"

/// Probe counting for benchmarks (bench/alloc_probe_bench.cpp defines it before including
/// Shoal): called by every lane leaving allocate() with the rounds it took part in — leader
/// steps it waited for plus walk rounds it searched in — and whether it got a slot. Empty by
/// default, so the round counter compiles away.
#ifndef SHOAL_ALLOCATOR_PROBES
#define SHOAL_ALLOCATOR_PROBES(rounds, served) ((void)(rounds), (void)(served))
#endif

namespace shoal::detail {

/// Takes up to `want` from a reservation counter; returns how many it took (exact: CAS loop).
SHOAL_DEVICE inline long long take_up_to(long long& counter, long long want) {
  long long seen = arch::load_relaxed(counter);
  while (seen > 0) {
    const long long take = seen < want ? seen : want;
    // Acquire: pairs with the release of the credit taken, so the slots it counted are
    // findable; a reservation publishes nothing, so no release (no memory barrier).
    if (arch::compare_exchange_acquire(counter, seen, seen - take)) return take;
  }
  return 0;
}

SHOAL_DEVICE SHOAL_FORCEINLINE long long& available_shard(const heap_view& h, std::uint32_t t, int s) {
  return h.counters->available[t][s][0];
}
SHOAL_DEVICE SHOAL_FORCEINLINE int my_shard() { return arch::processor_id() % available_shards; }
SHOAL_DEVICE SHOAL_FORCEINLINE unsigned long long& block_epoch(const heap_view& h) {
  return h.counters->block_epoch[0];
}
/// Brackets a block operation during which its slots are counted nowhere (see block_epoch).
inline constexpr unsigned long long epoch_step = 1ull << 32;
SHOAL_DEVICE SHOAL_FORCEINLINE void enter_block_operation(const heap_view& h) {
  arch::fetch_add(block_epoch(h), epoch_step + 1);
}
SHOAL_DEVICE SHOAL_FORCEINLINE void leave_block_operation(const heap_view& h) {
  arch::fetch_add(block_epoch(h), epoch_step - 1);
}
SHOAL_DEVICE SHOAL_FORCEINLINE bool block_operations_in_flight(unsigned long long epoch) {
  return (epoch & (epoch_step - 1)) != 0;
}
SHOAL_DEVICE SHOAL_FORCEINLINE long long& free_block_count(const heap_view& h) {
  return h.counters->free_blocks[0];
}
SHOAL_DEVICE SHOAL_FORCEINLINE unsigned long long& fresh_from(const heap_view& h) {
  return h.counters->fresh_from[0];
}

/// Makes n free slots of t available (to this processor's shard).
SHOAL_DEVICE inline void credit_available(const heap_view& h, std::uint32_t t, long long n) {
  arch::fetch_add_release(available_shard(h, t, my_shard()), n);  // publishes "findable"
}
/// Takes up to `want` available slots of t: this processor's shard first, then the others in
/// cyclic order after it. The other shards are read all at once (their loads in flight together,
/// one round trip) rather than one after another.
SHOAL_DEVICE inline long long take_available(const heap_view& h, std::uint32_t t, long long want) {
  static_assert(available_shards <= 32, "shards are tracked in a 32-bit mask");
  const int first = my_shard();
  long long taken = take_up_to(available_shard(h, t, first), want);
  if (taken >= want) return taken;
  std::uint32_t nonempty = 0;
#pragma unroll
  for (int s = 0; s < available_shards; ++s)
    if (arch::load_relaxed(available_shard(h, t, s)) > 0) nonempty |= 1u << s;
  nonempty &= ~(1u << first);
  const std::uint32_t after_first = first + 1 < 32 ? ~0u << (first + 1) : 0u;
  while (nonempty != 0 && taken < want) {
    const std::uint32_t ahead = nonempty & after_first;
    const int s = arch::lowest_bit(ahead != 0 ? ahead : nonempty);
    nonempty &= ~(1u << s);
    taken += take_up_to(available_shard(h, t, s), want - taken);
  }
  return taken;
}
SHOAL_DEVICE inline bool nothing_available(const heap_view& h, std::uint32_t t) {
  for (int s = 0; s < available_shards; ++s)
    if (arch::load_acquire(available_shard(h, t, s)) > 0) return false;
  return true;
}

/// Gives `bits` of block b (of type t) back; true when the block is now entirely free (the caller
/// then owes return_if_empty()). Used by destroy (`credit`: the slots become available to
/// reservations) and by an allocation that found the block re-typed under its feet (no credit:
/// those slots were never reserved, their credits are still counted).
SHOAL_DEVICE inline bool give_back_slots(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                         std::uint64_t bits, bool credit) {
  block_header& hdr = h.headers[b];
  // A destroyed object must never be visited by a do-all in progress, even once its slot holds a
  // new object: take it out of the do-all snapshot before the slot can be reused.
  if (credit) arch::and_relaxed(h.snapshots[b], ~bits);  // ordered by the release below
  const std::uint64_t prev = arch::fetch_or(hdr.free_slots, bits);
  if (prev == 0) h.active(t).set(b);  // full → has room: we own the transition
  // Count the slots only now that their block is findable through active[t].
  if (credit) credit_available(h, t, arch::popc(bits));
  return (prev | bits) == h.full_mask(t);
}

/// Tries to return block b of type t, which is entirely free, to the free blocks; the caller holds
/// b's return token. False when the block stays in use: an allocation took one of its slots.
///
/// First its slots are un-counted: it collects `capacity` credits of t, keeping what it has
/// collected while it waits (handing partial amounts back and retrying would let two returners
/// take turns for ever). It gets them or sees its block in use: every credit it lacks is either
/// still to be counted by another freer of this block, or held by a reservation that is about to
/// claim a slot — of this block (in use: stop) or of another one (that credit was not this
/// block's). Credits suffice for all returners at once, as each returns a distinct block (the
/// token) and wants that block's own slots. No allocation holds a reservation while it waits for
/// anything, so the wait is short. Then one CAS (all free → nothing to take) invalidates the
/// block, so that no allocation can slip in, and it goes back to the free blocks.
SHOAL_DEVICE inline bool try_return_block(const heap_view& h, std::uint64_t b, std::uint32_t t) {
  block_header& hdr = h.headers[b];
  const std::uint64_t full = h.full_mask(t);
  const long long capacity = h.capacity[t];
  if (arch::load_relaxed(hdr.free_slots) != full) return false;
  enter_block_operation(h);
  long long held = 0;
  while ((held += take_available(h, t, capacity - held)) < capacity) {
    if (arch::load_relaxed(hdr.free_slots) != full) {
      if (held > 0) credit_available(h, t, held);
      leave_block_operation(h);
      return false;
    }
    arch::spin_pause();
  }
  std::uint64_t expected = full;
  if (!arch::compare_exchange(hdr.free_slots, expected, std::uint64_t{0})) {
    credit_available(h, t, capacity);  // an allocation got in first: keep the block
    leave_block_operation(h);
    return false;
  }
  h.active(t).clear(b);
  h.allocated(t).clear(b);
  arch::store_relaxed(hdr.type, no_type);
  // Let go of the token before the block can be reopened: its next emptying needs it.
  arch::store_release(hdr.returning, 0u);
  h.free_blocks().set(b);
  arch::fetch_add(free_block_count(h), 1ll);  // after the bit: a reserved block is findable
  leave_block_operation(h);
  return true;
}

/// Returns block b to the free blocks if it is (still) entirely free. One thread at a time tries
/// (b's return token): two returners of one block would each wait for the block's credits, which
/// exist once. A thread that finds the token taken leaves: the holder checks the block again after
/// letting go of the token, and the fences make sure that it then sees this thread's freed slots.
SHOAL_DEVICE inline void return_if_empty(const heap_view& h, std::uint64_t b) {
  block_header& hdr = h.headers[b];
  while (true) {
    arch::fence();  // our freed slots before the token: pairs with the fence after letting go
    std::uint32_t idle = 0;
    if (!arch::compare_exchange_acquire(hdr.returning, idle, 1u)) return;
    // The type is stable while we hold the token, unless the block is free (then nothing to do):
    // only a returner changes the type of a block in use.
    const std::uint32_t t = arch::load_relaxed(hdr.type);
    if (t != no_type && try_return_block(h, b, t)) return;
    arch::store_release(hdr.returning, 0u);
    arch::fence();
    const std::uint32_t now = arch::load_relaxed(hdr.type);
    if (now == no_type || arch::load_relaxed(hdr.free_slots) != h.full_mask(now)) return;
  }
}

/// give_back_slots() and, when that emptied the block, return_if_empty().
SHOAL_DEVICE inline void release_slots(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                       std::uint64_t bits, bool credit) {
  if (give_back_slots(h, b, t, bits, credit)) return_if_empty(h, b);
}

/// The free slots of a fresh block of type t whose first `taken` slots are in use (fresh blocks
/// are filled in slot order so that constructor writes of a warp are coalesced).
SHOAL_HD inline std::uint64_t spare_slots(std::uint64_t full_mask, std::uint32_t taken) {
  return full_mask & ~low_bits(taken);
}

/// The type and snapshot of free block b turned into a block of type t whose first `taken`
/// slots are in use. Returns its free slots, which the caller stores in the header: with release
/// ordering where others may claim slots meanwhile (that publishes the type).
SHOAL_DEVICE inline std::uint64_t prepare_header(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                                 std::uint32_t taken) {
  arch::store_relaxed(h.headers[b].type, t);
  arch::store_relaxed(h.snapshots[b], std::uint64_t{0});
  return spare_slots(h.full_mask(t), taken);
}

/// Makes the spare slots `free` of a block just opened for t findable and counted. In bulk
/// (parallel_new, which has the heap to itself and whose launch's barrier publishes what it
/// opened): relaxed, without the fences that the allocator's concurrent claims need.
template <bool Bulk = false>
SHOAL_DEVICE inline void offer_spare_slots(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                           std::uint64_t free) {
  if (free == 0) return;
  if constexpr (Bulk) {
    h.active(t).mark_bits(b / 64, std::uint64_t{1} << (b % 64));
    arch::add_relaxed(available_shard(h, t, my_shard()), static_cast<long long>(arch::popc(free)));
  } else {
    h.active(t).set(b);
    credit_available(h, t, arch::popc(free));
  }
}

/// Turns free block b (claimed: its free bit cleared) into a block of type t whose first
/// `taken` slots are in use, and makes its spare slots available.
SHOAL_DEVICE inline void initialize_block(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                          std::uint32_t taken) {
  const std::uint64_t free = prepare_header(h, b, t, taken);
  arch::store_release(h.headers[b].free_slots, free);  // publishes the type to whoever claims a slot
  h.allocated(t).set(b);
  offer_spare_slots(h, b, t, free);
}

SHOAL_DEVICE inline void record_failed_allocations(const heap_view& h, std::uint32_t t,
                                                   unsigned long long n) {
  arch::add_relaxed(h.errors->failed_allocations[t], n);
}

/// What the leader decided for the lanes still waiting, in one round of allocate().
enum class step : int { reserved, opened, retry, full };

/// Leader: reserve up to `pending` slots in existing blocks, else open one fresh block (its
/// index in `block`), else decide that the heap is full — only when no block operation, whose
/// slots are momentarily counted nowhere, overlapped the readings that found nothing.
SHOAL_DEVICE inline step reserve_or_open(const heap_view& h, std::uint32_t t, std::uint32_t pending,
                                         walk_rng& rng, std::uint32_t& count, std::uint64_t& block) {
  count = static_cast<std::uint32_t>(take_available(h, t, pending));
  if (count > 0) return step::reserved;
  long long& blocks = free_block_count(h);
  // A sequence-lock read: the epoch (acquire) before, a full fence and the epoch again after the
  // counters, so that no counter reading can come from outside the two epoch readings.
  const unsigned long long epoch = arch::load_acquire(block_epoch(h));
  if (arch::load_acquire(blocks) > 0) {
    enter_block_operation(h);
    if (arch::fetch_sub(blocks, 1ll) > 0) {
      // Reserved, hence findable: the returner sets the free bit before counting the block.
      while ((block = h.free_blocks().claim(rng)) == bitmap_npos) arch::spin_pause();
      // Its result unused, so nothing waits for it (only parallel_new reads it, alone on the heap).
      arch::max_relaxed(fresh_from(h), static_cast<unsigned long long>(block + 1));
      count = pending < h.capacity[t] ? pending : h.capacity[t];
      initialize_block(h, block, t, count);
      leave_block_operation(h);  // after its spare slots were counted
      return step::opened;
    }
    arch::fetch_add(blocks, 1ll);  // went below zero: undo
    leave_block_operation(h);
    return step::retry;
  }
  if (!block_operations_in_flight(epoch) && nothing_available(h, t)) {
    arch::fence();
    if (arch::load_relaxed(block_epoch(h)) == epoch) return step::full;
  }
  arch::spin_pause();
  return step::retry;
}

/// The walk for lanes holding reservations in existing blocks (`needs`): every lane of `group`
/// walks active[t] and the slots found are pooled, one atomic per block, until each reserving
/// lane has one. Reserved slots exist, so the walk ends. A block that a lane emptied by handing
/// back slots it had claimed in a re-typed block goes to `deferred`: its return, which may wait,
/// must wait until the lane has left this warp-wide loop, whose other lanes may hold the very
/// reservations that the return waits for.
SHOAL_DEVICE inline void claim_reserved(const heap_view& h, std::uint32_t t, arch::lane_mask group, bool needs,
                                        walk_rng& rng, void*& result, std::uint64_t& deferred,
                                        std::uint32_t& rounds) {
  const std::uint32_t capacity = h.capacity[t];
  const bitmap_ref active = h.active(t);
  while (arch::ballot(group, needs) != 0) {
    rounds += needs;
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
        if (give_back_slots(h, b, bt, c.claimed(), false)) {
          // Twice in one allocation (two blocks re-typed within one walk) is beyond what can be
          // put off: return the first now.
          if (deferred != bitmap_npos) return_if_empty(h, deferred);
          deferred = b;
        }
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
}

/// Allocates one slot of type t for every calling lane; nullptr when the heap is full.
/// Lanes asking for the same type are served together: in each round their leader reserves slots
/// in existing blocks or opens a fresh block for them (handing out fresh slots in lane order), and
/// the lanes that got reservations claim their slots (claim_reserved) before the next round, so
/// that no lane holds a reservation while its leader waits to decide that the heap is full.
SHOAL_DEVICE inline void* allocate(const heap_view& h, std::uint32_t t) {
  const arch::lane_mask group = arch::match_any(arch::active_lanes(), t);
  const int leader = arch::lowest_bit(group);
  const std::uint32_t capacity = h.capacity[t];
  walk_rng rng = walk_rng::for_this_lane(reinterpret_cast<std::uintptr_t>(&rng) + t);

  void* result = nullptr;
  bool waiting = true;  // no decision for this lane yet
  std::uint64_t deferred = bitmap_npos;  // see claim_reserved
  std::uint32_t rounds = 0;  // for SHOAL_ALLOCATOR_PROBES only
  while (true) {
    const arch::lane_mask pending = arch::ballot(group, waiting);
    if (pending == 0) break;
    rounds += waiting;
    std::uint32_t count = 0;
    std::uint64_t block = bitmap_npos;
    step s = step::retry;
    if (arch::lane_id() == leader) s = reserve_or_open(h, t, arch::popc(pending), rng, count, block);
    s = static_cast<step>(arch::shuffle(group, static_cast<int>(s), leader));
    count = arch::shuffle(group, count, leader);
    block = arch::shuffle(group, block, leader);
    if (s == step::full) {
      if (arch::lane_id() == leader) record_failed_allocations(h, t, arch::popc(pending));
      break;
    }
    const bool served = waiting && static_cast<std::uint32_t>(arch::rank_in(pending)) < count;
    if (served) waiting = false;
    if (served && s == step::opened)
      result = reinterpret_cast<void*>(encode_pointer(h.block(block), arch::rank_in(pending), capacity, t));
    if (s == step::reserved) claim_reserved(h, t, group, served, rng, result, deferred, rounds);
  }
  if (deferred != bitmap_npos) return_if_empty(h, deferred);
  SHOAL_ALLOCATOR_PROBES(rounds, result != nullptr);
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

/// Checked mode: records and rejects a destroy of something that is not a live object.
SHOAL_DEVICE inline bool check_destroy(const heap_view& h, const void* p) {
  const std::uint64_t bits = bits_of(p);
  if (is_live_object(h, bits)) return true;
  if (arch::fetch_add(h.errors->bad_destroys, 1ull) == 0)
    arch::store_relaxed(h.errors->first_bad_pointer, static_cast<unsigned long long>(bits));
  return false;
}

/// Frees the slot of `p` (its destructor has run). Lanes freeing slots of one block share one
/// atomic.
SHOAL_DEVICE inline void deallocate(const heap_view& h, const void* p) {
  const std::uint64_t bits = bits_of(p);
  const std::uint64_t b = h.block_of(bits);
  const arch::lane_mask same_block = arch::match_any(arch::active_lanes(), b);
  const std::uint64_t slots = arch::reduce_or(same_block, std::uint64_t{1} << slot_of(bits));
  if (arch::lowest_bit(same_block) == arch::lane_id()) {
    release_slots(h, b, type_of(bits), slots, true);
    arch::count_destroy();  // a do-all visit in this warp reads its next snapshot word again
  }
}

}  // namespace shoal::detail
