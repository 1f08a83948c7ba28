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

#if defined(SHOAL_BACKEND_CUDA)
inline constexpr bool gpu_backend = true;
#else
inline constexpr bool gpu_backend = false;
#endif

SHOAL_DEVICE SHOAL_FORCEINLINE unsigned long long& epoch_shard(const heap_view& h, std::uint32_t t, int s) {
  return h.counters->block_epoch[t][s][0];
}
SHOAL_DEVICE SHOAL_FORCEINLINE unsigned long long& my_epoch_shard(const heap_view& h, std::uint32_t t) {
  return epoch_shard(h, t, static_cast<int>(static_cast<unsigned>(arch::processor_id()) % epoch_shards));
}
/// Brackets a block operation of type t, during which some of t's slots are findable nowhere
/// (see block_epoch). Acquire-release: the operation's changes stay inside the bracket.
inline constexpr unsigned long long epoch_step = 1ull << 32;
SHOAL_DEVICE SHOAL_FORCEINLINE void enter_block_operation(const heap_view& h, std::uint32_t t) {
  arch::fetch_add(my_epoch_shard(h, t), epoch_step + 1);
}
SHOAL_DEVICE SHOAL_FORCEINLINE void leave_block_operation(const heap_view& h, std::uint32_t t) {
  arch::fetch_add(my_epoch_shard(h, t), epoch_step - 1);
}
SHOAL_DEVICE SHOAL_FORCEINLINE long long& free_block_count(const heap_view& h) {
  return h.counters->free_blocks[0];
}
/// This processor's current block of type t (a hint: see heap_counters::current).
SHOAL_DEVICE SHOAL_FORCEINLINE std::uint32_t& current_block(const heap_view& h, std::uint32_t t) {
  return h.counters->current[t][static_cast<unsigned>(arch::processor_id()) % hint_slots];
}

/// Gives `bits` of block b (of type t) back; true when the block is now entirely free (the caller
/// then owes return_if_empty()). Used by destroy (`destroyed`: the slots held objects) and by an
/// allocation that found the block re-typed under its feet (the slots were never used).
SHOAL_DEVICE inline bool give_back_slots(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                         std::uint64_t bits, bool destroyed) {
  block_header& hdr = h.headers[b];
  // A destroyed object must never be visited by a do-all in progress, even once its slot holds a
  // new object: take it out of the do-all snapshot before the slot can be reused.
  if (destroyed) arch::and_relaxed(h.snapshots[b], ~bits);  // ordered by the release below
  // Release: the destructor's writes (and the snapshot's) before the slots can be claimed again.
  // Not acquire: it reads nothing that others published (see allocate()).
  const std::uint64_t prev = arch::fetch_or_release(hdr.free_slots, bits);
  if (prev == 0) h.active(t).set(b);  // full → has room: we own the transition
  return (prev | bits) == h.full_mask(t);
}

/// Tries to return block b of type t, which is entirely free, to the free blocks; the caller holds
/// b's return token. False when the block stays in use: an allocation took one of its slots.
/// One CAS (all free → nothing to take) invalidates the block, so that no allocation can slip in
/// (an allocation that read the block before claims nothing from the zero word); then it goes
/// back to the free blocks.
SHOAL_DEVICE inline bool try_return_block(const heap_view& h, std::uint64_t b, std::uint32_t t) {
  block_header& hdr = h.headers[b];
  const std::uint64_t full = h.full_mask(t);
  if (arch::load_relaxed(hdr.free_slots) != full) return false;
  enter_block_operation(h, t);
  std::uint64_t expected = full;
  if (!arch::compare_exchange(hdr.free_slots, expected, std::uint64_t{0})) {
    leave_block_operation(h, t);  // an allocation got in first: keep the block
    return false;
  }
  h.active(t).clear(b);
  h.allocated(t).clear(b);
  arch::store_relaxed(hdr.type, no_type);
  // Let go of the token before the block can be reopened: its next emptying needs it.
  arch::store_release(hdr.returning, 0u);
  h.free_blocks().set(b);
  arch::add_relaxed(free_block_count(h), 1ll);
  leave_block_operation(h, t);
  return true;
}

