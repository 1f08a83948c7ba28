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
inline constexpr int hint_slots = 256;  // by SM (H100: 132): each SM fills its own current block
#else
inline constexpr int epoch_shards = 2;
inline constexpr int hint_slots = 16;
#endif
inline constexpr int counter_stride = 16;  // one 128-byte line per counter: no false sharing
inline constexpr int epoch_stride = 4;     // one 32-byte sector per epoch shard

/// The allocator's shared words (DESIGN §5). None of them is on the fast path's critical chain:
/// an allocation reads its processor's hint, then claims slots with one atomic on a block's own
/// free-slot word. The epochs and counters change only when a block is opened or returned.
struct heap_counters {
  /// Block operations of type t (opening a block for t, returning a block of t, handing back
  /// slots of t claimed by an allocation of another type): t's slots are findable nowhere
  /// meanwhile, so "no room for t" is decided only when no block operation of t overlapped the
  /// readings that found nothing. Per type, so that churn of one class does not hold up the
  /// decision for another, and sharded by processor; each shard: low 32 bits the number in
  /// flight, high 32 bits a sequence bumped by every start and end, so that its value only grows
  /// (a parity-only sequence lock is wrong here: two writers in flight make the count even).
  unsigned long long block_epoch[max_types][epoch_shards][epoch_stride];
  /// Free blocks. Kept with reductions that nobody waits for, so exact only after quiescence
  /// (verify() checks it; nothing else reads it). ([0] only.)
  long long free_blocks[counter_stride];
  /// Per type and processor (modulo hint_slots): the block that this processor's warps try first
  /// (index + 1; 0: none). Only a hint: a claim checks the block's type after taking slots, and a
  /// hint that points at a full or re-typed block costs one load and falls through to the walk.
  std::uint32_t current[max_types][hint_slots];
};

struct heap_view {
  std::byte* data;              ///< block 0
  std::uint64_t block_bytes;    ///< multiple of block_alignment
  std::uint64_t blocks;
  std::uint32_t num_types;
  block_header* headers;
  std::uint64_t* snapshots;     ///< per block: occupancy snapshot of the do-all in progress
  std::uint64_t* bitmap_words;  ///< free, allocated[0..n), active[0..n): same layout each
  heap_errors* errors;
  heap_counters* counters;
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
