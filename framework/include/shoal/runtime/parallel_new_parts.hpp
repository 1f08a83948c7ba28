#pragma once
/// @file
/// The parts of runtime.parallel_new that both backends share (parallel_new.hpp has the whole
/// story): opening a block, a leaf word or a range of fresh blocks, and making object i.

#include <cstddef>
#include <cstdint>
#include <new>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/heap/allocator.hpp"
#include "shoal/heap/heap_view.hpp"
#include "shoal/heap/pointer.hpp"

namespace shoal::detail {

/// Opens block b, the `at`-th of the `needed` blocks that n objects of t fill (Capacity slots
/// each; the last one may be partly used): writes its header and returns its free slots, which
/// the caller offers (offer_spare_slots). Its bitmap bits are its word's (open_word). Its do-all
/// snapshot is left as it is: a do-all writes the snapshot of every block it lists before it
/// visits any, and never runs beside parallel_new. (Storing it cost 12.5 MB at 10^8 objects.)
template <std::uint32_t Capacity>
SHOAL_DEVICE std::uint64_t open_block(block_header* headers, std::uint32_t t, std::uint64_t b, std::uint64_t at,
                                      std::uint64_t n) {
  const std::uint64_t rest = n - at * Capacity;
  const auto taken = static_cast<std::uint32_t>(rest < Capacity ? rest : Capacity);
  const std::uint64_t free = spare_slots(low_bits(Capacity), taken);
  // The whole header in one 16-byte store (two 8-byte stores in the SASS), plain: nothing reads
  // it before the launch ends, which orders it. Measured in session 8's one-launch design, on
  // the H100 at 10^8 objects: four stores took 338 instead of 335 µs; a release store with its
  // fence per block, 12 µs more; a header left part-written (`returning` not stored), 375
  // instead of 369 µs, the L2 completing its sectors from DRAM (33 instead of 8 MB read).
  headers[b] = block_header{free, t, 0u};
  return free;
}

/// The bitmaps' side of opening the blocks `mask` of leaf word w for t: no longer free, now t's.
/// (The mask is empty for a word below the lowest free blocks whose blocks are all in use.)
SHOAL_DEVICE inline void open_word(const heap_view& h, std::uint32_t t, std::uint64_t w, std::uint64_t mask) {
  h.free_blocks().clear_bits(w, mask);
  h.allocated(t).set_bits(w, mask);
}

/// The lowest k set bits of word.
SHOAL_HD inline std::uint64_t lowest_set_bits(std::uint64_t word, std::uint64_t k) {
  if (k >= static_cast<std::uint64_t>(arch::popc(word))) return word;
  std::uint64_t mask = 0;
  for (; word != 0 && k > 0; --k, word &= word - 1) mask |= word & (~word + 1);
  return mask;
}

/// Makes object i: in its listed block (operator(), the cpu backend), or in block b (at).
template <class T, std::uint32_t Capacity, class Pack>
struct construct_listed {
  std::byte* data;
  std::uint64_t block_bytes;
  std::uint32_t type;
  const std::uint32_t* list;
  Pack arguments;

