#pragma once
/// @file
/// Barnes–Hut: 2-D gravity in the box [-1, 1)² with forces from a quadtree (DynaSOAr's
/// barnes-hut benchmark; the opening angle θ instead of its fixed distance threshold).
///
/// Rules. Body i starts at a point uniform in [-0.99, 0.99)², with a velocity uniform in
/// [-0.0005, 0.0005) per axis and a mass uniform in [0.5, 1) × max_mass. Each step:
///   1. the quadtree is built anew: its inner nodes (Cell) are objects created with `new` in
///      device code, by many threads at once, and the previous step's cells are deleted;
///   2. each cell's mass and centre of mass are summed bottom-up;
///   3. each body's acceleration is G Σ m r̂ / (r² + damping) over the nodes of a tree walk: a
///      cell of width w at distance d (to its centre of mass) that does not contain the body
///      acts as one mass at its centre of mass when w < θ d, else it is opened; a body acts on
///      every other body it is not at the same point as (r = 0 has no direction);
///   4. v += a dt, x += v dt; a body that leaves the box is put back on the wall it crossed
///      (just inside it: the box is half-open) and that velocity component is reversed.
///
/// The tree. A cell exists for every square of the regular quadtree subdivision of the box
/// that holds two bodies or more, down to 24 levels (the float resolution of a coordinate:
/// cells of width 2^-23); each of a cell's four slots holds nothing, a sub-cell, or a body. A
/// slot of a finest cell may hold several bodies (at the same point to within 2^-23), chained
/// through Body::next in ascending pointer order. Every body inserts itself with one do-all
/// that walks down from the root and claims slots with compare-and-swap: a body it finds in
/// its way is moved into a new cell created for the two, which is installed with one CAS (the
/// loser of a race keeps its cell for its next split, and deletes it if it never needs one).
/// The finished tree depends only on the bodies' positions, never on the order the threads
/// ran in.
///
/// Determinism: a run is bit for bit reproducible on one backend. The tree's shape is a
/// function of the positions; each cell sums its four slots in slot order (in double) whichever
/// thread finishes it; each body sums its walk in slot order. The cpu and cuda backends agree
/// to rounding (the GPU fuses multiply-adds); tests/barnes_hut_test.cpp states the tolerances.

#include <cmath>
#include <cstdint>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/shoal.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"

