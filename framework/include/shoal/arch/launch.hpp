#pragma once
/// @file
/// Launch a device function over n items: a grid-stride kernel on cuda, a parallel loop on a
/// team of host threads on cpu (cpu_team.hpp). The function must be callable in device code:
/// write lambdas as `[=] SHOAL_DEVICE (std::size_t i) { ... }`.
///
/// Launches are asynchronous on cuda; call arch::synchronize() before reading results.
/// Consecutive items go to consecutive lanes, so a warp's accesses to item-indexed arrays
/// are coalesced and collaborative (warp-wide) algorithms see full warps.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "shoal/arch/error.hpp"

#if defined(SHOAL_BACKEND_CPU)
#include "shoal/arch/cpu_team.hpp"
#endif

namespace shoal::arch {

#if defined(SHOAL_BACKEND_CUDA)

/// Programmatic dependent launch (Hopper and later). A kernel launched as a dependent may start
/// while the kernel before it on the stream is still running, once every block of that one has
/// called allow_dependent_launch() (or ended); it must call wait_for_previous_kernel() before
/// it reads anything the previous kernel writes, which returns once that kernel has finished and
/// its writes are visible. Both are no-ops where unsupported or when not launched as a dependent.
/// What this saves is a launch latency (a few µs) between two kernels of one operation.
__device__ SHOAL_FORCEINLINE void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
/// Lets a dependent launch of the next kernel on the stream start once every block of this one has
/// called it (or ended); see wait_for_previous_kernel().
__device__ SHOAL_FORCEINLINE void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// kernel<<<grid, block, 0, stream>>>(args...) with one launch attribute.
template <class... Params, class... Args>
void launch_with(cudaLaunchAttribute attribute, void (*kernel)(Params...), unsigned grid, unsigned block,
                 cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(block);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  SHOAL_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

/// Launches kernel<<<grid, block, 0, stream>>>(args...) as a dependent of the previous kernel
/// on the stream where the device supports it (see wait_for_previous_kernel), else normally.
template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), unsigned grid, unsigned block, cudaStream_t stream,
                      Args&&... args) {
  if (!probe_device().dependent_launch) {
    kernel<<<grid, block, 0, stream>>>(std::forward<Args>(args)...);
    SHOAL_CUDA_CHECK(cudaGetLastError());
    return;
  }
  cudaLaunchAttribute dependent{};
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  launch_with(dependent, kernel, grid, block, stream, std::forward<Args>(args)...);
}

/// The most blocks of `block` threads of `kernel` that can be resident on the device at once:
/// the largest grid a cooperative launch (one that waits for its whole grid) may have.
template <class... Params>
unsigned resident_blocks(void (*kernel)(Params...), int block) {
  int per_multiprocessor = 0;
  SHOAL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, kernel, block, 0));
  return static_cast<unsigned>(per_multiprocessor * probe_device().multiprocessors);
}

/// Launches kernel<<<grid, block, 0, stream>>>(args...) cooperatively: all its blocks are
/// resident together, so it may wait for the whole grid (cooperative_groups::this_grid().sync())
/// between phases. `grid` must not exceed resident_blocks(kernel, block).
template <class... Params, class... Args>
void launch_cooperative(void (*kernel)(Params...), unsigned grid, unsigned block, cudaStream_t stream,
                        Args&&... args) {
  cudaLaunchAttribute cooperative{};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  launch_with(cooperative, kernel, grid, block, stream, std::forward<Args>(args)...);
}

/// Threads per block of the grid-stride launches.
inline constexpr int launch_block_size = 256;
#ifndef SHOAL_LAUNCH_MIN_BLOCKS
#define SHOAL_LAUNCH_MIN_BLOCKS 3  // a build may set another (-DSHOAL_LAUNCH_MIN_BLOCKS=2) to compare
#endif
/// Blocks of the grid-stride launches that must fit on a multiprocessor together: their
/// registers are capped at 65536 / (3 × 256) = 80 per thread (37.5% occupancy). A method that
/// allocates inlines the allocator's fast path and calls its rare paths (prepares, other stocks),
/// which take every register they are allowed: uncapped, do-alls used 225–255 registers, one
/// block per multiprocessor. The spills are the same at 128, 80 and 64 registers (ptxas -v), all
/// in those rare paths. H200, one run (`SHOAL_LAUNCH_MIN_BLOCKS` 2 / 3 / 4): one lane per warp
/// allocating at 2^24 threads 637 / 486 / 432 µs, every lane 927 / 968 / 1145 µs, births in
/// holes 137 / 103 / 92 µs; Wa-Tor 0.367 / 0.352 / 0.366 s, traffic 1.540 / 1.452 / 1.438 s,
/// Barnes–Hut 0.567 / 0.571 / 0.578 s. Three blocks was the best for the apps.
inline constexpr int launch_min_blocks = SHOAL_LAUNCH_MIN_BLOCKS;

