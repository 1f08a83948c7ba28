#pragma once
/// @file
/// Records what the numbers were measured on in the benchmark's context block (console
/// header and the "context" object of the JSON output), so a result file names its backend
/// and device without relying on the file name.

#include <benchmark/benchmark.h>

#include <string>

#include "shoal/arch/error.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/config.hpp"

namespace shoal::bench {

/// Call after benchmark::Initialize and before RunSpecifiedBenchmarks.
inline void add_run_context() {
  const arch::device_status& device = arch::probe_device();
  benchmark::AddCustomContext("shoal_backend", backend_name);
  benchmark::AddCustomContext("shoal_device",
                              device.usable ? device.description : "unusable: " + device.reason);
  benchmark::AddCustomContext("shoal_warp_width", std::to_string(arch::warp_width));
#if defined(SHOAL_BACKEND_CPU)
  benchmark::AddCustomContext("shoal_cpu_threads", std::to_string(arch::cpu_threads()));
#endif
}

}  // namespace shoal::bench
