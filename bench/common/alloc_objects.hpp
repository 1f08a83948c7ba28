#pragma once
/// @file
/// The objects and helpers of the allocator benchmarks (bench/heap_bench.cpp, and
/// bench/alloc_probe_bench.cpp, which includes this after defining SHOAL_ALLOCATOR_PROBES):
/// one heap per object size, bulk make/destroy launches, and the make-on-a-nearly-full-heap
/// measurement both binaries run.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/bench_main.hpp"
#include "common/device_timer.hpp"
#include "shoal/shoal.hpp"

namespace shoal::bench {

// One heap per object size, so each class gets 64 slots per block, as it would alone.
class Obj16;
class Obj64;
class Obj256;
class Obj1024;
using Heap16 = shoal::heap<Obj16>;
using Heap64 = shoal::heap<Obj64>;
using Heap256 = shoal::heap<Obj256>;
using Heap1024 = shoal::heap<Obj1024>;
class Obj16 : public object<Heap16, Obj16> {
 public:
  SHOAL_FIELDS(Obj16, (unsigned long long, a), (unsigned long long, b))
  SHOAL_HD explicit Obj16(unsigned long long i) { a = i, b = ~i; }
  /// The do-all body of the churn comparison: one read and one write of a field.
  SHOAL_HD void touch() { a = a + 1; }
};
class Obj64 : public object<Heap64, Obj64> {
 public:
  SHOAL_FIELDS(Obj64, (unsigned long long, a), (unsigned long long[7], b))
  SHOAL_HD explicit Obj64(unsigned long long i) { a = i; }
};
class Obj256 : public object<Heap256, Obj256> {
 public:
  SHOAL_FIELDS(Obj256, (unsigned long long, a), (unsigned long long[31], b))
  SHOAL_HD explicit Obj256(unsigned long long i) { a = i; }
};
class Obj1024 : public object<Heap1024, Obj1024> {
 public:
  SHOAL_FIELDS(Obj1024, (unsigned long long, a), (unsigned long long[127], b))
  SHOAL_HD explicit Obj1024(unsigned long long i) { a = i; }
};

SHOAL_HD inline std::uint64_t hash64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
using runtime_of = runtime<typename T::shoal_model>;

template <class T>
std::size_t heap_bytes_for(std::uint64_t objects) {
  const std::size_t bytes = objects * shoal::detail::object_data_bytes<T>(1) * 2 + (std::size_t{32} << 20);
  return bytes;
}

template <class T>
void launch_make(runtime_of<T>& rt, T** ptrs, std::uint64_t n, std::uint64_t salt = 0) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) { ptrs[i] = make<T>(i + salt); });
}
/// Destroys ptrs[i] where `keep_bp` (basis points) of a hash says so; 10000 destroys all.
template <class T>
void launch_destroy(runtime_of<T>& rt, T** ptrs, std::uint64_t n, std::uint64_t bp = 10000,
                    std::uint64_t seed = 1) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (ptrs[i] && hash64(i + seed * 0x9E3779B97F4A7C15ull) % 10000 < bp) {
      destroy(ptrs[i]);
      ptrs[i] = nullptr;
    }
  });
}

/// Nothing to observe around the timed allocations of make_when_full.
struct no_observer {
  void before() {}
  void after() {}
  void report(benchmark::State&) {}
};

/// Fills the heap completely, frees a scattered `free_bp` fraction of the objects, and times
/// the allocation of exactly as many objects as slots became free. An Observer (constructed per
/// benchmark) is told before and after each timed allocation and adds its counters at the end.
template <class Observer>
void make_when_full(benchmark::State& state, std::uint64_t slots_log2, std::uint64_t free_bp) {
  Observer observer;
  const std::uint64_t wanted_slots = std::uint64_t{1} << slots_log2;
  runtime_of<Obj16> rt(heap_bytes_for<Obj16>(wanted_slots) / 2);
  const std::uint64_t slots = rt.blocks() * rt.capacity<Obj16>();
  arch::device_buffer<Obj16*> ptrs(slots);
  device_timer timer;
  std::uint64_t freed = 0;
  for (auto _ : state) {
    rt.clear();
    launch_make<Obj16>(rt, ptrs.data(), slots);
    launch_destroy<Obj16>(rt, ptrs.data(), slots, free_bp);
    try {
      rt.synchronize();  // the exact fill must not fail either
    } catch (const error& e) {
      fail(state, std::string("filling the heap: ") + e.what());
      break;
    }
    freed = slots - rt.stats().live();
    arch::device_buffer<Obj16*> more(freed);
    observer.before();
    state.SetIterationTime(timer.seconds([&] { launch_make<Obj16>(rt, more.data(), freed, slots); }));
    observer.after();
    try {
      rt.check_errors();  // every freed slot must be found again: no failure allowed
    } catch (const error& e) {
      fail(state, e.what());
      break;
    }
  }
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(freed), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["free_pct"] = free_bp / 100.0;
  state.counters["requests"] = static_cast<double>(freed);
  observer.report(state);
}

/// Iterations per repetition of make_when_full, fixed rather than found from the minimum time:
/// each iteration first fills the whole heap and frees part of it, untimed, which on the H100
/// costs ~55 ms against 0.4 ms of timed allocation at 0.5% free, so 0.05 s of timed work took
/// ~170 refills per repetition (~53 s for that one fill level). Three keep a fill level near a
/// second there, and the 5 repetitions still give the median and spread.
#if defined(SHOAL_BACKEND_CUDA)
inline constexpr int make_when_full_iterations = 3;
#else
inline constexpr int make_when_full_iterations = 1;
#endif

/// Registers `prefix`/free_pct:<p> at the fill levels of the benchmark issue (50, 20, 10, 5, 1
/// and 0.5% of the slots free), as make_when_full<Observer> on a heap of 2^slots_log2 objects.
template <class Observer>
void add_make_when_full(const std::string& prefix, int repetitions, std::uint64_t slots_log2) {
  for (const std::uint64_t bp : {5000, 2000, 1000, 500, 100, 50}) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%g", static_cast<double>(bp) / 100.0);
    add_benchmark(prefix + "/free_pct:" + pct, repetitions, make_when_full<Observer>, slots_log2, bp)
        ->Iterations(make_when_full_iterations);
  }
}

}  // namespace shoal::bench