namespace barnes_hut {

struct parameters {
  float dt = 0.0075f;
  float gravity = 6.673e-11f;  ///< G
  float damping = 0.05f;       ///< added to r² in the force law (DynaSOAr's kDampeningFactor)
  float max_mass = 1000.0f;    ///< masses are uniform in [0.5, 1) × max_mass
  float theta = 0.5f;          ///< opening angle: a cell of width w at distance d acts whole when w < θ d
};

/// The model's flags, also saved in checkpoints (explicit padding: no undefined bytes in files).
struct model_flags {
  std::uint64_t bodies = 300000;
  parameters p;
  std::uint32_t unused = 0;
};

/// A coordinate as an integer: the box [-1, 1) in 2^24 steps. Bit 23 - L of a body's key picks
/// its quadrant in a cell of level L (the root is level 0), so that the tree's geometry is
/// integer arithmetic, the same on every backend.
inline constexpr std::uint32_t key_bits = 24;

SHOAL_HD inline std::uint32_t key_of(float p) {
  const float scaled = (p + 1.0f) * 8388608.0f;  // 2^23: [-1, 1) -> [0, 2^24]
  if (!(scaled > 0.0f)) return 0;
  const auto k = static_cast<std::uint32_t>(scaled);
  return k < (1u << key_bits) ? k : (1u << key_bits) - 1;  // p just below 1 can round up to 2^24
}
SHOAL_HD inline std::uint32_t quadrant(std::uint32_t kx, std::uint32_t ky, std::uint32_t level) {
  const std::uint32_t bit = key_bits - 1 - level;
  return ((kx >> bit) & 1u) | (((ky >> bit) & 1u) << 1);
}
/// Width of a cell of `level` (the box is 2 wide).
SHOAL_HD inline float cell_width(std::uint32_t level) { return 2.0f / static_cast<float>(1u << level); }

/// The force law without G: adds the pull of mass m at offset (dx, dy) to (sx, sy).
SHOAL_HD inline void pull(float& sx, float& sy, float dx, float dy, float m, float damping) {
  const float r2 = dx * dx + dy * dy;
  if (r2 == 0.0f) return;  // the body itself, or one at the same point: no direction
  const float s = m / ((r2 + damping) * sqrtf(r2));
  sx += s * dx;
  sy += s * dy;
}

/// The opening rule: a cell of width w whose centre of mass is d² away is opened (its slots
/// walked) when w ≥ θ d, i.e. w² ≥ θ² d².
SHOAL_HD inline bool opens(float width, float d2, float theta2) { return width * width >= theta2 * d2; }

/// The wall rule for one coordinate: a body past a wall is put on it and turns back.
SHOAL_HD inline void wall(float& p, float& v) {
  constexpr float just_below_one = 0.99999994f;  // the largest float < 1: the box is [-1, 1)
  if (p < -1.0f) p = -1.0f, v = -v;
  else if (p >= 1.0f) p = just_below_one, v = -v;
}

/// Body i's starting state from Philox draws keyed by (seed, i), in exact arithmetic (an integer
/// scaled by a power of two), so that both backends start from the same bits.
struct start_state {
  float x, y, vx, vy, mass;
  SHOAL_HD start_state(unsigned long long i, std::uint64_t seed, float max_mass) {
    shoal::sim::random r(seed, i, 0, 0);
    constexpr std::uint32_t margin = 83886;  // 0.01 of the box's half width in 2^-23 steps
    const auto coordinate = [&] {
      const auto k = static_cast<std::int32_t>(margin + r.below((1u << key_bits) - 2 * margin));
      return static_cast<float>(k - (1 << 23)) * (1.0f / 8388608.0f);  // [-0.99, 0.99)
    };
    x = coordinate();
    y = coordinate();
    vx = (r.uniform() - 0.5f) / 1000.0f;
    vy = (r.uniform() - 0.5f) / 1000.0f;
    mass = (r.uniform() * 0.5f + 0.5f) * max_mass;
  }
};

class Node;
class Body;
class Cell;
using Space = shoal::heap<Node, Body, Cell>;

/// What the tree walk reads of any node: a body's position and mass, or a cell's centre of
/// mass and total mass.
class Node : public shoal::object<Space, Node> {
 public:
  SHOAL_ABSTRACT(Node)
  SHOAL_FIELDS(Node, (float, x), (float, y), (float, mass))
};

/// A place handed to the do-alls: the root cell and the force walk's order of the bodies.
struct tree_ref {
  Cell** root;
  Body** order;
};

/// The force law as the walk applies it.
struct force_law {
  float theta2, damping, gravity;
};

class Body : public shoal::object<Space, Body, Node> {
 public:
  SHOAL_FIELDS(Body, (float, vx), (float, vy), (float, ax), (float, ay), (Node*, next))

  /// Body i of a run: a function of (seed, i) only, so both backends start alike.
  SHOAL_HD Body(unsigned long long i, std::uint64_t seed, parameters p) {
    const start_state s(i, seed, p.max_mass);
    x = s.x, y = s.y, vx = s.vx, vy = s.vy, mass = s.mass;
    ax = 0.0f, ay = 0.0f, next = nullptr;
  }
  /// A body placed by hand (tests).
  SHOAL_HD Body(float px, float py, float pvx, float pvy, float m) {
    x = px, y = py, vx = pvx, vy = pvy, mass = m;
    ax = 0.0f, ay = 0.0f, next = nullptr;
  }