/// Returns block b to the free blocks if it is (still) entirely free. One thread at a time tries
/// (b's return token). A thread that finds the token taken leaves: the holder checks the block
/// again after letting go of the token, and the fences make sure that it then sees this thread's
/// freed slots.
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
                                       std::uint64_t bits, bool destroyed) {
  if (give_back_slots(h, b, t, bits, destroyed)) return_if_empty(h, b);
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

/// Makes the spare slots `free` of a block just opened for t findable. In bulk (parallel_new,
/// which has the heap to itself and whose launch's barrier publishes what it opened): relaxed,
/// without the fences that the allocator's concurrent claims need.
template <bool Bulk = false>
SHOAL_DEVICE inline void offer_spare_slots(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                           std::uint64_t free) {
  if (free == 0) return;
  if constexpr (Bulk) {
    h.active(t).mark_bits(b / 64, std::uint64_t{1} << (b % 64));
  } else {
    h.active(t).set(b);
  }
}

/// Turns free block b (claimed: its free bit cleared) into a block of type t whose first
/// `taken` slots are in use, and makes its spare slots findable.
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

/// What heap_is_full() saw.
enum class fullness : int { room, full, unsure };

/// Whether the heap holds no free slot of t and no free block: `full` only when no block
/// operation of t was in flight from before these readings to after them (a sequence-lock read
/// over t's epoch shards; each shard's value only grows, so their sum is unchanged exactly when
/// every shard is). `unsure`: nothing was found, but a block operation of t overlapped.
///
/// A block of another type that is being returned is findable nowhere for a moment, and is not
/// waited for: its return is part of a destroy still in progress, and an allocation that fails
/// meanwhile is ordered before that destroy.
SHOAL_DEVICE inline fullness heap_is_full(const heap_view& h, std::uint32_t t) {
  unsigned long long before = 0;
  bool in_flight = false;
#pragma unroll
  for (int s = 0; s < epoch_shards; ++s) {
    const unsigned long long e = arch::load_acquire(epoch_shard(h, t, s));
    before += e;
    in_flight |= (e & (epoch_step - 1)) != 0;
  }
  if (!h.free_blocks().empty() || !h.active(t).empty()) return fullness::room;
  if (in_flight) return fullness::unsure;
  arch::fence();
  unsigned long long after = 0;
#pragma unroll
  for (int s = 0; s < epoch_shards; ++s) after += arch::load_relaxed(epoch_shard(h, t, s));
  return after == before ? fullness::full : fullness::unsure;
}

/// How many times an allocation sees no room while block operations of its type keep
/// overlapping, before it decides that the heap is full anyway (each try walks again: a few µs).
/// Only a heap that is full but for blocks of that type being emptied and returned all the
/// while gets there: a nullptr within a millisecond rather than a wait without bound.
inline constexpr std::uint32_t full_patience = 64;

/// What the leader's slow path decided for the lanes still waiting, in one round of allocate().
enum class step : int { opened, retry, full };

/// Leader, when every walker found active[t] empty: open a free block for up to `pending` lanes
/// (its index in `block`, the lanes served in `count`), else decide that the heap is full.
/// The free bitmap is looked at before the bracket: a claim that fails is a block operation too,
/// and allocations on a full heap that bracketed theirs would keep each other from deciding.
SHOAL_DEVICE inline step open_or_decide_full(const heap_view& h, std::uint32_t t, std::uint32_t pending,
                                             walk_rng& rng, std::uint32_t& unsure, std::uint32_t& count,
                                             std::uint64_t& block) {
  if (!h.free_blocks().empty()) {
    enter_block_operation(h, t);  // before the claim hides the block
    block = h.free_blocks().claim(rng);
    if (block != bitmap_npos) {
      arch::add_relaxed(free_block_count(h), -1ll);
      const std::uint32_t capacity = h.capacity[t];
      count = pending < capacity ? pending : capacity;
      initialize_block(h, block, t, count);
      leave_block_operation(h, t);  // after its spare slots were made findable
      if (count < capacity) arch::store_relaxed(current_block(h, t), static_cast<std::uint32_t>(block + 1));
      return step::opened;
    }
    leave_block_operation(h, t);
  }
  const fullness f = heap_is_full(h, t);
  if (f == fullness::full || (f == fullness::unsure && ++unsure >= full_patience)) return step::full;
  arch::spin_pause();
  return step::retry;
}

/// An allocation of type t took `bits` of block b, which turned out to be of type `bt` (it was
/// emptied, returned and reopened since the hint or the walk saw it): give them back exactly as
/// an allocation and a destroy of type bt would, inside a block operation, as those slots were
/// findable nowhere for a moment.
SHOAL_DEVICE inline void hand_back_foreign(const heap_view& h, std::uint64_t b, std::uint32_t bt,
                                           std::uint64_t bits, bool emptied_word) {
  enter_block_operation(h, bt);
  if (emptied_word) h.active(bt).clear(b);
  if (give_back_slots(h, b, bt, bits, false)) return_if_empty(h, b);
  leave_block_operation(h, bt);
}

/// Allocates one slot of type t for every calling lane; nullptr when the heap is full.
///
/// Lanes asking for the same type are served together. Round 0 tries the block this processor
/// is filling (current_block): one load of the hint, one of the block's free-slot word and one
/// fetch_and that claims a slot for every lane it can (claim_pooled). Warps of one processor
/// read the same word at once, so each starts taking at its own slot (by warp slot and the
/// number it needs): in a fresh block, 64 lone requests take 64 different slots and two full
/// warps take one half each, instead of all racing for the lowest free bits. An owner whose
/// atomic left free slots in its block tries them again next round (its atomic returned the
/// word: no load); the other lanes walk: the collaborative random walk over active[t], each lane
/// in need and as many helpers finding a block with room, found slots pooled, one atomic per
/// block; a block found with room left becomes the hint. When every walker saw active[t] empty,
/// the leader opens a free block for the lanes still waiting (its spare slots become the hint),
/// or decides that the heap is full (heap_is_full). No counter of slots is kept anywhere: the
/// blocks' own words are the only reservation.
SHOAL_DEVICE inline void* allocate(const heap_view& h, std::uint32_t t) {
  const arch::lane_mask group = arch::match_any(arch::active_lanes(), t);
  const int leader = arch::lowest_bit(group);
  const std::uint32_t capacity = h.capacity[t];
  std::uint32_t& hint = current_block(h, t);
  const bitmap_ref active = h.active(t);
  const int start = arch::warp_slot() * arch::popc(group);

  void* result = nullptr;
  bool needs = true;  // no slot for this lane yet
  std::uint32_t rounds = 0;  // for SHOAL_ALLOCATOR_PROBES only
  std::uint32_t unsure = 0;  // leader: see full_patience
  // This lane's candidate: a block of t (bitmap_npos: none) and the free slots it was seen with.
  std::uint64_t b = bitmap_npos, seen = 0;
  if (arch::lane_id() == leader) {
    const std::uint32_t c = arch::load_relaxed(hint);
    if (c != 0) b = c - 1, seen = arch::load_relaxed(h.headers[b].free_slots);
  }
  walk_rng rng = walk_rng::for_this_lane(reinterpret_cast<std::uintptr_t>(&rng) + t);
  for (std::uint32_t round = 0;; ++round) {
    if (round > 0) {
      // The walk, by the lanes without a candidate: those in need and as many helpers.
      const arch::lane_mask needers = arch::ballot(group, needs);
      const arch::lane_mask idle = group & ~needers & arch::ballot(group, b == bitmap_npos);
      const bool walks = b == bitmap_npos && (needs || arch::rank_in(idle) < arch::popc(needers));
      if (walks) {
        b = active.find_random_once(rng);
        seen = b == bitmap_npos ? 0 : arch::load_relaxed(h.headers[b].free_slots);
      }
    }
    rounds += needs;
    std::uint64_t* word = b == bitmap_npos ? nullptr : &h.headers[b].free_slots;
    // Relaxed on the GPU: an acquire would invalidate the processor's L1 at every allocation (a do-all
    // that allocates loses its cached fields). What the claim must see is the block's type,
    // published by the release that stored the word's value that the atomic read: the type is
    // read after the atomic's result is known (ordered_after), at the L2 as the atomic was.
    const claim_result c = claim_pooled<!gpu_backend>(group, needs, word, seen, start);
    bool type_ok = true;
    if (c.claimed() != 0) {
      // The block may have been emptied, returned and re-typed since it was seen. Our atomic
      // holds slots now, so it cannot change type any more: check.
      const std::uint32_t bt = arch::load_relaxed(*arch::ordered_after(&h.headers[b].type, c.previous));
      if (bt != t) {
        type_ok = false;
        hand_back_foreign(h, b, bt, c.claimed(), c.emptied_word());
      } else if (c.emptied_word()) {
        active.clear(b);  // full → no room: we own the transition
      } else if (round > 0) {
        arch::store_relaxed(hint, static_cast<std::uint32_t>(b + 1));  // room left: fill it next
      }
    }
    const int src = c.owner >= 0 ? c.owner : arch::lane_id();
    const bool owner_ok = arch::shuffle(group, type_ok, src);
    const std::uint64_t owner_block = arch::shuffle(group, b, src);
    if (c.obtained && owner_ok) {
      result = reinterpret_cast<void*>(encode_pointer(h.block(owner_block), c.bit, capacity, t));
      needs = false;
    }
    // An owner keeps its block while its atomic saw free slots left there; the rest walk anew.
    const std::uint64_t left = c.handed != 0 && type_ok ? c.previous & ~c.handed : 0;
    if (left != 0) seen = left;
    else b = bitmap_npos;
    const arch::lane_mask pending = arch::ballot(group, needs);
    if (pending == 0) break;
    // A fresh block only when every walker found nothing and active[t] is empty: spare slots
    // are used before blocks are opened, so a model's births fill the holes its deaths leave
    // (opening after one walk probe made full-warp allocation 2.3× faster on the H100, but left
    // blocks part-empty: Wa-Tor 0.92 against 0.64 s, traffic 4.1 s). A probe that met a word
    // emptied under it walks again, without a pause.
    bool try_open = false;
    if (round > 0 && arch::ballot(group, word != nullptr || b != bitmap_npos) == 0) {
      bool empty = false;
      if (arch::lane_id() == leader) empty = active.empty();
      try_open = arch::shuffle(group, empty, leader);
    }
    if (!try_open) continue;
    // A fresh block, or the decision that the heap is full.
    std::uint32_t count = 0;
    std::uint64_t block = bitmap_npos;
    step s = step::retry;
    if (arch::lane_id() == leader) s = open_or_decide_full(h, t, arch::popc(pending), rng, unsure, count, block);
    s = static_cast<step>(arch::shuffle(group, static_cast<int>(s), leader));
    if (s == step::full) {
      if (arch::lane_id() == leader) record_failed_allocations(h, t, arch::popc(pending));
      break;
    }
    if (s == step::opened) {
      count = arch::shuffle(group, count, leader);
      block = arch::shuffle(group, block, leader);
      const std::uint32_t rank = static_cast<std::uint32_t>(arch::rank_in(pending));
      if (needs && rank < count) {
        result = reinterpret_cast<void*>(encode_pointer(h.block(block), rank, capacity, t));
        needs = false;
      }
      if (arch::ballot(group, needs) == 0) break;
    }
  }
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
    release_slots(h, b, type_of(bits), slots, /*destroyed=*/true);
    arch::count_destroy();  // a do-all visit in this warp reads its next snapshot word again
  }
}

}  // namespace shoal::detail
