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
/// they lie. On cuda, two launches:
///   1. cooperative: decides which case it is; in the first it updates the bitmaps, in the other
///      it counts the free blocks, and after a grid-wide barrier opens and lists the lowest ones;
///   2. ordinary, a dependent of launch 1: a thread block per 2,048 objects makes them, as a plain
///      array is initialised (fresh blocks: it opens the blocks first).
/// Before (three launches and a wait: list, open, construct) 10^3 objects took 41 µs and 10^8
/// took 718 µs; plain initialisations of the same fields 6.8 and 277 µs (BENCHMARKS.md has now).
/// cpu: the steps one after another. (A single block of threads for up to 32,768 objects, with
/// no grid-wide barrier, was measured and dropped: 10^3 objects took 16–18 µs either way.)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/heap/allocator.hpp"
#include "shoal/heap/heap_view.hpp"
#include "shoal/heap/pointer.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <cooperative_groups.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#endif

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

/// What the first launch of parallel_new decided, for the second.
struct parallel_new_plan {
  unsigned long long made;    ///< objects that fit (the rest are failed allocations)
  unsigned long long first;   ///< fresh: the first block to open
  unsigned long long opened;  ///< blocks opened (fresh: to open, by the second launch)
  unsigned fresh;             ///< 1: the blocks are [first, first + opened), yet to be opened
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

/// The bitmaps' side of opening fresh blocks [fresh, end) for t, where no free block lies below
/// `fresh`: no longer free, now t's. Every word of the range at every level takes one relaxed
/// reduction that nothing waits for; this thread takes words rank, rank + threads, … of each
/// level. The levels are unrolled so that no thread indexes the layout at run time: on cuda that
/// copied it to every thread's stack, and the launch took 16 instead of 6 µs at 10^8 objects.
SHOAL_DEVICE inline void open_fresh_range(const heap_view& h, std::uint32_t t, std::uint64_t fresh, std::uint64_t end,
                                          std::uint64_t rank, std::uint64_t threads) {
  if (end <= fresh) return;
#pragma unroll
  for (int level = 0; level < bitmap_layout::max_levels; ++level) {
    if (level > h.layout.top()) break;
    std::uint64_t first = 0, last = 0;
    h.free_blocks().range_words(level, fresh, end, first, last);
    for (std::uint64_t w = first + rank; w <= last; w += threads) {
      h.free_blocks().clear_range_word(level, w, fresh, end);
      h.allocated(t).set_range_word(level, w, fresh, end);
    }
  }
}

#if defined(SHOAL_BACKEND_CUDA)

inline constexpr int parallel_new_threads = 256;

/// Launch 1 (cooperative; it decides, and among blocks in use opens them): when the free blocks
/// are exactly those from fresh_from up, it only plans to open the lowest of them, which are
/// consecutive. Otherwise two phases with a grid-wide barrier between them:
///   1. every thread block counts the free blocks in its chunk of the free bitmap's words (a
///      block-wide prefix sum gives each word's offset in the chunk);
///   2. every thread block adds up the chunks before its own, then opens its chunk's blocks that
///      are among the lowest `needed`, one thread per bit, and lists them in order.
// 8 resident blocks of 256 threads per multiprocessor (at most 32 registers): a larger grid
// counts and opens faster.
template <std::uint32_t Capacity>
__global__ void __launch_bounds__(parallel_new_threads, 8)
    parallel_new_plan_kernel(heap_view h, std::uint32_t t, std::uint64_t n, parallel_new_scratch s) {
  // Launch 2 (a dependent) may get its thread blocks ready now; it waits for our results.
  arch::allow_dependent_launch();
  const std::uint64_t needed = (n + Capacity - 1) / Capacity;
  // Every thread reads both before either changes (launch 2 changes them, or thread block 0
  // after the barrier), so all take the same path.
  const unsigned long long fresh = arch::load_relaxed(fresh_from(h));
  const long long free = arch::load_relaxed(free_block_count(h));
  if (free == static_cast<long long>(h.blocks - fresh)) {
    const std::uint64_t opened = needed < static_cast<std::uint64_t>(free) ? needed : free, end = fresh + opened;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      *s.plan = parallel_new_plan{n < opened * Capacity ? n : opened * Capacity, fresh, opened, 1u};
      if (opened < needed) record_failed_allocations(h, t, n - opened * Capacity);
    }
    open_fresh_range(h, t, fresh, end, std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x,
                     std::uint64_t{gridDim.x} * blockDim.x);
    return;
  }
  namespace cg = cooperative_groups;
  using scan = cub::BlockScan<unsigned long long, parallel_new_threads>;
  using reduce = cub::BlockReduce<unsigned long long, parallel_new_threads>;
  __shared__ union {
    typename scan::TempStorage scan;
    typename reduce::TempStorage reduce;
  } temp;
  __shared__ unsigned long long chunks_before, chunks_all;
  const cg::grid_group grid = cg::this_grid();
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
    scan(temp.scan).ExclusiveSum(static_cast<unsigned long long>(arch::popc(word)), at, total);
    if (w < last) s.word_offsets[w] = in_chunk + at;
    in_chunk += total;
    __syncthreads();  // temp is reused
  }
  if (threadIdx.x == 0) s.chunk_counts[blockIdx.x] = in_chunk;
  grid.sync();

  // 2. The chunks before this one, and all of them (how many blocks can be opened).
  unsigned long long before = 0, all = 0;
  for (unsigned c = threadIdx.x; c < gridDim.x; c += parallel_new_threads) {
    const unsigned long long count = s.chunk_counts[c];
    all += count;
    if (c < blockIdx.x) before += count;
  }
  before = reduce(temp.reduce).Sum(before);
  __syncthreads();
  all = reduce(temp.reduce).Sum(all);
  if (threadIdx.x == 0) chunks_before = before, chunks_all = all;
  __syncthreads();
  before = chunks_before;
  const std::uint64_t opened = chunks_all < needed ? chunks_all : needed;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    arch::fetch_add_relaxed(free_block_count(h), -static_cast<long long>(opened));
    if (opened < needed) record_failed_allocations(h, t, n - opened * Capacity);
    *s.plan = parallel_new_plan{n < opened * Capacity ? n : opened * Capacity, 0, opened, 0u};
  }
  if (before < needed) {
    // One thread per bit: list and open the blocks (consecutive bits, consecutive headers).
    const std::uint64_t bits = (last - first) * 64;
    for (std::uint64_t base = 0; base < bits; base += parallel_new_threads) {
      // The same for the whole block: past the last word with a block to open, stop.
      if (before + s.word_offsets[first + base / 64] >= needed) break;
      const std::uint64_t k = base + threadIdx.x;
      if (k >= bits) break;
      const std::uint64_t w = first + k / 64;
      const std::uint64_t b = w * 64 + k % 64;
      const std::uint64_t word = free_words[w];
      const std::uint64_t below = word & ((std::uint64_t{1} << (k % 64)) - 1);
      const std::uint64_t at = before + s.word_offsets[w] + arch::popc(below);
      if (((word >> (k % 64)) & 1u) != 0 && at < needed) {
        s.list[at] = static_cast<std::uint32_t>(b);
        offer_spare_slots</*Bulk=*/true>(h, b, t, open_block<Capacity>(h.headers, t, b, at, n));
        if (at == opened - 1) arch::fetch_max_relaxed(fresh_from(h), static_cast<unsigned long long>(b + 1));
      }
    }
    __syncthreads();  // every thread above has read its words: now they change
    // One thread per word for the bitmaps: one atomic per word and bitmap.
    for (std::uint64_t w = first + threadIdx.x; w < last; w += parallel_new_threads) {
      const std::uint64_t at = before + s.word_offsets[w];
      if (at < needed) open_word(h, t, w, lowest_set_bits(free_words[w], needed - at));
    }
  }
}

