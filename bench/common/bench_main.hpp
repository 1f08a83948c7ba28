#pragma once
/// @file
/// The main() of every benchmark suite: backend-dependent default flags, the run context, and
/// an exit status that fails when any benchmark reported an error (so the ctest smoke runs
/// catch benchmarks that rot instead of printing "ERROR OCCURRED" and exiting 0).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "run_context.hpp"

namespace shoal::bench {

namespace detail {
inline std::atomic<int> failures{0};
}

/// Reports an error for this benchmark (Google Benchmark stops it) and makes main fail.
/// Inside the `for (auto _ : state)` loop the caller must leave the loop afterwards.
inline void fail(benchmark::State& state, const std::string& why) {
  detail::failures.fetch_add(1);
  // Also on stderr: with ReportAggregatesOnly a failed repetition is not shown in the report.
  std::fprintf(stderr, "benchmark failure (repetition of the benchmark above): %s\n", why.c_str());
  state.SkipWithError(why.c_str());
}

/// Registers a manually timed benchmark calling f(state, args...), reporting the median and
/// spread of `repetitions` runs in microseconds: Google Benchmark's mean, median, stddev and cv
/// aggregates plus "min" and "max" (the tables show median with min/max; the per-repetition rows
/// are left out of the output). Returns the registration, for a benchmark that needs more
/// (->Iterations(n) where untimed set-up per iteration would make the minimum time cost many
/// times itself in wall time).
template <class F, class... Args>
auto* add_benchmark(const std::string& name, int repetitions, F f, Args... args) {
  return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { f(s, args...); })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond)
      ->Repetitions(repetitions)
      ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
      ->ComputeStatistics("max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); })
      ->ReportAggregatesOnly(true);
}

/// Per-backend defaults for flags the command line did not give. They are not set with
/// Benchmark::MinTime() because that would override --benchmark_min_time: the smoke tests
/// and quick manual runs need to pass their own.
struct default_flags {
  double min_time_s = 0.5;
};

/// Initializes Google Benchmark with `defaults` filled in, calls `register_all()`, runs the
/// selected benchmarks; returns main's exit status.
template <class Register>
int run_benchmarks(int argc, char** argv, const default_flags& defaults, Register register_all) {
  std::vector<char*> args(argv, argv + argc);
  const auto given = [&](const char* flag) {
    const std::size_t n = std::strlen(flag);
    for (char* a : args)
      if (std::strncmp(a, flag, n) == 0 && (a[n] == '=' || a[n] == '\0')) return true;
    return false;
  };
  // benchmark 1.7.1 reads a plain number of seconds (no "s" suffix).
  std::string min_time = "--benchmark_min_time=" + std::to_string(defaults.min_time_s);
  if (!given("--benchmark_min_time")) args.push_back(min_time.data());
  args.push_back(nullptr);  // argv[argc] is null by convention

  int n = static_cast<int>(args.size()) - 1;
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  add_run_context();
  register_all();
  // A filter that matches nothing (a renamed benchmark, a stale smoke filter) is a failure too,
  // or a smoke test would pass without running anything.
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (ran == 0) std::fprintf(stderr, "no benchmark matched the filter\n");
  return detail::failures.load() == 0 && ran > 0 ? 0 : 1;
}

}  // namespace shoal::bench