  SHOAL_DEVICE void operator()(std::size_t i) const {
    at(i, list[i / Capacity], static_cast<std::uint32_t>(i % Capacity));
  }
  /// Object i in slot `slot` of block b (listed and loaded, or computed).
  SHOAL_DEVICE void at(std::size_t i, std::uint32_t b, std::uint32_t slot) const {
    void* p = reinterpret_cast<void*>(encode_pointer(data + b * block_bytes, slot, Capacity, type));
#if defined(__CUDA_ARCH__)
    __builtin_assume(__isGlobal(p));  // global stores, not generic ones
#endif
    arguments.apply([&](const auto&... a) { new (p) T(i, a...); });
  }
};

/// What the first launch of parallel_new decided, for the second; and what one launch's thread
/// blocks share.
struct parallel_new_plan {
  unsigned long long made;    ///< objects that fit (the rest are failed allocations)
  unsigned long long first;   ///< fresh: the first block to open
  unsigned long long opened;  ///< blocks opened (fresh: to open, by the second launch)
  unsigned fresh;             ///< 1: the blocks are [first, first + opened), yet to be opened
  /// One launch of a thread block per tile (cuda): the thread blocks take their tiles in the
  /// order they start from this counter, which wraps to 0 after the last of the grid.
  unsigned tickets;
  /// ... and among used blocks, the launch whose blocks the first thread block has listed (the
  /// others wait for it). Its own line: thread blocks wait on it while others take tickets.
  alignas(128) unsigned long long ready;
};

/// What parallel_new needs besides the heap: the list of opened blocks (one entry per block of
/// the heap) and, on cuda, scratch for the phases and the plan.
struct parallel_new_scratch {
  std::uint32_t* list;
  unsigned long long* word_offsets;  ///< one per leaf word of the block bitmaps
  unsigned long long* chunk_counts;  ///< one per thread block of the launch
  unsigned max_chunks;
  parallel_new_plan* plan;
};

/// parallel_new's `known_fresh` when the runtime does not know the heap's state (see
/// runtime::parallel_new): the device reads it before it opens any block.
inline constexpr std::uint64_t unknown_fresh = ~std::uint64_t{0};

/// For a launch that trusted the runtime's knowledge (`known_fresh`: the free blocks were exactly
/// those from known_fresh up) instead of reading the counters first: the counters as read by the
/// thread that then changed them. Records the launch as an error if they disagree, so that the
/// next synchronize() reports it rather than the heap silently holding two objects in one slot.
SHOAL_DEVICE inline void check_known_fresh(const heap_view& h, std::uint64_t known_fresh, unsigned long long fresh_read,
                                           long long free_read) {
  if (fresh_read != known_fresh || free_read != static_cast<long long>(h.blocks - known_fresh))
    arch::add_relaxed(h.errors->unseen_changes, 1ull);
}

/// Range updates of the bitmaps for blocks [from, to): cleared in the free bitmap, where every
/// free block below `from` is being taken too (by other threads of the same launch, with ranges
/// that end where this one starts), and, if `allocated_too`, set in t's allocated bitmap. Every
/// word of the range at every level takes one relaxed reduction that nothing waits for (the
/// words and masks of bitmap_ref::set_range_word / clear_range_word, in 32 bits).
/// Each level of each bitmap is a part with threads of its own, so that the lanes of a warp
/// update the levels side by side: thread `rank` takes part rank % 16 and, of its words, those
/// rank / 16, + threads / 16, … (16 ≥ 2 × max_levels parts, a power of two: no division). With
/// fewer than 16 threads, as on the cpu backend, a thread takes parts rank, rank + threads, …,
/// whole. The arithmetic is 32-bit (block indices are below 2^32) and levels are addressed
/// through offset_of, not the layout's arrays (indexing those at run time copied the layout to
/// every thread's stack: 16 instead of 6 µs at 10^8 objects). On the H100 one thread walking
/// every level of both bitmaps in turn, 64-bit, took about 1,400 cycles (0.8 µs): most of what
/// parallel_new of 10^3 objects took beyond a plain initialisation; and its registers spilled in
/// launches of 32 registers a thread.
SHOAL_DEVICE inline void take_range(const heap_view& h, std::uint32_t t, std::uint64_t from, std::uint64_t to,
                                    bool allocated_too, std::uint64_t rank, std::uint64_t threads) {
  constexpr std::uint32_t stride = 16;
  static_assert(stride >= 2 * bitmap_layout::max_levels);
  if (to <= from) return;
  const auto first_bit = static_cast<std::uint32_t>(from), last_bit = static_cast<std::uint32_t>(to - 1);
  const auto r = static_cast<std::uint32_t>(rank), n = static_cast<std::uint32_t>(threads);
  const bool to_end = to >= h.layout.bits;  // the range ends at the last bit
  const auto levels = static_cast<std::uint32_t>(h.layout.levels);
  const std::uint32_t parts = allocated_too ? 2 * levels : levels;
  const bool own = n >= stride;  // each part has threads of its own
  const std::uint32_t per_part = own ? n / stride : 1;
  // Spare: no part, or no word of it. The leaf level spans the most words, so a thread whose
  // first word lies past the leaf range's has none at any level, and leaves before working out
  // its level's bits. (Working them out on 6 of every 16 lanes of all 32 warps of parallel_new's
  // one thread block kept the schedulers busy: its work at 10^3 objects spanned 3,700 cycles on
  // the H100, and 3,250 with this test.)
  if (own && (r % stride >= parts || r >= per_part * stride || r / stride > (last_bit >> 6) - (first_bit >> 6)))
    return;
  for (std::uint32_t part = own ? r % stride : r; part < parts; part += own ? parts : n) {
    const bool free_part = part < levels;
    const auto level = static_cast<int>(free_part ? part : part - levels);
    const int shift = 6 * level;  // log2 of the bits under one bit of `level` (at most 30)
    // The bits of `level` that the range touches: lo … hi. Set: all of them. Cleared: those
    // whose bits below all lie in the range (or past the end), as no bit below `from` is set.
    const std::uint32_t lo = first_bit >> shift, hi = last_bit >> shift;
    const std::uint32_t end = free_part && !to_end ? static_cast<std::uint32_t>(to >> shift) : hi + 1;
    std::uint64_t* words = h.bitmap_words + (free_part ? 0 : (1 + t) * h.layout.total_words) + h.layout.offset_of(level);
    for (std::uint32_t w = (lo >> 6) + (own ? r / stride : 0); w <= hi >> 6; w += per_part) {
      const std::uint64_t mask = bits_of_word(w, lo, end);
      if (free_part)
        arch::and_relaxed(words[w], ~mask);  // with an empty mask, a reduction that changes nothing
      else
        arch::or_relaxed(words[w], mask);
    }
  }
}

/// The bitmaps' side of opening fresh blocks [fresh, end) for t (see take_range).
SHOAL_DEVICE inline void open_fresh_range(const heap_view& h, std::uint32_t t, std::uint64_t fresh, std::uint64_t end,
                                          std::uint64_t rank, std::uint64_t threads) {
  take_range(h, t, fresh, end, true, rank, threads);
}

}  // namespace shoal::detail
