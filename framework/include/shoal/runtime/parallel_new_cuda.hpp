#pragma once
/// @file
/// runtime.parallel_new on cuda (parallel_new.hpp has the whole story). Up to
/// parallel_new_one_block_objects objects, one launch of one thread block; up to
/// parallel_new_one_launch_blocks blocks into a heap believed fresh, one launch of a thread block
/// per tile; else two launches (a cooperative one that plans, and one that makes the objects, a
/// thread block per tile).

#include <algorithm>
#include <atomic>
#include <cstdint>

#include <cooperative_groups.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "shoal/arch/launch.hpp"
#include "shoal/runtime/parallel_new_parts.hpp"

namespace shoal::detail {

inline constexpr int parallel_new_threads = 256;
inline constexpr std::uint32_t parallel_new_objects_per_thread = 8;
/// The objects of one tile: a thread block makes them as a plain array is initialised.
inline constexpr std::uint64_t parallel_new_objects_per_block =
    std::uint64_t{parallel_new_threads} * parallel_new_objects_per_thread;
/// Up to this many objects, parallel_new is one launch of one thread block (8 tiles: 64 objects
/// a thread, some 130 KB for small objects, about a µs of one processor's stores).
inline constexpr std::uint64_t parallel_new_one_block_objects = 8 * parallel_new_objects_per_block;
/// ... whose one thread block has this many threads when the runtime believes the heap fresh:
/// each thread's objects are a chain of dependent instructions, so fewer objects a thread is
/// less time (10^3 objects 8.87 → 8.4 µs on the H100). Not otherwise: listing among used blocks
/// with block-wide prefix sums over 4× the threads took 17.1 against 13.9 µs.
inline constexpr int parallel_new_one_block_fresh_threads = 1024;
/// Up to this many blocks into a heap believed fresh, parallel_new is one launch of a thread
/// block per tile (parallel_new_tiles_kernel): 10^6 objects of 8 bytes, 489 tiles. Every
/// thread block takes a ticket from one counter; 10^8 objects would be 48,828 atomics on it.
inline constexpr std::uint64_t parallel_new_one_launch_blocks = 16384;

/// The rank in take_range of thread `threadIdx.x` of a thread block of `Threads` that then makes
/// a tile: the bitmap levels go to the middle warp, as the first warp opens the tile's blocks.
template <int Threads = parallel_new_threads>
__device__ std::uint64_t range_rank() { return (threadIdx.x + Threads / 2) % Threads; }

/// The end of the tile that starts at object `tile`, of the `made` objects (tiles of `Threads` ×
/// parallel_new_objects_per_thread objects).
template <int Threads = parallel_new_threads, class Index>
__device__ Index end_of_tile(Index made, Index tile) {
  constexpr Index size = Index{Threads} * parallel_new_objects_per_thread;
  return made - tile < size ? made : tile + size;
}
/// The first block that starts in the tile that starts at object `tile`, in the order of opening.
template <std::uint32_t Capacity, class Index = std::uint64_t>
__device__ Index first_block_of_tile(Index tile) {
  return (tile + Capacity - 1) / Capacity;
}

/// Makes the objects of one tile, `Threads` threads: those from `tile` (a multiple of the tile's
/// size, Threads × parallel_new_objects_per_thread) on, of the `made`. First the blocks that start among them are opened, a thread each, headers
/// side by side (the last block's spare slots offered); then the objects are made, 8 a thread,
/// as a plain array is initialised. The k-th block is `first` + k when `computed`, else list[k].
/// `Index` is the type of object and block indices: std::uint32_t wherever the launch makes fewer
/// than 2^32 objects (always, but for the making launch of over 2^32 - 2048), which halves the
/// instructions of each object's indexing (and of a constructor's arithmetic on its index, which
/// the compiler then knows to be below 2^32) and the registers. A thread block runs these
/// instructions one dependent on the next, a few cycles each: at 10^3 objects they, not the
/// stores, set the time; at 10^8 the making launch (32 registers a thread) no longer spills:
/// 295 → 263 µs on the H100, against 278 for the plain initialisation.
///
/// Measured on the H100 at 10^8 fresh objects (a plain initialisation of two arrays: 248 µs):
///   - a persistent grid making a fixed share per thread: 296 µs, the memory system serving its
///     warps so unevenly that some were done after 57 µs and others after 311;
///   - thread blocks taking tiles of objects from a counter in turn: 360–750 µs;
///   - a thread per object: 790 µs, each short-lived thread block waiting on its loads of the plan;
///   - 8 objects a thread, the thread of a block's first object writing its header: 380 µs;
///     headers first, side by side: 316 µs; and the loop unrolled: 301 µs.
template <class Index, int Threads = parallel_new_threads, class T, std::uint32_t Capacity, class Pack>
__device__ void make_tile(const heap_view& h, block_header* headers, const construct_listed<T, Capacity, Pack>& construct,
                          std::uint32_t t, std::uint64_t n, std::uint64_t all_made, std::uint64_t tile_start,
                          bool computed, std::uint64_t first) {
  const auto made = static_cast<Index>(all_made), tile = static_cast<Index>(tile_start);
  const Index tile_end = end_of_tile<Threads>(made, tile);
  const auto lowest = static_cast<Index>(first);  // a block index (below 2^32)
  for (Index k = first_block_of_tile<Capacity, Index>(tile) + threadIdx.x; k * Capacity < tile_end; k += blockDim.x) {
    const std::uint64_t b = computed ? lowest + k : construct.list[k];
    const std::uint64_t spare = open_block<Capacity>(headers, t, b, k, n);
    if (spare != 0) offer_spare_slots</*Bulk=*/true>(h, b, t, spare);  // the last block
  }
#pragma unroll
  for (std::uint32_t j = 0; j < parallel_new_objects_per_thread; ++j) {
    const Index i = tile + j * Threads + threadIdx.x;
    if (i < tile_end) {
      const Index k = i / Capacity;
      construct.at(i, static_cast<std::uint32_t>(computed ? lowest + k : construct.list[k]),
                   static_cast<std::uint32_t>(i % Capacity));
    }
  }
}

/// What opening `opened` blocks changes in the counters, once every thread of the launch has read
/// them: the free blocks, fresh_from (raised to `end`, past the highest opened block), and the
/// failed allocations (the objects beyond the `made`). With `known_fresh` (not unknown_fresh)
/// nobody read them before: this thread reads them as it changes them, to check the runtime's
/// knowledge (check_known_fresh), and waits for that reading last, so it is best called after
/// the thread's own objects are made.
__device__ inline void count_opened_blocks(const heap_view& h, std::uint32_t t, std::uint64_t n, std::uint64_t made,
                                           std::uint64_t opened, unsigned long long end,
                                           std::uint64_t known_fresh = unknown_fresh) {
  const bool known = known_fresh != unknown_fresh;
  const unsigned long long fresh_seen = known ? arch::load_relaxed(fresh_from(h)) : 0;
  const long long free_seen = known ? arch::load_relaxed(free_block_count(h)) : 0;
  arch::add_relaxed(free_block_count(h), -static_cast<long long>(opened));
  arch::max_relaxed(fresh_from(h), end);
  if (made < n) record_failed_allocations(h, t, n - made);
  if (known) check_known_fresh(h, known_fresh, fresh_seen, free_seen);
}

/// Lists the lowest k free blocks in order (all of them if there are fewer) and takes them in the
/// bitmaps for t; returns how many. For one thread block, which runs it alone. A descent from the
/// top word: each set bit above the leaves stands for a non-empty word below it, so the lowest k
/// free blocks lie under the lowest k set bits of each level. At each level the words found at
/// the level above are read in order, 4 a thread and a block-wide prefix sum at a time, until k
/// set bits are found; theirs are the next level's words. The levels alternate between `list`
/// and `spare` (at least words[0] entries), so that the leaf level writes `list`.
/// The bitmaps change with reductions that nothing waits for: in the free bitmap every free
/// block from the lowest listed one up to the next free block is taken, which is a range
/// (take_range); in t's allocated bitmap each leaf word's bits and the bits above them are set
/// (mark_bits). The range ends at the next free block, not just past the highest listed one:
/// a parent bit is cleared only when every bit under it lies below the range's end, and the
/// blocks between the highest listed one and the next free one are all in use, so a word that
/// they share with the listed ones empties. (Ending past the highest listed block left a set
/// parent bit over an emptied word whenever used blocks followed it in its word.) So the descent
/// finds k + 1 free blocks, and lists the one past the k taken as list[k].
template <int Threads = parallel_new_threads>
__device__ std::uint64_t list_lowest_free_blocks(const heap_view& h, std::uint32_t t, std::uint64_t k,
                                                 std::uint32_t* list, std::uint32_t* spare) {
  constexpr int per_thread = 4;
  using scan = cub::BlockScan<unsigned, Threads>;
  __shared__ typename scan::TempStorage temp;
  const int top = h.layout.top();
  std::uint32_t* in = top % 2 == 0 ? spare : list;
  std::uint32_t* out = top % 2 == 0 ? list : spare;
  if (threadIdx.x == 0) in[0] = 0;  // the top level's one word
  __syncthreads();
  std::uint64_t words = 1;  // at this level, from in[0]
  const std::uint64_t wanted = k + 1;  // the k to take and the next free block (the range's end)
  for (int level = top; level >= 0; --level) {
    // The free bitmap's level, addressed through h (device memory): a bitmap_ref holds a copy
    // of the layout, which indexing at run time would put on the stack.
    const std::uint64_t* level_words = h.bitmap_words + h.layout.offset[level];
    std::uint64_t found = 0;  // set bits in the words read so far (the same in every thread)
    for (std::uint64_t base = 0; base < words && found < wanted; base += per_thread * Threads) {
      std::uint32_t index[per_thread];
      std::uint64_t word[per_thread];
#pragma unroll
      for (int r = 0; r < per_thread; ++r) {  // every load issued before any is waited for
        const std::uint64_t j = base + r * Threads + threadIdx.x;
        index[r] = j < words ? in[j] : 0;
      }
#pragma unroll
      for (int r = 0; r < per_thread; ++r) word[r] = base + r * Threads + threadIdx.x < words ? level_words[index[r]] : 0;
#pragma unroll
      for (int r = 0; r < per_thread; ++r) {
        const std::uint64_t j = base + r * Threads + threadIdx.x;
        if (j - threadIdx.x >= words) break;  // the same in every thread
        unsigned at = 0, total = 0;
        scan(temp).ExclusiveSum(static_cast<unsigned>(arch::popc(word[r])), at, total);
        if (found + at < wanted && word[r] != 0) {
          const std::uint64_t mask = lowest_set_bits(word[r], wanted - found - at);
          std::uint64_t put = found + at;
          for (std::uint64_t m = mask; m != 0; m &= m - 1)
            out[put++] = static_cast<std::uint32_t>(std::uint64_t{index[r]} * 64 + arch::lowest_bit(m));
          if (level == 0 && found + at < k) h.allocated(t).mark_bits(index[r], lowest_set_bits(mask, k - found - at));
        }
        found += total;
        __syncthreads();  // temp is reused
      }
    }
    words = found < wanted ? found : wanted;
    std::swap(in, out);
    __syncthreads();  // this level's words, written by all, are read by all at the next
  }
  const std::uint64_t taken = words < k ? words : k;
  if (taken > 0) take_range(h, t, list[0], words > k ? list[k] : h.blocks, false, threadIdx.x, Threads);
  return taken;
}

/// parallel_new of up to parallel_new_one_block_objects objects: one launch of one thread block of
/// `Threads`, which finds the blocks and makes the objects, tile after tile. Two launches cost 13.6 µs for
/// 10^3 objects on the H100, against 7.0 for a plain initialisation of their fields; this launch
/// 8.9 (against 6.7 in that run).
/// `h` is the heap's view as a parameter (no load before the work can start); list_lowest_free_
/// blocks, which indexes its layout at run time, gets `view` (the same in device memory).
/// With `known_fresh` (not unknown_fresh) the runtime knows that the free blocks are exactly those
/// from known_fresh up, and nothing waits for the counters: thread 0 reads them only to check that
/// knowledge, as it changes them after its objects (count_opened_blocks).
template <int Threads, class T, std::uint32_t Capacity, class Pack>
__global__ void __launch_bounds__(Threads)
    parallel_new_one_block_kernel(heap_view h, const heap_view* view, std::uint32_t t, std::uint64_t n,
                                  std::uint64_t known_fresh, parallel_new_scratch s, Pack arguments) {
  __shared__ unsigned long long fresh_read;
  __shared__ long long free_read;
  const bool known = known_fresh != unknown_fresh;
  if (threadIdx.x == 0) arch::detail::launch_context_ptr = view;
  arch::wait_for_previous_kernel();  // the heap as the work before left it
  if (!known && threadIdx.x == 0) {
    fresh_read = arch::load_relaxed(fresh_from(h));
    free_read = arch::load_relaxed(free_block_count(h));
  }
  __syncthreads();
  const std::uint64_t fresh = known ? known_fresh : fresh_read;
  const long long free = known ? static_cast<long long>(h.blocks - known_fresh) : free_read;
  const std::uint64_t needed = (n + Capacity - 1) / Capacity;
  const bool consecutive = free == static_cast<long long>(h.blocks - fresh);
  const std::uint64_t opened =
      consecutive ? (needed < static_cast<std::uint64_t>(free) ? needed : free)
                  : list_lowest_free_blocks<Threads>(*view, t, needed, s.list,
                                                     reinterpret_cast<std::uint32_t*>(s.word_offsets));
  if (consecutive) open_fresh_range(h, t, fresh, fresh + opened, range_rank<Threads>(), Threads);
  const std::uint64_t made = n < opened * Capacity ? n : opened * Capacity;
  const construct_listed<T, Capacity, Pack> construct{h.data, h.block_bytes, t, s.list, arguments};
  for (std::uint64_t tile = 0; tile < made; tile += std::uint64_t{Threads} * parallel_new_objects_per_thread)
    make_tile<std::uint32_t, Threads>(h, h.headers, construct, t, n, made, tile, consecutive, fresh);
  if (threadIdx.x == 0)  // it read them itself (unless known); the list, after the listing's barrier
    count_opened_blocks(h, t, n, made, opened,
                        consecutive ? fresh + opened : opened > 0 ? s.list[opened - 1] + 1ull : 0ull, known_fresh);
}

/// parallel_new of up to parallel_new_one_launch_blocks blocks into a heap that the runtime
/// believes fresh (nothing but parallel_new ran on it since it was cleared): one launch, a thread
/// block per tile. Each thread block reads the counters, then takes a ticket. Every thread block
/// reads them before any changes them: the holder of the last ticket does, once it knows how
/// many blocks were opened (fresh blocks: after its tile, so that no thread block waits for its
/// ticket before it starts its work).
///   - The free blocks are exactly those from fresh_from up (what the runtime believed): every
///     thread block opens the blocks of its own tile (bitmap ranges, headers) and makes its
///     objects, none waiting for another.
///   - Otherwise (the belief was wrong: device code ran on the heap unseen), the holder of the
///     first ticket lists and takes the lowest free blocks, then names this launch in `ready`;
///     the others wait for that. It took its ticket before any of them, so it runs while they
///     wait. Correct, but slow: 44 µs for 10^6 objects among used blocks on the H100, twice
///     what the two launches take; so the runtime uses this launch only when it believes the heap
///     fresh.
/// When the runtime knows fresh_from (`known_fresh`), no thread block reads the counters or takes
/// a ticket: each opens its tile's blocks and makes its objects at once, and thread block 0
/// changes the counters (and checks that they were as known).
/// For 10^6 objects the two launches took 15.8 µs on the H100, this launch 12.4, and a plain
/// initialisation 10.
template <class T, std::uint32_t Capacity, class Pack>
__global__ void __launch_bounds__(parallel_new_threads, 8)
    parallel_new_tiles_kernel(heap_view h, const heap_view* view, std::uint32_t t, std::uint64_t n,
                              std::uint64_t known_fresh, parallel_new_scratch s, unsigned long long launch,
                              Pack arguments) {
  __shared__ unsigned ticket;
  __shared__ unsigned long long fresh, listed;
  __shared__ long long free;
  if (threadIdx.x == 0) arch::detail::launch_context_ptr = view;
  arch::wait_for_previous_kernel();  // the heap as the work before left it
  const std::uint64_t needed = (n + Capacity - 1) / Capacity;
  const std::uint64_t tile = std::uint64_t{blockIdx.x} * parallel_new_objects_per_block;
  const construct_listed<T, Capacity, Pack> construct{h.data, h.block_bytes, t, s.list, arguments};
  const bool known = known_fresh != unknown_fresh;
  unsigned my_ticket = 0;  // thread 0's; fresh blocks: not waited for until the tile is made
  if (!known && threadIdx.x == 0) {
    fresh = arch::load_relaxed(fresh_from(h));
    free = arch::load_relaxed(free_block_count(h));
    arch::fence();  // the readings, before the ticket that lets the last holder change them
    my_ticket = atomicInc(&s.plan->tickets, gridDim.x - 1);
  }
  __syncthreads();
  // Known: nothing to read first, no tickets, and thread block 0 changes the counters.
  const std::uint64_t first = known ? known_fresh : fresh;
  const long long available = known ? static_cast<long long>(h.blocks - known_fresh) : free;
  if (available == static_cast<long long>(h.blocks - first)) {
    const std::uint64_t opened = needed < static_cast<std::uint64_t>(available) ? needed : available;
    const std::uint64_t made = n < opened * Capacity ? n : opened * Capacity;
    if (tile < made) {
      // The blocks that start in this tile: the tiles' ranges meet, so the whole range is opened.
      open_fresh_range(h, t, first + first_block_of_tile<Capacity>(tile),
                       first + first_block_of_tile<Capacity>(end_of_tile(made, tile)), range_rank(),
                       parallel_new_threads);
      make_tile<std::uint32_t>(h, h.headers, construct, t, n, made, tile, true, first);
    }
    if (threadIdx.x == 0 && (known ? blockIdx.x == 0 : my_ticket == gridDim.x - 1))
      count_opened_blocks(h, t, n, made, opened, first + opened, known_fresh);
    return;
  }
  if (threadIdx.x == 0) ticket = my_ticket;
  __syncthreads();
  const bool last = ticket == gridDim.x - 1;
  if (ticket == 0) {
    const std::uint64_t opened =
        list_lowest_free_blocks(*view, t, needed, s.list, reinterpret_cast<std::uint32_t*>(s.word_offsets));
    if (threadIdx.x == 0) {
      listed = opened;
      s.plan->opened = opened;
      arch::fence();  // the list (this thread block's: it has passed a barrier)
      arch::store_release(s.plan->ready, launch);
    }
  } else if (threadIdx.x == 0) {
    while (arch::load_acquire(s.plan->ready) != launch) arch::spin_pause();
    listed = arch::load_relaxed(s.plan->opened);
  }
  __syncthreads();
  const std::uint64_t opened = listed;
  const std::uint64_t made = n < opened * Capacity ? n : opened * Capacity;
  if (last && threadIdx.x == 0) count_opened_blocks(h, t, n, made, opened, opened > 0 ? s.list[opened - 1] + 1ull : 0ull);
  if (tile < made) make_tile<std::uint32_t>(h, h.headers, construct, t, n, made, tile, false, 0);
}

/// Launch 1 of two (cooperative; it decides, and among blocks in use lists them): when the free
/// blocks are exactly those from fresh_from up, it only plans to open the lowest of them, which
/// are consecutive. Otherwise two phases with a grid-wide barrier between them:
///   1. every thread block counts the free blocks in its chunk of the free bitmap's words (a
///      block-wide prefix sum gives each word's offset in the chunk);
///   2. every thread block adds up the chunks before its own, then lists its chunk's blocks that
///      are among the lowest `needed`, one thread per bit, and takes them in the bitmaps.
// 8 resident blocks of 256 threads per multiprocessor (at most 32 registers): a larger grid
// counts and lists faster.
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
      s.plan->made = n < opened * Capacity ? n : opened * Capacity;
      s.plan->first = fresh;
      s.plan->opened = opened;
      s.plan->fresh = 1u;
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
    arch::add_relaxed(free_block_count(h), -static_cast<long long>(opened));
    if (opened < needed) record_failed_allocations(h, t, n - opened * Capacity);
    s.plan->made = n < opened * Capacity ? n : opened * Capacity;
    s.plan->opened = opened;
    s.plan->fresh = 0u;
  }
  if (before < needed) {
    // One thread per bit: list the blocks (launch 2 writes their headers).
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
        if (at == opened - 1) arch::max_relaxed(fresh_from(h), static_cast<unsigned long long>(b + 1));
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

/// Launch 2 of two (ordinary, a dependent of launch 1): a thread block per tile, the hardware
/// handing out the thread blocks as processors free up. Fresh blocks: thread 0 of the first tile
/// updates the counters (launch 1's thread blocks all read them, with no barrier between). Else
/// the blocks are listed; when the list has no gap (its ends `used - 1` apart: it is increasing)
/// the block is computed, not read.
template <class Index, class T, std::uint32_t Capacity, class Pack>
__global__ void __launch_bounds__(parallel_new_threads, 8)
    parallel_new_make_kernel(const heap_view* view, std::byte* data, std::uint64_t block_bytes,
                             block_header* headers, std::uint32_t t, std::uint64_t n, const parallel_new_plan* plan,
                             const std::uint32_t* list, Pack arguments) {
  if (threadIdx.x == 0) arch::detail::launch_context_ptr = view;
  arch::wait_for_previous_kernel();  // launch 1's plan, list and bitmaps
  __syncthreads();
  const construct_listed<T, Capacity, Pack> construct{data, block_bytes, t, list, arguments};
  const std::uint64_t made = plan->made;
  const std::uint64_t tile = std::uint64_t{blockIdx.x} * parallel_new_objects_per_block;
  if (tile >= made) return;
  if (plan->fresh != 0) {
    const std::uint64_t first = plan->first, opened = plan->opened;
    if (tile == 0 && threadIdx.x == 0) {
      arch::add_relaxed(free_block_count(*view), -static_cast<long long>(opened));
      arch::store_relaxed(fresh_from(*view), static_cast<unsigned long long>(first + opened));
    }
    make_tile<Index>(*view, headers, construct, t, n, made, tile, true, first);
    return;
  }
  const std::uint64_t used = (made + Capacity - 1) / Capacity;
  const std::uint32_t lowest = list[0];
  const bool consecutive = list[used - 1] - lowest == used - 1;
  make_tile<Index>(*view, headers, construct, t, n, made, tile, consecutive, lowest);
}

/// A name for a launch of parallel_new_tiles_kernel, for its `ready`: unique in the process, so
/// that no launch, of any type, takes another's `ready` for its own. (One counter per template
/// instance, as first written, gave the first launches of two types the same name.)
inline unsigned long long next_parallel_new_launch() {
  static std::atomic<unsigned long long> launches{0};
  return ++launches;
}

/// Enqueues the creation of n objects of t (Capacity slots per block), object i as
/// T(i, arguments...); objects that do not fit are recorded as failed allocations.
/// `believed_fresh`: the runtime saw nothing but parallel_new run on the heap since it was
/// cleared; `known_fresh` (else unknown_fresh): moreover no view of the heap was given out, so
/// no device code it did not launch can have changed it, and the free blocks are exactly those
/// from known_fresh up. Known, the launch needs to read nothing before it opens blocks; believed
/// only, it reads the counters first, and lists the lowest free blocks if the belief was wrong.
template <class T, std::uint32_t Capacity, class Pack>
void parallel_new(const heap_view& h, const void* context, std::uint32_t t, std::uint64_t n,
                  const parallel_new_scratch& s, bool believed_fresh, std::uint64_t known_fresh,
                  const Pack& arguments) {
  if (n == 0) return;
  arch::require_device();
  // The heap's view in device memory (the launch context) for what threads index at run time (a
  // type's capacity, a bitmap level): a kernel parameter indexed so is copied to every thread's
  // stack.
  const auto* view = static_cast<const heap_view*>(context);
  if (n <= parallel_new_one_block_objects) {
    constexpr int wide = parallel_new_one_block_fresh_threads;
    const auto kernel = believed_fresh ? parallel_new_one_block_kernel<wide, T, Capacity, Pack>
                                       : parallel_new_one_block_kernel<parallel_new_threads, T, Capacity, Pack>;
    arch::launch_dependent(kernel, 1, believed_fresh ? wide : parallel_new_threads, nullptr, h, view, t, n,
                           known_fresh, s, arguments);
    return;
  }
  const auto tiles = static_cast<unsigned>((n + parallel_new_objects_per_block - 1) / parallel_new_objects_per_block);
  if (believed_fresh && (n + Capacity - 1) / Capacity <= parallel_new_one_launch_blocks) {
    arch::launch_dependent(parallel_new_tiles_kernel<T, Capacity, Pack>, tiles,
                           parallel_new_threads, nullptr, h, view, t, n, known_fresh, s, next_parallel_new_launch(),
                           arguments);
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
  // 32-bit indices wherever they cannot wrap (the last tile's end included): fewer instructions
  // and registers a thread (this launch has 32, and spilled with 64-bit indices).
  const auto make = n <= std::uint64_t{UINT32_MAX} - parallel_new_objects_per_block
                        ? parallel_new_make_kernel<std::uint32_t, T, Capacity, Pack>
                        : parallel_new_make_kernel<std::uint64_t, T, Capacity, Pack>;
  arch::launch_dependent(make, tiles, parallel_new_threads, nullptr, view, h.data, h.block_bytes, h.headers, t, n,
                         s.plan, s.list, arguments);
}

}  // namespace shoal::detail
