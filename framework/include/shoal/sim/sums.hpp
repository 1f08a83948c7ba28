#pragma once
/// @file
/// Integer sums reduced on the device, for CSV columns such as "total energy" or "cars moving":
///
///   sim::sums totals(2);                                   // two running sums
///   totals.zero();                                         // enqueued, no wait
///   rt.parallel_do<&Shark::report>(totals.device());       // method: t.add(0, energy); t.add(1, 1);
///   const auto v = totals.read();                          // waits; v[0] / v[1] is a mean
///
/// Integer addition is associative, so the sums are the same whatever the order of the adds:
/// the reason they are integers. A real quantity (an energy, a momentum) is added as a whole
/// number of units with add_real(k, value * 1e12) and read with read_real(1e-12): rounded to
/// the unit, then summed exactly in 128-bit fixed point, so a total far beyond 64 bits (a
/// million bodies of mass 1e9 in 1e-12 units) is still exact and still independent of order.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/error.hpp"
#include "shoal/arch/memory.hpp"

namespace shoal::sim {

/// Thrown by sums::read_real() when a value given to add_real() was not finite or was ±2^88
/// units or more: a total that no fixed point of the sums can hold (a run that diverged).
class sums_overflow : public std::overflow_error {
 public:
  using std::overflow_error::overflow_error;
};

/// A few sums in device memory that device code adds to and the host reads, for CSV columns:
/// device() is what methods and launches take, zero() resets, read() (integer sums) and
/// read_real() (sums of add_real) wait and return them. Sum k is used either way, not both.
class sums {
 public:
  /// Largest magnitude add_real() takes, in units (exclusive).
  static constexpr double real_limit = 309485009821345068724781056.0;  // 2^88

  /// The device side: trivially copyable, pass it to methods and launches.
  struct ref {
    /// [0, n) the integer sums (signed values in two's complement); for add_real, [n, 2n) the
    /// low words, [2n, 3n) the high words, [3n, 4n) the high words' wraps; [4n] out of range.
    unsigned long long* words;
    std::size_t n;  ///< how many sums

    /// Adds v (may be negative: two's complement wraps to the right signed sum) to sum k.
    /// On the GPU the lanes of a warp adding to the same sum add up first and one of them adds
    /// the total: a census of a million objects into a few sums is otherwise a million atomics
    /// on each of a few words (1.5 ms per frame for traffic's cars on the H100).
    SHOAL_HD void add(std::size_t k, long long v) const {
#if defined(__CUDA_ARCH__)
      const arch::lane_mask same = arch::match_any(arch::active_lanes(), k);
      const std::uint64_t total = arch::reduce_add(same, static_cast<std::uint64_t>(v));
      if (arch::lane_id() == arch::lowest_bit(same)) arch::add_relaxed(words[k], static_cast<unsigned long long>(total));
#else
      arch::add_relaxed(words[k], static_cast<unsigned long long>(v));
#endif
    }

    /// Adds `units` (a real value already scaled to the sum's unit, e.g. energy * 1e12), rounded
    /// to a whole number half away from zero (as llround), to sum k, exactly: the number is
    /// split at 2^32 into a high part and a low part in [0, 2^32), summed in two words whose
    /// carries and wraps are counted, so read_real() gives the exact total of up to 2^31 values
    /// whatever the order. A value that is not finite or is ±real_limit or more is not added and
    /// makes read_real() throw sums_overflow.
    SHOAL_HD void add_real(std::size_t k, double units) const {
      const double q = std::round(units);
      if (!(std::fabs(q) < real_limit)) {
        arch::add_relaxed(words[4 * n], 1ull);
        return;
      }
      const double high = std::floor(q * 0x1p-32);
      // Exact: both are whole multiples of the smaller of 2^32 and q's ulp, and they differ by < 2^32.
      const auto low = static_cast<std::uint64_t>(q - high * 0x1p32);
      auto hi = static_cast<std::uint64_t>(static_cast<long long>(high));
#if defined(__CUDA_ARCH__)
      // |high| < 2^56 and low < 2^32: a warp's 32 of each add up without overflow.
      const arch::lane_mask same = arch::match_any(arch::active_lanes(), k);
      const std::uint64_t lows = arch::reduce_add(same, low);
      hi = arch::reduce_add(same, hi);
      if (arch::lane_id() == arch::lowest_bit(same)) add_wide(k, static_cast<long long>(hi), lows);
#else
      add_wide(k, static_cast<long long>(hi), low);
#endif
    }

   private:
    /// high * 2^32 + low into sum k's words: the low word's carry goes to the high word (2^64 =
    /// 2^32 high units), the high word's signed wraps are counted in a third word.
    SHOAL_HD void add_wide(std::size_t k, long long high, std::uint64_t low) const {
      unsigned long long& low_word = words[n + k];
      unsigned long long& high_word = words[2 * n + k];
      const std::uint64_t low_before = arch::fetch_add_relaxed(low_word, static_cast<unsigned long long>(low));
      const long long delta = high + (low_before + low < low_before ? (1ll << 32) : 0);
      if (delta == 0) return;
      const auto before = static_cast<long long>(arch::fetch_add_relaxed(high_word, static_cast<unsigned long long>(delta)));
      const auto after = static_cast<long long>(static_cast<std::uint64_t>(before) + static_cast<std::uint64_t>(delta));
      if (delta > 0 && after < before) arch::add_relaxed(words[3 * n + k], 1ull);
      if (delta < 0 && after > before) arch::add_relaxed(words[3 * n + k], ~0ull);  // -1
    }
  };

  /// `n` sums, all 0.
  explicit sums(std::size_t n) : n_(n), words_(4 * n + 1) { words_.zero(); }

  /// The handle device code adds through.
  ref device() const { return ref{words_.data(), n_}; }
  /// How many sums.
  std::size_t size() const { return n_; }

  /// Sets every sum to 0 (ordered with the device work around it).
  void zero() { words_.zero(); }

  /// The integer sums (add), after all queued device work.
  std::vector<long long> read() const {
    arch::synchronize();
    const auto raw = words_.download();
    std::vector<long long> out(n_);
    for (std::size_t k = 0; k < n_; ++k) out[k] = static_cast<long long>(raw[k]);
    return out;
  }

  /// The real sums (add_real) times `unit`, after all queued device work: the exact total,
  /// rounded once to a double. Throws sums_overflow if a value was out of range, its message
  /// ending with `advice` (what the user can change, e.g. the flags that make values that big).
  std::vector<double> read_real(double unit, std::string_view advice = {}) const {
    arch::synchronize();
    const auto raw = words_.download();
    if (raw[4 * n_] != 0)
      throw sums_overflow("a value to sum was not finite or beyond " + std::to_string(real_limit * unit) +
                          (advice.empty() ? std::string() : "; " + std::string(advice)));
    std::vector<double> out(n_);
    for (std::size_t k = 0; k < n_; ++k) {
      const __int128 high = (static_cast<__int128>(static_cast<long long>(raw[3 * n_ + k])) << 64) +
                            static_cast<long long>(raw[2 * n_ + k]);
      const __int128 total = high * (__int128{1} << 32) + static_cast<__int128>(raw[n_ + k]);
      out[k] = static_cast<double>(total) * unit;
    }
    return out;
  }

 private:
  std::size_t n_;
  arch::device_buffer<unsigned long long> words_;
};

}  // namespace shoal::sim