namespace detail {
// The launch context (e.g. the heap a kernel allocates from) reaches device code that has no
// access to kernel parameters (a class's operator new) through one shared-memory word per block.
static __shared__ const void* launch_context_ptr;

template <class F>
__global__ void __launch_bounds__(launch_block_size, launch_min_blocks) for_each_index_kernel(const void* context, std::size_t n, F f) {
  if (threadIdx.x == 0) launch_context_ptr = context;
  __syncthreads();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    f(i);
}
}  // namespace detail

/// Enough blocks to cover n items, capped at a few waves (the kernel is grid-stride).
inline unsigned launch_grid_size(std::size_t n) {
  const std::size_t want = (n + launch_block_size - 1) / launch_block_size;
  const std::size_t cap = static_cast<std::size_t>(probe_device().multiprocessors) * 32;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(want, cap)));
}

namespace detail {
template <class F>
__global__ void __launch_bounds__(launch_block_size, launch_min_blocks) for_each_counted_kernel(const void* context, const unsigned long long* count,
                                        std::size_t per_count, unsigned long long* reset, F f) {
  if (threadIdx.x == 0) launch_context_ptr = context;
  if (reset != nullptr && blockIdx.x == 0 && threadIdx.x == 0) *reset = 0;
  __syncthreads();
  const std::size_t n = *count * per_count;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    f(i);
}

// Destroys so far by each warp of the block (wrapping), for the listed launch below: a warp
// that sees its count unchanged across an item's work knows that this work destroyed nothing.
static __shared__ unsigned warp_destroys[32];

__device__ SHOAL_FORCEINLINE unsigned& destroys_of_this_warp() {
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return warp_destroys[thread / 32];
}

template <std::uint32_t Per, class F, class Peek>
__global__ void __launch_bounds__(launch_block_size, launch_min_blocks) for_each_listed_kernel(const void* context, const std::uint32_t* list,
                                       const unsigned long long* count, unsigned long long* reset,
                                       F f, Peek peek) {
  if (threadIdx.x == 0) launch_context_ptr = context;
  if (threadIdx.x < 32) warp_destroys[threadIdx.x] = 0;
  // Launched as a dependent: the list and its count are the previous kernel's results.
  wait_for_previous_kernel();
  if (reset != nullptr && blockIdx.x == 0 && threadIdx.x == 0) *reset = 0;
  __syncthreads();
  const std::uint64_t n = *count * Per;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Loads run ahead of the work so that an item's chain is its own work's loads alone: the list
  // entry two items ahead, and what peek() reads for the next item (from the entry loaded an
  // item earlier, so issuing it waits for nothing). With the entry one item ahead, the peek had
  // to wait for it before this item's work could start (ncu, do-all visit over 10^8 objects: 499
  // µs one ahead, 468 µs like this; the plain kernel 427 µs). The peek is repeated if the work
  // destroyed anything in this warp (the reader relies on seeing destroys made before its item,
  // e.g. a do-all's snapshot word).
  const volatile unsigned& destroys = destroys_of_this_warp();
  unsigned destroys_seen = destroys;
  std::uint32_t entry = i < n ? list[i / Per] : 0;
  std::uint64_t peeked = i < n ? peek(entry) : 0;
  std::uint32_t next_entry = i + stride < n ? list[(i + stride) / Per] : 0;
  for (; i < n; i += stride) {
    const std::uint32_t current = entry;
    const std::uint64_t current_peeked = peeked;
    const bool more = i + stride < n;
    entry = next_entry;
    if (i + 2 * stride < n) next_entry = list[(i + 2 * stride) / Per];
    if (more) peeked = peek(entry);
    f(current, static_cast<std::uint32_t>(i % Per), current_peeked);
    const unsigned destroys_now = destroys;
    if (destroys_now != destroys_seen) {
      destroys_seen = destroys_now;
      if (more) peeked = peek(entry);
    }
  }
}
}  // namespace detail

/// The context pointer handed to the launch running this thread (nullptr if none).
__device__ SHOAL_FORCEINLINE const void* launch_context() { return detail::launch_context_ptr; }

/// Called by every destroy (after the object's slot is free): counts it for the warp, see
/// for_each_listed. A shared-memory atomic, a few cycles.
__device__ SHOAL_FORCEINLINE void count_destroy() { atomicAdd_block(&detail::destroys_of_this_warp(), 1u); }

/// Blocks for a launch whose size is only known on the device: one wave of resident blocks
/// at most, since blocks beyond the count still cost a launch slot each (a do-all over few
/// objects must stay cheap).
inline unsigned resident_grid_size(std::size_t max_items) {
  constexpr std::size_t blocks_per_sm = 2048 / launch_block_size;
  const std::size_t want = (max_items + launch_block_size - 1) / launch_block_size;
  const std::size_t cap = static_cast<std::size_t>(probe_device().multiprocessors) * blocks_per_sm;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(want, cap)));
}

