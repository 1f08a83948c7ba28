#pragma once
/// @file
/// runtime.parallel_new on cuda (parallel_new.hpp has the whole story). Two paths:
///   - up to parallel_new_one_block_objects objects, one launch of one thread block: it lists
///     and opens the lowest free blocks by a descent of the free bitmap's levels, then makes
///     the objects, tile after tile;
///   - more, two launches without a host wait: a cooperative one lists and opens the lowest free
///     blocks (per-word counts, prefix sums, a grid-wide barrier), and one that depends on it
///     makes the objects, a thread block per tile of 2,048, as a plain array is initialised.
/// Object i goes to block list[i / capacity], or list[0] + i / capacity when the list has no gap
/// (a cleared heap, or one filled in order): then no load comes before each object's stores.

#include <algorithm>
#include <cstdint>
#include <utility>

#include <cooperative_groups.h>

#include <cub/block/block_scan.cuh>

#include "shoal/arch/launch.hpp"

namespace shoal::detail {

inline constexpr int parallel_new_threads = 256;
inline constexpr std::uint32_t parallel_new_per_thread = 8;  // objects of a tile
inline constexpr std::uint64_t parallel_new_tile = std::uint64_t{parallel_new_threads} * parallel_new_per_thread;
/// Up to this many objects (64 a thread, about a µs of one processor's stores), one launch.
inline constexpr std::uint64_t parallel_new_one_block_objects = 8 * parallel_new_tile;

/// Makes the objects of the tile that starts at object `tile`, of the `made`, 8 a thread, as a
/// plain array is initialised, given the list of `opened` blocks. `Index`: std::uint32_t wherever
/// no object index reaches 2^32, which halves the instructions and registers of each object's
/// indexing (at 10^8 objects the making launch stopped spilling: 295 → 263 µs on the H100).
/// Measured there at 10^8 objects against a plain initialisation of two arrays (248 µs): a
/// persistent grid making a fixed share per thread, 296 µs (the memory system served its warps
/// unevenly); thread blocks taking tiles from a counter, 360–750 µs; a thread per object, 790.
template <class Index, class T, std::uint32_t Capacity, class Pack>
__device__ void make_tile(const construct_listed<T, Capacity, Pack>& construct, std::uint64_t made, std::uint64_t tile,
                          std::uint64_t opened) {
  const std::uint32_t* list = construct.list;
  const std::uint32_t lowest = list[0];
  const bool consecutive = list[opened - 1] - lowest == opened - 1;  // the list increases
#pragma unroll
  for (std::uint32_t j = 0; j < parallel_new_per_thread; ++j) {
    const Index i = static_cast<Index>(tile) + j * parallel_new_threads + threadIdx.x;
    if (i < static_cast<Index>(made)) {
      const Index k = i / Capacity;
      construct.at(i, consecutive ? lowest + static_cast<std::uint32_t>(k) : list[k], static_cast<std::uint32_t>(i % Capacity));
    }
  }
}

/// Lists and opens the lowest free blocks that n objects of t need (all of them if there are
/// fewer); returns how many. For one thread block alone. A descent from the top word: each set
/// bit above the leaves stands for a non-empty word below it, so the lowest k free blocks lie
/// under the lowest k set bits of each level. At each level the words found at the level above
/// are read in order, 4 a thread and a block-wide prefix sum at a time, until k set bits are
/// found; theirs are the next level's words, in `list` or `spare` (at least words[0] entries)
/// by turns, so that the leaf level writes `list`.
template <std::uint32_t Capacity>
__device__ std::uint64_t open_lowest_free_blocks(const heap_view& h, std::uint32_t t, std::uint64_t n,
                                                 std::uint32_t* list, std::uint32_t* spare) {
  constexpr int per_thread = 4;
  using scan = cub::BlockScan<unsigned, parallel_new_threads>;
  __shared__ typename scan::TempStorage temp;
  const std::uint64_t k = (n + Capacity - 1) / Capacity;
  const int top = h.layout.top();
  std::uint32_t* in = top % 2 == 0 ? spare : list;
  std::uint32_t* out = top % 2 == 0 ? list : spare;
  if (threadIdx.x == 0) in[0] = 0;  // the top level's one word
  __syncthreads();
  std::uint64_t words = 1;  // at this level, from in[0]
  for (int level = top; level >= 0; --level) {
    const std::uint64_t* level_words = h.bitmap_words + h.layout.offset_of(level);
    std::uint64_t found = 0;  // set bits in the words read so far (the same in every thread)
    for (std::uint64_t base = 0; base < words && found < k; base += per_thread * parallel_new_threads) {
      std::uint32_t index[per_thread];
      std::uint64_t word[per_thread];
#pragma unroll
      for (int r = 0; r < per_thread; ++r) {  // every load issued before any is waited for
        const std::uint64_t j = base + r * parallel_new_threads + threadIdx.x;
        index[r] = j < words ? in[j] : 0;
      }
#pragma unroll
      for (int r = 0; r < per_thread; ++r)
        word[r] = base + r * parallel_new_threads + threadIdx.x < words ? level_words[index[r]] : 0;
#pragma unroll
      for (int r = 0; r < per_thread; ++r) {
        if (base + r * parallel_new_threads >= words) break;  // the same in every thread
        unsigned at = 0, total = 0;
        scan(temp).ExclusiveSum(static_cast<unsigned>(arch::popc(word[r])), at, total);
        const std::uint64_t mask = found + at < k ? lowest_bits_of(word[r], k - found - at) : 0;
        std::uint64_t put = found + at;
        for (std::uint64_t m = mask; m != 0; m &= m - 1, ++put) {
          const std::uint64_t bit = std::uint64_t{index[r]} * 64 + arch::lowest_bit(m);
          if (level == 0)
            open_block<Capacity>(h, t, bit, put, n, list);
          else
            out[put] = static_cast<std::uint32_t>(bit);
        }
        if (level == 0) open_word(h, t, index[r], mask);
        found += total;
        __syncthreads();  // temp is reused
      }
    }
    words = found < k ? found : k;
    std::swap(in, out);
    __syncthreads();  // this level's words, written by all, are read by all at the next
  }
  return words;
}

/// Path 1: one launch of one thread block. (For 10^3 objects on the H100 two launches took 13.6
/// µs, one 8.9, a plain initialisation 6.7.)
template <class T, std::uint32_t Capacity, class Pack>
__global__ void __launch_bounds__(parallel_new_threads)
    parallel_new_one_block_kernel(heap_view h, const heap_view* view, std::uint32_t t, std::uint64_t n,
                                  parallel_new_scratch s, Pack arguments) {
  if (threadIdx.x == 0) arch::detail::launch_context_ptr = view;
  arch::wait_for_previous_kernel();  // the heap as the work before left it
  const std::uint64_t opened =
      open_lowest_free_blocks<Capacity>(h, t, n, s.list, reinterpret_cast<std::uint32_t*>(s.word_offsets));
  const std::uint64_t made = n < opened * Capacity ? n : opened * Capacity;
  if (threadIdx.x == 0) count_opened(h, t, n, made, opened);
  const construct_listed<T, Capacity, Pack> construct{h.data, h.block_bytes, t, s.list, arguments};
  for (std::uint64_t tile = 0; tile < made; tile += parallel_new_tile) make_tile<std::uint32_t>(construct, made, tile, opened);
}

/// Path 2, launch 1 of two (cooperative): lists and opens the lowest `needed` free blocks.
///   1. Each thread block counts the free blocks of its chunk of the free bitmap's leaf words (a
///      block-wide prefix sum gives each word's offset in the chunk). A grid-wide barrier.
///   2. Each adds up the chunks before its own, lists and opens its chunk's blocks among the
///      lowest `needed` (a thread per bit), and takes them in the bitmaps (a thread per word).
/// 8 resident blocks of 256 threads per multiprocessor (32 registers): a larger grid is faster.
template <std::uint32_t Capacity>
__global__ void __launch_bounds__(parallel_new_threads, 8)
    parallel_new_plan_kernel(heap_view h, std::uint32_t t, std::uint64_t n, parallel_new_scratch s) {
  arch::allow_dependent_launch();  // launch 2 may get ready now; it waits for our results
  using scan = cub::BlockScan<unsigned long long, parallel_new_threads>;
  __shared__ typename scan::TempStorage temp;
  const std::uint64_t needed = (n + Capacity - 1) / Capacity;
  const std::uint64_t* free_words = h.free_blocks().level_words(0);
  const std::uint64_t words = h.layout.words[0];
  const std::uint64_t chunk = (words + gridDim.x - 1) / gridDim.x;
  const std::uint64_t first = std::min<std::uint64_t>(words, blockIdx.x * chunk);
  const std::uint64_t last = std::min<std::uint64_t>(words, first + chunk);

  // 1. Free blocks per word of this chunk, as offsets within the chunk, and the chunk's count.
  unsigned long long in_chunk = 0;  // the same in every thread
  for (std::uint64_t base = first; base < last; base += parallel_new_threads) {
    const std::uint64_t w = base + threadIdx.x;
    const std::uint64_t word = w < last ? free_words[w] : 0;
    unsigned long long at = 0, total = 0;
    scan(temp).ExclusiveSum(static_cast<unsigned long long>(arch::popc(word)), at, total);
    if (w < last) s.word_offsets[w] = in_chunk + at;
    in_chunk += total;
    __syncthreads();  // temp is reused
  }
  if (threadIdx.x == 0) s.chunk_counts[blockIdx.x] = in_chunk;
  cooperative_groups::this_grid().sync();

  // 2. The free blocks of the chunks before this one (the last thread block's: all but its own).
  unsigned long long mine = 0, mine_before = 0, before = 0;
  for (unsigned c = threadIdx.x; c < blockIdx.x; c += parallel_new_threads) mine += s.chunk_counts[c];
  scan(temp).ExclusiveSum(mine, mine_before, before);  // before: the sum over the threads
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
    const std::uint64_t free = before + in_chunk, opened = free < needed ? free : needed;
    const std::uint64_t made = n < opened * Capacity ? n : opened * Capacity;
    *s.made = made;
    count_opened(h, t, n, made, opened);
  }
  if (before >= needed) return;
  const std::uint64_t bits = (last - first) * 64;
  for (std::uint64_t base = 0; base < bits; base += parallel_new_threads) {
    // The same for the whole block: past the last word with a block to open, stop.
    if (before + s.word_offsets[first + base / 64] >= needed) break;
    const std::uint64_t k = base + threadIdx.x;
    if (k >= bits) break;
    const std::uint64_t w = first + k / 64, word = free_words[w];
    const std::uint64_t at = before + s.word_offsets[w] + arch::popc(word & low_bits(k % 64));
    if (((word >> (k % 64)) & 1u) != 0 && at < needed) open_block<Capacity>(h, t, w * 64 + k % 64, at, n, s.list);
  }
  __syncthreads();  // every thread above has read its words: now they change
  for (std::uint64_t w = first + threadIdx.x; w < last; w += parallel_new_threads) {
    const std::uint64_t at = before + s.word_offsets[w];
    if (at < needed) open_word(h, t, w, lowest_bits_of(free_words[w], needed - at));
  }
}

