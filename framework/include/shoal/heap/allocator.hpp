#pragma once
/// @file
/// Device-side allocation and deallocation of object slots (DESIGN §5).
///
/// Protocol invariants (exact after quiescence, see runtime::verify()):
///   free[b]         ⇔ block b is free (type no_type, free_slots 0)
///   allocated[t][b] ⇔ block b belongs to type t
///   active[t][b]    ⇔ block b belongs to t and free_slots != 0
/// Every change of free_slots between zero and non-zero is made by one atomic, and the thread
/// whose atomic made it owns the matching change of active[t][b] and performs it as a flip
/// (bitmap_ref::flip_owned_bits), so the pairs can never be lost, whatever the interleaving.

#include <cstdint>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/bitmap/bitmap_ref.hpp"
#include "shoal/bitmap/warp_claim.hpp"
#include "shoal/heap/heap_view.hpp"

/// Probe counting for benchmarks (bench/alloc_probe_bench.cpp defines it before including
/// Shoal): called by every lane leaving allocate() with the rounds it took part in — its passes
/// over a stock's published generations, one more for each wait for a generation to be published
/// and for each other stock it tried — and whether it got a slot. Empty by
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
/// Flips block b's bit in active[t]: whoever turns b's free_slots from zero to non-zero or back
/// owns that transition of the bit. Flips, not waiting sets and clears, so that nobody waits for
/// a transition owed by another lane; a flip that overtakes the one before it leaves the bit
/// wrong until that one lands, and only the owner of a transition to "no room" can be overtaken
/// (by a destroy that gives slots back): it brackets that time as a block operation, so that
/// heap_is_full() does not take the missing bit for a full heap.
SHOAL_DEVICE SHOAL_FORCEINLINE void flip_active(const heap_view& h, std::uint32_t t, std::uint64_t b) {
  h.active(t).flip_owned_bits(b / 64, std::uint64_t{1} << (b % 64));
}
/// Gives `bits` of block b (of type t) back; true when the block is now entirely free (the caller
/// then owes return_if_empty()). Used by destroy (`destroyed`: the slots held objects) and by an
/// allocation that found the block re-typed under its feet (the slots were never used).
SHOAL_DEVICE inline bool give_back_slots(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                         std::uint64_t bits, bool destroyed) {
  block_header& hdr = h.headers[b];
  // A destroyed object must never be visited by a do-all in progress, even once its slot holds a
  // new object: take it out of the do-all snapshot before the slot can be reused.
  if (destroyed) {  // both ordered by the release below
    arch::and_relaxed(h.snapshots[b], ~bits);
    arch::and_relaxed(h.live[b], ~bits);
  }
  // Release: the destructor's writes (and the snapshot's) before the slots can be claimed again.
  // Not acquire: it reads nothing that others published (see allocate()).
  const std::uint64_t prev = arch::fetch_or_release(hdr.free_slots, bits);
  if (prev == 0) flip_active(h, t, b);  // full → has room: we own the transition
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
  flip_active(h, t, b);  // has room → none: ours (the CAS emptied free_slots)
  h.allocated(t).flip_owned_bits(b / 64, std::uint64_t{1} << (b % 64));  // opened by a flip too
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
SHOAL_DEVICE SHOAL_NOINLINE inline void return_if_empty(const heap_view& h, std::uint64_t b) {
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

/// Makes the spare slots `free` of a block that parallel_new opened for t findable: relaxed,
/// without the fences that concurrent claims need (parallel_new has the heap to itself, and its
/// launch's barrier publishes what it opened).
template <bool Bulk = true>
SHOAL_DEVICE inline void offer_spare_slots(const heap_view& h, std::uint64_t b, std::uint32_t t,
                                           std::uint64_t free) {
  static_assert(Bulk, "only parallel_new opens blocks with spare slots");
  if (free == 0) return;
  h.active(t).mark_bits(b / 64, std::uint64_t{1} << (b % 64));
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

/// A prepare of type t took `bits` of block b, which turned out to be of type `bt` (it was
/// emptied, returned and reopened since the walk saw it in active[t]): give them back exactly as
/// an allocation and a destroy of type bt would, inside a block operation, as those slots were
/// findable nowhere for a moment.
SHOAL_DEVICE SHOAL_NOINLINE inline void hand_back_foreign(const heap_view& h, std::uint64_t b, std::uint32_t bt,
                                           std::uint64_t bits, bool emptied_word) {
  enter_block_operation(h, bt);
  if (emptied_word) flip_active(h, bt, b);
  if (give_back_slots(h, b, bt, bits, false)) return_if_empty(h, b);
  leave_block_operation(h, bt);
}

// ---- Allocation: per-(class, processor) stocks of reserved slots (DESIGN §5) ----
//
// A request takes an index from its stock's counter (one atomicAdd per group of lanes, which
// cannot fail); consecutive ranges of indices are generations, published in a ring, each standing
// for slots reserved ahead: the holes of a few blocks (all free slots of a block taken with one
// exchange), a run of fresh blocks, or both (the holes first). The lane whose index is the middle
// of generation g prepares g + 1 at once, so generations are published before they are needed.
// Stocks keep what they reserved from launch to launch: a reserved slot is neither free nor live
// (heap_view::live), so no do-all visits it. Reservations that no request took go back at the
// runtime's next wait or read of the heap (runtime::settle_stocks: flush_if_used, in a kernel of
// its own), after which counts, checkpoints and verify() see an exact heap.

/// Fields of stock_generation::head.
enum class generation_kind : std::uint32_t { empty = 0, holes = 1, fresh = 2, full = 3 };
SHOAL_HD inline std::uint64_t make_head(std::uint32_t g, generation_kind k, std::uint32_t count, std::uint32_t start) {
  return (static_cast<std::uint64_t>(g & 0xFFFFu) << 48) | (static_cast<std::uint64_t>(k) << 46) |
         (static_cast<std::uint64_t>(count & 0x3FFFu) << 32) | start;
}
SHOAL_HD inline std::uint32_t head_start(std::uint64_t head) { return static_cast<std::uint32_t>(head); }
SHOAL_HD inline std::uint32_t head_count(std::uint64_t head) { return static_cast<std::uint32_t>(head >> 32) & 0x3FFFu; }
SHOAL_HD inline generation_kind head_kind(std::uint64_t head) { return static_cast<generation_kind>((head >> 46) & 3u); }
/// How much newer the generation in the entry is than g: < 0 not published yet, 0 it is g.
SHOAL_HD inline int head_age(std::uint64_t head, std::uint32_t g) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(head >> 48) - static_cast<std::uint16_t>(g));
}

/// stock_generation::prefix: the indices before record q (1 to 5), 9 bits each, 511 for a
/// record the generation does not have; then, in bits 45 to 47, which record is a fresh run
/// (7: none). Hole records come first and a fresh run, if any, last, so every "before" is at
/// most 5 × 64 indices.
inline constexpr std::uint64_t no_record = 511;
inline constexpr int no_fresh_record = 7;
SHOAL_HD inline std::uint32_t prefix_before(std::uint64_t prefix, int q) {
  return q == 0 ? 0u : static_cast<std::uint32_t>((prefix >> (9 * (q - 1))) & no_record);
}
SHOAL_HD inline int fresh_record(std::uint64_t prefix) { return static_cast<int>((prefix >> 45) & 7u); }
/// A prefix with no records after the first and none of them fresh.
inline constexpr std::uint64_t empty_prefix = ~std::uint64_t{0};
SHOAL_HD inline std::uint64_t with_record(std::uint64_t prefix, int q, std::uint32_t before) {
  return (prefix & ~(no_record << (9 * (q - 1)))) | (std::uint64_t{before} << (9 * (q - 1)));
}
SHOAL_HD inline std::uint64_t with_fresh_record(std::uint64_t prefix, int q) {
  return (prefix & ~(std::uint64_t{7} << 45)) | (static_cast<std::uint64_t>(q) << 45);
}
/// The record that holds index d of the generation, and the indices before it (`before`).
SHOAL_HD inline int record_of(std::uint64_t prefix, std::uint32_t d, std::uint32_t& before) {
  int q = 0;
  before = 0;
#pragma unroll
  for (int k = 1; k < stock_hole_blocks; ++k) {
    const std::uint32_t c = prefix_before(prefix, k);
    if (c != no_record && c <= d) q = k, before = c;
  }
  return q;
}
/// The records of a generation.
SHOAL_HD inline int generation_records(std::uint64_t prefix) {
  int n = 1;
  while (n < stock_hole_blocks && prefix_before(prefix, n) != no_record) ++n;
  return n;
}

/// An entry's head and prefix, for a reader looking for generation g: on the GPU one 16-byte load
/// through the L1 and, if its tag is not g's (an older generation's line, or a generation that
/// another processor wrote), one at the L2.
struct generation_header {
  std::uint64_t head, prefix;
};
SHOAL_DEVICE SHOAL_FORCEINLINE generation_header read_header(const stock_generation& e, std::uint32_t g) {
#if defined(__CUDA_ARCH__)
  ulonglong2 v = __ldca(reinterpret_cast<const ulonglong2*>(&e.head));
  if (head_age(v.x, g) != 0)
    asm volatile("ld.relaxed.gpu.v2.u64 {%0, %1}, [%2];" : "=l"(v.x), "=l"(v.y) : "l"(&e.head) : "memory");
  return {v.x, v.y};
#else
  (void)g;
  const std::uint64_t head = arch::load_acquire(e.head);
  return {head, arch::load_relaxed(e.prefix)};
#endif
}
/// Record q of generation g, whose head the caller has seen: written before the head, so at the
/// L2 it is g's; only an L1 line from an older generation of the entry is read again.
SHOAL_DEVICE SHOAL_FORCEINLINE stock_record read_record(const stock_generation& e, int q, std::uint32_t g) {
#if defined(__CUDA_ARCH__)
  uint4 v = __ldca(reinterpret_cast<const uint4*>(&e.records[q]));
  for (arch::spin_watch w; v.x != g;) {
    asm volatile("ld.relaxed.gpu.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(&e.records[q])
                 : "memory");
    if (v.x != g) arch::spin_wait(w, "read_record: a record of a published generation");
  }
  return {v.x, v.y, (static_cast<std::uint64_t>(v.w) << 32) | v.z};
#else
  for (arch::spin_watch w; arch::load_acquire(e.records[q].tag) != g;)
    arch::spin_wait(w, "read_record: a record of a published generation");
  return {g, arch::load_relaxed(e.records[q].block), arch::load_relaxed(e.records[q].mask)};
#endif
}
/// Writes record q of generation g (before its head): one 16-byte store on the GPU, so that a
/// reader that sees the tag sees the rest.
SHOAL_DEVICE SHOAL_FORCEINLINE void write_record(stock_generation& e, int q, std::uint32_t g, std::uint32_t block,
                                                 std::uint64_t mask) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.relaxed.gpu.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(&e.records[q]), "r"(g), "r"(block),
               "r"(static_cast<std::uint32_t>(mask)), "r"(static_cast<std::uint32_t>(mask >> 32))
               : "memory");
