#pragma once
/// @file
/// Lists the set bits of a bitmap level in increasing order, up to a limit, on the device.
///
/// Atomic appends list bits in whatever order threads get there; where the order matters
/// (bulk creation that should fill the lowest free blocks, all-pairs sums that should add
/// partners in the same order every run) this one-block scan keeps it. One block of threads
/// walks the words in chunks with a block-wide prefix sum, so it takes no grid-wide
/// synchronisation and a single launch; it reads each word once. For long lists
/// (list_lowest_set_bits, parallel_new) the block only counts, and a second, grid-wide launch
/// writes the entries.

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

/// One block walks words[0, count) in chunks of Threads with a block-wide prefix sum of their
/// bit counts, until the set bits seen reach `limit`. For each word of a chunk, its thread calls
/// each(w, word, at), `at` being the set bits of the words before it. Returns the set bits seen;
/// `covered` becomes the number of words walked.
template <int Threads, class Each>
__device__ unsigned long long scan_set_bits(const std::uint64_t* words, std::uint64_t count,
                                            unsigned long long limit, std::uint64_t& covered, Each each) {
  using scan = cub::BlockScan<unsigned long long, Threads>;
  __shared__ typename scan::TempStorage temp;
  __shared__ unsigned long long carry;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  std::uint64_t base = 0;
  while (base < count) {
    const std::uint64_t w = base + threadIdx.x;
    const std::uint64_t word = w < count ? words[w] : 0;
    unsigned long long at = 0, total = 0;
    scan(temp).ExclusiveSum(static_cast<unsigned long long>(arch::popc(word)), at, total);
    if (w < count) each(w, word, carry + at);
    __syncthreads();  // every thread has read carry
    if (threadIdx.x == 0) carry += total;
    __syncthreads();
    base += Threads;
    if (carry >= limit) break;  // uniform: carry is shared
  }
  covered = base < count ? base : count;
  return carry;
}

// Templates (of their block size) so that the header may be included by many translation units.
template <int Threads>
__global__ void __launch_bounds__(Threads)
    list_set_bits_kernel(const std::uint64_t* words, std::uint64_t count, std::uint32_t* out,
                         unsigned long long limit, unsigned long long* listed) {
  std::uint64_t covered = 0;
  const unsigned long long seen =
      scan_set_bits<Threads>(words, count, limit, covered, [&](std::uint64_t w, std::uint64_t word, unsigned long long at) {
        for (; word != 0 && at < limit; word &= word - 1) out[at++] = static_cast<std::uint32_t>(w * 64 + arch::lowest_bit(word));
      });
  if (threadIdx.x == 0) *listed = seen < limit ? seen : limit;
}

/// offsets[w] = the number of set bits in words[0, w), for the words up to the one that reaches
/// `limit`; offsets[count] = the number of words so covered; *listed = min(set bits, limit).
template <int Threads>
__global__ void __launch_bounds__(Threads)
    set_bit_offsets_kernel(const std::uint64_t* words, std::uint64_t count, unsigned long long limit,
                           unsigned long long* offsets, unsigned long long* listed) {
  std::uint64_t covered = 0;
  const unsigned long long seen = scan_set_bits<Threads>(
      words, count, limit, covered, [&](std::uint64_t w, std::uint64_t, unsigned long long at) { offsets[w] = at; });
  if (threadIdx.x == 0) {
    offsets[count] = covered;
    *listed = seen < limit ? seen : limit;
  }
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

/// list_set_bits for long lists: the same result, but a block-wide scan only counts the bits of
/// each word, and a grid-wide launch writes the list, one thread per bit. One block writing every
/// entry took 1.6 ms for the 1.56 million blocks of 10^8 objects on the H100. `offsets` is
/// scratch of count + 1 elements.
inline void list_lowest_set_bits(const std::uint64_t* words, std::uint64_t count, std::uint32_t* out,
                                 unsigned long long limit, unsigned long long* listed, unsigned long long* offsets) {
  arch::require_device();
  detail::set_bit_offsets_kernel<detail::ordered_list_threads>
      <<<1, detail::ordered_list_threads>>>(words, count, limit, offsets, listed);
  SHOAL_CUDA_CHECK(cudaGetLastError());
  arch::for_each_counted(offsets + count, 64, count * 64, [=] SHOAL_DEVICE(std::size_t b) {
    const std::uint64_t word = words[b / 64];
    const std::uint64_t bit = std::uint64_t{1} << (b % 64);
    if ((word & bit) == 0) return;
    const unsigned long long at = offsets[b / 64] + arch::popc(word & (bit - 1));
    if (at < limit) out[at] = static_cast<std::uint32_t>(b);
  });
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

/// list_set_bits (see the cuda version; `offsets` is not needed here).
inline void list_lowest_set_bits(const std::uint64_t* words, std::uint64_t count, std::uint32_t* out,
                                 unsigned long long limit, unsigned long long* listed, unsigned long long*) {
  list_set_bits(words, count, out, limit, listed);
}

#endif

}  // namespace shoal
