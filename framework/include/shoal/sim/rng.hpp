#pragma once
/// @file
/// Counter-based random numbers for simulations: Philox4x32-10 (Random123) keyed by the seed and
/// counting (stable id, step, stream). A draw depends only on those four values, never on which
/// thread or heap slot asks, so a run is reproducible across runs, thread counts and backends:
///
///   sim::random r(seed, cell, step, sim::stream::move);  // one generator per decision
///   int dir = r.below(4);                                 // 0..3, unbiased
///   if (r.chance(breed_probability)) ...                  // integer threshold: same on CPU and GPU
///
/// Everything here is integer arithmetic (uniform() scales an integer by a power of two), so the
/// CPU and the GPU produce bit-identical sequences.

#include <cstdint>

#include <Random123/philox.h>

#include "shoal/config.hpp"

namespace shoal::sim {

/// A probability as an integer threshold out of 2^32, so that chance() compares integers on every
/// backend. Converting a double is exact (scaling by 2^32, then truncation); do it once, on the
/// host, where the parameter is read.
class probability {
 public:
  /// The threshold of certainty, 2^32: above every 32-bit draw.
  static constexpr std::uint64_t one = std::uint64_t{1} << 32;

  constexpr probability() = default;
  /// p clamped to [0, 1]; p = 0.02 gives threshold floor(0.02 × 2^32).
  SHOAL_HD constexpr explicit probability(double p)
      : threshold_(!(p > 0.0) ? 0 : p >= 1.0 ? one : static_cast<std::uint64_t>(p * 4294967296.0)) {}
  /// num / den exactly (rounded down to a multiple of 2^-32); den > 0, num <= den.
  SHOAL_HD static constexpr probability ratio(std::uint64_t num, std::uint64_t den) {
    probability p;
    p.threshold_ = num >= den ? one : (num << 32) / den;
    return p;
  }
  /// Out of 2^32: chance() is true when a 32-bit draw is below it.
  SHOAL_HD constexpr std::uint64_t threshold() const { return threshold_; }

 private:
  std::uint64_t threshold_ = 0;
};

/// A stream of 32-bit random words for one (seed, id, step, stream). Cheap to construct (nothing
/// is computed until the first draw); each Philox call yields four words. A stream holds 2^18
/// words; `stream` must be below 2^16.
class random {
 public:
  /// `stream` must be below this (it takes the high 16 bits of a counter word).
  static constexpr std::uint32_t max_streams = 1u << 16;

  /// The stream of (seed, id, step, stream); the same four values give the same words.
  SHOAL_HD random(std::uint64_t seed, std::uint64_t id, std::uint32_t step, std::uint32_t stream)
      : counter_{{static_cast<std::uint32_t>(id), static_cast<std::uint32_t>(id >> 32), step,
                  stream << 16}},
        key_{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}} {}

  /// The next 32 random bits.
  SHOAL_HD std::uint32_t next() {
    if (used_ == 4) {
      r123::Philox4x32 philox;
      words_ = philox(counter_, key_);
      counter_.v[3] += 1;  // block number in the low 16 bits of the stream word
      used_ = 0;
    }
    return words_.v[used_++];
  }

  /// Uniform in [0, n), n >= 1, without bias (Lemire's multiply-and-reject; rejections are rare
  /// and draw further words of the same stream, so they are as reproducible as the first draw).
  SHOAL_HD std::uint32_t below(std::uint32_t n) {
    std::uint64_t m = std::uint64_t{next()} * n;
    if (static_cast<std::uint32_t>(m) < n) {
      const std::uint32_t reject_below = (0u - n) % n;  // 2^32 mod n
      while (static_cast<std::uint32_t>(m) < reject_below) m = std::uint64_t{next()} * n;
    }
    return static_cast<std::uint32_t>(m >> 32);
  }

  /// True with probability p.
  SHOAL_HD bool chance(probability p) { return next() < p.threshold(); }

  /// Uniform in [0, 1): a multiple of 2^-24 (every float of this form is exact).
  SHOAL_HD float uniform() { return static_cast<float>(next() >> 8) * (1.0f / 16777216.0f); }
  /// Uniform in [0, 1): a multiple of 2^-53, from two words.
  SHOAL_HD double uniform_double() {
    const std::uint64_t hi = next() >> 5, lo = next() >> 6;  // 27 + 26 bits
    return static_cast<double>((hi << 26) | lo) * (1.0 / 9007199254740992.0);
  }

 private:
  r123::Philox4x32::ctr_type counter_;
  r123::Philox4x32::key_type key_;
  r123::Philox4x32::ctr_type words_{};
  int used_ = 4;
};

}  // namespace shoal::sim
