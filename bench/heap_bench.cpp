// Allocator benchmarks (issues: the SOA heap, the benchmark suite): make/destroy throughput vs
// threads (10^4, 10^5, 10^6, 2^20, 2^24; every power of two in the full profile) and object size
// (16, 64, 256, 1024 bytes), one request per thread and one per warp; make when few slots are
// free; churn, with the blocks it leaves in use and the do-all time it costs against a compact
// heap; time to nullptr on a full heap; the allocation patterns of models (common/alloc_patterns.hpp:
// some lanes of a warp, several classes in one warp, births and deaths inside a do-all); the
// reference allocator prototype's four workloads (heap_workloads_bench.cpp). Baselines in the
// same run: CUDA's device malloc/free and a bump allocator (one atomic counter, the ceiling).
#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "common/alloc_objects.hpp"
#include "common/alloc_patterns.hpp"
#include "common/bench_main.hpp"
#include "common/device_timer.hpp"
#include "common/profile.hpp"
#include "shoal/shoal.hpp"

namespace shoal::bench {

void register_proto_workloads(int repetitions);  // heap_workloads_bench.cpp

template <class T>
void make_throughput(benchmark::State& state, std::uint64_t threads) {
  runtime_of<T> rt(heap_bytes_for<T>(threads));
  arch::device_buffer<T*> ptrs(threads);
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    state.SetIterationTime(timer.seconds([&] { launch_make<T>(rt, ptrs.data(), threads); }));
    try {
      rt.check_errors();
    } catch (const error& e) {
      fail(state, e.what());
      break;
    }
  }
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(threads), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(threads);
}

/// One request per warp: `requests` warps each make one object from their first lane while the
/// other lanes stay idle (the survey's warp-based pattern; on the cpu backend a warp is one
/// thread, so this equals make_throughput).
template <class T>
void make_per_warp(benchmark::State& state, std::uint64_t requests) {
  runtime_of<T> rt(heap_bytes_for<T>(requests));
  arch::device_buffer<T*> ptrs(requests);
  T** p = ptrs.data();
  constexpr std::uint64_t width = arch::warp_width;
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    state.SetIterationTime(timer.seconds([&] {
      rt.launch_async(requests * width, [=] SHOAL_DEVICE(std::size_t i) {
        if (i % width == 0) p[i / width] = make<T>(i);
      });
    }));
    try {
      rt.check_errors();
    } catch (const error& e) {
      fail(state, e.what());
      break;
    }
  }
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(requests), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(requests);
}

template <class T>
void destroy_throughput(benchmark::State& state, std::uint64_t threads) {
  runtime_of<T> rt(heap_bytes_for<T>(threads));
  arch::device_buffer<T*> ptrs(threads);
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    launch_make<T>(rt, ptrs.data(), threads);
    rt.synchronize();
    state.SetIterationTime(timer.seconds([&] { launch_destroy<T>(rt, ptrs.data(), threads); }));
  }
  // Checked once, after the last iteration: stats() reads every block header back to the host,
  // which inside the loop cost up to 20× the timed destroy (32k headers at 10^4 threads, 16 B).
  if (rt.stats().live() != 0) fail(state, "objects left after destroying all");
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(threads), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(threads);
}


/// `rounds` churn rounds on a heap of n Obj16 whose pointers are in `ptrs`: each frees a random
/// half and refills it.
void churn_rounds(runtime_of<Obj16>& rt, Obj16** ptrs, std::uint64_t n, std::uint64_t first_round,
                  std::uint64_t rounds) {
  for (std::uint64_t round = first_round; round < first_round + rounds; ++round) {
    launch_destroy<Obj16>(rt, ptrs, n, 5000, round);
    const std::uint64_t salt = round << 40;
    rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
      if (ptrs[i] == nullptr) ptrs[i] = make<Obj16>(i + salt);
    });
  }
}

/// Steady churn: a heap holding n objects loses a random half and regains as many, per round.
void churn(benchmark::State& state, std::uint64_t n) {
  runtime_of<Obj16> rt(heap_bytes_for<Obj16>(n));
  arch::device_buffer<Obj16*> ptrs(n);
  launch_make<Obj16>(rt, ptrs.data(), n);
  rt.synchronize();
  device_timer timer;
  std::uint64_t round = 0;
  for (auto _ : state) {
    ++round;
    state.SetIterationTime(timer.seconds([&] { churn_rounds(rt, ptrs.data(), n, round, 1); }));
  }
  try {
    rt.check_errors();
  } catch (const error& e) {
    fail(state, e.what());
  }
  const heap_stats st = rt.stats();
  const double min_blocks = static_cast<double>((st.live() + 63) / 64);
  state.counters["blocks_over_minimum"] = static_cast<double>(st.types[0].blocks) / min_blocks;
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  if (!rt.verify().empty()) fail(state, "heap inconsistent after churn: " + rt.verify());
}

