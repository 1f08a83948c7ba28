#pragma once
/// @file
/// Which sizes a suite registers. `quick` (the default) is what bench/run.sh runs so that every
/// suite fits its share of a 10-minute GPU session, build included (bench/run.sh's budget
/// table); `full` adds the long sweeps (every power of two of threads, the largest objects at the
/// largest counts, CUDA malloc of every size up to 2^20 threads, the apps' longer runs). Chosen
/// by the environment variable SHOAL_BENCH_PROFILE, so the Google Benchmark command line stays
/// untouched and --benchmark_filter still narrows either profile.

#include <cstdlib>
#include <cstring>

namespace shoal::bench {

inline bool full_profile() {
  const char* p = std::getenv("SHOAL_BENCH_PROFILE");
  return p != nullptr && std::strcmp(p, "full") == 0;
}

}  // namespace shoal::bench