/// Runs f(i) for i in [0, *count × per_count), where *count is written by earlier device work
/// on the same stream: no copy to the host in between. `max_items` (≥ that product) sizes the
/// grid. If `reset` is given, the launch sets *reset to 0 (a counter the *next* counted launch
/// will use: resetting it here saves a memset per launch). It must not be `count`.
template <class F>
void for_each_counted(const unsigned long long* count, std::size_t per_count, std::size_t max_items,
                      F f, const void* context = nullptr, unsigned long long* reset = nullptr,
                      cudaStream_t stream = nullptr) {
  require_device();
  if (max_items == 0) {
    if (reset != nullptr) SHOAL_CUDA_CHECK(cudaMemsetAsync(reset, 0, sizeof *reset, stream));
    return;
  }
  detail::for_each_counted_kernel<<<resident_grid_size(max_items), launch_block_size, 0, stream>>>(
      context, count, per_count, reset, f);
  SHOAL_CUDA_CHECK(cudaGetLastError());
}

/// Runs f(list[k], j, peek(list[k])) for k in [0, *count) and j in [0, Per): `Per` items per entry
/// of a list whose length earlier device work wrote to *count (a do-all: Per slots per listed
/// block, peek reading the block's snapshot word). Consecutive items go to consecutive lanes.
/// `max_entries` (≥ *count) sizes the grid; `reset` as for for_each_counted. peek(entry) may be
/// read one item ahead, before the item's turn; it is read again whenever a destroy (count_destroy)
/// happened in the thread's warp since, so every destroy by the warp before an item is seen.
template <std::uint32_t Per, class F, class Peek>
void for_each_listed(const std::uint32_t* list, const unsigned long long* count, std::size_t max_entries,
                     F f, Peek peek, const void* context = nullptr, unsigned long long* reset = nullptr,
                     cudaStream_t stream = nullptr) {
  require_device();
  if (max_entries == 0) {
    if (reset != nullptr) SHOAL_CUDA_CHECK(cudaMemsetAsync(reset, 0, sizeof *reset, stream));
    return;
  }
  // As a dependent: its blocks get ready while the kernel that writes the list still runs.
  launch_dependent(detail::for_each_listed_kernel<Per, F, Peek>, resident_grid_size(max_entries * Per),
                   launch_block_size, stream, context, list, count, reset, f, peek);
}

/// Runs f(i) for i in [0, n) on `stream`, asynchronously; `context` is what launch_context() returns
/// in f. Consecutive items go to consecutive lanes.
template <class F>
void for_each_index(std::size_t n, F f, const void* context = nullptr, cudaStream_t stream = nullptr) {
  if (n == 0) return;
  require_device();
  detail::for_each_index_kernel<<<launch_grid_size(n), launch_block_size, 0, stream>>>(context, n, f);
  SHOAL_CUDA_CHECK(cudaGetLastError());
}

#else

namespace detail {
inline const void* launch_context_ptr = nullptr;
}  // namespace detail

/// The context pointer handed to the launch running this thread (nullptr if none).
inline const void* launch_context() { return detail::launch_context_ptr; }

/// Programmatic dependent launch does not exist here: launches run one after another.
inline void wait_for_previous_kernel() {}
/// cpu: no-op, like wait_for_previous_kernel().
inline void allow_dependent_launch() {}
/// for_each_listed reads peek at each item's turn here: destroys need not be counted.
inline void count_destroy() {}

/// cpu: the calling thread and the team's workers (cpu_team.hpp) take chunks of [0, n); a launch
/// of a few items runs on the calling thread alone.
template <class F>
void for_each_index(std::size_t n, F f, const void* context = nullptr) {
  if (n == 0) return;
  detail::launch_context_ptr = context;
  if (n <= detail::serial_items) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  detail::run_on_team(
      n,
      [](void* g, std::size_t begin, std::size_t end) {
        F& work = *static_cast<F*>(g);
        for (std::size_t i = begin; i < end; ++i) work(i);
      },
      &f);
}

/// Runs f(i) for i in [0, *count × per_count) (see the cuda version; here the count is read).
template <class F>
void for_each_counted(const unsigned long long* count, std::size_t per_count, std::size_t max_items,
                      F f, const void* context = nullptr, unsigned long long* reset = nullptr) {
  (void)max_items;
  const auto n = static_cast<std::size_t>(*count) * per_count;
  if (reset != nullptr) *reset = 0;
  for_each_index(n, f, context);
}

/// Runs f(list[k], j, peek(list[k])) for k in [0, *count) and j in [0, Per) (see the cuda
/// version; here peek is read at the item's turn).
template <std::uint32_t Per, class F, class Peek>
void for_each_listed(const std::uint32_t* list, const unsigned long long* count, std::size_t max_entries,
                     F f, Peek peek, const void* context = nullptr, unsigned long long* reset = nullptr) {
  (void)max_entries;
  const auto n = static_cast<std::size_t>(*count) * Per;
  if (reset != nullptr) *reset = 0;
  for_each_index(
      n, [&](std::size_t i) {
        const std::uint32_t entry = list[i / Per];
        f(entry, static_cast<std::uint32_t>(i % Per), peek(entry));
      },
      context);
}

#endif

}  // namespace shoal::arch
