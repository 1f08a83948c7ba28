#pragma once
/// @file
/// Thread and warp averages of per-thread probe counts (TAS and WAS of seed 000): a thread's
/// probe count says how much searching it did, a warp's maximum says how long the whole warp
/// waited for its slowest lane, which is what a SIMT machine pays for.
///
/// Convention: probes[i] == 0 means thread i obtained nothing (a successful search reads at
/// least one word), so the reduction also counts the threads that were served.

#include <cstddef>
#include <cstdint>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"

namespace shoal::bench {

struct probe_summary {
  std::uint64_t served = 0;  ///< threads with probes > 0
  double mean = 0;           ///< mean over threads of probes (TAS)
  double warp_max_mean = 0;  ///< mean over warps of the largest probes in the warp (WAS)
};

/// Adds (served, probe sum, sum over warps of the warp maximum) of probes[0, n) to
/// totals[0..2]. A warp is arch::warp_width consecutive thread indices, as for_each_index
/// assigns them to lanes. Asynchronous on cuda.
inline void accumulate_probe_totals(const std::uint32_t* probes, std::size_t n,
                                    unsigned long long* totals) {
  constexpr std::size_t width = arch::warp_width;
  const std::size_t warps = (n + width - 1) / width;
  // Each item folds a run of warps so that the three totals see few atomics.
  constexpr std::size_t warps_per_item = width >= 1024 ? 1 : 1024 / width;
  const std::size_t items = (warps + warps_per_item - 1) / warps_per_item;
  arch::for_each_index(items, [=] SHOAL_DEVICE(std::size_t item) {
    unsigned long long served = 0, sum = 0, warp_max_sum = 0;
    const std::size_t first_warp = item * warps_per_item;
    const std::size_t end_warp =
        first_warp + warps_per_item < warps ? first_warp + warps_per_item : warps;
    for (std::size_t w = first_warp; w < end_warp; ++w) {
      std::uint32_t warp_max = 0;
      const std::size_t end = (w + 1) * width < n ? (w + 1) * width : n;
      for (std::size_t i = w * width; i < end; ++i) {
        const std::uint32_t p = probes[i];
        served += p != 0;
        sum += p;
        warp_max = p > warp_max ? p : warp_max;
      }
      warp_max_sum += warp_max;
    }
    arch::fetch_add_relaxed(totals[0], served);
    arch::fetch_add_relaxed(totals[1], sum);
    arch::fetch_add_relaxed(totals[2], warp_max_sum);
  });
}

/// Summarizes probe counts; keeps its device totals so that summarizing every benchmark
/// iteration costs no allocation.
class probe_reducer {
 public:
  probe_reducer() : totals_(3) {}

  /// Blocks until the summary of probes[0, n) is on the host.
  probe_summary summarize(const std::uint32_t* probes, std::size_t n) {
    probe_summary s;
    if (n == 0) return s;
    totals_.zero();
    accumulate_probe_totals(probes, n, totals_.data());
    arch::synchronize();
    const auto host = totals_.download();
    const std::size_t warps = (n + arch::warp_width - 1) / arch::warp_width;
    s.served = host[0];
    s.mean = static_cast<double>(host[1]) / static_cast<double>(n);
    s.warp_max_mean = static_cast<double>(host[2]) / static_cast<double>(warps);
    return s;
  }

 private:
  arch::device_buffer<unsigned long long> totals_;
};

}  // namespace shoal::bench
