#pragma once
/// @file
/// Collision (DynaSOAr's "collision" benchmark) on Shoal: bodies in the box [-1, 1]² attract
/// each other and merge when they come closer than a radius. The model lives here so that the
/// app (collision_app.hpp), the tests and the static baseline (bench/baselines/collision_baseline.hpp)
/// share it.
///
/// Rules. A step has four phases:
///  1. pairs (runtime.all_pairs, every ordered pair): each body sums the pull of every other
///     body, G·m_j / (d² + damping) along the line between them (DynaSOAr's force law), and
///     picks its partner: the nearest other body closer than the merge radius (equal distances:
///     the lower id). It holds the partner as a Body* field.
///  2. merge (do-all): two bodies that picked each other merge. The one with the lower id takes
///     the sum of the masses, the momentum-weighted velocity, the centre of mass and the sum of
///     the forces; the other marks itself absorbed. A body whose partner picked someone else
///     waits for a later step: its partner may be merging away in this one.
///  3. remove (do-all): absorbed bodies delete themselves; every other body drops its partner
///     pointer, which may name a body being deleted in this very phase.
///  4. advance (do-all): semi-implicit Euler, then reflection off the walls.
///
/// Why vanishing bodies are safe. Each phase reads only fields that no thread writes in it:
/// in merge, a body reads its partner's `partner` (written in pairs only) and, if it absorbs,
/// its partner's motion, which only that partner's own merge could change, and an absorbed
/// body writes nothing but `absorbed`; in remove, a body reads only its own `absorbed` and
/// clears its own pointer without following it. So no pointer is followed after the delete of
/// the body it names, and none survives the step (a checkpoint would refuse it: every saved
/// heap pointer must name a live object).
///
/// Determinism: partners are a function of the positions alone (nearest, then lowest id), so
/// merges do not depend on thread order; sums over partners run in object order (all_pairs), so
/// a run is reproducible on one backend, and the backends agree within rounding
/// (tests/collision_test.cpp states the tolerance against a double-precision reference).
///
/// DynaSOAr's version lets every heavier body near a lighter one claim it, with racing writes
/// (which claim wins depends on thread order), and puts the merged body at the midpoint. Here
/// merges are between mutual nearest neighbours, and the merged body sits at the centre of
/// mass, so mass, momentum and the centre of mass are conserved by a merge.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "shoal/shoal.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"

namespace collision {

struct parameters {
  float dt = 0.05f;
  float merge_radius = 0.005f;
  float damping = 0.05f;       ///< added to d² in the force law (keeps close pairs finite)
  float gravity = 6.673e-11f;  ///< G
  float max_mass = 75.0f;      ///< initial masses are uniform in [max_mass / 2, max_mass)
  float max_speed = 0.0005f;   ///< initial speeds are uniform in [-max_speed, max_speed) per axis
};

/// The model's flags, also saved in checkpoints (no padding: no undefined bytes in files).
struct model_flags {
  std::uint64_t bodies = 40000;
  parameters p;
};
static_assert(sizeof(model_flags) == sizeof(std::uint64_t) + sizeof(parameters) && sizeof(parameters) == 6 * sizeof(float));

/// What moves: a body's position, velocity, acceleration and mass, as plain values (the app's
/// Body fields, or the static baseline's arrays).
struct motion {
  float x, y, vx, vy, ax, ay, mass;
};

/// Body i of run `seed`: a function of (seed, i) only, so every backend and the baseline start
/// alike. DynaSOAr's draws: position uniform in the box, speed per axis in [-max_speed,
/// max_speed), mass in [max_mass / 2, max_mass).
SHOAL_HD inline motion initial_motion(std::uint64_t seed, std::uint64_t i, const parameters& p) {
  shoal::sim::random r(seed, i, 0, 0);
  motion m{};
  m.x = 2.0f * r.uniform() - 1.0f;
  m.y = 2.0f * r.uniform() - 1.0f;
  m.vx = (2.0f * r.uniform() - 1.0f) * p.max_speed;
  m.vy = (2.0f * r.uniform() - 1.0f) * p.max_speed;
  m.mass = p.max_mass * (0.5f + 0.5f * r.uniform());
  return m;
}

/// Adds the pull of a body of mass `m` at offset (dx, dy), d² = dx² + dy², without G: m / (d² +
/// damping) along the unit vector. Bodies closer than 1e-10 pull nowhere: there is no direction
/// between coincident bodies, and such a pair is well within the merge radius (at least 1e-6).
SHOAL_HD inline void add_pull(float dx, float dy, float d2, float m, float damping, float& ax, float& ay) {
  if (!(d2 > 1e-20f)) return;
#if defined(__CUDA_ARCH__)
  const float t = d2 + damping;
  const float s = m * rsqrtf(d2 * t * t);  // one special-function op per pair, as n-body's
#else
  const float s = m / (std::sqrt(d2) * (d2 + damping));
#endif
  ax += s * dx;
  ay += s * dy;
}

/// The nearest body found so far within the merge radius: squared distance and id + 1 (0: none
/// yet, so a value-initialised one is empty). Nearer means a smaller distance, then a lower id:
/// a strict order, so the choice does not depend on the order the bodies are offered in.
struct nearest {
  float d2;
  std::uint32_t key;