#else
  arch::store_relaxed(e.records[q].block, block);
  arch::store_relaxed(e.records[q].mask, mask);
  arch::store_release(e.records[q].tag, g);
#endif
}

/// Indices that a "full" generation answers with nullptr before the next prepare looks again:
/// a stock that found the heap full revives after that many more requests once objects are
/// freed, and a request never waits for a heap that has no room.
inline constexpr std::uint32_t full_generation = 256;
/// The longest run of fresh blocks one generation opens (one leaf word of the free bitmap).
inline constexpr std::uint32_t max_fresh_run = 64;
/// Prepares give up looking for room after this many rounds that saw room but found none
/// (others took it first each time) and publish a full generation: no request waits without bound.
inline constexpr std::uint32_t max_prepare_rounds = 1024;
/// stock::exhausted_at of a stock that has not found the heap full since its last good generation.
inline constexpr std::uint32_t not_exhausted = 0xFFFFFFFFu;

/// Puts a stock at rest: nothing reserved, generation 0 published and empty, every other entry
/// holding an older generation (not yet published) whose readers are all done.
SHOAL_DEVICE inline void reset_stock(stock& s) {
  for (std::uint32_t e = 0; e < stock_ring; ++e) {
    arch::store_relaxed(s.ring[e].head, make_head(e == 0 ? 0u : e - stock_ring, generation_kind::empty, 0, 0));
    arch::store_relaxed(s.ring[e].prefix, ~std::uint64_t{0});
    for (int q = 0; q < stock_hole_blocks; ++q) arch::store_relaxed(s.ring[e].records[q].tag, ~0u);
    arch::store_relaxed(s.done[e], 0ull);
  }
  arch::store_relaxed(s.next, 0u);
  arch::store_relaxed(s.newest, 0u);
  arch::store_relaxed(s.dirty, 0u);
  arch::store_relaxed(s.exhausted_at, not_exhausted);
}

