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
/// the reason they are integers (scale a real quantity to fixed point before adding it).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/error.hpp"
#include "shoal/arch/memory.hpp"

namespace shoal::sim {

/// A few integer sums in device memory that device code adds to and the host reads, for CSV
/// columns: device() is what methods and launches take, zero() resets, read() waits and
/// returns the sums.
class sums {
 public:
  /// The device side: trivially copyable, pass it to methods and launches.
  struct ref {
    unsigned long long* words;  ///< the sums, in device memory (signed values in two's complement)
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
  };

  /// `n` sums, all 0.
  explicit sums(std::size_t n) : words_(n) { words_.zero(); }

  /// The handle device code adds through.
  ref device() const { return ref{words_.data()}; }
  /// How many sums.
  std::size_t size() const { return words_.size(); }

  /// Sets every sum to 0 (ordered with the device work around it).
  void zero() { words_.zero(); }

  /// The sums, after all queued device work.
  std::vector<long long> read() const {
    arch::synchronize();
    const auto raw = words_.download();
    std::vector<long long> out(raw.size());
    for (std::size_t k = 0; k < raw.size(); ++k) out[k] = static_cast<long long>(raw[k]);
    return out;
  }

 private:
  arch::device_buffer<unsigned long long> words_;
};

}  // namespace shoal::sim
