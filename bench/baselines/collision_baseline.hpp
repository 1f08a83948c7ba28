#pragma once
/// @file
/// Static collision baseline for the apps benchmark (DynaSOAr's methodology): the model of
/// apps/collision/collision_model.hpp written the way one would without an object heap. The
/// bodies live in fixed arrays of n entries, one per field (SOA), allocated once: the live
/// bodies are always the first `live` entries, in id order. A step is:
///  1. pairs: every body against every other in shared-memory tiles (cuda; partner slices
///     when there are too few bodies to fill the GPU, as the app's all-pairs helper does), or a
///     plain loop (cpu): acceleration and partner index;
///  2. merge: mutual partners merge into the lower id; the other is marked gone;
///  3. compact: an exclusive scan of the "kept" flags gives each survivor its new index, and one
///     pass moves the survivors (advanced by the step) into the second set of arrays, which
///     then become the first. The live count is read back (the app's all-pairs helper reads
///     its body count too).
/// Partner choice, force law, merge and motion are the app's own functions (add_pull, nearest,
/// absorb, advance), so a baseline run reproduces the app's merges; positions agree within
/// rounding (another summation order on the GPU; bench/baselines/tests states the tolerance).

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "collision/collision_model.hpp"
#include "shoal/arch/atomic.hpp"
#include "shoal/arch/error.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/sim/sums.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <cub/device/device_scan.cuh>
#endif

namespace collision_baseline {

using collision::motion;

/// One set of body arrays (device pointers).
struct arrays {
  float *x, *y, *vx, *vy, *ax, *ay, *mass;
  std::uint32_t* id;

  SHOAL_HD motion load(std::uint64_t i) const { return {x[i], y[i], vx[i], vy[i], ax[i], ay[i], mass[i]}; }
  SHOAL_HD void store(std::uint64_t i, const motion& m) const {
    x[i] = m.x, y[i] = m.y, vx[i] = m.vx, vy[i] = m.vy, ax[i] = m.ax, ay[i] = m.ay, mass[i] = m.mass;
  }
};

/// Owner of one set of arrays for n bodies.
class body_storage {
 public:
  explicit body_storage(std::uint64_t n) : f_(7 * n), id_(n), n_(n) {}
  arrays view() {
    float* f = f_.data();
    return {f, f + n_, f + 2 * n_, f + 3 * n_, f + 4 * n_, f + 5 * n_, f + 6 * n_, id_.data()};
  }

