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
/// cuda: one cooperative launch in three phases with a grid-wide barrier between them:
///   1. every thread block counts the free blocks in its chunk of the free bitmap's words (a
///      block-wide prefix sum gives each word's offset in the chunk);
///   2. every thread block adds up the chunks before its own, then opens its chunk's blocks that
///      are among the lowest `needed`, one thread per bit, and lists them in order;
///   3. the grid makes the objects: a thread per object when the blocks are consecutive (a fresh
///      or cleared heap), else 8 listed blocks per warp and turn (32 for many objects).
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

/// Opens listed block b, the `at`-th of the `needed` blocks that n objects of t fill (Capacity
/// slots each; the last one may be partly used): header and snapshot, and spare slots offered.
/// Its bitmap bits are the word's (open_listed_word).
template <std::uint32_t Capacity>
SHOAL_DEVICE void open_listed_block(const heap_view& h, std::uint32_t t, std::uint64_t b, std::uint64_t at,
                                    std::uint64_t n) {
  const std::uint64_t rest = n - at * Capacity;
  const auto taken = static_cast<std::uint32_t>(rest < Capacity ? rest : Capacity);
  const std::uint64_t free = spare_slots(h, t, taken);
  // The whole header in one 16-byte store (two 8-byte stores in the SASS), plain: nothing reads
  // it before the launch's barrier, which orders it. On the H100 at 10^8 objects: four stores
  // took 338 instead of 335 µs; a release store with its fence per block, 12 µs more; a header
  // left part-written (`returning` not stored), 375 instead of 369 µs, the L2 completing its
  // sectors from DRAM (33 instead of 8 MB read).
  h.headers[b] = block_header{free, t, 0u};
  arch::store_relaxed(h.snapshots[b], std::uint64_t{0});
  offer_spare_slots</*Bulk=*/true>(h, b, t, free);  // the last, partly used block's
}

/// The bitmaps' side of opening the blocks `mask` of leaf word w for t: no longer free, now t's.
/// (The mask is empty for a word below the lowest free blocks whose blocks are all in use.)
SHOAL_DEVICE inline void open_listed_word(const heap_view& h, std::uint32_t t, std::uint64_t w,
                                          std::uint64_t mask) {
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

/// Phase 3: object i in its listed block.
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
  /// Object i in slot `slot` of block b (its listed block, already loaded).
  SHOAL_DEVICE void at(std::size_t i, std::uint32_t b, std::uint32_t slot) const {
    void* p = reinterpret_cast<void*>(encode_pointer(data + b * block_bytes, slot, Capacity, type));
#if defined(__CUDA_ARCH__)
    __builtin_assume(__isGlobal(p));  // global stores, not generic ones
#endif
    arguments.apply([&](const auto&... a) { new (p) T(i, a...); });
  }
};

/// What parallel_new needs besides the heap: the list of opened blocks (one entry per block of
/// the heap) and, on cuda, scratch for the phases.
struct parallel_new_scratch {
  std::uint32_t* list;
  unsigned long long* word_offsets;  ///< one per leaf word of the block bitmaps
  unsigned long long* chunk_counts;  ///< one per thread block of the launch
  unsigned max_chunks;
};

#if defined(SHOAL_BACKEND_CUDA)

inline constexpr int parallel_new_threads = 256;

