#pragma once
/// @file
/// A host copy of the canvas and of the frame's values. On cuda the copy is enqueued on the
/// stream behind the drawing (pinned memory, cudaMemcpyAsync) and an event marks its end, so
/// the step loop goes on at once and whoever uses the frame (a PNG writer thread) waits for the
/// event; on the cpu backend drawing has already finished and the copy is a memcpy.

#include <cstddef>
#include <cstring>
#include <new>
#include <string>

#include "shoal/arch/error.hpp"
#include "shoal/viz/color.hpp"
#include "shoal/viz/image.hpp"

namespace shoal::viz {

class staging {
 public:
  staging(std::uint32_t width, std::uint32_t height, std::size_t values)
      : width_(width), height_(height), values_count_(values) {
    pixels_ = static_cast<pixel*>(host_allocate(pixel_bytes()));
    values_ = static_cast<unsigned long long*>(host_allocate(values * sizeof(unsigned long long) + 8));
#if defined(SHOAL_BACKEND_CUDA)
    // Blocking: a worker waiting for its copy sleeps instead of spinning on a core that another
    // worker could encode on (the copy may be many steps away).
    SHOAL_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming | cudaEventBlockingSync));
#endif
  }
  staging(const staging&) = delete;
  staging& operator=(const staging&) = delete;
  ~staging() {
#if defined(SHOAL_BACKEND_CUDA)
    cudaEventDestroy(done_);
#endif
    host_free(pixels_);
    host_free(values_);
  }

  /// Copies the canvas and the values (device memory) here, after the work queued so far.
  void capture(const pixel* canvas, const unsigned long long* values) {
#if defined(SHOAL_BACKEND_CUDA)
    SHOAL_CUDA_CHECK(cudaMemcpyAsync(pixels_, canvas, pixel_bytes(), cudaMemcpyDeviceToHost, nullptr));
    SHOAL_CUDA_CHECK(cudaMemcpyAsync(values_, values, values_count_ * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, nullptr));
    SHOAL_CUDA_CHECK(cudaEventRecord(done_, nullptr));
#else
    std::memcpy(pixels_, canvas, pixel_bytes());
    std::memcpy(values_, values, values_count_ * sizeof(unsigned long long));
#endif
  }
  /// Waits until the copy of the last capture() has landed (any thread).
  void wait() {
#if defined(SHOAL_BACKEND_CUDA)
    SHOAL_CUDA_CHECK(cudaEventSynchronize(done_));
#endif
  }

  image_view pixels() { return {pixels_, width_, height_}; }
  const unsigned long long* values() const { return values_; }
  std::size_t value_count() const { return values_count_; }

 private:
  std::size_t pixel_bytes() const { return std::size_t{width_} * height_ * sizeof(pixel); }
  static void* host_allocate(std::size_t bytes) {
#if defined(SHOAL_BACKEND_CUDA)
    void* p = nullptr;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocDefault) != cudaSuccess) {
      cudaGetLastError();
      throw backend_error("cannot allocate " + std::to_string(bytes) + " bytes of pinned host memory for a frame");
    }
    return p;
#else
    return ::operator new(bytes);
#endif
  }
  static void host_free(void* p) {
#if defined(SHOAL_BACKEND_CUDA)
    cudaFreeHost(p);
#else
    ::operator delete(p);
#endif
  }

  std::uint32_t width_, height_;
  std::size_t values_count_;
  pixel* pixels_ = nullptr;
  unsigned long long* values_ = nullptr;
#if defined(SHOAL_BACKEND_CUDA)
  cudaEvent_t done_{};
#endif
};

}  // namespace shoal::viz