 private:
  shoal::arch::device_buffer<float> f_;
  shoal::arch::device_buffer<std::uint32_t> id_;
  std::uint64_t n_;
};

/// What the pair pass gathers for one body: its pull and its nearest body within the radius.
struct pair_sum {
  float ax, ay;
  collision::nearest near;
  std::int32_t partner;  ///< index of the nearest; meaningful when near.key != 0
};

/// The other body at index j (position, mass, id) adds to `acc`.
SHOAL_HD inline void interact(float x, float y, float ox, float oy, float om, std::uint32_t oid, std::int32_t j,
                              float damping, float r2, pair_sum& acc) {
  const float dx = ox - x, dy = oy - y, d2 = dx * dx + dy * dy;
  collision::add_pull(dx, dy, d2, om, damping, acc.ax, acc.ay);
  if (d2 < r2 && acc.near.offer(d2, oid)) acc.partner = j;
}

SHOAL_HD inline void combine(pair_sum& acc, const pair_sum& part) {
  acc.ax += part.ax;
  acc.ay += part.ay;
  if (acc.near.offer(part.near)) acc.partner = part.partner;
}

SHOAL_HD inline void finish_pairs(const arrays& b, std::int32_t* partner, std::uint64_t i, const pair_sum& acc, float g) {
  b.ax[i] = g * acc.ax;
  b.ay[i] = g * acc.ay;
  partner[i] = acc.near.key != 0 ? acc.partner : -1;
}

#if defined(SHOAL_BACKEND_CUDA)

inline constexpr int tile = 128;

/// Block (x, s): bodies [x·tile, x·tile + tile) against partner slice s, staged in shared
/// memory; only the tile holding the bodies themselves needs the self-pair test.
template <int Tile>  // a template, so that the header may be included by many translation units
__global__ void __launch_bounds__(Tile)
    pairs_kernel(arrays b, std::uint32_t n, std::uint32_t slice_length, float damping, float r2, float g,
                 std::int32_t* partner, pair_sum* partial) {
  __shared__ float sx[Tile], sy[Tile], sm[Tile];
  __shared__ std::uint32_t sid[Tile];
  const std::uint32_t own_base = blockIdx.x * Tile, i = own_base + threadIdx.x;
  const bool active = i < n;
  const float x = active ? b.x[i] : 0.0f, y = active ? b.y[i] : 0.0f;
  pair_sum acc{};
  const std::uint32_t begin = blockIdx.y * slice_length;
  const std::uint32_t end = begin + slice_length < n ? begin + slice_length : n;
  for (std::uint32_t base = begin; base < end; base += Tile) {
    __syncthreads();
    const std::uint32_t k = base + threadIdx.x;
    if (k < end) sx[threadIdx.x] = b.x[k], sy[threadIdx.x] = b.y[k], sm[threadIdx.x] = b.mass[k], sid[threadIdx.x] = b.id[k];
    __syncthreads();
    if (!active) continue;
    const int m = static_cast<int>(end - base < Tile ? end - base : Tile);
    const auto j0 = static_cast<std::int32_t>(base);
    if (base == own_base) {
      for (int q = 0; q < m; ++q)
        if (q != static_cast<int>(threadIdx.x)) interact(x, y, sx[q], sy[q], sm[q], sid[q], j0 + q, damping, r2, acc);
    } else if (m == Tile) {
#pragma unroll 16
      for (int q = 0; q < Tile; ++q) interact(x, y, sx[q], sy[q], sm[q], sid[q], j0 + q, damping, r2, acc);
    } else {
      for (int q = 0; q < m; ++q) interact(x, y, sx[q], sy[q], sm[q], sid[q], j0 + q, damping, r2, acc);
    }
  }
  if (!active) return;
  if (gridDim.y == 1) finish_pairs(b, partner, i, acc, g);
  else partial[static_cast<std::uint64_t>(blockIdx.y) * n + i] = acc;
}

/// Partner slices for n bodies: enough threads to fill the GPU (the all-pairs helper's rule).
inline std::uint32_t slice_length_for(std::uint32_t n) {
  const std::uint64_t tiles = (n + tile - 1) / tile;
  const std::uint64_t threads_wanted = static_cast<std::uint64_t>(shoal::arch::probe_device().multiprocessors) * 2048;
  const std::uint64_t want = std::clamp<std::uint64_t>((threads_wanted + tiles * tile - 1) / (tiles * tile), 1, tiles);
  return static_cast<std::uint32_t>((tiles + want - 1) / want * tile);
}

#endif  // SHOAL_BACKEND_CUDA

/// Body i of run `seed` (the app's draws) at index i, id i.
inline void populate(arrays b, std::uint64_t n, std::uint64_t seed, collision::parameters p) {
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    b.store(i, collision::initial_motion(seed, i, p));
    b.id[i] = static_cast<std::uint32_t>(i);
  });
}

class simulation {
 public:
  simulation(std::uint64_t n, std::uint64_t seed, const collision::parameters& p)
      : p_(p), live_(n), a_(n), b_(n), partner_(n), keep_(n + 1), position_(n + 1), partial_(partial_entries(n)) {
    cur_ = a_.view(), next_ = b_.view();
    populate(cur_, n, seed, p);
#if defined(SHOAL_BACKEND_CUDA)
    std::size_t bytes = 0;
    SHOAL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, keep_.data(), position_.data(), n + 1));
    scan_temp_ = shoal::arch::device_buffer<std::byte>(std::max<std::size_t>(bytes, 1));