/// The fresh run every prepare that opens blocks takes: an eighth of the blocks over all stocks
/// of a class (so that stocks hold a bounded part of a small heap), at most one leaf word of the
/// free bitmap. Always that long: a prepare is a chain of round trips to the L2 that take µs each
/// inside a busy do-all (40 µs a prepare, H200), and runs that doubled from one block made a
/// burst of births wait for one prepare per doubling (births alone at 10% of 10^6: a chain of 3
/// to 4 prepares per stock). What a launch leaves of a run goes back at the next settle.
SHOAL_DEVICE inline std::uint32_t fresh_run_cap(const heap_view& h) {
  const std::uint64_t share = h.blocks / (8ull * h.stocks_per_type);
  return share < 1 ? 1u : share > max_fresh_run ? max_fresh_run : static_cast<std::uint32_t>(share);
}

/// What a prepare reserved: holes, a fresh run, or both (a generation of kind fresh whose hole
/// records come before its run).
struct reservation {
  generation_kind kind = generation_kind::full;
  std::uint32_t count = 0;
  std::uint32_t word = 0;  // fresh
  std::uint64_t run = 0;   // fresh
  bool sparse = false;     // holes not worth a generation alone: a fresh run goes with them
  int holes = 0;
  std::uint64_t hole_word = 0;   // holes: the leaf word of active[t] that holds the blocks
  std::uint64_t hole_bits = 0;   // holes: their bits there, cleared after publishing
  std::uint32_t blocks[stock_hole_blocks] = {};
  std::uint64_t masks[stock_hole_blocks] = {};
};

/// Blocks whose free slots a holes probe looks at (their free-slot words are read first, all
/// together, and only those worth taking are exchanged).
inline constexpr int hole_candidates = 2 * stock_hole_blocks;

/// Holes: one probe of active[t] (the random walk over its levels), and in the leaf word found
/// the whole free-slot words of up to `max_blocks` blocks taken with one exchange each (issued
/// together). An exchange that emptied a word owns clearing the block's active bit; a block that
/// turned out to be another class's (emptied, returned and reopened since active[t] was read)
/// gets its slots back as that class's.
///
/// The candidates' free-slot words are read first. Holes are worth a generation of their own
/// in blocks with at least an eighth of their slots free, together at least half a block; a
/// prepare costs a random walk and two round trips to the L2, and a stock's requests wait for it
/// once the generation before is used up: under a burst of births, generations of one or two
/// holes (agents that leave one at a time, like traffic's cars) make the prepares a serial
/// chain that every birth waits on. Without such blocks, the holes found are marked `sparse`.
SHOAL_DEVICE inline void take_holes(const heap_view& h, std::uint32_t t, walk_rng& rng, int max_blocks,
                                    reservation& r) {
  const bitmap_ref active = h.active(t);
  std::uint64_t bits = 0;
  const std::uint64_t w = active.random_leaf(rng, bits);
  if (w == bitmap_npos) return;
  std::uint64_t pick = arch::set_bits_from(bits, hole_candidates, static_cast<int>(rng.next() & 63));
  const std::uint32_t capacity = h.capacity[t];
  std::uint32_t candidate[hole_candidates];
  int holes[hole_candidates];
  int c = 0;
  for (; pick != 0 && c < hole_candidates; pick &= pick - 1, ++c) {
    candidate[c] = static_cast<std::uint32_t>(w * 64 + arch::lowest_bit(pick));
    holes[c] = arch::popc(arch::load_relaxed(h.headers[candidate[c]].free_slots));
  }
  const int dense = capacity / 8 > 1 ? static_cast<int>(capacity / 8) : 1;
  std::uint32_t worth = 0;
  for (int i = 0, n = 0; i < c && n < max_blocks; ++i)
    if (holes[i] >= dense) worth += static_cast<std::uint32_t>(holes[i]), ++n;
  const bool sparse = 2 * worth < capacity;
  const int least = sparse ? 1 : dense;
  std::uint32_t block[stock_hole_blocks];
  int n = 0;
  for (int i = 0; i < c && n < max_blocks; ++i)
    if (holes[i] >= least) block[n++] = candidate[i];
  if (n == 0) return;
  // Until the blocks' active bits are flipped (the caller does it, after publishing), a destroy
  // that gives slots back may flip them first, and they read "no room" meanwhile (flip_active).
  enter_block_operation(h, t);
  std::uint64_t taken[stock_hole_blocks];
  // On the GPU the exchanges are relaxed, issued together, and one fence makes them acquire
  // (the destroys' writes before the slots are handed out): each acquire-release exchange waited
  // for the one before it, a round trip to the L2 of several µs in a do-all full of births and
  // deaths. (ThreadSanitizer does not see fences: the cpu backend keeps its acquiring exchanges.)
  if constexpr (gpu_backend) {
    for (int i = 0; i < n; ++i) taken[i] = arch::exchange_relaxed(h.headers[block[i]].free_slots, std::uint64_t{0});
    arch::fence_acq_rel();
  } else {
    for (int i = 0; i < n; ++i) taken[i] = arch::exchange(h.headers[block[i]].free_slots, std::uint64_t{0});
  }
  for (int i = 0; i < n; ++i) {
    if (taken[i] == 0) continue;  // full, or free, or being returned: nothing was there
    const std::uint32_t bt = arch::load_relaxed(h.headers[block[i]].type);  // stable: we hold slots
    if (bt != t) {
      hand_back_foreign(h, block[i], bt, taken[i], /*emptied_word=*/true);
      continue;
    }
    r.hole_bits |= std::uint64_t{1} << (block[i] % 64);
    r.blocks[r.holes] = block[i];
    r.masks[r.holes] = taken[i];
    r.count += static_cast<std::uint32_t>(arch::popc(taken[i]));
    ++r.holes;
  }
  if (r.holes > 0) r.kind = generation_kind::holes, r.hole_word = w, r.sparse = sparse;
  else leave_block_operation(h, t);
}

