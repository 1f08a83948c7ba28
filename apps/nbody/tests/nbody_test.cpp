// N-body: two bodies attract symmetrically and conserve momentum, walls reflect, a small run
// follows a double-precision host integration of the same equations, and runs are reproducible.
// Compiled for both backends.
#include <cmath>
#include <vector>

#include "nbody_model.hpp"
#include "backend/test_support.hpp"

namespace nbody::test {

struct state {
  double x, y, vx, vy, mass, ax, ay;
};

/// No-op phase timer for nbody::step.
struct no_timer {
  struct scope {};
  scope phase(const char*) { return {}; }
};

/// Every body's state in heap order (for bodies made by parallel_new: creation order).
std::vector<state> download(shoal::runtime<Space>& rt, std::size_t n) {
  shoal::arch::device_buffer<state> out(n);
  state* o = out.data();
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    std::size_t k = 0;
    shoal::device_do<Body>([&](Body* b) {
      o[k++] = {b->x, b->y, b->vx, b->vy, b->mass, b->ax, b->ay};
    });
  });
  return out.download();
}

void place(shoal::runtime<Space>& rt, const std::vector<state>& bodies) {
  shoal::arch::device_buffer<state> in(bodies.size());
  in.upload(bodies);
  const state* s = in.data();
  const std::size_t count = bodies.size();
  // One thread creates them all, so heap order is the order given.
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    for (std::size_t k = 0; k < count; ++k)
      new Body(static_cast<float>(s[k].x), static_cast<float>(s[k].y), static_cast<float>(s[k].vx),
               static_cast<float>(s[k].vy), static_cast<float>(s[k].mass));
  });
}

TEST(NBody, TwoBodiesAttractSymmetricallyAndConserveMomentum) {
  SHOAL_REQUIRE_DEVICE();
  shoal::runtime<Space> rt(std::size_t{2} << 20);
  place(rt, {{0.4, 0.5, 0, 0, 1000, 0, 0}, {0.6, 0.52, 0, 0, 250, 0, 0}});
  parameters p;
  p.gravity = 1e-6f;
  no_timer timer;
  for (int s = 0; s < 50; ++s) step(rt, p, timer);
  const auto b = download(rt, 2);
  // They pull toward each other along the line between them ...
  const double dx = b[1].x - b[0].x, dy = b[1].y - b[0].y;
  EXPECT_GT(b[0].ax * dx + b[0].ay * dy, 0.0);
  EXPECT_LT(b[1].ax * dx + b[1].ay * dy, 0.0);
  // ... with equal and opposite forces, so the momentum stays zero (up to float rounding).
  const double fx = b[0].mass * b[0].ax + b[1].mass * b[1].ax;
  const double fy = b[0].mass * b[0].ay + b[1].mass * b[1].ay;
  EXPECT_NEAR(fx, 0.0, 1e-6 * std::abs(b[0].mass * b[0].ax));
  EXPECT_NEAR(fy, 0.0, 1e-6 * std::abs(b[0].mass * b[0].ax));
  const double px = b[0].mass * b[0].vx + b[1].mass * b[1].vx;
  const double py = b[0].mass * b[0].vy + b[1].mass * b[1].vy;
  const double scale = b[0].mass * std::hypot(b[0].vx, b[0].vy);
  EXPECT_GT(scale, 0.0);
  EXPECT_NEAR(px, 0.0, 1e-5 * scale);
  EXPECT_NEAR(py, 0.0, 1e-5 * scale);
  // The heavier body moved less.
  EXPECT_LT(std::hypot(b[0].vx, b[0].vy), std::hypot(b[1].vx, b[1].vy));
}

TEST(NBody, WallsReflectPositionAndVelocity) {
  SHOAL_REQUIRE_DEVICE();
  shoal::runtime<Space> rt(std::size_t{2} << 20);
  place(rt, {{0.999, 0.001, 0.1, -0.1, 1, 0, 0}});
  parameters p;
  p.dt = 0.02f;
  no_timer timer;
  step(rt, p, timer);  // moves 0.002 per axis: 0.001 past each wall
  const auto b = download(rt, 1);
  EXPECT_NEAR(b[0].x, 0.999, 1e-6);
  EXPECT_NEAR(b[0].y, 0.001, 1e-6);
  EXPECT_FLOAT_EQ(static_cast<float>(b[0].vx), -0.1f);
  EXPECT_FLOAT_EQ(static_cast<float>(b[0].vy), 0.1f);
}

/// The same model in double precision on the host: the reference.
std::vector<state> reference_steps(std::vector<state> b, const parameters& p, int steps) {
  const double eps2 = double(p.softening) * p.softening;
  auto reflect = [](double& q, double& v) {
    if (q < 0) q = -q, v = -v;
    else if (q > 1) q = 2 - q, v = -v;
  };
  for (int s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < b.size(); ++i) {
      double ax = 0, ay = 0;
      for (std::size_t j = 0; j < b.size(); ++j) {
        if (i == j) continue;
        const double dx = b[j].x - b[i].x, dy = b[j].y - b[i].y;
        const double r2 = dx * dx + dy * dy + eps2;
        const double f = b[j].mass / (r2 * std::sqrt(r2));
        ax += f * dx, ay += f * dy;
      }
      b[i].ax = p.gravity * ax, b[i].ay = p.gravity * ay;
    }
    for (auto& q : b) {
      q.vx += q.ax * p.dt, q.vy += q.ay * p.dt;
      q.x += q.vx * p.dt, q.y += q.vy * p.dt;
      reflect(q.x, q.vx);
      reflect(q.y, q.vy);
    }
  }
  return b;
}

TEST(NBody, FollowsADoublePrecisionReference) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t n = 700;  // several tiles and partner slices on the GPU
  parameters p;
  p.gravity = 1e-7f;  // strong enough that the forces matter over the run
  shoal::runtime<Space> rt(std::size_t{4} << 20);
  populate(rt, n, 42, p);
  const auto initial = download(rt, n);
  no_timer timer;
  const int steps = 30;
  for (int s = 0; s < steps; ++s) step(rt, p, timer);
  const auto got = download(rt, n);
  const auto want = reference_steps(initial, p, steps);
  double max_dv = 0, max_v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    // Stated tolerance: positions within 1e-5 of the box, velocities within 1e-3 relative to
    // the fastest body, after 30 steps of float arithmetic against double.
    ASSERT_NEAR(got[i].x, want[i].x, 1e-5) << "body " << i;
    ASSERT_NEAR(got[i].y, want[i].y, 1e-5) << "body " << i;
    max_dv = std::max({max_dv, std::abs(got[i].vx - want[i].vx), std::abs(got[i].vy - want[i].vy)});
    max_v = std::max({max_v, std::abs(want[i].vx), std::abs(want[i].vy)});
    // And the forces were not negligible: velocities changed.
    if (i == 0) EXPECT_NE(got[i].vx, initial[i].vx);
  }
  EXPECT_LT(max_dv, 1e-3 * max_v);
}

TEST(NBody, SameSeedSameRun) {
  SHOAL_REQUIRE_DEVICE();
  auto run = [] {
    parameters p;
    p.gravity = 1e-6f;
    shoal::runtime<Space> rt(std::size_t{4} << 20);
    populate(rt, 500, 7, p);
    no_timer timer;
    for (int s = 0; s < 10; ++s) step(rt, p, timer);
    return download(rt, 500);
  };
  const auto a = run(), b = run();
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].x, b[i].x) << "body " << i;
    ASSERT_EQ(a[i].vy, b[i].vy) << "body " << i;
  }
}

}  // namespace nbody::test
