#pragma once
/// @file
/// runtime.parallel_new<T>(n, args...): object i is made as T(i, args...) in slot i % capacity of
/// the (i / capacity)-th lowest free block, so a quiescent heap gets the same objects in the same
/// places every run (do-all and all-pairs order follow).
///
/// Enqueued like a do-all; objects that do not fit are counted as failed allocations of T (the
/// next synchronize() throws out_of_memory naming it). All work on the runtime's stream runs in
/// order, so parallel_new has the heap to itself: the free blocks it finds stay free while it
/// opens them, with plain stores for the headers, one atomic per bitmap word (a chain up the
/// levels only where a word empties or fills) and one change of the free-block counter. (The
/// allocator's protocol, one thread per block, took 308 µs for the 1.56 million blocks of 10^8
/// objects on the H100.) Two steps: list the lowest free blocks that the objects need in the
/// do-all's block list and open them, then make object i in block list[i / capacity]. cuda:
/// parallel_new_cuda.hpp; cpu: below, the steps one after another.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/heap/allocator.hpp"
#include "shoal/heap/heap_view.hpp"
#include "shoal/heap/pointer.hpp"

namespace shoal::detail {

/// What parallel_new needs besides the heap (cuda's planning launch uses all but the list).
struct parallel_new_scratch {
  std::uint32_t* list;               ///< the opened blocks, in order (one entry per block of the heap)
  unsigned long long* word_offsets;  ///< one per leaf word of the block bitmaps
  unsigned long long* chunk_counts;  ///< one per thread block, max_chunks
  unsigned max_chunks;
  unsigned long long* made;          ///< the objects that fit
};

/// The lowest k set bits of word (all of them if it has fewer).
SHOAL_HD inline std::uint64_t lowest_bits_of(std::uint64_t word, std::uint64_t k) {
  return arch::lowest_set_bits(word, k < 64 ? static_cast<int>(k) : 64);
}

/// Opens block b as the at-th of the blocks that n objects of t fill (the last one may be partly
/// used): lists it, writes its header and offers its spare slots; its bitmap bits are its leaf
/// word's (open_word). Not its do-all snapshot: a do-all writes the snapshot of every block it
/// lists before it visits any. (Storing it cost 12.5 MB at 10^8 objects.)
template <std::uint32_t Capacity>
SHOAL_DEVICE void open_block(const heap_view& h, std::uint32_t t, std::uint64_t b, std::uint64_t at, std::uint64_t n,
                             std::uint32_t* list) {
  list[at] = static_cast<std::uint32_t>(b);
  const std::uint64_t rest = n - at * Capacity;
  const std::uint64_t free = spare_slots(low_bits(Capacity), static_cast<std::uint32_t>(rest < Capacity ? rest : Capacity));
  // The whole header in one 16-byte store, plain: nothing reads it before the launch ends, which
  // orders it. (A header left part-written made the L2 complete its sectors from DRAM.)
  h.headers[b] = block_header{free, t, 0u};
  h.live[b] = ~free & low_bits(Capacity);
  offer_spare_slots</*Bulk=*/true>(h, b, t, free);
}

/// The bitmaps' side of opening the blocks `mask` of leaf word w for t (empty: nothing changes).
SHOAL_DEVICE inline void open_word(const heap_view& h, std::uint32_t t, std::uint64_t w, std::uint64_t mask) {
  h.free_blocks().clear_bits(w, mask);
  h.allocated(t).set_bits(w, mask);
}

/// The counters once `opened` blocks are open for n objects of t, of which `made` fit.
SHOAL_DEVICE inline void count_opened(const heap_view& h, std::uint32_t t, std::uint64_t n, std::uint64_t made,
                                      std::uint64_t opened) {
  arch::add_relaxed(free_block_count(h), -static_cast<long long>(opened));
  if (made < n) record_failed_allocations(h, t, n - made);
}

/// Makes object i in slot `slot` of block b.
template <class T, std::uint32_t Capacity, class Pack>
struct construct_listed {
  std::byte* data;
  std::uint64_t block_bytes;
  std::uint32_t type;
  const std::uint32_t* list;
  Pack arguments;

  SHOAL_DEVICE void at(std::size_t i, std::uint32_t b, std::uint32_t slot) const {
    void* p = reinterpret_cast<void*>(encode_pointer(data + b * block_bytes, slot, Capacity, type));
#if defined(__CUDA_ARCH__)
    __builtin_assume(__isGlobal(p));  // global stores, not generic ones
#endif
    arguments.apply([&](const auto&... a) { new (p) T(i, a...); });
  }
};

}  // namespace shoal::detail

#if defined(SHOAL_BACKEND_CUDA)
#include "shoal/runtime/parallel_new_cuda.hpp"
#else

namespace shoal::detail {

template <class T, std::uint32_t Capacity, class Pack>
void parallel_new(const heap_view& h, const void* context, std::uint32_t t, std::uint64_t n,
                  const parallel_new_scratch& s, const Pack& arguments) {
  if (n == 0) return;
  const std::uint64_t needed = (n + Capacity - 1) / Capacity;
  const std::uint64_t* free_words = h.free_blocks().level_words(0);
  std::uint64_t opened = 0;
  for (std::uint64_t w = 0; w < h.layout.words[0] && opened < needed; ++w) {
    const std::uint64_t mask = lowest_bits_of(free_words[w], needed - opened);
    for (std::uint64_t m = mask; m != 0; m &= m - 1) open_block<Capacity>(h, t, w * 64 + arch::lowest_bit(m), opened++, n, s.list);
    open_word(h, t, w, mask);
  }
  const std::uint64_t made = std::min(n, opened * Capacity);
  count_opened(h, t, n, made, opened);
  const construct_listed<T, Capacity, Pack> construct{h.data, h.block_bytes, t, s.list, arguments};
  arch::for_each_index(
      made, [=](std::size_t i) { construct.at(i, construct.list[i / Capacity], static_cast<std::uint32_t>(i % Capacity)); },
      context);
}

}  // namespace shoal::detail

#endif