#endif
    shoal::arch::synchronize();
  }

  /// One step. Waits once, for the new live count.
  void step() {
    if (live_ == 0) return;
    pairs();
    merge_and_compact();
  }

  std::uint64_t live() const { return live_; }

  /// The app's totals (Body::report's fixed point, the same sums).
  collision::totals measure() {
    shoal::sim::sums sums(5);
    const shoal::sim::sums::ref out = sums.device();
    const arrays b = cur_;
    shoal::arch::for_each_index(live_, [=] SHOAL_DEVICE(std::size_t i) {
      const double m = b.mass[i], u = b.vx[i], v = b.vy[i];
      out.add(0, 1);
      out.add_real(1, m / 1e-6);
      out.add_real(2, 0.5 * m * (u * u + v * v) / 1e-12);
      out.add_real(3, m * u / 1e-12);
      out.add_real(4, m * v / 1e-12);
    });
    const double mass = sums.read_real(1e-6)[1];
    const auto v = sums.read_real(1e-12);
    return {static_cast<std::uint64_t>(sums.read()[0]), mass, v[2], v[3], v[4]};
  }

  struct body {
    std::uint32_t id;
    motion m;
  };
  /// Every live body's id and motion, in id order (tests).
  std::vector<body> bodies() {
    shoal::arch::device_buffer<body> out(std::max<std::uint64_t>(live_, 1));
    body* o = out.data();
    const arrays b = cur_;
    shoal::arch::for_each_index(live_, [=] SHOAL_DEVICE(std::size_t i) { o[i] = {b.id[i], b.load(i)}; });
    auto all = out.download();
    all.resize(live_);
    return all;
  }

  // Phases (public: nvcc defines no device lambdas in private member functions).

  /// Phase 1: acceleration and partner of every live body.
  void pairs() {
    const arrays b = cur_;
    std::int32_t* partner = partner_.data();
    const float damping = p_.damping, r2 = p_.merge_radius * p_.merge_radius, g = p_.gravity;
    const auto n = static_cast<std::uint32_t>(live_);
#if defined(SHOAL_BACKEND_CUDA)
    const std::uint32_t slice_length = slice_length_for(n);
    const std::uint32_t slices = (n + slice_length - 1) / slice_length;
    pair_sum* partial = partial_.data();
    const dim3 grid((n + tile - 1) / tile, slices);
    pairs_kernel<tile><<<grid, tile>>>(b, n, slice_length, damping, r2, g, partner, partial);
    SHOAL_CUDA_CHECK(cudaGetLastError());
    if (slices > 1)
      shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
        pair_sum acc = partial[i];
        for (std::uint32_t s = 1; s < slices; ++s) combine(acc, partial[static_cast<std::uint64_t>(s) * n + i]);
        finish_pairs(b, partner, i, acc, g);
      });
#else
    shoal::arch::for_each_index(n, [=](std::size_t i) {
      const float x = b.x[i], y = b.y[i];
      pair_sum acc{};
      for (std::uint32_t j = 0; j < n; ++j)
        if (j != i) interact(x, y, b.x[j], b.y[j], b.mass[j], b.id[j], static_cast<std::int32_t>(j), damping, r2, acc);
      finish_pairs(b, partner, i, acc, g);
    });
#endif
  }

  /// Phases 2 and 3: merges, then the survivors, advanced, packed into the other arrays.
  void merge_and_compact() {
    const arrays b = cur_, to = next_;
    const std::int32_t* partner = partner_.data();
    std::uint32_t* keep = keep_.data();
    std::uint32_t* position = position_.data();
    const std::uint64_t n = live_;
    shoal::arch::for_each_index(n + 1, [=] SHOAL_DEVICE(std::size_t i) {
      if (i == n) {
        keep[i] = 0;  // the scan's last element is then the count of survivors
        return;
      }
      keep[i] = 1;
      const std::int32_t j = partner[i];
      if (j < 0 || partner[j] != static_cast<std::int32_t>(i)) return;
      if (b.id[j] < b.id[i]) {
        keep[i] = 0;
        return;
      }
      motion m = b.load(i);
      collision::absorb(m, b.load(static_cast<std::uint64_t>(j)));
      b.store(i, m);
    });
#if defined(SHOAL_BACKEND_CUDA)
    std::size_t bytes = scan_temp_.size();
    SHOAL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp_.data(), bytes, keep, position, n + 1));
#else
    shoal::arch::for_each_index(1, [=](std::size_t) {
      std::uint32_t sum = 0;
      for (std::uint64_t i = 0; i <= n; ++i) position[i] = sum, sum += keep[i];
    });
#endif
    const float dt = p_.dt;
    shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
      if (keep[i] == 0) return;
      motion m = b.load(i);
      collision::advance(m, dt);
      to.store(position[i], m);
      to.id[position[i]] = b.id[i];
    });
    live_ = position_.read(n);  // waits
    std::swap(cur_, next_);
  }

 private:
  /// Partial sums that the pair pass needs at most, for any live count up to n.
  static std::uint64_t partial_entries(std::uint64_t n) {
#if defined(SHOAL_BACKEND_CUDA)
    // slices · live <= (threads wanted / live + 1) · live: the GPU's threads plus one slice.
    return static_cast<std::uint64_t>(shoal::arch::probe_device().multiprocessors) * 2048 + 2 * n;
#else
    (void)n;
    return 1;
#endif
  }

  collision::parameters p_;
  std::uint64_t live_;
  body_storage a_, b_;
  arrays cur_{}, next_{};
  shoal::arch::device_buffer<std::int32_t> partner_;
  shoal::arch::device_buffer<std::uint32_t> keep_, position_;
  shoal::arch::device_buffer<pair_sum> partial_;
#if defined(SHOAL_BACKEND_CUDA)
  shoal::arch::device_buffer<std::byte> scan_temp_;
#endif
};

}  // namespace collision_baseline
