// Claiming one set bit per thread from a hierarchical bitmap: the collaborative random walk
// (CoRW, seed 000 §4.2) against the flat random walk of the RW-BM baseline and a linear scan,
// over fill fractions and numbers of requesting threads. Reports claims per second and the
// probes per claim of the average thread (TAS) and of the slowest lane of each warp (WAS).
//
// Every configuration has at least as many set bits as requesting threads, so every thread
// must be served; an iteration where one is not fails the benchmark.
//
// Run (a table of the results: bench/bitmap_table.py bitmap.json):
//   shoal_bitmap_bench --benchmark_out=bitmap.json --benchmark_out_format=json

#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "common/bench_main.hpp"
#include "common/bitmap_fill.hpp"
#include "common/device_timer.hpp"
#include "common/probe_stats.hpp"
#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/bitmap/bitmap_ref.hpp"
#include "shoal/bitmap/hierarchical_bitmap.hpp"

namespace shoal::bench {

enum class claim_variant { corw, rwbm, linear };

const char* variant_name(claim_variant v) {
  switch (v) {
    case claim_variant::corw: return "corw";
    case claim_variant::rwbm: return "rwbm";
    case claim_variant::linear: return "linear";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// The claim kernels. Each writes probes[i] > 0 for a served thread and 0 for one that gave up.

/// CoRW: the framework's collaborative walk; a probe is one pooling round of the warp.
void launch_corw(bitmap_ref bm, std::uint64_t threads, std::uint32_t* probes) {
  arch::for_each_index(threads, [=] SHOAL_DEVICE(std::size_t i) {
    walk_rng rng = walk_rng::for_this_lane(i);
    walk_probes p;
    const std::uint64_t got = bm.claim(rng, &p);
    probes[i] = got == bitmap_npos ? 0 : p.rounds;
  });
}

/// RW-BM: uniformly random leaf words until one has a set bit that this thread wins; a probe
/// is one leaf word read. The cap only turns a bug into a reported failure instead of a hang:
/// with at least one set bit per requester the expected probes stay in the tens.
void launch_rwbm(bitmap_ref bm, std::uint64_t threads, std::uint32_t* probes) {
  constexpr std::uint32_t max_probes = 1u << 24;
  const std::uint64_t words0 = bm.layout().words[0];
  arch::for_each_index(threads, [=] SHOAL_DEVICE(std::size_t i) {
    walk_rng rng = walk_rng::for_this_lane(i);
    const std::uint64_t* leaves = bm.level_words(0);
    std::uint32_t n = 0;
    while (n < max_probes) {
      const std::uint64_t w = rng.below(words0);
      const std::uint64_t word = arch::load_relaxed(leaves[w]);
      ++n;
      if (word == 0) continue;
      // The set bit at or after a random position (cyclically), as the walks pick theirs.
      const int r = static_cast<int>(rng.next() & 63);
      const int bit = (arch::lowest_bit(arch::rotate_right(word, r)) + r) & 63;
      if (bm.try_clear(w * 64 + bit)) {
        probes[i] = n;
        return;
      }
    }
    probes[i] = 0;
  });
}

/// Linear scan: thread i of T starts at leaf word i*W/T (the threads spread evenly) and reads
/// forward, wrapping, trying the lowest set bit of each non-zero word and re-reading a word
/// whose bit another thread took; a probe is one word read. Bits are only cleared during the
/// kernel, so a word seen empty stays empty, and each failed try is a bit another thread
/// claimed: one lap plus one re-read per other thread bound a correct scan (the cap allows two
/// laps; it only turns a bug into a reported failure).
void launch_linear(bitmap_ref bm, std::uint64_t threads, std::uint32_t* probes) {
  const std::uint64_t words0 = bm.layout().words[0];
  const std::uint64_t max_probes = 2 * words0 + threads + 1;
  arch::for_each_index(threads, [=] SHOAL_DEVICE(std::size_t i) {
    const std::uint64_t* leaves = bm.level_words(0);
    std::uint64_t w = (i * words0) / threads;
    std::uint64_t n = 0;
    while (n < max_probes) {
      const std::uint64_t word = arch::load_relaxed(leaves[w]);
      ++n;
      if (word == 0) {
        w = w + 1 == words0 ? 0 : w + 1;
        continue;
      }
      if (bm.try_clear(w * 64 + arch::lowest_bit(word))) {
        probes[i] = static_cast<std::uint32_t>(n < 0xffffffffu ? n : 0xffffffffu);
        return;
      }
    }
    probes[i] = 0;
  });
}

void launch_claims(claim_variant v, bitmap_ref bm, std::uint64_t threads, std::uint32_t* probes) {
  switch (v) {
    case claim_variant::corw: launch_corw(bm, threads, probes); break;
    case claim_variant::rwbm: launch_rwbm(bm, threads, probes); break;
    case claim_variant::linear: launch_linear(bm, threads, probes); break;
  }
}

// ---------------------------------------------------------------------------------------------
// The filled bitmap of a configuration. Google Benchmark calls a benchmark function several
// times (while it sizes the iteration count, then once per repetition), and filling 2^30 bits
// costs far more than one claim kernel, so the last filled bitmap is kept for the next call.

constexpr std::uint64_t fill_seed = 0x5E0A1;

hierarchical_bitmap& fill_for_benchmark(hierarchical_bitmap& bm, int fill_bp) {
  fill_at_random(bm, fill_bp / 1e4, fill_seed);
  return bm;
}

struct filled_bitmap {
  filled_bitmap(std::uint64_t bits, int fill_basis_points)
      : fill_bp(fill_basis_points),
        bitmap(bits),
        pristine(fill_for_benchmark(bitmap, fill_basis_points)),
        set_bits(bitmap.count()) {}
  int fill_bp;
  hierarchical_bitmap bitmap;
  bitmap_snapshot pristine;
  std::uint64_t set_bits;
};

std::unique_ptr<filled_bitmap>& cached_fill() {
  static std::unique_ptr<filled_bitmap> cached;
  return cached;
}

filled_bitmap& filled_bitmap_for(std::uint64_t bits, int fill_bp) {
  auto& cached = cached_fill();
  if (!cached || cached->bitmap.size() != bits || cached->fill_bp != fill_bp) {
    cached.reset();  // free the old one first: two 2^30-bit bitmaps need not fit at once
    cached = std::make_unique<filled_bitmap>(bits, fill_bp);
  }
  return *cached;
}

/// N = max(2^24, the power of two ≥ T / f): a large bitmap, and on average T/f·f ≥ T set bits
/// (at least 1.28·T for the fills used here), so requests never exceed supply.
std::uint64_t bitmap_bits(std::uint64_t threads, int fill_bp) {
  const std::uint64_t needed = (threads * 10000 + fill_bp - 1) / fill_bp;
  return std::max(std::uint64_t{1} << 24, std::bit_ceil(needed));
}

// ---------------------------------------------------------------------------------------------

void run_claim_benchmark(benchmark::State& state, claim_variant v, int fill_bp,
                         std::uint64_t threads) {
  if (const auto& device = arch::probe_device(); !device.usable) {
    fail(state, device.reason);
    return;
  }
  filled_bitmap& filled = filled_bitmap_for(bitmap_bits(threads, fill_bp), fill_bp);
  if (filled.set_bits < threads) {
    fail(state, "fill left " + std::to_string(filled.set_bits) + " set bits for " +
                    std::to_string(threads) + " threads");
    return;
  }
  hierarchical_bitmap& bm = filled.bitmap;
  arch::device_buffer<std::uint32_t> probes(threads);
  probe_reducer reducer;
  device_timer timer;

  // Untimed warm-up: loads the kernels (CUDA loads modules lazily) and touches the memory.
  filled.pristine.restore(bm);
  launch_claims(v, bm.ref(), threads, probes.data());
  arch::synchronize();
  // Checked once per run: the claimed bits are gone and no bit was handed out twice.
  const std::uint64_t left = bm.count();
  if (left != filled.set_bits - threads) {
    fail(state, std::to_string(filled.set_bits - left) + " bits cleared by " +
                    std::to_string(threads) + " claims");
    return;
  }

  double seconds = 0, probes_mean = 0, probes_warp_max = 0;
  std::int64_t iterations = 0;
  for (auto _ : state) {
    filled.pristine.restore(bm);
    const double s = timer.seconds([&] { launch_claims(v, bm.ref(), threads, probes.data()); });
    state.SetIterationTime(s);
    const probe_summary summary = reducer.summarize(probes.data(), threads);
    if (summary.served != threads) {
      fail(state, std::to_string(threads - summary.served) + " of " + std::to_string(threads) +
                      " threads obtained no bit");
      break;
    }
    seconds += s;
    probes_mean += summary.mean;
    probes_warp_max += summary.warp_max_mean;
    ++iterations;
  }
  if (iterations == 0 || state.error_occurred()) return;

  const double per_iteration = 1.0 / static_cast<double>(iterations);
  // A plain value rather than Counter::kIsRate: the rate must use the device time measured
  // here, whatever time Google Benchmark would divide by.
  state.counters["claims_per_s"] = static_cast<double>(threads) / (seconds * per_iteration);
  state.counters["probes_mean"] = probes_mean * per_iteration;
  state.counters["probes_warp_max"] = probes_warp_max * per_iteration;
  state.counters["fill_pct"] = fill_bp / 100.0;
  // Not "threads": the JSON output already has that key (Google Benchmark's own thread count),
  // and a second one makes the file ambiguous to JSON readers.
  state.counters["claim_threads"] = static_cast<double>(threads);
  state.counters["bits"] = static_cast<double>(bm.size());
  state.counters["set_bits"] = static_cast<double>(filled.set_bits);
}

void claim_benchmark(benchmark::State& state, claim_variant v, int fill_bp,
                     std::uint64_t threads) {
  try {
    run_claim_benchmark(state, v, fill_bp, threads);
  } catch (const std::exception& e) {
    fail(state, e.what());
  }
}

// ---------------------------------------------------------------------------------------------

// The measured (device) time per repetition. Each iteration also restores the bitmap and
// summarizes the probes outside the timed region, which costs more than a small claim kernel,
// so a longer time mostly adds waiting: the whole suite takes about 2 minutes on an H100 and
// half a minute on two cpu cores.
constexpr double default_min_time_s = 0.05;
#if defined(SHOAL_BACKEND_CUDA)
constexpr int thread_log2s[] = {14, 16, 18, 20, 22};
constexpr int repetitions = 5;
#else
// Two cores: smaller launches and fewer repetitions.
constexpr int thread_log2s[] = {10, 12, 14};
constexpr int repetitions = 3;
#endif
/// Fill fractions in basis points: 50%, 10%, 1%, 0.5%.
constexpr int fill_bps[] = {5000, 1000, 100, 50};
constexpr claim_variant variants[] = {claim_variant::corw, claim_variant::rwbm,
                                      claim_variant::linear};

std::string fill_label(int fill_bp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%g", fill_bp / 100.0);
  return buf;
}

/// Names are claim/<variant>/fill_pct:<f>/threads:<T>; the three variants of one configuration
/// run one after another, so they also share the filled bitmap.
void register_claim_benchmarks() {
  for (const int fill_bp : fill_bps)
    for (const int log2 : thread_log2s)
      for (const claim_variant v : variants) {
        const std::uint64_t threads = std::uint64_t{1} << log2;
        const std::string name = std::string("claim/") + variant_name(v) +
                                 "/fill_pct:" + fill_label(fill_bp) +
                                 "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), claim_benchmark, v, fill_bp, threads)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->Repetitions(repetitions)
            ->ReportAggregatesOnly(true);
      }
}

}  // namespace shoal::bench

int main(int argc, char** argv) {
  using namespace shoal::bench;
  const int status = run_benchmarks(argc, argv, default_flags{default_min_time_s},
                                    register_claim_benchmarks);
  cached_fill().reset();  // free device memory while the CUDA runtime is still up
  return status;
}
