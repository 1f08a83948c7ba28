#pragma once
/// @file
/// The allocation patterns of real models, for shoal_heap_bench (the allocation issue):
///   - make/destroy where only some lanes of each warp ask (1, 4 or 32 of 32): births inside a
///     do-all are a few lanes of a warp;
///   - make/destroy where the lanes of one warp ask for two or three classes at once, and Wa-Tor's
///     populate (a thread makes a Fish, a Shark or nothing);
///   - a do-all over objects of which each makes a new one with probability p and deletes itself
///     with probability q, against the same do-all without allocation.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "common/alloc_objects.hpp"
#include "common/bench_main.hpp"
#include "common/device_timer.hpp"
#include "shoal/shoal.hpp"

namespace shoal::bench {

// Three 16-byte classes in one heap: the mixed-class patterns.
class MixA;
class MixB;
class MixC;
using MixHeap = shoal::heap<MixA, MixB, MixC>;
class MixA : public object<MixHeap, MixA> {
 public:
  SHOAL_FIELDS(MixA, (unsigned long long, a), (unsigned long long, b))
  SHOAL_HD explicit MixA(unsigned long long i) { a = i, b = ~i; }
};
class MixB : public object<MixHeap, MixB> {
 public:
  SHOAL_FIELDS(MixB, (unsigned long long, a), (unsigned long long, b))
  SHOAL_HD explicit MixB(unsigned long long i) { a = i, b = i + 1; }
};
class MixC : public object<MixHeap, MixC> {
 public:
  SHOAL_FIELDS(MixC, (unsigned long long, a), (unsigned long long, b))
  SHOAL_HD explicit MixC(unsigned long long i) { a = i, b = i + 2; }
};

/// Which class thread i makes: `classes` 2 or 3, at random per thread (0: A, 1: B, 2: C); the
/// populate pattern (`classes` 0): A with probability 1/4, B 1/4, nothing 1/2 (-1).
SHOAL_HD inline int mixed_class_of(std::uint64_t i, std::uint32_t classes) {
  const std::uint64_t h = hash64(i + 0x51ull);
  if (classes == 0) return h % 4 < 2 ? static_cast<int>(h % 4) : -1;
  return static_cast<int>(h % classes);
}

SHOAL_DEVICE inline void* make_mixed(std::uint64_t i, std::uint32_t classes) {
  switch (mixed_class_of(i, classes)) {
    case 0: return make<MixA>(i);
    case 1: return make<MixB>(i);
    case 2: return make<MixC>(i);
    default: return nullptr;
  }
}

/// Reports an allocation failure or an inconsistent heap; true when the benchmark must stop.
template <class Runtime>
bool failed(benchmark::State& state, Runtime& rt) {
  try {
    rt.check_errors();
  } catch (const error& e) {
    fail(state, e.what());
    return true;
  }
  return false;
}

inline void report_rate(benchmark::State& state, std::uint64_t objects, std::uint64_t threads) {
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(objects), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(threads);
}

/// Requests of `threads` threads of which lanes 0 … lanes-1 of every warp ask.
inline std::uint64_t lane_requests(std::uint64_t threads, std::uint32_t lanes) {
  return threads / arch::warp_width * std::min<std::uint64_t>(lanes, arch::warp_width);
}

/// `threads` threads, of which lanes 0 … lanes-1 of every warp make a 16-byte object.
inline void make_lanes(benchmark::State& state, std::uint64_t threads, std::uint32_t lanes) {
  const std::uint64_t objects = lane_requests(threads, lanes);
  runtime_of<Obj16> rt(heap_bytes_for<Obj16>(objects));
  arch::device_buffer<Obj16*> ptrs(threads);
  Obj16** p = ptrs.data();
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    state.SetIterationTime(timer.seconds([&] {
      rt.launch_async(threads, [=] SHOAL_DEVICE(std::size_t i) {
        if (i % arch::warp_width < lanes) p[i] = make<Obj16>(i);
      });
    }));
    if (failed(state, rt)) break;
  }
  report_rate(state, objects, threads);
}

