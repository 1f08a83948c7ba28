#pragma once
/// @file
/// runtime.parallel_new<T>(n, args...): object i is made as T(i, args...) in slot i % capacity of
/// the (i / capacity)-th lowest free block, so a quiescent heap gets the same objects in the same
/// places every run (do-all and all-pairs order follow).
///
/// Enqueued like a do-all; objects that do not fit are counted as failed allocations of T (the
/// next synchronize() throws out_of_memory naming it). It runs alone on its heap: all work on
/// the runtime's stream runs in order. So the free blocks it counts stay free while it opens
/// them, and it opens them the way a plain array is initialised: plain stores for the headers,
/// one atomic per bitmap word, and the free-block counter changed once. Opening each block with
/// the allocator's protocol (counter, epoch, bit, header, bits, one thread per block) took 308 µs
/// for the 1.56 million blocks of 10^8 objects on the H100.
///
/// When the free blocks are exactly those from heap_counters::fresh_from up (a cleared heap, or
/// one that only parallel_new has filled since), the blocks to open are consecutive from there,
/// and nothing needs counting or listing. Otherwise they are the lowest free blocks wherever
/// they lie. On cuda (parallel_new_cuda.hpp) the objects are made in tiles of 2,048 as a plain
/// array is initialised:
///   - up to parallel_new_one_block_objects objects, one launch of one thread block finds the
///     blocks (listing among used ones by a descent of the free bitmap's levels) and makes them;
///   - up to parallel_new_one_launch_blocks blocks into a heap that the runtime believes fresh
///     (it saw nothing but parallel_new run on it since it was cleared), one launch of a thread
///     block per tile, each opening its own blocks (the device checks the belief, and is correct
///     but slower when it is wrong);
///   - for more, a cooperative launch finds the blocks (counting among used ones, a grid-wide
///     barrier, listing), and a launch that depends on it makes them, a thread block per tile.
/// cpu: the steps one after another.

#include <algorithm>
#include <cstdint>

#include "shoal/arch/launch.hpp"
#include "shoal/runtime/parallel_new_parts.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include "shoal/runtime/parallel_new_cuda.hpp"
#else

namespace shoal::detail {

/// Opens the free blocks of leaf word w (`word`: its free bits, read before any of them was
/// taken) whose places in the list, counted from `at` for its lowest, are below `needed`: lists
/// them, opens them and takes them in the bitmaps (one atomic per bitmap).
template <std::uint32_t Capacity>
SHOAL_DEVICE void open_lowest_of_word(const heap_view& h, std::uint32_t t, std::uint64_t w, std::uint64_t word,
                                      std::uint64_t at, std::uint64_t needed, std::uint64_t n,
                                      std::uint32_t* list) {
  if (at >= needed || word == 0) return;
  const std::uint64_t mask = lowest_set_bits(word, needed - at);
  for (std::uint64_t m = mask; m != 0; m &= m - 1, ++at) {
    const std::uint64_t b = w * 64 + arch::lowest_bit(m);
    list[at] = static_cast<std::uint32_t>(b);
    offer_spare_slots</*Bulk=*/true>(h, b, t, open_block<Capacity>(h.headers, t, b, at, n));
  }
  open_word(h, t, w, mask);
}

template <class T, std::uint32_t Capacity, class Pack>
void parallel_new(const heap_view& h, const void* context, std::uint32_t t, std::uint64_t n,
                  const parallel_new_scratch& s, bool /*believed_fresh*/, std::uint64_t /*known_fresh*/,
                  const Pack& arguments) {
  // One path here: the counters are read by the thread that changes them, which costs nothing.
  if (n == 0) return;
  const std::uint64_t needed = (n + Capacity - 1) / Capacity;
  const std::uint64_t fresh = fresh_from(h);
  std::uint64_t opened = 0;
  if (free_block_count(h) == static_cast<long long>(h.blocks - fresh)) {
    // The free blocks are exactly those from fresh_from up: the lowest are consecutive (as on cuda).
    opened = std::min(needed, h.blocks - fresh);
    open_fresh_range(h, t, fresh, fresh + opened, 0, 1);
    for (std::uint64_t k = 0; k < opened; ++k) {
      s.list[k] = static_cast<std::uint32_t>(fresh + k);
      offer_spare_slots</*Bulk=*/true>(h, fresh + k, t, open_block<Capacity>(h.headers, t, fresh + k, k, n));
    }
  } else {
    const std::uint64_t* free_words = h.free_blocks().level_words(0);
    std::uint64_t free = 0;
    for (std::uint64_t w = 0; w < h.layout.words[0]; ++w) free += arch::popc(free_words[w]);
    opened = free < needed ? free : needed;
    for (std::uint64_t w = 0, at = 0; w < h.layout.words[0] && at < opened; ++w) {
      const std::uint64_t word = free_words[w];
      open_lowest_of_word<Capacity>(h, t, w, word, at, opened, n, s.list);
      at += arch::popc(word);
    }
  }
  arch::fetch_sub(free_block_count(h), static_cast<long long>(opened));
  if (opened > 0) arch::max_relaxed(fresh_from(h), static_cast<unsigned long long>(s.list[opened - 1]) + 1);
  if (opened < needed) record_failed_allocations(h, t, n - opened * Capacity);
  const construct_listed<T, Capacity, Pack> construct{h.data, h.block_bytes, t, s.list, arguments};
  arch::for_each_index(n < opened * Capacity ? n : opened * Capacity,
                       [=](std::size_t i) { construct(i); }, context);
}

}  // namespace shoal::detail

#endif
