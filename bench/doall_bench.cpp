// Do-all benchmarks: the cost of runtime.parallel_do over 0 … 10^8 objects doing a trivial field
// update, alone and enqueued back to back, against a plain structure-of-arrays kernel doing the
// same update on arrays; a heap compacted by parallel_new against one scattered by destroying a
// random half; parallel_new (into a fresh heap, and into the holes of a used one) against
// initialising plain arrays; the tiled all-pairs helper against
// one thread per object running device_do.
#include <cmath>
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
  /// Leaves a hole in every other block (consecutive blocks differ in the parity of their
  /// address ÷ block size).
  SHOAL_HD void die_in_every_other_block() {
    constexpr std::uint64_t block_bytes = shoal::detail::geometry_of<ParticleHeap>.block_bytes;
    if ((shoal::detail::block_address_of(shoal::detail::bits_of(this)) / block_bytes) % 2 == 1) delete this;
  }
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

/// `batch` do-alls enqueued back to back, as a simulation step does: launch latency overlaps
/// with the previous do-all's work. The iteration time is the whole batch's, so Google
/// Benchmark's minimum time bounds the wall time (timing batch ÷ `batch` made it run `batch`×
/// the iterations the minimum time asks for: 36 s per size on the H100 instead of 0.4 s). The
/// time per do-all is real_time / batch (the name carries batch:<n>, bench/summary.py divides;
/// do_alls_per_s is its inverse).
void do_all_back_to_back(benchmark::State& state, std::uint64_t n, int batch) {
  ParticleRuntime rt(heap_bytes_for(n));
  if (n > 0) rt.parallel_new<Particle>(n);
  device_timer timer;
  for (auto _ : state)
    state.SetIterationTime(timer.seconds([&] {
      for (int k = 0; k < batch; ++k) rt.parallel_do<&Particle::step>(0.5f);
    }));
  state.counters["objects"] = static_cast<double>(n);
  state.counters["batch"] = batch;
  state.counters["do_alls_per_s"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
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

/// parallel_new of n particles into an empty heap (it waits for its work, as a user's call does),
/// against initialising the same fields in two plain arrays: the issue asks for bulk creation "as
/// fast as a plain array initialisation". The heap is emptied between iterations, untimed.
void parallel_new_bench(benchmark::State& state, std::uint64_t n) {
  ParticleRuntime rt(heap_bytes_for(n));
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    rt.synchronize();
    state.SetIterationTime(timer.seconds([&] { rt.parallel_new<Particle>(n); }));
  }
  state.counters["objects"] = static_cast<double>(n);
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

/// parallel_new of n particles into the holes of a heap where every other block is in use (2n
/// particles made, the odd blocks' destroyed; untimed, every iteration): the opened blocks are not
/// consecutive, so the objects are made in listed blocks rather than as a plain array is written.
void parallel_new_among_used(benchmark::State& state, std::uint64_t n) {
  ParticleRuntime rt(heap_bytes_for(2 * n));
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    rt.parallel_new<Particle>(2 * n);
    rt.parallel_do<&Particle::die_in_every_other_block>();
    rt.synchronize();
    state.SetIterationTime(timer.seconds([&] { rt.parallel_new<Particle>(n); }));
  }
  state.counters["objects"] = static_cast<double>(n);
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

/// The same initial values written into two plain arrays (Particle's constructor).
void plain_init(benchmark::State& state, std::uint64_t n) {
  arch::device_buffer<float> x(n), vx(n);
  float* px = x.data();
  float* pv = vx.data();
  device_timer timer;
  for (auto _ : state)
    state.SetIterationTime(timer.seconds([&] {
      arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
        px[i] = 0.0f;
        pv[i] = 1.0f + (i % 7);
      });
    }));
  state.counters["objects"] = static_cast<double>(n);
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

#if defined(SHOAL_BACKEND_CUDA)
__global__ void plain_init_kernel(float* x, float* vx, std::uint64_t n) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] = 0.0f;
    vx[i] = 1.0f + (i % 7);
  }
}