/// The same lanes destroy what every thread made.
inline void destroy_lanes(benchmark::State& state, std::uint64_t threads, std::uint32_t lanes) {
  const std::uint64_t objects = lane_requests(threads, lanes);
  runtime_of<Obj16> rt(heap_bytes_for<Obj16>(threads));
  arch::device_buffer<Obj16*> ptrs(threads);
  Obj16** p = ptrs.data();
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    launch_make<Obj16>(rt, p, threads);
    rt.synchronize();
    state.SetIterationTime(timer.seconds([&] {
      rt.launch_async(threads, [=] SHOAL_DEVICE(std::size_t i) {
        if (i % arch::warp_width < lanes) destroy(p[i]);
      });
    }));
    if (failed(state, rt)) break;
  }
  if (rt.stats().live() != threads - objects) fail(state, "wrong number of objects left after destroy");
  if (const std::string bad = rt.verify(); !bad.empty()) fail(state, "heap inconsistent after destroy: " + bad);
  report_rate(state, objects, threads);
}

/// Objects that mixed_class_of(i, classes) says thread i makes, of `threads`.
inline std::uint64_t mixed_objects(std::uint64_t threads, std::uint32_t classes) {
  if (classes != 0) return threads;
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < threads; ++i) n += mixed_class_of(i, 0) >= 0;
  return n;
}

/// Every thread makes an object of a class chosen per thread (mixed_class_of).
inline void make_mixed_classes(benchmark::State& state, std::uint64_t threads, std::uint32_t classes) {
  runtime<MixHeap> rt(threads * 48 + (std::size_t{32} << 20));
  arch::device_buffer<void*> ptrs(threads);
  void** p = ptrs.data();
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    state.SetIterationTime(timer.seconds([&] {
      rt.launch_async(threads, [=] SHOAL_DEVICE(std::size_t i) { p[i] = make_mixed(i, classes); });
    }));
    if (failed(state, rt)) break;
  }
  report_rate(state, mixed_objects(threads, classes), threads);
}

inline void destroy_mixed_classes(benchmark::State& state, std::uint64_t threads, std::uint32_t classes) {
  runtime<MixHeap> rt(threads * 48 + (std::size_t{32} << 20));
  arch::device_buffer<void*> ptrs(threads);
  void** p = ptrs.data();
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    rt.launch_async(threads, [=] SHOAL_DEVICE(std::size_t i) { p[i] = make_mixed(i, classes); });
    rt.synchronize();
    state.SetIterationTime(timer.seconds([&] {
      rt.launch_async(threads, [=] SHOAL_DEVICE(std::size_t i) {
        switch (mixed_class_of(i, classes)) {
          case 0: destroy(static_cast<MixA*>(p[i])); break;
          case 1: destroy(static_cast<MixB*>(p[i])); break;
          case 2: destroy(static_cast<MixC*>(p[i])); break;
          default: break;
        }
      });
    }));
    if (failed(state, rt)) break;
  }
  if (rt.stats().live() != 0) fail(state, "objects left after destroying all");
  report_rate(state, mixed_objects(threads, classes), threads);
}

// The birth-and-death do-all: a model's step in which each object draws two numbers.
class Critter;
using CritterHeap = shoal::heap<Critter>;
class Critter : public object<CritterHeap, Critter> {
 public:
  SHOAL_FIELDS(Critter, (unsigned long long, id), (unsigned long long, age))
  SHOAL_HD explicit Critter(unsigned long long i) { id = i, age = 0; }
  /// With probability p (of 2^32) a newborn, with probability q the end of this one; with
  /// `allocate` false the same draws and field traffic, but no new and no delete.
  SHOAL_HD void live(std::uint32_t p, std::uint32_t q, unsigned long long salt, bool allocate) {
    const unsigned long long h = hash64(id.get() ^ salt);
    age = age + 1;
    const bool born = static_cast<std::uint32_t>(h) < p, dies = static_cast<std::uint32_t>(h >> 32) < q;
    if (!allocate) {
      if (born || dies) id = h;  // a store where the allocating form would construct
      return;
    }
    if (born) new Critter(h);
    if (dies) delete this;
  }
};