/// What the heap does after setup: nothing (a compact heap or a churned one), or defragment.
enum class after_churn { nothing, defragment };

/// A do-all over n objects (one field read and written each) on a heap that went through
/// `rounds` churn rounds (free a random half, refill), against one over n objects created
/// compactly by parallel_new (`rounds` == 0): what fragmentation left by churn costs later, and
/// (after_churn::defragment) what is left of it after rt.defragment(max_fill).
void doall_after_churn(benchmark::State& state, std::uint64_t n, std::uint64_t rounds, after_churn then,
                       double max_fill) {
  runtime_of<Obj16> rt(heap_bytes_for<Obj16>(n));
  arch::device_buffer<Obj16*> ptrs(n);
  double defragment_s = 0;
  if (rounds == 0) {
    rt.parallel_new<Obj16>(n);
  } else {
    launch_make<Obj16>(rt, ptrs.data(), n);
    churn_rounds(rt, ptrs.data(), n, 1, rounds);
    if (then == after_churn::defragment) {
      rt.register_pointers("ptrs", ptrs.data(), n);
      rt.synchronize();
      device_timer t;
      defragment_s = t.seconds([&] { rt.defragment<Obj16>(max_fill); });
    }
  }
  try {
    rt.synchronize();
    rt.check_errors();
  } catch (const error& e) {
    fail(state, e.what());
    return;
  }
  const heap_stats st = rt.stats();
  if (st.live() != n) {
    fail(state, "live objects after setup: " + std::to_string(st.live()) + ", wanted " + std::to_string(n));
    return;
  }
  device_timer timer;
  for (auto _ : state) state.SetIterationTime(timer.seconds([&] { rt.parallel_do<&Obj16::touch>(); }));
  state.counters["blocks_over_minimum"] =
      static_cast<double>(st.types[0].blocks) / static_cast<double>((n + rt.capacity<Obj16>() - 1) / rt.capacity<Obj16>());
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  if (then == after_churn::defragment) state.counters["defragment_s"] = defragment_s;
  if (!rt.verify().empty()) fail(state, "heap inconsistent: " + rt.verify());
}

/// The time of rt.defragment<Obj16>(max_fill) on a heap of n objects after `rounds` churn rounds
/// (each iteration churns again, untimed, then defragments; the pointers stay registered).
void defragment_after_churn(benchmark::State& state, std::uint64_t n, std::uint64_t rounds, double max_fill) {
  runtime_of<Obj16> rt(heap_bytes_for<Obj16>(n));
  arch::device_buffer<Obj16*> ptrs(n);
  launch_make<Obj16>(rt, ptrs.data(), n);
  rt.register_pointers("ptrs", ptrs.data(), n);
  device_timer timer;
  std::uint64_t round = 1;
  double moved = 0, blocks_before = 0, blocks_after = 0;
  for (auto _ : state) {
    churn_rounds(rt, ptrs.data(), n, round, rounds);
    round += rounds;
    rt.synchronize();
    defrag_stats s{};
    state.SetIterationTime(timer.seconds([&] { s = rt.defragment<Obj16>(max_fill); }));
    moved += static_cast<double>(s.moved);
    blocks_before += static_cast<double>(s.blocks_before);
    blocks_after += static_cast<double>(s.blocks_after);
  }
  try {
    rt.check_errors();
  } catch (const error& e) {
    fail(state, e.what());
    return;
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["moved"] = moved / iterations;
  state.counters["blocks_before"] = blocks_before / iterations;
  state.counters["blocks_after"] = blocks_after / iterations;
  if (rt.stats().live() != n) fail(state, "objects lost by defragment: " + std::to_string(rt.stats().live()));
  if (!rt.verify().empty()) fail(state, "heap inconsistent after defragment: " + rt.verify());
}

/// Time until every one of `requests` allocations on a full heap has returned nullptr.
void time_to_nullptr(benchmark::State& state, std::uint64_t requests) {
  runtime_of<Obj16> rt(std::size_t{16} << 20);
  const std::uint64_t slots = rt.blocks() * rt.capacity<Obj16>();
  arch::device_buffer<Obj16*> full(slots), more(requests);
  launch_make<Obj16>(rt, full.data(), slots);
  rt.synchronize();
  device_timer timer;
  for (auto _ : state) {
    state.SetIterationTime(timer.seconds([&] { launch_make<Obj16>(rt, more.data(), requests); }));
    try {
      rt.check_errors();
      fail(state, "allocations on a full heap succeeded");
      break;
    } catch (const out_of_memory& e) {
      if (e.failed() != requests) {
        fail(state, "not every request failed");
        break;
      }
    }
  }
  state.counters["requests"] = static_cast<double>(requests);
}

/// The ceiling: one atomic add per object on one counter.
void bump_allocator(benchmark::State& state, std::uint64_t threads) {
  arch::device_buffer<unsigned long long> counter(1);
  arch::device_buffer<std::uint64_t> memory(2 * threads);
  arch::device_buffer<std::uint64_t*> ptrs(threads);
  device_timer timer;
  for (auto _ : state) {
    counter.zero();
    unsigned long long* c = counter.data();
    std::uint64_t* m = memory.data();
    std::uint64_t** p = ptrs.data();
    state.SetIterationTime(timer.seconds([&] {
      arch::for_each_index(threads, [=] SHOAL_DEVICE(std::size_t i) {
        std::uint64_t* obj = m + 2 * arch::fetch_add_relaxed(*c, 1ull);
        obj[0] = i;
        obj[1] = ~i;
        p[i] = obj;
      });
    }));
  }
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(threads), benchmark::Counter::kIsIterationInvariantRate);
}