  /// Takes body `id` at squared distance d2 if it is nearer; says whether it did.
  SHOAL_HD bool offer(float d2_other, std::uint32_t id) {
    const std::uint32_t k = id + 1;
    if (key != 0 && (d2_other > d2 || (d2_other == d2 && k > key))) return false;
    d2 = d2_other, key = k;
    return true;
  }
  SHOAL_HD bool offer(const nearest& other) { return other.key != 0 && offer(other.d2, other.key - 1); }
};

/// `into` absorbs `other`: masses add, momentum and the centre of mass are kept, forces add.
SHOAL_HD inline void absorb(motion& into, const motion& other) {
  const float m = into.mass + other.mass, a = into.mass / m, b = other.mass / m;
  into.x = a * into.x + b * other.x;
  into.y = a * into.y + b * other.y;
  into.vx = a * into.vx + b * other.vx;
  into.vy = a * into.vy + b * other.vy;
  into.ax = a * into.ax + b * other.ax;  // (m1·a1 + m2·a2) / m: the two forces add
  into.ay = a * into.ay + b * other.ay;
  into.mass = m;
}

/// Reflection off the walls at -1 and 1. A body that would still be outside (one step longer
/// than the box: only with absurd forces) stops at the wall.
SHOAL_HD inline void reflect(float& p, float& v) {
  if (p < -1.0f) p = -2.0f - p, v = -v;
  else if (p > 1.0f) p = 2.0f - p, v = -v;
  p = std::min(1.0f, std::max(-1.0f, p));
}

/// Semi-implicit Euler with this step's acceleration, then the walls.
SHOAL_HD inline void advance(motion& b, float dt) {
  b.vx += b.ax * dt;
  b.vy += b.ay * dt;
  b.x += b.vx * dt;
  b.y += b.vy * dt;
  reflect(b.x, b.vx);
  reflect(b.y, b.vy);
}

class Body;
using Space = shoal::heap<Body>;

class Body : public shoal::object<Space, Body> {
 public:
  SHOAL_FIELDS(Body, (Body*, partner), (float, x), (float, y), (float, vx), (float, vy), (float, ax), (float, ay),
               (float, mass), (std::uint32_t, id), (std::uint32_t, absorbed))

  /// Body i of run `seed` (parallel_new): id i.
  SHOAL_HD Body(unsigned long long i, std::uint64_t seed, parameters p) {
    store(initial_motion(seed, i, p));
    id = static_cast<std::uint32_t>(i), partner = nullptr, absorbed = 0;
  }
  /// A body placed by hand (tests).
  SHOAL_HD Body(std::uint32_t body_id, motion m) {
    store(m);
    id = body_id, partner = nullptr, absorbed = 0;
  }

  SHOAL_HD motion load() { return {x, y, vx, vy, ax, ay, mass}; }
  SHOAL_HD void store(const motion& m) {
    x = m.x, y = m.y, vx = m.vx, vy = m.vy, ax = m.ax, ay = m.ay, mass = m.mass;
  }

  /// Phase 2. Merges with a partner that picked this body too; the lower id absorbs.
  SHOAL_HD void merge() {
    Body* p = partner;
    absorbed = 0;
    if (p == nullptr || p->partner.get() != this) return;  // alone, or its partner picked another
    if (p->id.get() < id.get()) {
      absorbed = 1;  // the partner reads this body's motion now and takes it over
      return;
    }
    motion m = load();
    absorb(m, p->load());
    store(m);
  }

  /// Phase 3. An absorbed body goes; the others let go of their partner without reading it.
  SHOAL_HD void remove() {
    if (absorbed.get() != 0) {
      delete this;
      return;
    }
    partner = nullptr;
  }

