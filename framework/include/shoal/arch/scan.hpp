#pragma once
/// @file
/// Exclusive prefix sums of a device array: CUB's device-wide scan on cuda (enqueued on the
/// default stream, after the work before it), std::exclusive_scan on cpu (at once: cpu launches
/// are finished when they return).

#include <cstddef>
#include <cstdint>
#include <numeric>

#include "shoal/arch/error.hpp"
#include "shoal/arch/memory.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <cub/device/device_scan.cuh>
#endif

namespace shoal::arch {

/// out[i] = in[0] + ... + in[i - 1] (out[0] = 0) for i < n; `in` and `out` may be the same
/// array. `temp` is working memory kept by the caller between calls (grown when too small).
template <class T>
void exclusive_sum(const T* in, T* out, std::size_t n, device_buffer<std::byte>& temp) {
  if (n == 0) return;
#if defined(SHOAL_BACKEND_CUDA)
  std::size_t bytes = 0;
  SHOAL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n, nullptr));
  if (temp.size() < bytes) temp = device_buffer<std::byte>(bytes);
  SHOAL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, in, out, n, nullptr));
#else
  (void)temp;
  std::exclusive_scan(in, in + n, out, T{0});
#endif
}

}  // namespace shoal::arch