  /// Step 1: walks down from the root and takes a free slot (defined after Cell).
  SHOAL_HD void insert(tree_ref t);
  /// Between 2 and 3: writes this body into t.order at its place in the tree's slot order, so
  /// that neighbouring threads walk for neighbouring bodies (similar walks, shared reads).
  SHOAL_HD void find_place(tree_ref t);
  /// Step 3: the tree walk.
  SHOAL_HD void accelerate(Cell* root, force_law law);

  /// Step 4: semi-implicit Euler with this step's acceleration, then the walls.
  SHOAL_HD void advance(float dt) {
    float nvx = vx + ax * dt, nvy = vy + ay * dt;
    float nx = x + nvx * dt, ny = y + nvy * dt;
    wall(nx, nvx);
    wall(ny, nvy);
    x = nx, y = ny, vx = nvx, vy = nvy;
  }

  /// Shows the body to `f` as f(x, y, mass) (the viewer's splat).
  template <class F>
  SHOAL_HD void show(F f) {
    f(x.get(), y.get(), mass.get());
  }

  /// Adds this body's kinetic energy and momentum to the sums in fixed point (1e-9 units,
  /// 128-bit: exact for every mass and speed the flags allow), so that the totals do not depend
  /// on the order of the additions.
  SHOAL_HD void report(shoal::sim::sums::ref totals) {
    const double m = mass, u = vx, v = vy;
    totals.add(0, 1);
    totals.add_real(1, 0.5 * m * (u * u + v * v) * 1e9);
    totals.add_real(2, m * u * 1e9);
    totals.add_real(3, m * v * 1e9);
  }

 private:
  /// A finest slot: inserts this body into the chain starting at `link`, in ascending pointer
  /// order (lock-free: links are only ever added, so a failed CAS retries from the same link).
  SHOAL_HD void join_chain(Node*& link, Node* seen);
};

class Cell : public shoal::object<Space, Cell, Node> {
 public:
  SHOAL_FIELDS(Cell, (Node* [4], slots), (Cell*, parent), (std::uint32_t, level), (std::uint32_t, ix),
               (std::uint32_t, iy), (std::uint32_t, cells), (std::uint32_t, done), (std::uint32_t, bodies))
  // slots: nothing, a sub-cell or a body (a chain of bodies in a finest cell), quadrant
  //        q = (x bit) | (y bit) << 1; level, ix, iy: the square [ix, ix + 1) × [iy, iy + 1)
  //        of the level's 2^level × 2^level grid over the box; cells: sub-cells (set while the
  //        tree is built); done: sub-cells summed so far; bodies: bodies below (after step 2).

  SHOAL_HD Cell(Cell* up, std::uint32_t l, std::uint32_t cx, std::uint32_t cy) { place(up, l, cx, cy); }

  /// Makes this an empty cell for square (cx, cy) of level l below `up` (a cell that lost a
  /// race is placed again for the next split its thread tries).
  SHOAL_HD void place(Cell* up, std::uint32_t l, std::uint32_t cx, std::uint32_t cy) {
    for (int q = 0; q < 4; ++q) slots[q] = nullptr;
    parent = up, level = l, ix = cx, iy = cy;
    cells = 0, done = 0, bodies = 0;
    x = 0.0f, y = 0.0f, mass = 0.0f;
  }

  /// Step 2, a do-all over the cells: a cell without sub-cells sums its bodies, then tells its
  /// parent; the last sub-cell to finish sums the parent, and so on up (an acquire-release
  /// count per cell, so the thread that sums a cell sees its sub-cells' sums).
  SHOAL_HD void summarize() {
    if (cells != 0) return;  // finished by its last sub-cell
    Cell* c = this;
    for (;;) {
      c->add_up();
      Cell* up = c->parent;
      if (up == nullptr || shoal::arch::fetch_add(up->done.get(), 1u) + 1 != up->cells) return;
      c = up;
    }
  }

  /// Step 1 of the next step: the tree is rebuilt from scratch.
  SHOAL_HD void dismantle() { delete this; }