/// Launch 2 (ordinary, a dependent of launch 1): a thread block per 2,048 consecutive objects,
/// 8 a thread, as a plain array is initialised, the hardware handing out the thread blocks as
/// processors free up. Fresh blocks: the thread block first opens the blocks that start among its
/// objects (a thread each, headers side by side), and thread 0 updates the counters. Else the
/// blocks are listed; when the list has no gap (its ends `used - 1` apart: it is increasing) the
/// block is computed, not read.
///
/// Measured on the H100 at 10^8 fresh objects (a plain initialisation of two arrays: 248 µs):
///   - a persistent grid making a fixed share per thread: 296 µs, the memory system serving its
///     warps so unevenly that some were done after 57 µs and others after 311;
///   - thread blocks taking tiles of objects from a counter in turn: 360–750 µs;
///   - a thread per object: 790 µs, each short-lived thread block waiting on its loads of the plan;
///   - 8 objects a thread, the thread of a block's first object writing its header: 380 µs;
///     headers first, side by side: 316 µs; and the loop unrolled: 301 µs.
inline constexpr std::uint32_t parallel_new_objects_per_thread = 8;
inline constexpr std::uint64_t parallel_new_objects_per_block =
    std::uint64_t{parallel_new_threads} * parallel_new_objects_per_thread;