/// One do-all over `n` Critters (made by parallel_new, untimed), each born and dying with the
/// same probability (basis points), or none of that (`allocate` false). With `steady`, the timed
/// do-all is the second one: the first (untimed) leaves what a model's step finds from the step
/// before, stocks holding reservations and blocks with the holes of its deaths.
inline void birth_death(benchmark::State& state, std::uint64_t n, std::uint32_t birth_bp, std::uint32_t death_bp,
                        bool allocate, bool steady) {
  runtime<CritterHeap> rt(heap_bytes_for<Critter>(2 * n));
  const auto of = [](std::uint32_t bp) { return static_cast<std::uint32_t>(static_cast<double>(bp) / 10000.0 * 4294967296.0); };
  const std::uint32_t p = of(birth_bp), q = of(death_bp);
  device_timer timer;
  unsigned long long salt = 0;
  for (auto _ : state) {
    rt.clear();
    rt.parallel_new<Critter>(n);
    rt.synchronize();
    if (steady) rt.parallel_do<&Critter::live>(p, q, ++salt, allocate);
    ++salt;
    state.SetIterationTime(timer.seconds([&] { rt.parallel_do<&Critter::live>(p, q, salt, allocate); }));
    if (failed(state, rt)) break;
  }
  if (const std::string bad = rt.verify(); !bad.empty()) fail(state, "heap inconsistent after the do-all: " + bad);
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["pct"] = birth_bp / 100.0;
}

/// Registers the patterns with `add(name, f, args...)` at `thread_counts`, and the birth-and-death
/// do-all over `critters` objects.
template <class Add>
void add_allocation_patterns(Add add, std::initializer_list<std::uint64_t> thread_counts, std::uint64_t critters) {
  // Every pattern at the smallest count; at the larger ones only what the allocation issue sets
  // goals for (the suite's time budget: a mixed make of 2^24 threads takes up to 0.2 s a run).
  bool first = true;
  for (const std::uint64_t n : thread_counts) {
    const std::string t = "/threads:" + std::to_string(n);
    for (const std::uint32_t lanes : {1u, 4u, 32u}) {
      if (!first && lanes == 4) continue;
      add("make_lanes/lanes:" + std::to_string(lanes) + t, make_lanes, n, lanes);
      add("destroy_lanes/lanes:" + std::to_string(lanes) + t, destroy_lanes, n, lanes);
    }
    for (const std::uint32_t classes : {2u, 3u, 0u}) {
      if (!first && classes == 2) continue;
      const std::string c = classes == 0 ? "/classes:populate" : "/classes:" + std::to_string(classes);
      add("make_mixed" + c + t, make_mixed_classes, n, classes);
      if (first) add("destroy_mixed" + c + t, destroy_mixed_classes, n, classes);
    }
    first = false;
  }
  const std::string o = "/objects:" + std::to_string(critters);
  for (const std::uint32_t bp : {100u, 1000u, 5000u}) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%g", bp / 100.0);
    for (const bool steady : {false, true})
      for (const bool allocate : {false, true})
        add(std::string("birth_death/pct:") + pct + "/alloc:" + (allocate ? "1" : "0") + (steady ? "/steady" : "") + o,
            birth_death, critters, bp, bp, allocate, steady);
  }
  // The 10% step taken apart: its births alone and its deaths alone (each after a step of the same).
  add("birth_death/births_only/pct:10/alloc:1/steady" + o, birth_death, critters, 1000u, 0u, true, true);
  add("birth_death/deaths_only/pct:10/alloc:1/steady" + o, birth_death, critters, 0u, 1000u, true, true);
}

}  // namespace shoal::bench
