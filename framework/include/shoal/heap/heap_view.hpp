#pragma once
/// @file
/// The trivially copyable description of a heap that device code works with: block array,
/// block headers and the block-state bitmaps. The owning host object is shoal::runtime.

#include <cstddef>
#include <cstdint>

#include "shoal/bitmap/bitmap_ref.hpp"
#include "shoal/heap/pointer.hpp"

namespace shoal::detail {

inline constexpr std::uint32_t no_type = 0xFFFFFFFFu;

/// Per-block state. `free_slots` (1 = free slot) is the single source of truth; the
/// block-state bitmaps are indexes over it that may lag and are kept paired with it.
/// 16 bytes: a do-all's enumeration reads every header of the type, and two headers share a
/// 32-byte memory sector (the do-all's occupancy snapshots are an array of their own,
/// heap_view::snapshots, for the same reason: the visit reads 8 bytes per block, not a sector).
struct alignas(16) block_header {
  std::uint64_t free_slots;  ///< 1 = slot free; a free block holds 0 ("nothing to take")
  std::uint32_t type;        ///< type id, or no_type for a free block
  std::uint32_t returning;   ///< 1 while a thread tries to return the emptied block (0 at rest)
};
static_assert(sizeof(block_header) == 16);

/// Sticky device-side record of what went wrong, read by the host after launches.
struct heap_errors {
  unsigned long long failed_allocations[max_types];  ///< per type, since the last reset
  unsigned long long bad_destroys;                   ///< checked mode: invalid destroy() calls
  unsigned long long first_bad_pointer;              ///< checked mode: the first one
};

#if defined(SHOAL_BACKEND_CUDA)
inline constexpr int epoch_shards = 8;  // by SM: a block operation touches its SM's shard only
#else
inline constexpr int epoch_shards = 2;
#endif
inline constexpr int counter_stride = 16;  // one 128-byte line per counter: no false sharing
inline constexpr int epoch_stride = 4;     // one 32-byte sector per epoch shard

/// The allocator's shared words (DESIGN §5) besides the stocks. None is on the fast path: the
/// epochs and the free-block counter change only when a block is opened or returned.
struct heap_counters {
  /// Block operations of type t (returning a block of t, handing back slots of t taken by a
  /// prepare of another type): t's slots are findable nowhere meanwhile, so "no room for t" is
  /// decided only when no block operation of t overlapped the readings that found nothing. Per
  /// type, so that churn of one class does not hold up the decision for another, and sharded by
  /// processor; each shard: low 32 bits the number in flight, high 32 bits a sequence bumped by
  /// every start and end, so that its value only grows (a parity-only sequence lock is wrong
  /// here: two writers in flight make the count even).
  unsigned long long block_epoch[max_types][epoch_shards][epoch_stride];
  /// Free blocks. Kept with reductions that nobody waits for, so exact only after quiescence
  /// (verify() checks it; prepares read it as an estimate). ([0] only.)
  long long free_blocks[counter_stride];
};

/// Generations a stock keeps published at once (a ring). A preparer reuses an entry only once
/// every lane whose index fell in the entry's previous generation has read it.
inline constexpr std::uint32_t stock_ring = 16;
/// Blocks whose holes one generation takes at most (one exchange each).
inline constexpr int stock_hole_blocks = 6;

/// One block of a generation: for holes, a block and the free slots taken from it; for a fresh
/// run, a leaf word of the free bitmap and the run's bits in it. `tag` is the generation's number,
/// written with the rest in one 16-byte store, so that a reader can tell a record of its
/// generation from one that an L1 line still holds from an older generation of the entry.
struct alignas(16) stock_record {
  std::uint32_t tag;
  std::uint32_t block;  ///< holes: the block; fresh: the leaf word
  std::uint64_t mask;   ///< holes: the slots; fresh: the blocks
};

/// One generation of a stock: a range of the stock's index [start, start + count) and the slots
/// it stands for. `head` is all a reader needs to know whether the range holds its index: tag
/// (the generation number modulo 2^16) << 48 | kind << 46 | count << 32 | start, written last
/// (release). `prefix`, in the same 16 bytes, gives the indices before each hole record (9 bits
/// each, for records 1 to 5), so a reader finds its record without reading the others. Readers
/// read the entry through the L1 (it is written by a lane of the same processor, except when a
/// stock serves others' overflow) and only go to the L2 when a tag is not theirs.
struct alignas(128) stock_generation {
  std::uint64_t head;
  std::uint64_t prefix;
  stock_record records[stock_hole_blocks];
};
static_assert(sizeof(stock_generation) == 128, "one 128-byte line per generation");

/// The stock of one class on one processor (DESIGN §5): a counter that hands out indices with
/// one atomic that cannot fail, and the generations that say which slot each index is.
struct alignas(128) stock {
  std::uint32_t next;  ///< the next index (alone in its 128-byte line: every request adds to it)
  std::uint32_t pad0[31];
  std::uint32_t newest;     ///< a recently published generation: where readers start looking
  std::uint32_t dirty;      ///< 1 once a prepare ran since the last flush
  std::uint32_t exhausted_at;  ///< start of its first full generation since the last good one
  std::uint32_t prepare_stage;  ///< SHOAL_SPIN_WATCHDOG builds: how far its latest prepare got
  std::uint32_t pad1[28];
  unsigned long long done[stock_ring];  ///< per entry: lanes that have read its generation
  stock_generation ring[stock_ring];
};

struct heap_view {
  std::byte* data;              ///< block 0
  std::uint64_t block_bytes;    ///< multiple of block_alignment
  std::uint64_t blocks;
  std::uint32_t num_types;
  block_header* headers;
  std::uint64_t* snapshots;     ///< per block: occupancy snapshot of the do-all in progress
  /// Per block: the slots that hold objects (1 = live). A slot leaves free_slots when a stock
  /// reserves it and enters `live` only when a request takes it, so stocks may keep reservations
  /// from launch to launch: everything that enumerates objects reads this word, not free_slots.
  /// Set by the allocation (one reduction), cleared by destroy; equal to ~free_slots once the
  /// stocks are settled (runtime::verify checks it).
  std::uint64_t* live;
  std::uint64_t* bitmap_words;  ///< free, allocated[0..n), active[0..n): same layout each
  heap_errors* errors;
  heap_counters* counters;
  stock* stocks;                ///< [type][processor]: stocks_per_type per class
  std::uint32_t stocks_per_type;
  bitmap_layout layout;
  std::uint8_t capacity[max_types];  ///< slots per block; 0 for abstract types

  SHOAL_HD bitmap_ref free_blocks() const { return bitmap_ref(bitmap_words, layout); }
  SHOAL_HD bitmap_ref allocated(std::uint32_t t) const {
    return bitmap_ref(bitmap_words + (1 + t) * layout.total_words, layout);
  }
  SHOAL_HD bitmap_ref active(std::uint32_t t) const {
    return bitmap_ref(bitmap_words + (1 + num_types + t) * layout.total_words, layout);
  }
  SHOAL_HD std::byte* block(std::uint64_t b) const { return data + b * block_bytes; }
  SHOAL_HD std::uint64_t block_of(std::uint64_t pointer_bits) const {
    return (block_address_of(pointer_bits) - reinterpret_cast<std::uintptr_t>(data)) / block_bytes;
  }
  SHOAL_HD std::uint64_t full_mask(std::uint32_t t) const { return low_bits(capacity[t]); }
};

}  // namespace shoal::detail