#if defined(SHOAL_BACKEND_CUDA)
/// CUDA's device malloc/free of the same sizes, heap limit set large enough.
void cuda_malloc(benchmark::State& state, std::uint64_t threads, std::uint64_t bytes, bool time_free) {
  static bool limit_set = [] {
    SHOAL_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, std::size_t{8} << 30));
    return true;
  }();
  (void)limit_set;
  arch::device_buffer<std::uint64_t*> ptrs(threads);
  arch::device_buffer<unsigned long long> failures(1);
  device_timer timer;
  std::uint64_t** p = ptrs.data();
  unsigned long long* f = failures.data();
  for (auto _ : state) {
    failures.zero();
    auto alloc = [&] {
      arch::for_each_index(threads, [=] SHOAL_DEVICE(std::size_t i) {
        auto* q = static_cast<std::uint64_t*>(malloc(bytes));
        if (q) q[0] = i; else arch::fetch_add(*f, 1ull);
        p[i] = q;
      });
    };
    auto release = [&] {
      arch::for_each_index(threads, [=] SHOAL_DEVICE(std::size_t i) { free(p[i]); });
    };
    if (time_free) {
      alloc();
      state.SetIterationTime(timer.seconds(release));
    } else {
      state.SetIterationTime(timer.seconds(alloc));
      release();
    }
    arch::synchronize();
    if (failures.read(0) != 0) {
      fail(state, "device malloc returned NULL");
      break;
    }
  }
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(threads), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(threads);
}
#endif

#if defined(SHOAL_BACKEND_CUDA)
// The thread counts, plus 2^20 where the goals are stated; the full profile adds every
// power of two from 2^10.
constexpr std::uint64_t quick_threads[] = {10000, 100000, 1000000, 1 << 20, 1 << 24};
constexpr int full_log2_min = 10, full_log2_max = 24;
constexpr std::uint64_t malloc_max_threads = 1 << 20;  // above, CUDA malloc takes seconds per launch
// Quick profile: CUDA malloc of 64–1024 B only where threads × bytes stays under this. 1024 B at
// 10^5 threads takes ~2 s per malloc launch on the H100 (and its free benchmark pays the malloc
// too): 21 s of the alloc suite's time for one table cell. The full profile measures it.
constexpr std::uint64_t quick_malloc_max_bytes_total = std::uint64_t{32} << 20;
constexpr std::uint64_t max_object_bytes_total = std::uint64_t{4} << 30;  // threads × bytes cap
constexpr std::uint64_t sweep_slots_log2 = 24;
constexpr std::uint64_t churn_objects = 1 << 22;
constexpr std::uint64_t nullptr_requests = 1 << 20;
constexpr std::initializer_list<std::uint64_t> pattern_threads = {1 << 20, 1 << 24};
constexpr std::uint64_t critters = 1000000;
constexpr int repetitions = 5;
#else
constexpr std::uint64_t quick_threads[] = {1000, 10000};
constexpr int full_log2_min = 10, full_log2_max = 16;
constexpr std::uint64_t max_object_bytes_total = std::uint64_t{64} << 20;
constexpr std::uint64_t sweep_slots_log2 = 16;
constexpr std::uint64_t churn_objects = 1 << 16;
constexpr std::uint64_t nullptr_requests = 1 << 14;
constexpr std::initializer_list<std::uint64_t> pattern_threads = {1 << 10, 1 << 14};
constexpr std::uint64_t critters = 10000;
constexpr int repetitions = 5;
#endif
constexpr std::uint64_t churn_rounds_before_doall = 8;