  /// Shows the cell's square to `f` as f(level, ix, iy) (the viewer's outlines).
  template <class F>
  SHOAL_HD void show(F f) {
    f(level.get(), ix.get(), iy.get());
  }

  /// Calls f(n) for each body in the slot's chain.
  template <class F>
  SHOAL_HD static void for_each_body(Node* n, F&& f) {
    for (; n != nullptr; n = static_cast<Body*>(n)->next) f(static_cast<Body*>(n));
  }
  /// Bodies below a slot.
  SHOAL_HD static std::uint32_t count(Node* n) {
    if (n == nullptr) return 0;
    if (Cell* c = shoal::cast<Cell>(n)) return c->bodies;
    std::uint32_t k = 0;
    for_each_body(n, [&](Body*) { ++k; });
    return k;
  }

 private:
  SHOAL_HD void add_up() {
    double m = 0, mx = 0, my = 0;
    std::uint32_t n = 0;
    auto add = [&](Node* node) {
      const double w = node->mass;
      m += w, mx += w * node->x, my += w * node->y;
    };
    for (int q = 0; q < 4; ++q) {
      Node* s = slots[q];
      if (Cell* c = shoal::cast<Cell>(s)) {
        add(c);
        n += c->bodies;
      } else {
        for_each_body(s, [&](Body* b) { add(b), ++n; });
      }
    }
    mass = static_cast<float>(m);
    x = static_cast<float>(mx / m);
    y = static_cast<float>(my / m);
    bodies = n;
  }
};

// ---- the body's tree phases (they need Cell complete) ----

SHOAL_HD inline void Body::insert(tree_ref t) {
  namespace arch = shoal::arch;
  next = nullptr;  // published with the body by the CAS that puts it in the tree
  const std::uint32_t kx = key_of(x), ky = key_of(y);
  Node* self = this;
  Cell* c = *t.root;
  Cell* spare = nullptr;  // a cell that lost a race, kept for this body's next split
  while (c != nullptr) {
    const std::uint32_t level = c->level, q = quadrant(kx, ky, level);
    Node*& slot = c->slots[q];
    Node* seen = arch::load_acquire(slot);
    if (seen == nullptr) {
      if (arch::compare_exchange(slot, seen, self)) break;
    } else if (Cell* sub = shoal::cast<Cell>(seen)) {
      c = sub;
    } else if (level + 1 == key_bits) {
      join_chain(slot, seen);
      break;
    } else {
      // A lone body holds the slot: a cell for the square takes it in, then replaces it.
      const std::uint32_t cx = 2 * c->ix + (q & 1u), cy = 2 * c->iy + (q >> 1);
      if (spare == nullptr) spare = new Cell(c, level + 1, cx, cy);
      else spare->place(c, level + 1, cx, cy);
      if (spare == nullptr) return;  // the heap is full: the launch reports out_of_memory
      spare->slots[quadrant(key_of(seen->x), key_of(seen->y), level + 1)] = seen;
      if (arch::compare_exchange(slot, seen, static_cast<Node*>(spare))) {
        arch::fetch_add_relaxed(c->cells.get(), 1u);
        c = spare;
        spare = nullptr;
      }  // else another thread changed the slot first: look again
    }
  }
  delete spare;  // never put in the tree
}

SHOAL_HD inline void Body::join_chain(Node*& slot, Node* seen) {
  namespace arch = shoal::arch;
  Node* self = this;
  const auto order = [](Node* n) { return reinterpret_cast<std::uintptr_t>(n); };
  Node** link = &slot;
  for (;;) {
    while (seen != nullptr && order(seen) < order(self)) {
      link = &static_cast<Body*>(seen)->next.get();
      seen = arch::load_acquire(*link);
    }
    next = seen;
    if (arch::compare_exchange(*link, seen, self)) return;
  }
}

SHOAL_HD inline void Body::find_place(tree_ref t) {
  const std::uint32_t kx = key_of(x), ky = key_of(y);
  std::uint32_t rank = 0;
  for (Cell* c = *t.root; c != nullptr;) {
    const std::uint32_t q = quadrant(kx, ky, c->level);
    for (std::uint32_t k = 0; k < q; ++k) rank += Cell::count(c->slots[k]);
    Node* s = c->slots[q];
    c = shoal::cast<Cell>(s);
    if (c != nullptr) continue;
    for (; s != nullptr; s = static_cast<Body*>(s)->next, ++rank)
      if (s == this) {
        t.order[rank] = this;
        return;
      }
  }
  // Not in the tree: the heap was full while it was built (reported by the launch).
}

SHOAL_HD inline void Body::accelerate(Cell* root, force_law law) {
  const float px = x, py = y;
  const std::uint32_t kx = key_of(px), ky = key_of(py);
  float sx = 0.0f, sy = 0.0f;
  // The walk: the cells being opened, from the root down (path[t] is of level t), the next slot
  // of each, and how many of them hold this body (the first ones: a cell holds it when its
  // parent does and it is in the body's quadrant), so no cell's square is read.
  Cell* path[key_bits];
  std::uint8_t next_slot[key_bits];
  int top = 0, holding = 1;
  path[0] = root;
  next_slot[0] = 0;
  while (top >= 0) {
    if (next_slot[top] == 4) {
      holding = holding > top ? top : holding;
      --top;
      continue;
    }
    const std::uint32_t k = next_slot[top]++;
    Node* n = path[top]->slots[k];
    if (n == nullptr) continue;
    if (Cell* c = shoal::cast<Cell>(n)) {
      const float dx = c->x - px, dy = c->y - py;
      const bool holds = holding > top && k == quadrant(kx, ky, static_cast<std::uint32_t>(top));
      if (holds || opens(cell_width(static_cast<std::uint32_t>(top) + 1), dx * dx + dy * dy, law.theta2)) {
        path[++top] = c;
        next_slot[top] = 0;
        if (holds) holding = top + 1;
      } else {
        pull(sx, sy, dx, dy, c->mass, law.damping);
      }
    } else {
      Cell::for_each_body(n, [&](Body* b) {
        if (b != this) pull(sx, sy, b->x - px, b->y - py, b->mass, law.damping);
      });
    }
  }
  ax = law.gravity * sx;
  ay = law.gravity * sy;
}

/// The all-pairs form of the same law, for runtime.all_pairs over the bodies: the direct sum
/// the tree approximates (θ = 0 walks every body; tests and the comparison with n-body).
struct direct_gravity {
  struct value {
    float x, y, mass;
  };
  struct acceleration {
    float ax, ay;
  };
  using accumulator = acceleration;
  float damping;
  float gravity;

