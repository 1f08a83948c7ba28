#pragma once
/// @file
/// The launch behind a do-all: phase 1 runs enumerate(i) for i in [0, enumerate_items), which
/// appends entries to a list and counts them in *count; phase 2 runs f(list[k], j, peek(list[k]))
/// for k in [0, *count) and j in [0, Per) — Per consecutive threads per entry, e.g. a do-all's
/// Per slots per listed block, with peek reading the block's snapshot word.
///
/// cuda: one cooperative launch, a grid barrier between the phases. Two plain launches cost a
/// lone do-all two launch latencies (12 µs on an H100 against 6 for one); a cooperative launch
/// is the one way to have every block of the grid resident, which a grid barrier needs, so it
/// cannot hang whatever else runs on the GPU. The grid is at most one wave of resident blocks.
/// cpu: the two phases one after the other.
///
/// Phase 2 reads peek(entry) one item ahead, before the item's turn, so that its latency overlaps
/// the previous item's work; it reads it again whenever a destroy (count_destroy(), which every
/// destroy calls) happened in the thread's warp since, so every destroy by the warp before an
/// item is seen.

#include <cstddef>
#include <cstdint>

#include "shoal/arch/launch.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <cooperative_groups.h>
#endif

namespace shoal::arch {

#if defined(SHOAL_BACKEND_CUDA)

namespace detail {
// Destroys so far by each warp of the block (wrapping), for phase 2 below: a warp that sees its
// count unchanged across an item's work knows that this work destroyed nothing.
static __shared__ unsigned warp_destroys[32];

__device__ SHOAL_FORCEINLINE unsigned& destroys_of_this_warp() {
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return warp_destroys[thread / 32];
}

template <std::uint32_t Per, class Enumerate, class F, class Peek>
__global__ void enumerate_then_visit_kernel(const void* context, std::size_t enumerate_items, Enumerate enumerate,
                                            const std::uint32_t* list, const unsigned long long* count,
                                            unsigned long long* reset, F f, Peek peek) {
  if (threadIdx.x == 0) launch_context_ptr = context;
  if (threadIdx.x < 32) warp_destroys[threadIdx.x] = 0;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::uint64_t i = first; i < enumerate_items; i += stride) enumerate(i);
  cooperative_groups::this_grid().sync();  // the list and *count are complete and visible
  if (reset != nullptr && first == 0) *reset = 0;

  const std::uint64_t n = *count * Per;
  const volatile unsigned& destroys = destroys_of_this_warp();
  unsigned destroys_seen = destroys;
  std::uint64_t i = first;
  std::uint32_t entry = i < n ? list[i / Per] : 0;
  std::uint64_t peeked = i < n ? peek(entry) : 0;
  for (; i < n; i += stride) {
    const std::uint32_t current = entry;
    const std::uint64_t current_peeked = peeked;
    const bool more = i + stride < n;
    if (more) {  // the next item's entry and peek, in flight while this item's work runs
      entry = list[(i + stride) / Per];
      peeked = peek(entry);
    }
    f(current, static_cast<std::uint32_t>(i % Per), current_peeked);
    const unsigned destroys_now = destroys;
    if (destroys_now != destroys_seen) {
      destroys_seen = destroys_now;
      if (more) peeked = peek(entry);
    }
  }
}
}  // namespace detail

/// Called by every destroy (after the object's slot is free): counts it for the warp (see the
/// file comment). A shared-memory atomic, a few cycles.
__device__ SHOAL_FORCEINLINE void count_destroy() { atomicAdd_block(&detail::destroys_of_this_warp(), 1u); }

/// See the file comment. `max_entries` (≥ the final *count) sizes the grid; *count must be 0 on
/// entry. If `reset` is given (not `count`), phase 2 sets *reset to 0: a counter that the next
/// such launch will use, so that no launch needs a memset of its own.
template <std::uint32_t Per, class Enumerate, class F, class Peek>
void enumerate_then_visit(std::size_t enumerate_items, Enumerate enumerate, const std::uint32_t* list,
                          const unsigned long long* count, std::size_t max_entries, F f, Peek peek,
                          const void* context = nullptr, unsigned long long* reset = nullptr,
                          cudaStream_t stream = nullptr) {
  require_device();
  auto* kernel = detail::enumerate_then_visit_kernel<Per, Enumerate, F, Peek>;
  // Blocks of this kernel that fit on the GPU at once (its registers decide): the most that a
  // cooperative launch accepts. Asked once per kernel.
  static const unsigned resident = [&] {
    int per_sm = 0;
    SHOAL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, launch_block_size, 0));
    return static_cast<unsigned>(per_sm) * static_cast<unsigned>(probe_device().multiprocessors);
  }();
  const std::size_t items = std::max(enumerate_items, max_entries * Per);
  const unsigned grid = std::max(1u, std::min(resident_grid_size(items), resident));
  void* arguments[] = {&context, &enumerate_items, &enumerate, &list, &count, &reset, &f, &peek};
  SHOAL_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(grid),
                                               dim3(launch_block_size), arguments, 0, stream));
}

#else

/// Phase 2 reads peek at each item's turn here: destroys need not be counted.
inline void count_destroy() {}

/// See the file comment (cpu: two launches, peek read at each item's turn).
template <std::uint32_t Per, class Enumerate, class F, class Peek>
void enumerate_then_visit(std::size_t enumerate_items, Enumerate enumerate, const std::uint32_t* list,
                          const unsigned long long* count, std::size_t max_entries, F f, Peek peek,
                          const void* context = nullptr, unsigned long long* reset = nullptr) {
  (void)max_entries;
  for_each_index(enumerate_items, enumerate, context);
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
