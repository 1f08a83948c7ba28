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
#include "shoal/arch/error.hpp"
#include "shoal/arch/memory.hpp"

namespace shoal::sim {

class sums {
 public:
  /// The device side: trivially copyable, pass it to methods and launches.
  struct ref {
    unsigned long long* words;
    /// Adds v (may be negative: two's complement wraps to the right signed sum) to sum k.
    SHOAL_HD void add(std::size_t k, long long v) const {
      arch::fetch_add_relaxed(words[k], static_cast<unsigned long long>(v));
    }
  };

  explicit sums(std::size_t n) : words_(n) { words_.zero(); }

  ref device() const { return ref{words_.data()}; }
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
