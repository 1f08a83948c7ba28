// Do-all benchmarks: the cost of runtime.parallel_do over 0 … 10^8 objects doing a trivial field
// update, against a plain structure-of-arrays kernel doing the same update on arrays; a heap
// compacted by parallel_new against one scattered by destroying a random half.
#include <string>

#include "common/bench_main.hpp"
#include "common/device_timer.hpp"
#include "shoal/shoal.hpp"

namespace shoal::bench {

class Particle;
using ParticleHeap = shoal::heap<Particle>;
class Particle : public object<ParticleHeap, Particle> {
 public:
  SHOAL_FIELDS(Particle, (float, x), (float, vx))
  SHOAL_HD explicit Particle(unsigned long long i) { x = 0.0f, vx = 1.0f + (i % 7); }
  SHOAL_HD void step(float dt) { x += vx * dt; }
  SHOAL_HD void maybe_die(unsigned long long seed) {
    std::uint64_t z = shoal::detail::bits_of(this) * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    if ((z >> 40) & 1) delete this;
  }
};
using ParticleRuntime = runtime<ParticleHeap>;

std::size_t heap_bytes_for(std::uint64_t n) { return n * 8 * 5 / 4 + (std::size_t{64} << 20); }

/// parallel_do over n particles (created compactly by parallel_new), or over n survivors of a
/// heap of 2n from which a random half was destroyed (`scattered`).
void do_all(benchmark::State& state, std::uint64_t n, bool scattered) {
  ParticleRuntime rt(heap_bytes_for(scattered ? 2 * n : n));
  if (n > 0) {
    rt.parallel_new<Particle>(scattered ? 2 * n : n);
    if (scattered) {
      rt.parallel_do<&Particle::maybe_die>(12345ull);
      rt.synchronize();
    }
  }
  const std::uint64_t live = rt.stats().live();
  device_timer timer;
  for (auto _ : state)
    state.SetIterationTime(timer.seconds([&] { rt.parallel_do<&Particle::step>(0.5f); }));
  state.counters["objects"] = static_cast<double>(live);
  state.counters["blocks"] = static_cast<double>(rt.stats().types[0].blocks);
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(live), benchmark::Counter::kIsIterationInvariantRate);
}

/// The same update on two plain arrays: the baseline a do-all is compared with.
void plain_soa(benchmark::State& state, std::uint64_t n) {
  arch::device_buffer<float> x(n ? n : 1), vx(n ? n : 1);
  x.zero();
  float* px = x.data();
  float* pv = vx.data();
  arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) { pv[i] = 1.0f + (i % 7); });
  arch::synchronize();
  device_timer timer;
  for (auto _ : state)
    state.SetIterationTime(timer.seconds([&] {
      arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) { px[i] += pv[i] * 0.5f; });
    }));
  state.counters["objects"] = static_cast<double>(n);
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

#if defined(SHOAL_BACKEND_CUDA)
constexpr std::uint64_t sizes[] = {0, 1000, 1000000, 100000000};
constexpr int repetitions = 5;
#else
constexpr std::uint64_t sizes[] = {0, 1000, 1000000};
constexpr int repetitions = 3;
#endif

template <class F, class... Args>
void add(const std::string& name, F f, Args... args) {
  add_benchmark(name, repetitions, f, args...);
}

void register_doall_benchmarks() {
  for (const std::uint64_t n : sizes) {
    const std::string o = "/objects:" + std::to_string(n);
    add("doall/compact" + o, do_all, n, false);
    add("plain_soa" + o, plain_soa, n);
    if (n >= 1000) add("doall/scattered" + o, do_all, n, true);
  }
}

}  // namespace shoal::bench

int main(int argc, char** argv) {
  using namespace shoal::bench;
  return run_benchmarks(argc, argv, default_flags{}, register_doall_benchmarks);
}
