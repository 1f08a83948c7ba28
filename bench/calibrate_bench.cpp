// Calibration, stored with every result file (bench/run.sh runs it first): what the machine can
// do at best, so the other suites' numbers can be read against it and runs on different
// machines or clocks compared. The context block names the device, driver and clocks; the
// benchmarks measure an empty launch, atomics on one address and on scattered addresses, and a
// device-to-device copy.
#include <cstdint>
#include <string>

#include "common/bench_main.hpp"
#include "common/device_timer.hpp"
#include "shoal/arch/atomic.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace shoal::bench {

/// Device facts the runtime can tell (nvidia-smi's view, e.g. the current SM clock under load,
/// is added by bench/run.sh).
void add_device_context() {
#if defined(SHOAL_BACKEND_CUDA)
  if (!arch::probe_device().usable) return;
  int device = 0, driver = 0, runtime_version = 0, clock_khz = 0, memory_khz = 0, bus_bits = 0, sms = 0;
  SHOAL_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  SHOAL_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  SHOAL_CUDA_CHECK(cudaDriverGetVersion(&driver));
  SHOAL_CUDA_CHECK(cudaRuntimeGetVersion(&runtime_version));
  // Attributes rather than cudaDeviceProp fields: CUDA 13 dropped the clock fields from the struct.
  SHOAL_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  SHOAL_CUDA_CHECK(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device));
  SHOAL_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  SHOAL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  benchmark::AddCustomContext("gpu_name", prop.name);
  benchmark::AddCustomContext("gpu_compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor));
  benchmark::AddCustomContext("gpu_sms", std::to_string(sms));
  benchmark::AddCustomContext("gpu_max_sm_clock_mhz", std::to_string(clock_khz / 1000));
  benchmark::AddCustomContext("gpu_memory_clock_mhz", std::to_string(memory_khz / 1000));
  benchmark::AddCustomContext("gpu_memory_bus_bits", std::to_string(bus_bits));
  benchmark::AddCustomContext("gpu_memory_gib", std::to_string(prop.totalGlobalMem >> 30));
  benchmark::AddCustomContext("cuda_driver_version", std::to_string(driver));
  benchmark::AddCustomContext("cuda_runtime_version", std::to_string(runtime_version));
#endif
}

/// Launches of one thread doing nothing, `batch` enqueued back to back: the fixed cost every
/// launch pays (on the cpu backend, handing work to the thread pool and waiting for it). The
/// iteration time is the whole batch's, so Google Benchmark's minimum time bounds the wall time;
/// the time per launch is real_time / batch (bench/summary.py divides).
void empty_launch(benchmark::State& state, int batch) {
  device_timer timer;
  for (auto _ : state)
    state.SetIterationTime(timer.seconds([&] {
      for (int k = 0; k < batch; ++k) arch::for_each_index(1, [=] SHOAL_DEVICE(std::size_t) {});
    }));
  state.counters["batch"] = batch;
  state.counters["launches_per_s"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
}

/// n threads each add 1 to one of `addresses` counters (1: all on the same word; otherwise
/// scattered by a hash, each counter on its own 64-byte line).
void atomic_adds(benchmark::State& state, std::uint64_t n, std::uint64_t addresses) {
  constexpr std::uint64_t stride = 8;  // 8 × 8 bytes: one cache line per counter
  arch::device_buffer<unsigned long long> counters(addresses * stride);
  counters.zero();
  unsigned long long* c = counters.data();
  device_timer timer;
  for (auto _ : state)
    state.SetIterationTime(timer.seconds([&] {
      arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
        std::uint64_t z = i * 0x9E3779B97F4A7C15ull;
        z ^= z >> 29;
        arch::fetch_add_relaxed(c[(addresses == 1 ? 0 : z % addresses) * stride], 1ull);
      });
    }));
  state.counters["atomics_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["addresses"] = static_cast<double>(addresses);
}

/// A device-to-device copy of `bytes`: bandwidth counts the bytes read plus the bytes written.
void copy_bandwidth(benchmark::State& state, std::uint64_t bytes) {
  arch::device_buffer<std::uint8_t> from(bytes), to(bytes);
  from.zero();
  device_timer timer;
  for (auto _ : state)
    state.SetIterationTime(timer.seconds([&] { arch::copy_on_device(to.data(), from.data(), bytes); }));
  state.counters["bytes_per_s"] =
      benchmark::Counter(2.0 * static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}

#if defined(SHOAL_BACKEND_CUDA)
constexpr std::uint64_t atomic_threads = std::uint64_t{1} << 24;
constexpr std::uint64_t scattered_addresses = std::uint64_t{1} << 20;
constexpr std::uint64_t copy_bytes = std::uint64_t{1} << 30;
constexpr int repetitions = 5;
#else
constexpr std::uint64_t atomic_threads = std::uint64_t{1} << 14;
constexpr std::uint64_t scattered_addresses = std::uint64_t{1} << 10;
constexpr std::uint64_t copy_bytes = std::uint64_t{1} << 22;
constexpr int repetitions = 5;
#endif

void register_calibration() {
  add_device_context();
  add_benchmark("empty_launch/batch:1", repetitions, empty_launch, 1);
  add_benchmark("empty_launch/batch:100", repetitions, empty_launch, 100);
  add_benchmark("atomic_add/same_address/threads:" + std::to_string(atomic_threads), repetitions, atomic_adds,
                atomic_threads, std::uint64_t{1});
  add_benchmark("atomic_add/scattered:" + std::to_string(scattered_addresses) + "/threads:" +
                    std::to_string(atomic_threads),
                repetitions, atomic_adds, atomic_threads, scattered_addresses);
  add_benchmark("copy/bytes:" + std::to_string(copy_bytes), repetitions, copy_bandwidth, copy_bytes);
}

}  // namespace shoal::bench

int main(int argc, char** argv) {
  using namespace shoal::bench;
  return run_benchmarks(argc, argv, default_flags{}, register_calibration);
}
