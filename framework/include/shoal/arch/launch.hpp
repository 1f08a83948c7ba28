#pragma once
/// @file
/// Launch a device function over n items: a grid-stride kernel on cuda, an OpenMP parallel
/// for on cpu. The function must be callable in device code: write lambdas as
/// `[=] SHOAL_DEVICE (std::size_t i) { ... }`.
///
/// Launches are asynchronous on cuda; call arch::synchronize() before reading results.
/// Consecutive items go to consecutive lanes, so a warp's accesses to item-indexed arrays
/// are coalesced and collaborative (warp-wide) algorithms see full warps.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "shoal/arch/error.hpp"

#if defined(SHOAL_BACKEND_CPU)
#include <thread>
#include <vector>
#endif

namespace shoal::arch {

#if defined(SHOAL_BACKEND_CUDA)

namespace detail {
// The launch context (e.g. the heap a kernel allocates from) reaches device code that has no
// access to kernel parameters (a class's operator new) through one shared-memory word per block.
static __shared__ const void* launch_context_ptr;

template <class F>
__global__ void for_each_index_kernel(const void* context, std::size_t n, F f) {
  if (threadIdx.x == 0) launch_context_ptr = context;
  __syncthreads();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    f(i);
}
}  // namespace detail

inline constexpr int launch_block_size = 256;

/// Enough blocks to cover n items, capped at a few waves (the kernel is grid-stride).
inline unsigned launch_grid_size(std::size_t n) {
  const std::size_t want = (n + launch_block_size - 1) / launch_block_size;
  const std::size_t cap = static_cast<std::size_t>(probe_device().multiprocessors) * 32;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(want, cap)));
}

namespace detail {
template <class F>
__global__ void for_each_counted_kernel(const void* context, const unsigned long long* count,
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

}  // namespace detail

/// The context pointer handed to the launch running this thread (nullptr if none).
__device__ SHOAL_FORCEINLINE const void* launch_context() { return detail::launch_context_ptr; }

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

template <class F>
void for_each_index(std::size_t n, F f, const void* context = nullptr, cudaStream_t stream = nullptr) {
  if (n == 0) return;
  require_device();
  detail::for_each_index_kernel<<<launch_grid_size(n), launch_block_size, 0, stream>>>(context, n, f);
  SHOAL_CUDA_CHECK(cudaGetLastError());
}

#else

namespace detail {
/// Index of the calling worker thread of the current launch (0 outside launches).
inline thread_local int worker_index = 0;
inline const void* launch_context_ptr = nullptr;
}  // namespace detail

/// The context pointer handed to the launch running this thread (nullptr if none).
inline const void* launch_context() { return detail::launch_context_ptr; }

/// cpu: OpenMP threads when available; otherwise (and in ThreadSanitizer builds, where
/// libgomp is not instrumented) std::threads with the same static schedule.
template <class F>
void for_each_index(std::size_t n, F f, const void* context = nullptr) {
  if (n == 0) return;
  detail::launch_context_ptr = context;
#if defined(_OPENMP) && !defined(SHOAL_CPU_STD_THREADS)
  const auto count = static_cast<long long>(n);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < count; ++i) f(static_cast<std::size_t>(i));
#else
  const std::size_t threads = std::min<std::size_t>(n, static_cast<std::size_t>(cpu_threads()));
  const std::size_t chunk = (n + threads - 1) / threads;
  auto run = [&](std::size_t t) {
    detail::worker_index = static_cast<int>(t);
    const std::size_t end = std::min(n, (t + 1) * chunk);
    for (std::size_t i = t * chunk; i < end; ++i) f(i);
    detail::worker_index = 0;
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (auto& th : pool) th.join();
#endif
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

#endif

}  // namespace shoal::arch
