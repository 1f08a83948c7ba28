#pragma once
// Helpers shared by the backend test bodies (compiled for cpu and for cuda).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
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

/// Divisor for the rounds and sizes of the longest tests, from the environment variable
/// SHOAL_TEST_SCALE (default 1). scripts/gpu-check.sh sets it for the compute-sanitizer runs,
/// under which those tests run a hundred times slower; the patterns of contention stay the same,
/// only repeated fewer times. Not a number >= 1: the tests fail with a message, not a guess.
inline std::uint64_t test_scale() {
  static const std::uint64_t scale = [] {
    const char* v = std::getenv("SHOAL_TEST_SCALE");
    if (v == nullptr || *v == '\0') return std::uint64_t{1};
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*end != '\0' || n == 0) {
      ADD_FAILURE() << "SHOAL_TEST_SCALE=" << v << ": needs a whole number >= 1";
      return std::uint64_t{1};
    }
    return static_cast<std::uint64_t>(n);
  }();
  return scale;
}
/// n / test_scale(), at least `floor`.
inline std::uint64_t scaled(std::uint64_t n, std::uint64_t floor = 1) {
  const std::uint64_t s = n / test_scale();
  return s < floor ? floor : s;
}
/// n / test_scale()², at least `floor`: for the number of threads that contend for the same
/// words. Under the sanitizers contention, not only work, sets the time: 12,500 threads churning
/// one bitmap word did not finish in 350 s under racecheck, 781 took 0.9 s (H100).
inline std::uint64_t contended(std::uint64_t n, std::uint64_t floor = 1) {
  return scaled(scaled(n), floor);
}
/// log2 of test_scale(): for heap sizes, which must stay powers of two times a size.
inline int scale_shift() {
  int shift = 0;
  while ((std::uint64_t{2} << shift) <= test_scale() && shift < 8) ++shift;
  return shift;
}

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
