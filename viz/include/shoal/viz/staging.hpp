#pragma once
/// @file
/// A host copy of the canvas and of the frame's values. On cuda the copy runs on a stream of its
/// own once the drawing is done (pinned memory, cudaMemcpyAsync), so that it overlaps the next
/// steps instead of holding up the step stream (2.4 MB for a 768x768 frame: about 0.1 ms, 5% of
/// traffic's steps at a frame every 10), and an event marks its end: whoever uses the frame (a
/// PNG writer thread) waits for it, and so does the next drawing into the same canvas
/// (before_next_drawing). On the cpu backend drawing has already finished and the copy is a
/// memcpy.

#include <cstddef>
#include <cstring>
#include <new>
#include <string>

#include "shoal/arch/error.hpp"
#include "shoal/viz/color.hpp"
#include "shoal/viz/image.hpp"

namespace shoal::viz {

/// One slot of host memory for a captured frame: the canvas's pixels and the frame's values
/// (pinned on cuda). capture() enqueues the copy, wait() waits for it, before_next_drawing()
/// keeps later drawing from overwriting the canvas before it is copied.
class staging {
 public:
  /// Room for a width x height frame and `values` words; throws backend_error if the pinned
  /// memory cannot be allocated.
  staging(std::uint32_t width, std::uint32_t height, std::size_t values)
      : width_(width), height_(height), values_count_(values) {
    pixels_ = static_cast<pixel*>(host_allocate(pixel_bytes()));
    values_ = static_cast<unsigned long long*>(host_allocate(values * sizeof(unsigned long long) + 8));
#if defined(SHOAL_BACKEND_CUDA)
    // Blocking: a worker waiting for its copy sleeps instead of spinning on a core that another
    // worker could encode on (the copy may be many steps away).
    SHOAL_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming | cudaEventBlockingSync));
    SHOAL_CUDA_CHECK(cudaEventCreateWithFlags(&drawn_, cudaEventDisableTiming));
    SHOAL_CUDA_CHECK(cudaStreamCreateWithFlags(&copies_, cudaStreamNonBlocking));
#endif
  }
  staging(const staging&) = delete;
  staging& operator=(const staging&) = delete;
  ~staging() {
#if defined(SHOAL_BACKEND_CUDA)
    cudaEventDestroy(done_);
    cudaEventDestroy(drawn_);
    cudaStreamDestroy(copies_);
#endif
    host_free(pixels_);
    host_free(values_);
  }

  /// Copies the canvas and the values (device memory) here, after the work queued so far.
  void capture(const pixel* canvas, const unsigned long long* values) {
#if defined(SHOAL_BACKEND_CUDA)
    SHOAL_CUDA_CHECK(cudaEventRecord(drawn_, nullptr));
    SHOAL_CUDA_CHECK(cudaStreamWaitEvent(copies_, drawn_, 0));
    SHOAL_CUDA_CHECK(cudaMemcpyAsync(pixels_, canvas, pixel_bytes(), cudaMemcpyDeviceToHost, copies_));
    SHOAL_CUDA_CHECK(cudaMemcpyAsync(values_, values, values_count_ * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, copies_));
    SHOAL_CUDA_CHECK(cudaEventRecord(done_, copies_));
#else
    std::memcpy(pixels_, canvas, pixel_bytes());
    std::memcpy(values_, values, values_count_ * sizeof(unsigned long long));
#endif
  }
  /// Orders the work queued after this call (on the default stream) after the copy of the last
  /// capture(): the next drawing into the canvas and the values it copied must wait for it.
  void before_next_drawing() {
#if defined(SHOAL_BACKEND_CUDA)
    SHOAL_CUDA_CHECK(cudaStreamWaitEvent(nullptr, done_, 0));
#endif
  }
  /// Waits until the copy of the last capture() has landed (any thread).
  void wait() {
#if defined(SHOAL_BACKEND_CUDA)
    SHOAL_CUDA_CHECK(cudaEventSynchronize(done_));
#endif
  }

  /// The captured pixels (after wait()).
  image_view pixels() { return {pixels_, width_, height_}; }
  /// The captured values (after wait()).
  const unsigned long long* values() const { return values_; }
  /// How many values a capture copies.
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
  cudaEvent_t done_{}, drawn_{};
  cudaStream_t copies_{};
#endif
};

}  // namespace shoal::viz
