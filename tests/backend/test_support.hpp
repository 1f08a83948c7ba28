#pragma once
// Helpers shared by the backend test bodies (compiled for cpu and for cuda).

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "shoal/shoal.hpp"

/// Skips the test (with the one-line reason) when the backend has no usable device.
#define SHOAL_REQUIRE_DEVICE()                                             \
  do {                                                                     \
    const auto& shoal_status_ = ::shoal::arch::probe_device();             \
    if (!shoal_status_.usable) GTEST_SKIP() << shoal_status_.reason;       \
  } while (0)

namespace shoal::test {

/// Scale for sizes that are cheap on a GPU but slow on two CPU cores.
#if defined(SHOAL_BACKEND_CUDA)
inline constexpr std::uint64_t scale_down = 1;
#else
inline constexpr std::uint64_t scale_down = 10;
#endif

/// Runs more threads than cores on the cpu backend, so lock-free code sees real preemption and
/// interleaving; restores the previous count when it goes out of scope.
class oversubscribe {
 public:
  explicit oversubscribe(int threads = 8) : previous_(arch::cpu_threads()) {
    arch::set_cpu_threads(threads);
  }
  ~oversubscribe() { arch::set_cpu_threads(previous_); }
  oversubscribe(const oversubscribe&) = delete;
  oversubscribe& operator=(const oversubscribe&) = delete;

 private:
  int previous_;
};

}  // namespace shoal::test
