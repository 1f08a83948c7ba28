#pragma once
/// @file
/// Times one region of device work for Google Benchmark's manual timing
/// (`->UseManualTime()` + `state.SetIterationTime(timer.seconds(...))`).
///
/// cuda: CUDA events around the launches on the default stream, so host-side launch latency
/// and the synchronization that follows are not counted, only what the GPU did in between.
/// cpu: the steady clock around the call, since cpu launches return only when the work is done.

#include <chrono>
#include <utility>

#include "shoal/arch/error.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace shoal::bench {

class device_timer {
 public:
#if defined(SHOAL_BACKEND_CUDA)
  /// Needs a usable device (creates two events).
  device_timer() {
    arch::require_device();
    SHOAL_CUDA_CHECK(cudaEventCreate(&start_));
    SHOAL_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~device_timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
#else
  device_timer() = default;
#endif
  device_timer(const device_timer&) = delete;
  device_timer& operator=(const device_timer&) = delete;

  /// Runs `launch` (which enqueues device work on the default stream) and returns the
  /// seconds that work took. Waits for the work to finish; rethrows its errors.
  template <class F>
  double seconds(F&& launch) {
#if defined(SHOAL_BACKEND_CUDA)
    SHOAL_CUDA_CHECK(cudaEventRecord(start_, nullptr));
    std::forward<F>(launch)();
    SHOAL_CUDA_CHECK(cudaEventRecord(stop_, nullptr));
    SHOAL_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SHOAL_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    arch::synchronize();  // surfaces a fault of the timed kernel as backend_error
    return static_cast<double>(ms) * 1e-3;
#else
    const auto begin = std::chrono::steady_clock::now();
    std::forward<F>(launch)();
    arch::synchronize();
    const auto end = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(end - begin).count();
#endif
  }

 private:
#if defined(SHOAL_BACKEND_CUDA)
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
#endif
};

}  // namespace shoal::bench