/// Fresh blocks: a run of up to `want` free blocks of one leaf word of the free bitmap, claimed
/// with one atomic, typed for t with every slot reserved (free_slots stays 0, so they are not in
/// active[t]). Their allocated[t] bits are set after publishing (open_run_bookkeeping).
SHOAL_DEVICE inline void take_fresh(const heap_view& h, std::uint32_t t, walk_rng& rng, std::uint32_t want,
                                    reservation& r) {
  const bitmap_ref free = h.free_blocks();
  std::uint64_t bits = 0;
  const std::uint64_t w = free.random_leaf(rng, bits);
  if (w == bitmap_npos) return;
  const std::uint64_t got = free.take_bits(w, arch::lowest_set_bits(bits, static_cast<int>(want)));
  if (got == 0) return;
  arch::add_relaxed(free_block_count(h), -static_cast<long long>(arch::popc(got)));
  for (std::uint64_t p = got; p != 0; p &= p - 1) {
    const std::uint64_t b = w * 64 + arch::lowest_bit(p);
    arch::store_relaxed(h.headers[b].type, t);  // before publishing: a destroy reads it
    arch::store_relaxed(h.snapshots[b], std::uint64_t{0});
  }
  r.kind = generation_kind::fresh;
  r.word = static_cast<std::uint32_t>(w);
  r.run = got;
  r.count += static_cast<std::uint32_t>(arch::popc(got)) * h.capacity[t];
}

/// How far a prepare got, kept in stock::prepare_stage (generation << 8 | step) by
/// SHOAL_SPIN_WATCHDOG builds only, for the report of a request that waits long
/// (report_long_wait): whether the generation it waits for is being prepared, and where.
enum class prepare_step : std::uint32_t { entered = 1, readers_done = 2, reserved = 3, published = 4, done = 5 };
SHOAL_DEVICE SHOAL_FORCEINLINE void note_prepare(stock& s, std::uint32_t g, prepare_step step) {
#if defined(SHOAL_SPIN_WATCHDOG)
  arch::store_relaxed(s.prepare_stage, (g << 8) | static_cast<std::uint32_t>(step));
#else
  (void)s, (void)g, (void)step;
#endif
}

/// Prepares generation g of stock s (index `start` on): the caller holds index prepare_at() of
/// g - 1, so it is g's only preparer, and g - 1's preparer has published. Holes (take_holes says
/// which), a fresh run with the holes found in front of it, or a full generation when neither
/// exists (heap_is_full, the epoch rule). `group_end` ends the caller's group's indices: their
/// requests do not count as others waiting.
SHOAL_DEVICE SHOAL_NOINLINE inline void prepare_generation(const heap_view& h, std::uint32_t t, std::uint32_t id, std::uint32_t g,
                                            std::uint32_t start, std::uint32_t group_end) {
  stock& s = h.stocks[id];
  stock_generation& e = s.ring[g % stock_ring];
  note_prepare(s, g, prepare_step::entered);
  arch::fence_acq_rel();  // acquire: what the previous preparer wrote before publishing its head
  // The entry's previous generation must have been read by every lane whose index fell in it.
  const std::uint32_t readers = head_count(arch::load_relaxed(e.head));
  for (arch::spin_watch w; arch::load_relaxed(s.done[g % stock_ring]) != readers;)
    arch::spin_wait(w, "prepare_generation: readers of the entry's previous generation");
  arch::store_relaxed(s.done[g % stock_ring], 0ull);
  arch::store_relaxed(s.dirty, 1u);  // the next settle looks at this stock
  note_prepare(s, g, prepare_step::readers_done);

  walk_rng rng = walk_rng::for_this_lane(static_cast<std::uint64_t>(g) * 0x2545F4914F6CDD1Dull + id);
  // Requests of other groups (warps) already waiting for g: a burst of births, which small
  // generations of scattered holes would serve one prepare (a random walk and two round trips to
  // the L2) at a time. The preparer's own group (indices below group_end) does not count.
  const std::uint32_t mine = static_cast<std::int32_t>(group_end - start) > 0 ? group_end : start;
  const auto waiting = static_cast<std::int32_t>(arch::load_relaxed(s.next) - mine);
  const bool busy = waiting > 0;
  reservation r;
  std::uint32_t unsure = 0;
  for (std::uint32_t round = 0;; ++round) {
    // Any holes while no other request waits for this generation, or when no free block is
    // left. While others wait (`busy`), one probe: holes worth a generation of their own make
    // one; sparse holes go in front of a fresh run (its record last). A second probe for better
    // holes cost as much as the first (20 µs inside a do-all of births and deaths, H200).
    const bool no_free = h.free_blocks().empty();
    const bool mix = busy && !no_free;
    for (int probe = 0; probe < (mix ? 1 : 4) && r.holes == 0 && !h.active(t).empty(); ++probe)
      take_holes(h, t, rng, mix ? stock_hole_blocks - 1 : stock_hole_blocks, r);
    if (r.holes > 0 && !(r.sparse && mix)) break;
    if (!h.free_blocks().empty()) {
      take_fresh(h, t, rng, fresh_run_cap(h), r);
      if (r.run != 0) break;
    }
    if (r.holes > 0) break;  // sparse holes, and the free blocks went meanwhile
    const fullness f = heap_is_full(h, t);
    if (f == fullness::full || (f == fullness::unsure && ++unsure >= full_patience) || round >= max_prepare_rounds) {
      r.kind = generation_kind::full;
      r.count = full_generation;
      break;
    }
    arch::spin_pause();
  }

  note_prepare(s, g, prepare_step::reserved);
  // Publish: the records and the prefix, then the head (release). Holes first, then the run.
  std::uint64_t prefix = empty_prefix;
  if (r.kind != generation_kind::full) {
    std::uint32_t before = 0;
    int q = 0;
    for (; q < r.holes; ++q) {
      if (q > 0) prefix = with_record(prefix, q, before);
      write_record(e, q, g, r.blocks[q], r.masks[q]);
      before += static_cast<std::uint32_t>(arch::popc(r.masks[q]));
    }
    if (r.run != 0) {
      if (q > 0) prefix = with_record(prefix, q, before);
      prefix = with_fresh_record(prefix, q);
      write_record(e, q, g, r.word, r.run);
    }
  }
  arch::store_relaxed(e.prefix, prefix);
  // Where the stock's requests start failing (see stock_may_serve), set before the full
  // generation is published so that a look at the stock never misses it.
  const std::uint32_t exhausted = arch::load_relaxed(s.exhausted_at);
  if (r.kind == generation_kind::full && exhausted == not_exhausted) arch::store_relaxed(s.exhausted_at, start);
  if (r.kind != generation_kind::full && exhausted != not_exhausted) arch::store_relaxed(s.exhausted_at, not_exhausted);
  arch::store_release(e.head, make_head(g, r.kind, r.count, start));
  arch::store_relaxed(s.newest, g);
  note_prepare(s, g, prepare_step::published);
  // After publishing, off the requests' path: a fresh run's blocks join allocated[t] (one atomic
  // for the run's leaf word). Nothing can return them before: every slot is reserved or in use.
  if (r.run != 0) h.allocated(t).flip_owned_bits(r.word, r.run);
  // Likewise the holes' blocks leave active[t] (their free-slot words are 0 now): one atomic for
  // the leaf word. Meanwhile a prepare that picks one of them takes nothing from it.
  if (r.holes > 0) {
    h.active(t).flip_owned_bits(r.hole_word, r.hole_bits);
    leave_block_operation(h, t);  // entered by take_holes
  }
  note_prepare(s, g, prepare_step::done);
}

