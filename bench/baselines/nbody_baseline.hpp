#pragma once
/// @file
/// Static n-body baselines for the apps benchmark (DynaSOAr's methodology): the model of
/// apps/nbody/nbody_model.hpp on fixed-size arrays of n bodies, without an object heap and
/// without the all-pairs helper: one thread per body loops over every body. `soa_bodies` keeps
/// the seven fields in seven arrays, `aos_bodies` in one array of structs.
///
/// The pair interaction is the app's (nbody::gravity::interact) and the initial bodies use the
/// app's draws; summation order differs from the tiled helper's, so results agree with the app
/// within rounding (bench/baselines/tests states the tolerance).

#include <cmath>
#include <cstdint>
#include <utility>

#include "nbody/nbody_model.hpp"
#include "shoal/arch/atomic.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/sim/sums.hpp"
#include "shoal/sim/rng.hpp"

namespace nbody_baseline {

struct soa_bodies {
  float *x_, *y_, *vx_, *vy_, *mass_, *ax_, *ay_;
  SHOAL_HD float& x(std::uint64_t i) const { return x_[i]; }
  SHOAL_HD float& y(std::uint64_t i) const { return y_[i]; }
  SHOAL_HD float& vx(std::uint64_t i) const { return vx_[i]; }
  SHOAL_HD float& vy(std::uint64_t i) const { return vy_[i]; }
  SHOAL_HD float& mass(std::uint64_t i) const { return mass_[i]; }
  SHOAL_HD float& ax(std::uint64_t i) const { return ax_[i]; }
  SHOAL_HD float& ay(std::uint64_t i) const { return ay_[i]; }

  class storage {
   public:
    explicit storage(std::uint64_t n) : f_(7 * n), n_(n) {}
    soa_bodies view() {
      float* f = f_.data();
      return {f, f + n_, f + 2 * n_, f + 3 * n_, f + 4 * n_, f + 5 * n_, f + 6 * n_};
    }

   private:
    shoal::arch::device_buffer<float> f_;
    std::uint64_t n_;
  };
};

struct aos_bodies {
  struct body {
    float x, y, vx, vy, mass, ax, ay;
  };
  body* b_;
  SHOAL_HD float& x(std::uint64_t i) const { return b_[i].x; }
  SHOAL_HD float& y(std::uint64_t i) const { return b_[i].y; }
  SHOAL_HD float& vx(std::uint64_t i) const { return b_[i].vx; }
  SHOAL_HD float& vy(std::uint64_t i) const { return b_[i].vy; }
  SHOAL_HD float& mass(std::uint64_t i) const { return b_[i].mass; }
  SHOAL_HD float& ax(std::uint64_t i) const { return b_[i].ax; }
  SHOAL_HD float& ay(std::uint64_t i) const { return b_[i].ay; }

  class storage {
   public:
    explicit storage(std::uint64_t n) : b_(n) {}
    aos_bodies view() { return {b_.data()}; }

   private:
    shoal::arch::device_buffer<body> b_;
  };
};

/// Body::advance's update: semi-implicit Euler, then reflection off the walls of the unit box.
SHOAL_HD inline void reflect(float& p, float& v) {
  if (p < 0.0f) p = -p, v = -v;
  else if (p > 1.0f) p = 2.0f - p, v = -v;
}

/// Body i of run `seed`: the draws of the app's Body(i, seed, p) constructor, in the same order.
template <class Bodies>
void populate(Bodies b, std::uint64_t n, std::uint64_t seed, nbody::parameters p) {
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    shoal::sim::random r(seed, i, 0, 0);
    b.x(i) = r.uniform();
    b.y(i) = r.uniform();
    b.vx(i) = (2.0f * r.uniform() - 1.0f) * p.max_speed;
    b.vy(i) = (2.0f * r.uniform() - 1.0f) * p.max_speed;
    b.mass(i) = p.max_mass * (1.0f - r.uniform());
    b.ax(i) = 0.0f;
    b.ay(i) = 0.0f;
  });
}

template <class Bodies>
class simulation {
 public:
  simulation(std::uint64_t n, std::uint64_t seed, const nbody::parameters& p) : n_(n), p_(p), storage_(n) {
    bodies_ = storage_.view();
    populate(bodies_, n, seed, p);
  }

  /// One step: forces (all pairs), then motion. Enqueued.
  void step() {
    const Bodies b = bodies_;
    const std::uint64_t n = n_;
    const nbody::gravity g{p_.softening * p_.softening, p_.gravity};
    shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
      const nbody::gravity::value self{b.x(i), b.y(i), b.mass(i)};
      nbody::gravity::acceleration a{0.0f, 0.0f};
      for (std::uint64_t j = 0; j < n; ++j) g.interact(self, {b.x(j), b.y(j), b.mass(j)}, a);
      b.ax(i) = g.g * a.ax;  // gravity::apply's scaling
      b.ay(i) = g.g * a.ay;
    });
    const float dt = p_.dt;
    shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
      float nvx = b.vx(i) + b.ax(i) * dt, nvy = b.vy(i) + b.ay(i) * dt;
      float nx = b.x(i) + nvx * dt, ny = b.y(i) + nvy * dt;
      reflect(nx, nvx);
      reflect(ny, nvy);
      b.x(i) = nx, b.y(i) = ny, b.vx(i) = nvx, b.vy(i) = nvy;
    });
  }

  /// The app's totals (bodies, kinetic energy, momentum; fixed point as Body::report).
  nbody::totals measure() {
    shoal::sim::sums sums(3);
    const shoal::sim::sums::ref out = sums.device();
    const Bodies b = bodies_;
    shoal::arch::for_each_index(n_, [=] SHOAL_DEVICE(std::size_t i) {
      const double m = b.mass(i), u = b.vx(i), v = b.vy(i);
      out.add_real(0, 0.5 * m * (u * u + v * v) * 1e12);
      out.add_real(1, m * u * 1e12);
      out.add_real(2, m * v * 1e12);
    });
    const auto s = sums.read_real(1e-12);
    return {n_, s[0], s[1], s[2]};
  }

  /// Body i's position (tests).
  std::pair<float, float> position(std::uint64_t i) {
    shoal::arch::synchronize();
    float x = 0, y = 0;
    shoal::arch::copy_to_host(&x, &bodies_.x(i), sizeof x);
    shoal::arch::copy_to_host(&y, &bodies_.y(i), sizeof y);
    return {x, y};
  }

 private:
  std::uint64_t n_;
  nbody::parameters p_;
  typename Bodies::storage storage_;
  Bodies bodies_{};
};

}  // namespace nbody_baseline
