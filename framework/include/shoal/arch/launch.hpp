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

#include "shoal/arch/error.hpp"

namespace shoal::arch {

#if defined(SHOAL_BACKEND_CUDA)

namespace detail {
template <class F>
__global__ void for_each_index_kernel(std::size_t n, F f) {
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

template <class F>
void for_each_index(std::size_t n, F f, cudaStream_t stream = nullptr) {
  if (n == 0) return;
  require_device();
  detail::for_each_index_kernel<<<launch_grid_size(n), launch_block_size, 0, stream>>>(n, f);
  SHOAL_CUDA_CHECK(cudaGetLastError());
}

#else

template <class F>
void for_each_index(std::size_t n, F f) {
  const auto count = static_cast<long long>(n);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < count; ++i) f(static_cast<std::size_t>(i));
}

#endif

}  // namespace shoal::arch
