#pragma once
/// @file
/// N-body: 2-D gravity between every pair of bodies in the unit box, bodies bouncing off its
/// walls. A step is one all-pairs interaction (runtime.all_pairs: gathered into shared-memory
/// tiles, so the O(n²) loop runs at arithmetic speed) and one do-all that integrates velocity
/// and position (semi-implicit Euler).
///
/// Floating point: a run is reproducible on one backend (partners are summed in object order),
/// and the cpu and cuda backends agree to within rounding (the GPU sums partner slices in
/// another association and fuses multiply-adds); tests/nbody_test.cpp states the tolerance.

#include <cmath>
#include <cstdint>

#include "shoal/shoal.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"

namespace nbody {

struct parameters {
  float dt = 0.02f;
  float softening = 0.05f;
  float gravity = 6.674e-11f;  ///< G; masses are up to max_mass
  float max_mass = 1000.0f;
  float max_speed = 0.01f;     ///< initial speeds are uniform in [-max_speed, max_speed] per axis
};

/// The model's flags, also saved in checkpoints (explicit padding: no undefined bytes in files).
struct model_flags {
  std::uint64_t bodies = 20000;
  parameters p;
  std::uint32_t unused = 0;
};

class Body;
using Space = shoal::heap<Body>;

class Body : public shoal::object<Space, Body> {
 public:
  SHOAL_FIELDS(Body, (float, x), (float, y), (float, vx), (float, vy), (float, mass), (float, ax),
               (float, ay))

  /// Body i of a run: a function of (seed, i) only, so both backends start alike.
  SHOAL_HD Body(unsigned long long i, std::uint64_t seed, parameters p) {
    shoal::sim::random r(seed, i, 0, 0);
    x = r.uniform();
    y = r.uniform();
    vx = (2.0f * r.uniform() - 1.0f) * p.max_speed;
    vy = (2.0f * r.uniform() - 1.0f) * p.max_speed;
    mass = p.max_mass * (1.0f - r.uniform());  // (0, max_mass]
    ax = 0.0f, ay = 0.0f;
  }
  /// Body first + i of a run (parallel_new's i): a rank's share of the bodies (nbody_ranks.hpp).
  SHOAL_HD Body(unsigned long long i, unsigned long long first, std::uint64_t seed, parameters p)
      : Body(first + i, seed, p) {}
  /// A body placed by hand (tests).
  SHOAL_HD Body(float px, float py, float pvx, float pvy, float m) {
    x = px, y = py, vx = pvx, vy = pvy, mass = m, ax = 0.0f, ay = 0.0f;
  }

  /// Semi-implicit Euler with the acceleration of this step's all-pairs pass, then reflection
  /// off the walls of the unit box.
  SHOAL_HD void advance(float dt) {
    float nvx = vx + ax * dt, nvy = vy + ay * dt;
    float nx = x + nvx * dt, ny = y + nvy * dt;
    reflect(nx, nvx);
    reflect(ny, nvy);
    x = nx, y = ny, vx = nvx, vy = nvy;
  }

  /// Shows the body to `f` as f(x, y, mass): what the viewer splats (nbody_view.hpp), without
  /// the model knowing about pictures.
  template <class F>
  SHOAL_HD void show(F f) {
    f(x.get(), y.get(), mass.get());
  }

  /// Adds this body's kinetic energy and momentum to the sums, in fixed point (1e-12 units,
  /// 128-bit: exact for every mass and speed the flags allow), so the totals do not depend on
  /// the order of the additions.
  SHOAL_HD void report(shoal::sim::sums::ref totals) {
    const double m = mass, u = vx, v = vy;
    totals.add(0, 1);
    totals.add_real(1, 0.5 * m * (u * u + v * v) * 1e12);
    totals.add_real(2, m * u * 1e12);
    totals.add_real(3, m * v * 1e12);
  }

 private:
  SHOAL_HD static void reflect(float& p, float& v) {
    if (p < 0.0f) p = -p, v = -v;
    else if (p > 1.0f) p = 2.0f - p, v = -v;
  }
};

/// Softened Newtonian gravity for runtime.all_pairs: each body's acceleration.
struct gravity {
  struct value {
    float x, y, mass;
  };
  struct acceleration {
    float ax, ay;
  };
  using accumulator = acceleration;
  float softening_squared;
  float g;

  SHOAL_HD value project(Body* b) const { return {b->x, b->y, b->mass}; }
  SHOAL_HD void interact(const value& self, const value& other, acceleration& a) const {
    const float dx = other.x - self.x, dy = other.y - self.y;
    const float r2 = dx * dx + dy * dy + softening_squared;
#if defined(__CUDA_ARCH__)
    const float inv_r = rsqrtf(r2);
#else
    const float inv_r = 1.0f / std::sqrt(r2);
#endif
    const float s = other.mass * inv_r * inv_r * inv_r;
    a.ax += s * dx;
    a.ay += s * dy;
  }
  SHOAL_HD void combine(acceleration& a, const acceleration& part) const {
    a.ax += part.ax;
    a.ay += part.ay;
  }
  SHOAL_HD void apply(Body* b, const acceleration& a) const {
    b->ax = g * a.ax;
    b->ay = g * a.ay;
  }
};

/// Creates n bodies of run `seed`.
inline void populate(shoal::runtime<Space>& rt, std::uint64_t n, std::uint64_t seed, const parameters& p) {
  rt.parallel_new<Body>(n, seed, p);
}

/// One step: forces, then motion. Enqueued; waits only inside all_pairs (for the body count).
template <class Timer>
void step(shoal::runtime<Space>& rt, const parameters& p, Timer& timer) {
  {
    auto t = timer.phase("forces (all_pairs)");
    rt.all_pairs<Body>(gravity{p.softening * p.softening, p.gravity});
  }
  {
    auto t = timer.phase("advance (do-all)");
    rt.parallel_do<&Body::advance>(p.dt);
  }
}

/// Bodies, kinetic energy and momentum (fixed point, 1e-12 units), after all queued work.
struct totals {
  std::uint64_t bodies;
  double kinetic_energy, momentum_x, momentum_y;
};

/// Throws sim::sums_overflow, naming the flags, when a body's energy is beyond any range (the
/// run diverged).
inline totals measure(shoal::runtime<Space>& rt, shoal::sim::sums& scratch) {
  scratch.zero();
  rt.parallel_do<&Body::report>(scratch.device());
  const auto v = scratch.read_real(1e-12, "the run diverged: lower --gravity, --dt or --max-mass, or raise --softening");
  return {static_cast<std::uint64_t>(scratch.read()[0]), v[1], v[2], v[3]};
}

}  // namespace nbody
