#pragma once
/// @file
/// Lists the set bits of a bitmap level in increasing order, up to a limit, on the device.
///
/// Atomic appends list bits in whatever order threads get there; where the order matters
/// (bulk creation that should fill the lowest free blocks, all-pairs sums that should add
/// partners in the same order every run) this one-block scan keeps it. One block of threads
/// walks the words in chunks with a block-wide prefix sum, so it takes no grid-wide
/// synchronisation and a single launch; it reads each word once. (parallel_new lists long runs
/// of blocks in order too, inside its own launch: runtime/parallel_new.hpp.)

#include <cstddef>
#include <cstdint>

#include "shoal/arch/error.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/launch.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <cub/block/block_scan.cuh>
#endif

namespace shoal {

#if defined(SHOAL_BACKEND_CUDA)

namespace detail {
inline constexpr int ordered_list_threads = 1024;

// A template (of its block size) so that the header may be included by many translation units.
// One block walks the words in chunks of Threads with a block-wide prefix sum of their bit
// counts, until the set bits seen reach `limit`.
template <int Threads>
__global__ void __launch_bounds__(Threads)
    list_set_bits_kernel(const std::uint64_t* words, std::uint64_t count, std::uint32_t* out,
                         unsigned long long limit, unsigned long long* listed) {
  using scan = cub::BlockScan<unsigned long long, Threads>;
  __shared__ typename scan::TempStorage temp;
  __shared__ unsigned long long carry;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (std::uint64_t base = 0; base < count; base += Threads) {
    const std::uint64_t w = base + threadIdx.x;
    std::uint64_t word = w < count ? words[w] : 0;
    unsigned long long at = 0, total = 0;
    scan(temp).ExclusiveSum(static_cast<unsigned long long>(arch::popc(word)), at, total);
    for (at += carry; word != 0 && at < limit; word &= word - 1)
      out[at++] = static_cast<std::uint32_t>(w * 64 + arch::lowest_bit(word));
    __syncthreads();  // every thread has read carry
    if (threadIdx.x == 0) carry += total;
    __syncthreads();
    if (carry >= limit) break;  // uniform: carry is shared
  }
  if (threadIdx.x == 0) *listed = carry < limit ? carry : limit;
}

}  // namespace detail

/// Writes the indices of the first `limit` set bits of `words[0, count)` to `out` in increasing
/// order and their number to *listed (device memory). Enqueued; does not wait.
inline void list_set_bits(const std::uint64_t* words, std::uint64_t count, std::uint32_t* out,
                          unsigned long long limit, unsigned long long* listed) {
  arch::require_device();
  detail::list_set_bits_kernel<detail::ordered_list_threads><<<1, detail::ordered_list_threads>>>(words, count, out, limit, listed);
  SHOAL_CUDA_CHECK(cudaGetLastError());
}

#else

inline void list_set_bits(const std::uint64_t* words, std::uint64_t count, std::uint32_t* out,
                          unsigned long long limit, unsigned long long* listed) {
  unsigned long long at = 0;
  for (std::uint64_t w = 0; w < count && at < limit; ++w)
    for (std::uint64_t word = words[w]; word != 0 && at < limit; word &= word - 1)
      out[at++] = static_cast<std::uint32_t>(w * 64 + arch::lowest_bit(word));
  *listed = at;
}

#endif

}  // namespace shoal