template <class T, std::uint32_t Capacity, class Pack>
__global__ void __launch_bounds__(parallel_new_threads, 8)
    parallel_new_make_kernel(const heap_view* view, std::byte* data, std::uint64_t block_bytes,
                             block_header* headers, std::uint32_t t, std::uint64_t n, const parallel_new_plan* plan,
                             const std::uint32_t* list, Pack arguments) {
  if (threadIdx.x == 0) arch::detail::launch_context_ptr = view;
  arch::wait_for_previous_kernel();  // launch 1's plan, list and blocks
  __syncthreads();
  const construct_listed<T, Capacity, Pack> construct{data, block_bytes, t, list, arguments};
  const std::uint64_t made = plan->made;
  const std::uint64_t tile = std::uint64_t{blockIdx.x} * parallel_new_objects_per_block;
  if (tile >= made) return;
  const std::uint64_t tile_end = made - tile < parallel_new_objects_per_block ? made : tile + parallel_new_objects_per_block;
  if (plan->fresh != 0) {
    const std::uint64_t first = plan->first, opened = plan->opened;
    if (tile == 0 && threadIdx.x == 0) {
      arch::fetch_add_relaxed(free_block_count(*view), -static_cast<long long>(opened));
      arch::store_relaxed(fresh_from(*view), static_cast<unsigned long long>(first + opened));
    }
    for (std::uint64_t k = (tile + Capacity - 1) / Capacity + threadIdx.x; k * Capacity < tile_end; k += blockDim.x) {
      const std::uint64_t spare = open_block<Capacity>(headers, t, first + k, k, n);
      if (spare != 0) offer_spare_slots</*Bulk=*/true>(*view, first + k, t, spare);  // the last block
    }
#pragma unroll
    for (std::uint32_t j = 0; j < parallel_new_objects_per_thread; ++j) {
      const std::uint64_t i = tile + j * parallel_new_threads + threadIdx.x;
      if (i < tile_end)
        construct.at(i, static_cast<std::uint32_t>(first + i / Capacity), static_cast<std::uint32_t>(i % Capacity));
    }
    return;
  }
  const std::uint64_t used = (made + Capacity - 1) / Capacity;
  const std::uint32_t lowest = list[0];
  const bool consecutive = list[used - 1] - lowest == used - 1;
#pragma unroll
  for (std::uint32_t j = 0; j < parallel_new_objects_per_thread; ++j) {
    const std::uint64_t i = tile + j * parallel_new_threads + threadIdx.x;
    if (i < tile_end) {
      const std::uint64_t k = i / Capacity;
      construct.at(i, consecutive ? lowest + static_cast<std::uint32_t>(k) : list[k], static_cast<std::uint32_t>(i % Capacity));
    }
  }
}

/// Enqueues the creation of n objects of t (Capacity slots per block), object i as
/// T(i, arguments...); objects that do not fit are recorded as failed allocations.
template <class T, std::uint32_t Capacity, class Pack>
void parallel_new(const heap_view& h, const void* context, std::uint32_t t, std::uint64_t n,
                  const parallel_new_scratch& s, const Pack& arguments) {
  if (n == 0) return;
  arch::require_device();
  const auto plan = parallel_new_plan_kernel<Capacity>;
  static const unsigned resident = arch::resident_blocks(plan, parallel_new_threads);
  // A thread per word and per 16 objects, no more than fit at once: a larger grid pays more for
  // its barrier (two empty ones took 2.3 µs over 8 blocks and 4.7 µs over 1056 on the H100).
  const std::uint64_t items = std::max<std::uint64_t>(n / 16, h.layout.words[0]);
  const std::uint64_t want = (items + parallel_new_threads - 1) / parallel_new_threads;
  const auto grid = static_cast<unsigned>(std::min<std::uint64_t>({want, resident, s.max_chunks}));
  arch::launch_cooperative(plan, grid, parallel_new_threads, nullptr, h, t, n, s);
  const std::uint64_t blocks = (n + parallel_new_objects_per_block - 1) / parallel_new_objects_per_block;
  // The heap's view in device memory (the launch context) for what few threads need of it: a
  // kernel parameter that threads index at run time (a type's capacity, a bitmap level) is
  // copied to every thread's stack.
  const auto* view = static_cast<const heap_view*>(context);
  arch::launch_dependent(parallel_new_make_kernel<T, Capacity, Pack>, static_cast<unsigned>(blocks),
                         parallel_new_threads, nullptr, view, h.data, h.block_bytes, h.headers, t, n, s.plan,
                         s.list, arguments);
}

#else

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
                  const parallel_new_scratch& s, const Pack& arguments) {
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
  if (opened > 0) arch::fetch_max_relaxed(fresh_from(h), static_cast<unsigned long long>(s.list[opened - 1]) + 1);
  if (opened < needed) record_failed_allocations(h, t, n - opened * Capacity);
  const construct_listed<T, Capacity, Pack> construct{h.data, h.block_bytes, t, s.list, arguments};
  arch::for_each_index(n < opened * Capacity ? n : opened * Capacity,
                       [=](std::size_t i) { construct(i); }, context);
}

#endif

}  // namespace shoal::detail
