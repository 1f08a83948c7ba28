// The allocator's search effort on a nearly full heap (issue: the benchmark suite): rounds per
// request at the alloc suite's fill levels — the mean over requests and the mean over warps of
// the warp's largest (the TAS and WAS of the CoRW paper, seed 000). A round is one claim attempt of
// the lane's group: on the current block, a walk probe, or a fresh block (shoal/heap/allocator.hpp). This is a binary of
// its own because counting needs SHOAL_ALLOCATOR_PROBES defined before Shoal is included, and
// the counting atomics would slow down every timing of the alloc suite; the times it reports
// include that overhead and are not the allocator's speed (shoal_heap_bench measures that).
#include <cstdint>
#include <string>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/config.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace shoal::bench::probes {

// {requests served, rounds summed, warp groups, largest rounds of each group summed}
#if defined(SHOAL_BACKEND_CUDA)
__device__ unsigned long long totals[4];
#else
inline unsigned long long totals[4] = {};
#endif

/// Called by every lane leaving allocate(); the lanes that leave together (one warp's group)
/// add their sum, their maximum and how many were served, through their lowest lane.
SHOAL_DEVICE inline void record(std::uint32_t rounds, bool served) {
#if defined(__CUDA_ARCH__)
  const unsigned mask = __activemask();
  const unsigned most = __reduce_max_sync(mask, rounds);
  const unsigned sum = __reduce_add_sync(mask, rounds);
  const unsigned got = __popc(__ballot_sync(mask, served));
  if (arch::lane_id() == __ffs(mask) - 1) {
    atomicAdd(&totals[0], static_cast<unsigned long long>(got));
    atomicAdd(&totals[1], static_cast<unsigned long long>(sum));
    atomicAdd(&totals[2], 1ull);
    atomicAdd(&totals[3], static_cast<unsigned long long>(most));
  }
#else
  // A warp is one thread on the cpu backend: its maximum is its own count.
  arch::fetch_add_relaxed(totals[0], served ? 1ull : 0ull);
  arch::fetch_add_relaxed(totals[1], static_cast<unsigned long long>(rounds));
  arch::fetch_add_relaxed(totals[2], 1ull);
  arch::fetch_add_relaxed(totals[3], static_cast<unsigned long long>(rounds));
#endif
}

}  // namespace shoal::bench::probes

#define SHOAL_ALLOCATOR_PROBES(rounds, served) ::shoal::bench::probes::record(rounds, served)

#include "common/alloc_objects.hpp"
#include "common/bench_main.hpp"

namespace shoal::bench {

/// Sums the probe totals over the timed allocations of make_when_full.
class probe_observer {
 public:
  void before() { set_totals({0, 0, 0, 0}); }
  void after() {
    const totals t = get_totals();
    for (int k = 0; k < 4; ++k) sum_[k] += t.v[k];
  }
  void report(benchmark::State& state) {
    if (sum_[0] == 0 || sum_[2] == 0) {
      fail(state, "no request was counted: SHOAL_ALLOCATOR_PROBES is not reached");
      return;
    }
    state.counters["probes_mean"] = static_cast<double>(sum_[1]) / static_cast<double>(sum_[0]);
    state.counters["probes_warp_max_mean"] = static_cast<double>(sum_[3]) / static_cast<double>(sum_[2]);
  }

 private:
  struct totals {
    unsigned long long v[4];
  };
  static void set_totals(totals t) {
#if defined(SHOAL_BACKEND_CUDA)
    SHOAL_CUDA_CHECK(cudaMemcpyToSymbol(probes::totals, t.v, sizeof t.v));
#else
    for (int k = 0; k < 4; ++k) probes::totals[k] = t.v[k];
#endif
  }
  static totals get_totals() {
    totals t{};
#if defined(SHOAL_BACKEND_CUDA)
    SHOAL_CUDA_CHECK(cudaMemcpyFromSymbol(t.v, probes::totals, sizeof t.v));
#else
    for (int k = 0; k < 4; ++k) t.v[k] = probes::totals[k];
#endif
    return t;
  }
  unsigned long long sum_[4] = {};
};

#if defined(SHOAL_BACKEND_CUDA)
constexpr std::uint64_t sweep_slots_log2 = 24;  // as shoal_heap_bench
constexpr int repetitions = 5;
#else
constexpr std::uint64_t sweep_slots_log2 = 16;
constexpr int repetitions = 5;
#endif

void register_probe_benchmarks() {
  add_make_when_full<probe_observer>("make_when_full_probes", repetitions, sweep_slots_log2);
}

}  // namespace shoal::bench

int main(int argc, char** argv) {
  using namespace shoal::bench;
  return run_benchmarks(argc, argv, default_flags{}, register_probe_benchmarks);
}
