#pragma once
/// @file
/// The random source of the random walks. Quality needs are modest (spread lanes over
/// different words), speed needs are not: splitmix64 over a per-lane state.

#include <cstdint>

#include "shoal/arch/lanes.hpp"

namespace shoal {

/// splitmix64 generator with one 64-bit state per walker (lane).
class walk_rng {
 public:
  /// Seeds from what differs between concurrent walkers: lane, processor (SM / cpu
  /// thread), a cycle counter and a caller-supplied salt (e.g. the thread's item index).
  SHOAL_DEVICE static walk_rng for_this_lane(std::uint64_t salt = 0) {
    return walk_rng(arch::cycle_counter() ^ (salt * 0x9E3779B97F4A7C15ull) ^
                    (static_cast<std::uint64_t>(arch::processor_id()) << 40) ^
                    (static_cast<std::uint64_t>(arch::lane_id()) << 58));
  }
  /// A generator started from `seed`.
  SHOAL_HD explicit walk_rng(std::uint64_t seed) : state_(seed) {}

  /// Next 64 random bits.
  SHOAL_HD std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) for n < 2^32 (multiply-shift; the tiny bias is irrelevant here).
  SHOAL_HD std::uint64_t below(std::uint64_t n) { return ((next() >> 32) * n) >> 32; }

 private:
  std::uint64_t state_;
};

}  // namespace shoal