/// Path 2, launch 2 of two (a programmatic dependent of launch 1): a thread block per tile, the
/// hardware handing out the thread blocks as processors free up.
template <class Index, class T, std::uint32_t Capacity, class Pack>
__global__ void __launch_bounds__(parallel_new_threads, 8)
    parallel_new_make_kernel(const heap_view* view, construct_listed<T, Capacity, Pack> construct,
                             const unsigned long long* made_count) {
  if (threadIdx.x == 0) arch::detail::launch_context_ptr = view;
  arch::wait_for_previous_kernel();  // launch 1's list and count
  __syncthreads();
  const std::uint64_t made = *made_count, tile = std::uint64_t{blockIdx.x} * parallel_new_tile;
  if (tile < made) make_tile<Index>(construct, made, tile, (made + Capacity - 1) / Capacity);
}

/// Enqueues the creation of n objects of t (Capacity slots per block), object i as
/// T(i, arguments...); objects that do not fit are recorded as failed allocations.
template <class T, std::uint32_t Capacity, class Pack>
void parallel_new(const heap_view& h, const void* context, std::uint32_t t, std::uint64_t n,
                  const parallel_new_scratch& s, const Pack& arguments) {
  if (n == 0) return;
  arch::require_device();
  const auto* view = static_cast<const heap_view*>(context);  // the heap's view in device memory
  if (n <= parallel_new_one_block_objects) {
    arch::launch_dependent(parallel_new_one_block_kernel<T, Capacity, Pack>, 1, parallel_new_threads, nullptr, h, view,
                           t, n, s, arguments);
    return;
  }
  const auto plan = parallel_new_plan_kernel<Capacity>;
  static const unsigned resident = arch::resident_blocks(plan, parallel_new_threads);
  // A thread per word and per 16 objects, no more than fit at once: a larger grid pays more for
  // its barrier (two empty ones took 2.3 µs over 8 blocks and 4.7 µs over 1056 on the H100).
  const std::uint64_t items = std::max<std::uint64_t>(n / 16, h.layout.words[0]);
  const std::uint64_t want = (items + parallel_new_threads - 1) / parallel_new_threads;
  const auto grid = static_cast<unsigned>(std::min<std::uint64_t>({want, resident, s.max_chunks}));
  arch::launch_cooperative(plan, grid, parallel_new_threads, nullptr, h, t, n, s);
  const construct_listed<T, Capacity, Pack> construct{h.data, h.block_bytes, t, s.list, arguments};
  const auto tiles = static_cast<unsigned>((n + parallel_new_tile - 1) / parallel_new_tile);
  const auto make = n <= std::uint64_t{UINT32_MAX} - parallel_new_tile
                        ? parallel_new_make_kernel<std::uint32_t, T, Capacity, Pack>
                        : parallel_new_make_kernel<std::uint64_t, T, Capacity, Pack>;
  arch::launch_dependent(make, tiles, parallel_new_threads, nullptr, view, construct, s.made);
}

}  // namespace shoal::detail