template <class F, class... Args>
void add(const std::string& name, F f, Args... args) {
  add_benchmark(name, repetitions, f, args...);
}

/// make (per thread and per warp) and destroy of `bytes`-byte objects with n threads.
template <class T>
void add_size(std::uint64_t n, std::uint64_t bytes) {
  if (n * bytes > max_object_bytes_total) return;
  const std::string b = "/bytes:" + std::to_string(bytes) + "/threads:" + std::to_string(n);
  add("make" + b, make_throughput<T>, n);
  add("make_per_warp" + b, make_per_warp<T>, n);
  add("destroy" + b, destroy_throughput<T>, n);
}

void register_heap_benchmarks() {
  // The single measurements first: a run cut short by its time budget loses sweep points of the
  // largest counts, not these.
  add_make_when_full<no_observer>("make_when_full", repetitions, sweep_slots_log2);
  add("churn/objects:" + std::to_string(churn_objects), churn, churn_objects);
  const std::string churned = "/objects:" + std::to_string(churn_objects) + "/rounds:";
  const std::string rounds = std::to_string(churn_rounds_before_doall);
  add("doall_after_churn" + churned + "0", doall_after_churn, churn_objects, std::uint64_t{0}, after_churn::nothing, 0.0);
  add("doall_after_churn" + churned + rounds, doall_after_churn, churn_objects, churn_rounds_before_doall,
      after_churn::nothing, 0.0);
  // The default fill (half) and one that fills every block's holes (churn leaves blocks nearly full).
  for (const double fill : {0.5, 0.99}) {
    const std::string f = "/max_fill:" + std::to_string(fill).substr(0, 4);
    add("doall_after_defragment" + churned + rounds + f, doall_after_churn, churn_objects, churn_rounds_before_doall,
        after_churn::defragment, fill);
    // Each iteration churns untimed first: a fixed count keeps a fast defragmentation from
    // running thousands of them to fill the minimum time.
    add_benchmark("defragment_after_churn" + churned + rounds + f, repetitions, defragment_after_churn, churn_objects,
                  churn_rounds_before_doall, fill)
        ->Iterations(3);
  }
  add("time_to_nullptr/requests:" + std::to_string(nullptr_requests), time_to_nullptr, nullptr_requests);
  add_allocation_patterns([](const std::string& name, auto f, auto... args) { add(name, f, args...); },
                          pattern_threads, critters);
  register_proto_workloads(repetitions);

  const bool full = full_profile();
  std::vector<std::uint64_t> counts(std::begin(quick_threads), std::end(quick_threads));
  if (full)
    for (int log2 = full_log2_min; log2 <= full_log2_max; ++log2) counts.push_back(std::uint64_t{1} << log2);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  for (const std::uint64_t n : counts) {
    add_size<Obj16>(n, 16);
    add_size<Obj64>(n, 64);
    add_size<Obj256>(n, 256);
    add_size<Obj1024>(n, 1024);
    add("bump/bytes:16/threads:" + std::to_string(n), bump_allocator, n);
#if defined(SHOAL_BACKEND_CUDA)
    // CUDA malloc costs up to a third of a second per launch at 2^20 threads: the quick profile
    // measures 16 bytes at every count (the ratio the benchmark issue sets a goal for) and the
    // other sizes up to 10^5 threads, 1024 B up to 10^4 (quick_malloc_max_bytes_total).
    for (const std::uint64_t bytes : {16, 64, 256, 1024}) {
      if (n > malloc_max_threads) continue;
      if (!full && bytes != 16 && (n > 100000 || n * bytes > quick_malloc_max_bytes_total)) continue;
      const std::string b = "/bytes:" + std::to_string(bytes) + "/threads:" + std::to_string(n);
      add("cuda_malloc" + b, cuda_malloc, n, bytes, false);
      add("cuda_free" + b, cuda_malloc, n, bytes, true);
    }
#endif
  }
}

}  // namespace shoal::bench

int main(int argc, char** argv) {
  using namespace shoal::bench;
  return run_benchmarks(argc, argv, default_flags{}, register_heap_benchmarks);
}