  /// Phase 4.
  SHOAL_HD void move(float dt) {
    motion m = load();
    advance(m, dt);
    store(m);
  }

  /// Shows the body to `f` as f(x, y, mass): what the viewer paints (collision_view.hpp).
  template <class F>
  SHOAL_HD void show(F f) {
    f(x.get(), y.get(), mass.get());
  }

  /// Adds this body to the sums in fixed point (order-independent totals): count, mass (1e-6
  /// units), kinetic energy and momentum (1e-12 units).
  SHOAL_HD void report(shoal::sim::sums::ref totals) {
    const double m = mass, u = vx, v = vy;
    totals.add(0, 1);
    totals.add_real(1, m / 1e-6);
    totals.add_real(2, 0.5 * m * (u * u + v * v) / 1e-12);
    totals.add_real(3, m * u / 1e-12);
    totals.add_real(4, m * v / 1e-12);
  }
};

/// Phase 1 for runtime.all_pairs: each body's acceleration and partner.
struct pairs {
  struct value {
    float x, y, mass;
    std::uint32_t id;
    Body* self;
  };
  struct accumulator {
    float ax, ay;
    nearest near;
    Body* partner;
  };
  float damping;
  float radius_squared;
  float g;

  SHOAL_HD value project(Body* b) const { return {b->x, b->y, b->mass, b->id, b}; }
  SHOAL_HD void interact(const value& self, const value& other, accumulator& a) const {
    const float dx = other.x - self.x, dy = other.y - self.y, d2 = dx * dx + dy * dy;
    add_pull(dx, dy, d2, other.mass, damping, a.ax, a.ay);
    if (d2 < radius_squared && a.near.offer(d2, other.id)) a.partner = other.self;
  }
  SHOAL_HD void combine(accumulator& a, const accumulator& part) const {
    a.ax += part.ax;
    a.ay += part.ay;
    if (a.near.offer(part.near)) a.partner = part.partner;
  }
  SHOAL_HD void apply(Body* b, const accumulator& a) const {
    b->ax = g * a.ax;
    b->ay = g * a.ay;
    b->partner = a.partner;
  }
};

/// Creates n bodies of run `seed` (ids 0..n-1, in heap order).
inline void populate(shoal::runtime<Space>& rt, std::uint64_t n, std::uint64_t seed, const parameters& p) {
  rt.parallel_new<Body>(n, seed, p);
}

/// The phases of a step, one by one (tests look between them). Enqueued; find_partners waits
/// inside all_pairs for the body count.
inline void find_partners(shoal::runtime<Space>& rt, const parameters& p) {
  rt.all_pairs<Body>(pairs{p.damping, p.merge_radius * p.merge_radius, p.gravity});
}
inline void merge(shoal::runtime<Space>& rt) { rt.parallel_do<&Body::merge>(); }
inline void remove_absorbed(shoal::runtime<Space>& rt) { rt.parallel_do<&Body::remove>(); }
inline void advance(shoal::runtime<Space>& rt, const parameters& p) { rt.parallel_do<&Body::move>(p.dt); }

/// One step.
template <class Timer>
void step(shoal::runtime<Space>& rt, const parameters& p, Timer& timer) {
  {
    auto t = timer.phase("pairs (all_pairs)");
    find_partners(rt, p);
  }
  {
    auto t = timer.phase("merge (do-all)");
    merge(rt);
  }
  {
    auto t = timer.phase("remove (do-all)");
    remove_absorbed(rt);
  }
  {
    auto t = timer.phase("advance (do-all)");
    advance(rt, p);
  }
}

/// Bodies, total mass, kinetic energy and momentum, after all queued work.
struct totals {
  std::uint64_t bodies;
  double mass, kinetic_energy, momentum_x, momentum_y;
};

/// Throws sim::sums_overflow, naming the flags, when a body's energy is beyond any range (the
/// run diverged).
inline totals measure(shoal::runtime<Space>& rt, shoal::sim::sums& scratch) {
  scratch.zero();
  rt.parallel_do<&Body::report>(scratch.device());
  // The real sums in one read, in units (1e-6 for the mass, 1e-12 for the rest), scaled here;
  // the body count is an integer sum (read()).
  const auto v = scratch.read_real(1.0, "the run diverged: lower --gravity, --dt or --max-mass");
  return {static_cast<std::uint64_t>(scratch.read()[0]), v[1] * 1e-6, v[2] * 1e-12, v[3] * 1e-12, v[4] * 1e-12};
}

}  // namespace collision