/// The index of a generation (kind and count in `head`) whose lane prepares the next one: the
/// middle of a generation of slots, so that the lane that opens a launch's first generation does
/// not prepare the second one right after it (two prepares in a row for its warp), and the stock
/// reserves ahead only once half of what it holds is handed out; the first index of an empty or
/// a full generation (nothing to wait for).
SHOAL_HD inline std::uint32_t prepare_at(std::uint64_t head) {
  const generation_kind k = head_kind(head);
  return k == generation_kind::holes || k == generation_kind::fresh ? head_count(head) / 2 : 0u;
}

/// Slot `slot` of block b now holds an object (heap_view::live): one reduction, which nobody
/// waits for. A do-all lists its blocks in a later launch, and a destroy of the object clears the
/// bit after this lane handed the pointer on. (take_from_stock marks its group's slots itself,
/// one reduction per block.)
SHOAL_DEVICE SHOAL_FORCEINLINE void* mark_live(const heap_view& h, std::uint64_t b, std::uint32_t slot, std::uint32_t t) {
  arch::or_relaxed(h.live[b], std::uint64_t{1} << slot);
  return reinterpret_cast<void*>(encode_pointer(h.block(b), slot, h.capacity[t], t));
}

/// The object of index d of generation g (entry `e`), whose header the caller has read, and its
/// block and slot.
SHOAL_DEVICE inline void* slot_of_generation(const heap_view& h, std::uint32_t t, const stock_generation& e,
                                             const generation_header& hd, std::uint32_t g, std::uint32_t d,
                                             std::uint64_t& block, std::uint32_t& slot) {
  const std::uint32_t capacity = h.capacity[t];
  std::uint32_t before = 0;
  const int q = record_of(hd.prefix, d, before);
  const stock_record r = read_record(e, q, g);
  d -= before;
  if (q == fresh_record(hd.prefix)) {
    block = std::uint64_t{r.block} * 64 + static_cast<std::uint64_t>(arch::nth_set_bit(r.mask, static_cast<int>(d / capacity)));
    slot = d % capacity;
  } else {
    block = r.block;
    slot = static_cast<std::uint32_t>(arch::nth_set_bit(r.mask, static_cast<int>(d)));
  }
  return reinterpret_cast<void*>(encode_pointer(h.block(block), slot, capacity, t));
}

/// A full generation g of stock s, ending at index `end`, that outlived the heap's fullness: stocks
/// keep their generations from launch to launch, and objects may have been destroyed since. Each of
/// its remaining indices would answer nullptr, and the generation after it (prepared by whoever
/// gets the first index past g) would be reached only after them all: with 256 such indices per
/// stock, a launch that refills freed slots got hundreds of nullptrs. So a lane that lands in such
/// a generation takes the rest of it in one exchange (none of those indices is a preparer's: a full
/// generation's is its first) and counts them as read. Off the fast path.
SHOAL_DEVICE SHOAL_NOINLINE inline void skip_stale_full(const heap_view& h, std::uint32_t t, stock& s, std::uint32_t g,
                                                        std::uint32_t end) {
  if (h.active(t).empty() && h.free_blocks().empty()) return;  // still full: the generation stands
  std::uint32_t n = arch::load_relaxed(s.next);
  while (static_cast<std::int32_t>(end - n) > 0) {
    if (arch::compare_exchange(s.next, n, end)) {
      if constexpr (gpu_backend) arch::add_relaxed(s.done[g % stock_ring], static_cast<unsigned long long>(end - n));
      else arch::fetch_add_release(s.done[g % stock_ring], static_cast<unsigned long long>(end - n));
      return;
    }
  }
}

/// The group's slots are live (heap_view::live): one reduction per block (a full warp's slots are
/// mostly in one), which nobody waits for.
SHOAL_DEVICE SHOAL_FORCEINLINE void mark_group_live(const heap_view& h, arch::lane_mask group, const void* result,
                                                    std::uint64_t block, std::uint32_t slot) {
  const arch::lane_mask got = arch::ballot(group, result != nullptr);
  if (result != nullptr) {
    const arch::lane_mask same = arch::match_any(got, block);
    const std::uint64_t bits = arch::reduce_or(same, std::uint64_t{1} << slot);
    if (arch::lane_id() == arch::lowest_bit(same)) arch::or_relaxed(h.live[block], bits);
  }
}

/// Counts the lanes of `counting` out of the generation g each read (before any prepare of this
/// warp waits for readers). The add waits for the reads: its address depends on what they gave.
SHOAL_DEVICE SHOAL_FORCEINLINE void count_readers(stock& s, arch::lane_mask counting, bool served, std::uint32_t g,
                                                  const void* result) {
  if (!served) return;
  const arch::lane_mask same = arch::match_any(counting, g);
  if (arch::lowest_bit(same) == arch::lane_id()) {
    unsigned long long& done = *arch::ordered_after(&s.done[g % stock_ring], reinterpret_cast<std::uintptr_t>(result));
    if constexpr (gpu_backend) arch::add_relaxed(done, static_cast<unsigned long long>(arch::popc(same)));
    else arch::fetch_add_release(done, static_cast<unsigned long long>(arch::popc(same)));
  }
}

/// What take_from_generations gives each lane: its slot (nullptr if `failed`), and the rounds it
/// took (SHOAL_ALLOCATOR_PROBES). Returned by value: out parameters would live in local memory.
struct taken {
  void* result;
  std::uint32_t rounds;
  bool failed;
};