// 8 resident blocks of 256 threads per multiprocessor (at most 32 registers): the construction
// needs the whole GPU's warps in flight. With the compiler's 46 registers (5 blocks), 10^8
// objects took 1.56× as long on the H100 (661 against 424 µs, an earlier version).
template <class T, std::uint32_t Capacity, class Pack>
__global__ void __launch_bounds__(parallel_new_threads, 8)
    parallel_new_kernel(const void* context, heap_view h, std::uint32_t t, std::uint64_t n,
                        parallel_new_scratch s, Pack arguments) {
  namespace cg = cooperative_groups;
  using scan = cub::BlockScan<unsigned long long, parallel_new_threads>;
  using reduce = cub::BlockReduce<unsigned long long, parallel_new_threads>;
  __shared__ union {
    typename scan::TempStorage scan;
    typename reduce::TempStorage reduce;
  } temp;
  __shared__ unsigned long long chunks_before, chunks_all;
  if (threadIdx.x == 0) arch::detail::launch_context_ptr = context;
  const cg::grid_group grid = cg::this_grid();
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
        open_listed_block<Capacity>(h, t, b, at, n);
      }
    }
    __syncthreads();  // every thread above has read its words: now they change
    // One thread per word for the bitmaps: one atomic per word and bitmap.
    for (std::uint64_t w = first + threadIdx.x; w < last; w += parallel_new_threads) {
      const std::uint64_t at = before + s.word_offsets[w];
      if (at < needed) open_listed_word(h, t, w, lowest_set_bits(free_words[w], needed - at));
    }
  }
  grid.sync();

  // 3. The objects.
  const construct_listed<T, Capacity, Pack> construct{h.data, h.block_bytes, t, s.list, arguments};
  const std::uint64_t made = n < opened * Capacity ? n : opened * Capacity;
  const std::uint64_t used = (made + Capacity - 1) / Capacity;
  if (used == 0) return;  // the heap had no free block
  // Consecutive blocks (a fresh or cleared heap; the list is increasing, so it has no gap when
  // its ends are used - 1 apart): a thread per object, as a plain array is initialised, and no
  // list to read. 10^8 objects took 339 instead of 358 µs on the H100. (A kernel that only wrote
  // the objects' 800 MB took 277 µs with block indices it computed, and 297–307 µs with indices
  // from a list, however early they were loaded.)
  const std::uint32_t first_block = s.list[0];
  if (s.list[used - 1] - first_block == used - 1) {
    for (std::uint64_t i = grid.thread_rank(); i < made; i += grid.size())
      construct.at(i, first_block + static_cast<std::uint32_t>(i / Capacity), static_cast<std::uint32_t>(i % Capacity));
    return;
  }
  // Else a warp makes the objects of 8 (or 32) listed blocks per turn, consecutive slots in
  // consecutive lanes. Lanes 0-7 (0-31) load the turn's list entries with one load, and the next
  // turn's before this one's objects are made, so the stores wait for no load. (With one entry
  // per turn, loaded two turns ahead, 10^8 objects took 393 µs on the H100 instead of 373; with
  // warps taking blocks side by side rather than 8 consecutive ones, 406 µs.) 32 blocks per turn
  // when every warp gets at least one such turn: 10^8 objects 357 instead of 369 µs; with 32
  // always, 10^6 objects took 30 instead of 20 µs (a third of the warps had work).
  const std::uint32_t lane = threadIdx.x % 32;
  const auto make_turns = [&](auto per_turn_constant) {
    constexpr std::uint32_t per_turn = decltype(per_turn_constant)::value;
    const std::uint64_t stride = grid.size() / 32 * per_turn;
    std::uint64_t turn = grid.thread_rank() / 32 * per_turn;
    const auto entries = [&](std::uint64_t at) {
      return lane < per_turn && at + lane < used ? s.list[at + lane] : 0u;
    };
    std::uint32_t next = entries(turn);
    for (; turn < used; turn += stride) {
      const std::uint32_t mine = next;
      next = entries(turn + stride);
      for (std::uint32_t k = 0; k < per_turn; ++k) {
        const std::uint32_t b = __shfl_sync(~0u, mine, static_cast<int>(k));
        const std::uint64_t j = turn + k;
        for (std::uint32_t slot = lane; slot < Capacity; slot += 32)
          if (j * Capacity + slot < made) construct.at(j * Capacity + slot, b, slot);
      }
    }
  };
  if (used >= std::uint64_t{32} * (grid.size() / 32))
    make_turns(std::integral_constant<std::uint32_t, 32>{});
  else
    make_turns(std::integral_constant<std::uint32_t, 8>{});
}

/// Enqueues the creation of n objects of t (Capacity slots per block), object i as
/// T(i, arguments...); objects that do not fit are recorded as failed allocations.
template <class T, std::uint32_t Capacity, class Pack>
void parallel_new(const heap_view& h, const void* context, std::uint32_t t, std::uint64_t n,
                  const parallel_new_scratch& s, const Pack& arguments) {
  if (n == 0) return;
  arch::require_device();
  const auto kernel = parallel_new_kernel<T, Capacity, Pack>;
  static const unsigned resident = arch::resident_blocks(kernel, parallel_new_threads);
  // A thread per word in phase 1 and per 16 objects in phase 3, no more than fit at once: a
  // larger grid pays more for its barriers (two empty ones took 2.3 µs over 8 blocks and 4.7 µs
  // over 1056 on the H100).
  const std::uint64_t items = std::max<std::uint64_t>(n / 16, h.layout.words[0]);
  const std::uint64_t want = (items + parallel_new_threads - 1) / parallel_new_threads;
  const auto grid = static_cast<unsigned>(std::min<std::uint64_t>({want, resident, s.max_chunks}));
  arch::launch_cooperative(kernel, grid, parallel_new_threads, nullptr, context, h, t, n, s, arguments);
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
    open_listed_block<Capacity>(h, t, b, at, n);
  }
  open_listed_word(h, t, w, mask);
}

template <class T, std::uint32_t Capacity, class Pack>
void parallel_new(const heap_view& h, const void* context, std::uint32_t t, std::uint64_t n,
                  const parallel_new_scratch& s, const Pack& arguments) {
  if (n == 0) return;
  const std::uint64_t needed = (n + Capacity - 1) / Capacity;
  const std::uint64_t* free_words = h.free_blocks().level_words(0);
  std::uint64_t free = 0;
  for (std::uint64_t w = 0; w < h.layout.words[0]; ++w) free += arch::popc(free_words[w]);
  const std::uint64_t opened = free < needed ? free : needed;
  arch::fetch_sub(free_block_count(h), static_cast<long long>(opened));  // reserved, then taken
  for (std::uint64_t w = 0, at = 0; w < h.layout.words[0] && at < opened; ++w) {
    const std::uint64_t word = free_words[w];
    open_lowest_of_word<Capacity>(h, t, w, word, at, opened, n, s.list);
    at += arch::popc(word);
  }
  if (opened < needed) record_failed_allocations(h, t, n - opened * Capacity);
  const construct_listed<T, Capacity, Pack> construct{h.data, h.block_bytes, t, s.list, arguments};
  arch::for_each_index(n < opened * Capacity ? n : opened * Capacity,
                       [=](std::size_t i) { construct(i); }, context);
}

#endif

}  // namespace shoal::detail