  SHOAL_HD value project(Body* b) const { return {b->x, b->y, b->mass}; }
  SHOAL_HD void interact(const value& self, const value& other, acceleration& a) const {
    pull(a.ax, a.ay, other.x - self.x, other.y - self.y, other.mass, damping);
  }
  SHOAL_HD void combine(acceleration& a, const acceleration& part) const {
    a.ax += part.ax;
    a.ay += part.ay;
  }
  SHOAL_HD void apply(Body* b, const acceleration& a) const {
    b->ax = gravity * a.ax;
    b->ay = gravity * a.ay;
  }
};

/// The tree's handle on the host: the device word that holds the root and the force walk's
/// order of the bodies. The cells themselves live in the heap.
class quadtree {
 public:
  explicit quadtree(std::uint64_t bodies) : root_(1), order_(bodies) { root_.zero(); }

  tree_ref ref() const { return {root_.data(), order_.data()}; }
  Cell* root() const { return root_.read(0); }  ///< waits for the device (tests)

  /// Deletes every cell (the previous step's tree). Enqueued.
  void clear(shoal::runtime<Space>& rt) {
    rt.parallel_do<&Cell::dismantle>();
    root_.zero();
  }

  /// Step 1: a root cell, then every body inserted from it. Enqueued.
  void build(shoal::runtime<Space>& rt) {
    Cell** root = root_.data();
    rt.launch_async(1, [=] SHOAL_DEVICE(std::size_t) { *root = new Cell(nullptr, 0, 0, 0); });
    rt.parallel_do<&Body::insert>(ref());
  }