/// SHOAL_SPIN_WATCHDOG builds: a request of index j of stock `id` that has waited long for
/// generation g reports the stock's state (its counter and newest hint, the entry of g, the
/// readers counted there, how far the latest prepare got), so that a hang says whether g's
/// preparer has started and where it is.
SHOAL_DEVICE SHOAL_NOINLINE inline void report_long_wait(const stock& s, std::uint32_t id, std::uint32_t j,
                                                         std::uint32_t g, std::uint32_t pauses) {
  const std::uint64_t head = arch::load_relaxed(s.ring[g % stock_ring].head);
  const std::uint32_t stage = arch::load_relaxed(s.prepare_stage);
  printf("shoal: waits %u pauses: stock %u index %u for generation %u; next %u newest %u; entry holds %d "
         "(kind %u start %u count %u) read by %llu; latest prepare: generation %u step %u\n",
         pauses, id, j, g, arch::load_relaxed(s.next), arch::load_relaxed(s.newest),
         static_cast<int>(g) + head_age(head, g), static_cast<unsigned>(head_kind(head)), head_start(head),
         head_count(head), arch::load_relaxed(s.done[g % stock_ring]), stage >> 8, stage & 0xFFu);
}

/// take_from_stock's loop, out of line, for a group in which some lane was not served by the
/// generation that the stock's newest hint `g` names, or must prepare the next one. Lane j (the
/// group's indices start at `group_first`) finds the generation that holds j, starting from g (a
/// few head loads at most); the lane whose index is a generation's prepare_at() prepares the next
/// generation; a lane whose index lies beyond every published generation waits for it (the only
/// wait).
SHOAL_DEVICE SHOAL_NOINLINE inline taken take_from_generations(const heap_view& h, std::uint32_t t, std::uint32_t id,
                                                               arch::lane_mask group, std::uint32_t group_first,
                                                               std::uint32_t g) {
  stock& s = h.stocks[id];
  const std::uint32_t j = group_first + static_cast<std::uint32_t>(arch::rank_in(group));
  const std::uint32_t group_end = group_first + static_cast<std::uint32_t>(arch::popc(group));
  taken out{nullptr, 0, false};
  std::uint64_t block = 0;  // out.result's
  std::uint32_t slot = 0;
  bool pending = true;
  std::uint32_t stale_end = 0;  // a full generation this lane landed in past its first index
  arch::spin_watch watch;
  for (;;) {
    bool served = false, prepares = false;
    std::uint32_t next_start = 0, prepared = 0;
    if (pending) {
      ++out.rounds;
      for (std::uint32_t step = 0; step < 2 * stock_ring; ++step) {
        const stock_generation& e = s.ring[g % stock_ring];
        const generation_header hd = read_header(e, g);
        const std::uint64_t head = hd.head;
        const int age = head_age(head, g);
        if (age < 0) break;  // g is not published yet: wait for it
        if (age > 0) {       // the entry moved on (a stale hint): our generation is newer
          g += static_cast<std::uint32_t>(age);
          continue;
        }
        const std::uint32_t d = j - head_start(head);
        if (static_cast<std::int32_t>(d) < 0) {  // the hint is ahead of our index
          --g;
          continue;
        }
        const std::uint32_t count = head_count(head);
        if (d == prepare_at(head)) prepares = true, prepared = g + 1, next_start = head_start(head) + count;
        if (d < count) {
          if (head_kind(head) == generation_kind::full) out.failed = true, stale_end = d != 0 ? head_start(head) + count : 0;
          else out.result = slot_of_generation(h, t, e, hd, g, d, block, slot);
          served = true;
          pending = false;
          break;
        }
        ++g;
      }
    }
    count_readers(s, arch::ballot(group, served), served, g, out.result);
    if (prepares) prepare_generation(h, t, id, prepared, next_start, group_end);
    if (stale_end != 0) skip_stale_full(h, t, s, g, stale_end), stale_end = 0;
    if (arch::ballot(group, pending) == 0) break;
    if (pending) arch::spin_wait(watch, "take_from_generations: a generation that is not published");
#if defined(SHOAL_SPIN_WATCHDOG)
    if (pending && arch::report_at(watch.pauses)) report_long_wait(s, id, j, g, watch.pauses);
#endif
  }
  mark_group_live(h, group, out.result, block, slot);
  return out;
}

/// Where a group's request to a stock stands after its first read: `served` if every lane got its
/// slot (`result`) from that generation; otherwise the group's first index and the generation
/// read, for take_from_generations.
struct first_take {
  bool served;
  void* result;
  std::uint32_t group_first, g;
};

/// The common case of a take, inlined into every `new`: the group shares one atomicAdd on stock
/// `id`'s counter (lane j of the group owns index `old + rank`) and reads the generation that the
/// stock's newest hint names; if every lane's index lies in it and no lane must prepare the next
/// one, the group is served. Everything else (other generations, prepares, waits, full
/// generations) is out of line and starts over for the whole group (the header and record it
/// reads again are in the L1). With that loop inlined, its registers were live across the
/// do-all's loop, and every do-all whose class can make objects kept that loop's state in local
/// memory (ptxas: 528 bytes of spills in the birth-and-death do-all, 96 now; births alone at 10%
/// took 96 µs, 68 after, H200).
SHOAL_DEVICE SHOAL_FORCEINLINE first_take take_first(const heap_view& h, std::uint32_t t, std::uint32_t id,
                                                     arch::lane_mask group) {
  stock& s = h.stocks[id];
  const int leader = arch::lowest_bit(group);
  // A hint (any published generation will do; an older one costs a few more header reads).
#if defined(__CUDA_ARCH__)
  const std::uint32_t g = __ldca(&s.newest);
#else
  const std::uint32_t g = arch::load_relaxed(s.newest);
#endif
  std::uint32_t first = 0;
  if (arch::lane_id() == leader) first = arch::fetch_add_relaxed(s.next, static_cast<std::uint32_t>(arch::popc(group)));
  const std::uint32_t group_first = arch::shuffle(group, first, leader);
  const std::uint32_t j = group_first + static_cast<std::uint32_t>(arch::rank_in(group));

  const stock_generation& e = s.ring[g % stock_ring];
  const generation_header hd = read_header(e, g);
  const std::uint32_t d = j - head_start(hd.head);
  const generation_kind kind = head_kind(hd.head);
  const bool here = head_age(hd.head, g) == 0 && d < head_count(hd.head) && d != prepare_at(hd.head) &&
                    (kind == generation_kind::holes || kind == generation_kind::fresh);
  if (arch::ballot(group, !here) != 0) return {false, nullptr, group_first, g};
  std::uint64_t block = 0;  // result's
  std::uint32_t slot = 0;
  void* result = slot_of_generation(h, t, e, hd, g, d, block, slot);
  count_readers(s, group, true, g, result);
  mark_group_live(h, group, result, block, slot);
  return {true, result, group_first, g};
}