/// The same, written as a CUDA programmer would: a thread per element, the hardware handing out
/// the thread blocks (for_each_index above runs a grid of at most 32 blocks per multiprocessor,
/// each thread taking many elements in turn).
void plain_init_thread_per_element(benchmark::State& state, std::uint64_t n) {
  arch::device_buffer<float> x(n), vx(n);
  device_timer timer;
  for (auto _ : state)
    state.SetIterationTime(timer.seconds([&] {
      plain_init_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(x.data(), vx.data(), n);
      SHOAL_CUDA_CHECK(cudaGetLastError());
    }));
  state.counters["objects"] = static_cast<double>(n);
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
#endif

class Body;
using BodyHeap = shoal::heap<Body>;
class Body : public object<BodyHeap, Body> {
 public:
  SHOAL_FIELDS(Body, (float, x), (float, y), (float, mass), (float, fx), (float, fy))
  SHOAL_HD explicit Body(unsigned long long i) {
    x = static_cast<float>((i * 7919u) % 10007u) / 10007.0f;
    y = static_cast<float>((i * 104729u) % 9973u) / 9973.0f;
    mass = 1.0f + static_cast<float>(i % 1000);
    fx = 0.0f, fy = 0.0f;
  }
  /// The one-thread-per-object form: walk every other body through the heap.
  SHOAL_DEVICE void sum_forces_by_device_do(float softening) {
    const float sx = x, sy = y, sm = mass;
    float ax = 0.0f, ay = 0.0f;
    device_do<Body>([&](Body* o) {
      if (o == this) return;
      const float dx = o->x - sx, dy = o->y - sy;
      const float r2 = dx * dx + dy * dy + softening * softening;
      const float inv_r = 1.0f / sqrtf(r2);
      const float f = sm * o->mass * inv_r * inv_r * inv_r;
      ax += f * dx, ay += f * dy;
    });
    fx = ax, fy = ay;
  }
};

/// Softened 2-D gravity for runtime.all_pairs (the same arithmetic as above).
struct body_gravity {
  struct value {
    float x, y, mass;
  };
  struct accumulator {
    float fx, fy;
  };
  float softening;
  SHOAL_HD value project(Body* b) const { return {b->x, b->y, b->mass}; }
  SHOAL_HD void interact(const value& s, const value& o, accumulator& a) const {
    const float dx = o.x - s.x, dy = o.y - s.y;
    const float r2 = dx * dx + dy * dy + softening * softening;
    const float inv_r = 1.0f / sqrtf(r2);
    const float f = s.mass * o.mass * inv_r * inv_r * inv_r;
    a.fx += f * dx, a.fy += f * dy;
  }
  SHOAL_HD void combine(accumulator& a, const accumulator& p) const { a.fx += p.fx, a.fy += p.fy; }
  SHOAL_HD void apply(Body* b, const accumulator& a) const { b->fx = a.fx, b->fy = a.fy; }
};

/// All-pairs forces over n bodies: the tiled helper or one thread per body with device_do.
void all_pairs(benchmark::State& state, std::uint64_t n, bool tiled) {
  runtime<BodyHeap> rt(std::size_t{64} << 20);
  rt.parallel_new<Body>(n);
  device_timer timer;
  for (auto _ : state)
    state.SetIterationTime(timer.seconds([&] {
      if (tiled) rt.all_pairs<Body>(body_gravity{0.05f});
      else rt.parallel_do<&Body::sum_forces_by_device_do>(0.05f);
    }));
  state.counters["objects"] = static_cast<double>(n);
  state.counters["pairs_per_s"] = benchmark::Counter(static_cast<double>(n) * static_cast<double>(n - 1),
                                                     benchmark::Counter::kIsIterationInvariantRate);
}

constexpr int back_to_back_batch = 100;
#if defined(SHOAL_BACKEND_CUDA)
constexpr std::uint64_t pair_sizes[] = {2000, 20000};
constexpr std::uint64_t sizes[] = {0, 1000, 1000000, 100000000};
constexpr std::uint64_t back_to_back_max_objects = 1000000;
constexpr int repetitions = 5;
#else
constexpr std::uint64_t pair_sizes[] = {500};
constexpr std::uint64_t sizes[] = {0, 1000, 1000000};
// A batch of 100 do-alls over 10^6 objects takes 0.2–2 s on two cores, 4–40× a repetition's
// minimum time, for a number that is not compared with anything on the cpu backend.
constexpr std::uint64_t back_to_back_max_objects = 1000;
constexpr int repetitions = 3;
#endif

template <class F, class... Args>
benchmark::internal::Benchmark* add(const std::string& name, F f, Args... args) {
  return add_benchmark(name, repetitions, f, args...);
}

void register_doall_benchmarks() {
  for (const std::uint64_t n : sizes) {
    const std::string o = "/objects:" + std::to_string(n);
    add("doall/compact" + o, do_all, n, false);
    add("plain_soa" + o, plain_soa, n);
    if (n >= 1000) add("doall/scattered" + o, do_all, n, true);
    if (n >= 1000) {
      add("creation/parallel_new" + o, parallel_new_bench, n);
      add("creation/plain_init" + o, plain_init, n);
#if defined(SHOAL_BACKEND_CUDA)
      add("creation/plain_init_thread_per_element" + o, plain_init_thread_per_element, n);
#endif
      // Each iteration first makes 2n objects and destroys half (~50 ms at 10^8 on the H100):
      // iterations until the minimum time made the suite outrun its budget, so 10 per repetition.
      auto* among_used = add("creation/parallel_new_among_used" + o, parallel_new_among_used, n);
      if (n >= 10'000'000) among_used->Iterations(10);
    }
    if (n <= back_to_back_max_objects)
      add("doall/back_to_back" + o + "/batch:" + std::to_string(back_to_back_batch), do_all_back_to_back, n,
          back_to_back_batch);
  }
  for (const std::uint64_t n : pair_sizes) {
    const std::string o = "/objects:" + std::to_string(n);
    add("all_pairs/tiled" + o, all_pairs, n, true);
    add("all_pairs/device_do" + o, all_pairs, n, false);
  }
}

}  // namespace shoal::bench

int main(int argc, char** argv) {
  using namespace shoal::bench;
  return run_benchmarks(argc, argv, default_flags{}, register_doall_benchmarks);
}