  /// Step 2. Enqueued.
  void summarize(shoal::runtime<Space>& rt) { rt.parallel_do<&Cell::summarize>(); }

  /// The bodies in the tree's slot order. Enqueued.
  void sort(shoal::runtime<Space>& rt) {
    order_.zero();  // a body missing from the tree leaves its place empty
    rt.parallel_do<&Body::find_place>(ref());
  }

  /// Step 3: every body's walk, in tree order. Enqueued.
  void accelerate(shoal::runtime<Space>& rt, const parameters& p) {
    Cell** root = root_.data();
    Body** order = order_.data();
    const force_law law{p.theta * p.theta, p.damping, p.gravity};
    rt.launch_async(order_.size(), [=] SHOAL_DEVICE(std::size_t i) {
      if (Body* b = order[i]) b->accelerate(*root, law);
    });
  }

 private:
  shoal::arch::device_buffer<Cell*> root_;
  shoal::arch::device_buffer<Body*> order_;
};

/// Cells the heap must hold room for per body: a tree of uniformly spread bodies has about 0.7
/// cells per body; clusters make deeper trees, and cells that lose a race are deleted at once.
inline constexpr std::uint64_t cells_per_body = 2;

/// Heap that n bodies and their tree need, with a spare block per class and room for the heap's
/// own tables.
inline std::uint64_t heap_bytes_needed(std::uint64_t bodies) {
  const auto g = shoal::detail::compute_geometry<Space>();
  const std::uint64_t body_blocks = (bodies + g.capacity[Space::type_id<Body>] - 1) / g.capacity[Space::type_id<Body>];
  const std::uint64_t cell_blocks =
      (cells_per_body * bodies + g.capacity[Space::type_id<Cell>] - 1) / g.capacity[Space::type_id<Cell>];
  return (body_blocks + cell_blocks + 2) * (g.block_bytes + 64) + (std::uint64_t{1} << 20);
}

/// Creates n bodies of run `seed`.
inline void populate(shoal::runtime<Space>& rt, std::uint64_t n, std::uint64_t seed, const parameters& p) {
  rt.parallel_new<Body>(n, seed, p);
}

/// One step (the rules above). Enqueued: the host never waits.
template <class Timer>
void step(shoal::runtime<Space>& rt, quadtree& tree, const parameters& p, Timer& timer) {
  {
    auto t = timer.phase("tree: delete cells");
    tree.clear(rt);
  }
  {
    auto t = timer.phase("tree: insert (new cells)");
    tree.build(rt);
  }
  {
    auto t = timer.phase("tree: centres of mass");
    tree.summarize(rt);
  }
  {
    auto t = timer.phase("tree order");
    tree.sort(rt);
  }
  {
    auto t = timer.phase("forces (tree walk)");
    tree.accelerate(rt, p);
  }
  {
    auto t = timer.phase("advance (do-all)");
    rt.parallel_do<&Body::advance>(p.dt);
  }
}

/// Bodies, kinetic energy and momentum (fixed point, 1e-9 units), after all queued work.
struct totals {
  std::uint64_t bodies;
  double kinetic_energy, momentum_x, momentum_y;
};

/// Throws sim::sums_overflow, naming the flags, when a body's energy is beyond any range (the
/// run diverged).
inline totals measure(shoal::runtime<Space>& rt, shoal::sim::sums& scratch) {
  scratch.zero();
  rt.parallel_do<&Body::report>(scratch.device());
  const auto v = scratch.read_real(1e-9, "the run diverged: lower --gravity, --dt or --max-mass");
  return {static_cast<std::uint64_t>(scratch.read()[0]), v[1], v[2], v[3]};
}

}  // namespace barnes_hut