/// One slot of type t from stock `id` for every lane of `group` (all call it together); nullptr
/// and `failed` for a lane whose index fell in a full generation.
SHOAL_DEVICE inline void* take_from_stock(const heap_view& h, std::uint32_t t, std::uint32_t id,
                                          arch::lane_mask group, bool& failed, std::uint32_t& rounds) {
  const first_take f = take_first(h, t, id, group);
  if (f.served) {
    ++rounds;
    failed = false;
    return f.result;
  }
  const taken r = take_from_generations(h, t, id, group, f.group_first, f.g);
  rounds += r.rounds + 1;
  failed = r.failed;
  return r.result;
}

/// Whether stock `id` may still hand out a slot: it has not published a full generation, or
/// its counter has not reached the first one since its last good generation.
SHOAL_DEVICE inline bool stock_may_serve(const heap_view& h, std::uint32_t id) {
  const stock& s = h.stocks[id];
  const std::uint32_t exhausted = arch::load_relaxed(s.exhausted_at);
  const std::uint32_t next = arch::load_relaxed(s.next);
  return exhausted == not_exhausted || static_cast<std::int32_t>(next - exhausted) < 0;
}

/// The lanes of `failing` (all call it together), whose own stock `own` of t found the heap
/// full, try the other processors' stocks of t, which may still hold reserved slots, skipping
/// those that are exhausted too (each lane looks at one stock per round): nullptr only when no
/// stock of the class can serve. Off the fast path (not inlined into every `new`).
SHOAL_DEVICE SHOAL_NOINLINE inline void* allocate_elsewhere(const heap_view& h, std::uint32_t t, std::uint32_t own,
                                                            arch::lane_mask failing, std::uint32_t& rounds) {
  void* result = nullptr;
  bool failed = true;
  for (std::uint32_t k = 1; k < h.stocks_per_type;) {
    const std::uint32_t lanes = static_cast<std::uint32_t>(arch::popc(failing));
    const std::uint32_t mine = k + static_cast<std::uint32_t>(arch::rank_in(failing));
    const bool may = mine < h.stocks_per_type &&
                     stock_may_serve(h, t * h.stocks_per_type + (own + mine) % h.stocks_per_type);
    const arch::lane_mask candidates = arch::ballot(failing, may);
    if (candidates == 0) {
      k += lanes;
      continue;
    }
    // The first candidate: the stock looked at by the lowest lane that found one.
    const arch::lane_mask below = (arch::lane_mask{1} << arch::lowest_bit(candidates)) - 1;
    k += static_cast<std::uint32_t>(arch::popc(failing & below));
    const std::uint32_t id = t * h.stocks_per_type + (own + k) % h.stocks_per_type;
    result = take_from_stock(h, t, id, failing, failed, rounds);
    failing = arch::ballot(failing, failed);
    if (!failed) break;
    ++k;
  }
  return result;
}

/// One slot of t taken from the heap itself, for a lane that no stock could serve: the holes of
/// one block, or one fresh block, reserved and then given back but for the lane's slot, exactly
/// as a prepare and a flush do; nullptr only when heap_is_full() says so. Stocks keep what they
/// hold from launch to launch (they are settled only before the host reads the heap), so a stock
/// that found the heap full keeps its full generation while objects are destroyed: this is what
/// keeps its answers from being out of memory that is not there. Off the fast path.
SHOAL_DEVICE SHOAL_NOINLINE inline void* allocate_direct(const heap_view& h, std::uint32_t t) {
  walk_rng rng = walk_rng::for_this_lane(0x9E3779B97F4A7C15ull + t);
  std::uint32_t unsure = 0;
  for (std::uint32_t round = 0; round < max_prepare_rounds; ++round) {
    reservation r;
    if (!h.active(t).empty()) take_holes(h, t, rng, 1, r);
    if (r.holes > 0) {
      h.active(t).flip_owned_bits(r.hole_word, r.hole_bits);
      leave_block_operation(h, t);  // entered by take_holes
      const std::uint64_t mask = r.masks[0];
      const std::uint64_t rest = mask & (mask - 1);
      if (rest != 0) release_slots(h, r.blocks[0], t, rest, false);
      return mark_live(h, r.blocks[0], static_cast<std::uint32_t>(arch::lowest_bit(mask)), t);
    }
    if (!h.free_blocks().empty()) {
      take_fresh(h, t, rng, 1, r);
      if (r.run != 0) {
        const std::uint64_t b = std::uint64_t{r.word} * 64 + static_cast<std::uint64_t>(arch::lowest_bit(r.run));
        h.allocated(t).flip_owned_bits(r.word, r.run);
        void* p = mark_live(h, b, 0, t);
        if (h.capacity[t] > 1) release_slots(h, b, t, h.full_mask(t) & ~std::uint64_t{1}, false);
        return p;
      }
    }
    const fullness f = heap_is_full(h, t);
    if (f == fullness::full || (f == fullness::unsure && ++unsure >= full_patience)) break;
    arch::spin_pause();
  }
  return nullptr;
}

/// The lanes of `group` (all call it together) whose own stock `own` of t answered from a full
/// generation (`failed`) try again: twice, since a stock that skipped a stale full generation
/// (skip_stale_full) or prepared a good one meanwhile serves the second time round, each time
/// looking in the other stocks (allocate_elsewhere) and then in the heap itself (allocate_direct).
SHOAL_DEVICE inline void* allocate_after_full(const heap_view& h, std::uint32_t t, std::uint32_t own,
                                              arch::lane_mask group, bool failed, void* result, std::uint32_t& rounds) {
  arch::lane_mask left = arch::ballot(group, failed);
  if (!failed) return result;
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) result = take_from_stock(h, t, t * h.stocks_per_type + own, left, failed, rounds);
    const arch::lane_mask elsewhere = arch::ballot(left, result == nullptr);
    if (result == nullptr) {
      result = allocate_elsewhere(h, t, own, elsewhere, rounds);
      if (result == nullptr) result = allocate_direct(h, t);
    }
    const arch::lane_mask out = arch::ballot(left, result == nullptr);
    if (result != nullptr) break;
    if (attempt == 1) {
      if (arch::lane_id() == arch::lowest_bit(out)) record_failed_allocations(h, t, arch::popc(out));
      break;
    }
    left = out;
  }
  return result;
}

/// Everything of an allocation but its common case (take_first), out of line and in one call:
/// the group's take from its stock (take_from_generations), then, for lanes that it answered from
/// a full generation, allocate_after_full. Two calls from the do-alls cost them spills again.
SHOAL_DEVICE SHOAL_NOINLINE inline taken allocate_rest(const heap_view& h, std::uint32_t t, std::uint32_t own,
                                                      arch::lane_mask group, std::uint32_t group_first, std::uint32_t g) {
  taken r = take_from_generations(h, t, t * h.stocks_per_type + own, group, group_first, g);
  ++r.rounds;  // take_first's
  if (arch::ballot(group, r.failed) != 0) r.result = allocate_after_full(h, t, own, group, r.failed, r.result, r.rounds);
  return r;
}

/// Allocates one slot of type t for every calling lane; nullptr when the heap is full.
///
/// Lanes asking for the same type are served together by their processor's stock of t
/// (take_first, and allocate_rest if it could not serve them all); lanes that it cannot serve (it
/// found the heap full) look in the other stocks, then in the heap itself.
SHOAL_DEVICE inline void* allocate(const heap_view& h, std::uint32_t t) {
  const arch::lane_mask group = arch::match_any(arch::active_lanes(), t);
  const std::uint32_t own = static_cast<std::uint32_t>(arch::processor_id()) % h.stocks_per_type;
  const first_take f = take_first(h, t, t * h.stocks_per_type + own, group);
  if (f.served) {
    SHOAL_ALLOCATOR_PROBES(1u, true);
    return f.result;
  }
  const taken r = allocate_rest(h, t, own, group, f.group_first, f.g);
  SHOAL_ALLOCATOR_PROBES(r.rounds, r.result != nullptr);
  return r.result;
}

/// Gives back the reserved slots of record q of generation `e` (whose prefix is `prefix`) from
/// the generation's index `from` on: nobody took them. At quiescence (the flush, runtime::settle_stocks).
SHOAL_DEVICE inline void give_back_record(const heap_view& h, std::uint32_t t, const stock_generation& e,
                                          std::uint64_t prefix, int q, std::uint32_t from) {
  const std::uint32_t first = prefix_before(prefix, q);  // the generation's index of its first slot
  const std::uint32_t handed = from > first ? from - first : 0u;  // of this record's slots
  const std::uint64_t mask = arch::load_relaxed(e.records[q].mask);
  if (q != fresh_record(prefix)) {
    if (handed < static_cast<std::uint32_t>(arch::popc(mask)))
      release_slots(h, arch::load_relaxed(e.records[q].block), t, mask & ~arch::lowest_set_bits(mask, static_cast<int>(handed)), false);
    return;
  }
  // A fresh run: blocks that no request reached go straight back to the free blocks; the block
  // that requests reached in part gets its other slots back (and returns if they were all freed).
  const std::uint32_t capacity = h.capacity[t];
  const std::uint64_t word = arch::load_relaxed(e.records[q].block);
  std::uint64_t untouched = 0;
  std::uint32_t at = 0;
  for (std::uint64_t p = mask; p != 0; p &= p - 1, at += capacity) {
    const std::uint64_t b = word * 64 + arch::lowest_bit(p);
    if (at + capacity <= handed) continue;
    if (at >= handed) {
      arch::store_relaxed(h.headers[b].type, no_type);
      untouched |= p & (~p + 1);
    } else {
      release_slots(h, b, t, h.full_mask(t) & ~low_bits(handed - at), false);
    }
  }
  if (untouched != 0) {
    h.allocated(t).flip_owned_bits(word, untouched);
    h.free_blocks().set_bits</*Relaxed=*/false>(word, untouched);
    arch::add_relaxed(free_block_count(h), static_cast<long long>(arch::popc(untouched)));
  }
}

/// Gives back every reservation of stock `id` and puts it at rest (at quiescence). The lanes of
/// one warp share it (`lane` is the caller's), one record each: giving back a record is a chain
/// of round trips to the L2 (return_if_empty's token, the block's return), and one thread per
/// stock made the flush after traffic's births 55 µs, longer than the births (H100).
SHOAL_DEVICE SHOAL_NOINLINE inline void flush_stock(const heap_view& h, std::uint32_t id, int lane) {
  stock& s = h.stocks[id];
  const std::uint32_t t = id / h.stocks_per_type;
  const std::uint32_t next = arch::load_relaxed(s.next);
  std::uint32_t g = arch::load_relaxed(s.newest);
  while (head_age(arch::load_relaxed(s.ring[(g + 1) % stock_ring].head), g + 1) == 0) ++g;
  // Indices are handed out in order: only the newest generations hold indices nobody took.
  // Every lane reads the same (quiescent) heads, so the lanes leave the loop together.
  for (std::uint32_t k = 0; k < stock_ring; ++k, --g) {
    const stock_generation& e = s.ring[g % stock_ring];
    const std::uint64_t head = arch::load_relaxed(e.head);
    if (head_age(head, g) != 0) break;
    const std::uint32_t start = head_start(head), count = head_count(head);
    if (static_cast<std::int32_t>(start + count - next) <= 0) break;  // all taken
    const generation_kind kind = head_kind(head);
    if (kind == generation_kind::holes || kind == generation_kind::fresh) {
      const std::uint32_t from = static_cast<std::int32_t>(next - start) > 0 ? next - start : 0u;
      const std::uint64_t prefix = arch::load_relaxed(e.prefix);
      for (int q = lane; q < generation_records(prefix); q += arch::warp_width) give_back_record(h, t, e, prefix, q, from);
    }
  }
  arch::sync_lanes(~arch::lane_mask{0});  // every lane is done reading the stock's generations
  if (lane == 0) reset_stock(s);
}

/// The flush (runtime::settle_stocks, before the host reads the heap), one warp per stock: a stock that
/// prepared anything since its last flush gives back what it holds.
SHOAL_DEVICE inline void flush_if_used(const heap_view& h, std::uint32_t id, int lane) {
  if (arch::load_relaxed(h.stocks[id].dirty) != 0) flush_stock(h, id, lane);
}

/// Launches the flush of the heap's `stocks` stocks (host code): one warp each (index i is lane
/// i % warp_width of stock i / warp_width; a launch's blocks are whole warps).
inline void flush_stocks_async(const heap_view& h, std::size_t stocks) {
  constexpr auto width = static_cast<std::size_t>(arch::warp_width);
  arch::for_each_index(stocks * width, [=] SHOAL_DEVICE(std::size_t i) {
    flush_if_used(h, static_cast<std::uint32_t>(i / width), static_cast<int>(i % width));
  });
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
