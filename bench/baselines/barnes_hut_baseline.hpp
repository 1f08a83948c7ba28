#pragma once
/// @file
/// Static Barnes–Hut baseline for the apps benchmark (DynaSOAr's methodology): the model of
/// apps/barnes_hut/barnes_hut_model.hpp as one writes it without an object heap. Bodies are
/// fixed SOA arrays; the tree's cells come from a preallocated pool of SOA arrays handed out by
/// an atomic counter, which is reset every step instead of deleting anything. A slot is an int
/// (0 empty, a cell's index, or -(body + 1)); a thread whose split lost the race keeps its pool
/// cell for its next split, and marks it unused if it ends with one.
///
/// Same algorithm and arithmetic as the app: CAS insertion from the root, the bottom-up sums
/// (a thread per childless cell, the last sub-cell sums its parent), the tree order, the walk,
/// the moves; the rules' functions (key_of, quadrant, pull, opens, wall, start_state) are the
/// model's. Bodies at one point are chained in index order here and in pointer order in the
/// app, so results agree bit for bit unless two bodies share a finest cell (2^-23 wide) and
/// the backend's compiler fuses the two codes' operations alike; bench/baselines/tests states
/// the tolerance.

#include <cstdint>
#include <string>
#include <vector>

#include "barnes_hut/barnes_hut_model.hpp"
#include "shoal/arch/atomic.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"

namespace barnes_hut_baseline {

namespace bh = barnes_hut;
namespace arch = shoal::arch;

/// A slot: 0 empty, c > 0 the cell c (the root, cell 0, is nobody's slot), b < 0 the body -b - 1.
using slot_word = std::int32_t;
SHOAL_HD inline slot_word body_word(std::int32_t b) { return -b - 1; }
SHOAL_HD inline std::int32_t body_of(slot_word w) { return -w - 1; }

/// A pool cell that was handed out but never put into the tree.
inline constexpr std::uint32_t unused_cell = 0xFFFFFFFFu;

/// The arrays as device code sees them (trivially copyable).
struct arrays {
  float *x, *y, *vx, *vy, *ax, *ay, *mass;
  slot_word* next;  ///< a body's successor in a finest slot's chain
  slot_word* slots;  ///< cell c's quadrant q: slots[4 * c + q]
  std::int32_t* parent;
  std::uint32_t *level, *ix, *iy, *cells, *done, *count;
  float *cx, *cy, *cmass;
  std::uint32_t* used;             ///< pool cells handed out this step (the counter)
  unsigned long long* overflowed;  ///< splits that found the pool empty
  std::int32_t* order;             ///< bodies in tree order (-1: none)
  std::uint32_t capacity;

  SHOAL_HD void init_cell(std::int32_t c, std::int32_t up, std::uint32_t l, std::uint32_t cx_, std::uint32_t cy_) const {
    for (int q = 0; q < 4; ++q) slots[4 * c + q] = 0;
    parent[c] = up, level[c] = l, ix[c] = cx_, iy[c] = cy_;
    cells[c] = 0, done[c] = 0, count[c] = 0;
  }

  /// Bodies below a slot.
  SHOAL_HD std::uint32_t count_of(slot_word w) const {
    if (w > 0) return count[w];
    std::uint32_t k = 0;
    for (; w != 0; w = next[body_of(w)]) ++k;
    return k;
  }

  SHOAL_HD void insert(std::int32_t i) const {
    next[i] = 0;
    const std::uint32_t kx = bh::key_of(x[i]), ky = bh::key_of(y[i]);
    const slot_word self = body_word(i);
    std::int32_t c = 0, spare = -1;
    for (;;) {
      const std::uint32_t l = level[c], q = bh::quadrant(kx, ky, l);
      slot_word& slot = slots[4 * c + q];
      slot_word seen = arch::load_acquire(slot);
      if (seen == 0) {
        if (arch::compare_exchange(slot, seen, self)) break;
      } else if (seen > 0) {
        c = seen;
      } else if (l + 1 == bh::key_bits) {
        join_chain(slot, seen, self);
        break;
      } else {
        if (spare < 0) {
          const std::uint32_t s = arch::fetch_add_relaxed(*used, 1u);
          if (s >= capacity) {
            arch::fetch_add_relaxed(*overflowed, 1ull);
            return;
          }
          spare = static_cast<std::int32_t>(s);
        }
        init_cell(spare, c, l + 1, 2 * ix[c] + (q & 1u), 2 * iy[c] + (q >> 1));
        const std::int32_t other = body_of(seen);
        slots[4 * spare + bh::quadrant(bh::key_of(x[other]), bh::key_of(y[other]), l + 1)] = seen;
        if (arch::compare_exchange(slot, seen, spare)) {
          arch::fetch_add_relaxed(cells[c], 1u);
          c = spare;
          spare = -1;
        }
      }
    }
    if (spare >= 0) level[spare] = unused_cell;
  }

  SHOAL_HD void join_chain(slot_word& slot, slot_word seen, slot_word self) const {
    const std::int32_t me = body_of(self);
    slot_word* link = &slot;
    for (;;) {
      while (seen != 0 && body_of(seen) < me) {
        link = &next[body_of(seen)];
        seen = arch::load_acquire(*link);
      }
      next[me] = seen;
      if (arch::compare_exchange(*link, seen, self)) return;
    }
  }

  SHOAL_HD void add_up(std::int32_t c) const {
    double m = 0, mx = 0, my = 0;
    std::uint32_t n = 0;
    auto add = [&](float w_, float px, float py) {
      const double w = w_;
      m += w, mx += w * px, my += w * py;
    };
    for (int q = 0; q < 4; ++q) {
      slot_word s = slots[4 * c + q];
      if (s > 0) {
        add(cmass[s], cx[s], cy[s]);
        n += count[s];
      } else {
        for (; s != 0; s = next[body_of(s)]) add(mass[body_of(s)], x[body_of(s)], y[body_of(s)]), ++n;
      }
    }
    cmass[c] = static_cast<float>(m);
    cx[c] = static_cast<float>(mx / m);
    cy[c] = static_cast<float>(my / m);
    count[c] = n;
  }

  SHOAL_HD void summarize(std::int32_t c) const {
    if (static_cast<std::uint32_t>(c) >= *used || level[c] == unused_cell || cells[c] != 0) return;
    for (;;) {
      add_up(c);
      const std::int32_t up = parent[c];
      if (up < 0 || arch::fetch_add(done[up], 1u) + 1 != cells[up]) return;
      c = up;
    }
  }

  SHOAL_HD void find_place(std::int32_t i) const {
    const std::uint32_t kx = bh::key_of(x[i]), ky = bh::key_of(y[i]);
    std::int32_t rank = 0;
    for (std::int32_t c = 0;;) {
      const std::uint32_t q = bh::quadrant(kx, ky, level[c]);
      for (std::uint32_t k = 0; k < q; ++k) rank += static_cast<std::int32_t>(count_of(slots[4 * c + k]));
      slot_word s = slots[4 * c + q];
      if (s > 0) {
        c = s;
        continue;
      }
      for (; s != 0; s = next[body_of(s)], ++rank)
        if (body_of(s) == i) {
          order[rank] = i;
          return;
        }
      return;  // not in the tree: the pool overflowed
    }
  }

  SHOAL_HD void accelerate(std::int32_t i, bh::force_law law) const {
    const float px = x[i], py = y[i];
    const std::uint32_t kx = bh::key_of(px), ky = bh::key_of(py);
    float sx = 0.0f, sy = 0.0f;
    std::int32_t path[bh::key_bits];  // as the app's walk: path[t] is of level t, ...
    std::uint8_t next_slot[bh::key_bits];
    int top = 0, holding = 1;  // ... and path[0 .. holding) hold body i
    path[0] = 0;
    next_slot[0] = 0;
    while (top >= 0) {
      if (next_slot[top] == 4) {
        holding = holding > top ? top : holding;
        --top;
        continue;
      }
      const std::uint32_t k = next_slot[top]++;
      slot_word s = slots[4 * path[top] + k];
      if (s > 0) {
        const float dx = cx[s] - px, dy = cy[s] - py;
        const bool holds = holding > top && k == bh::quadrant(kx, ky, static_cast<std::uint32_t>(top));
        if (holds || bh::opens(bh::cell_width(static_cast<std::uint32_t>(top) + 1), dx * dx + dy * dy, law.theta2)) {
          path[++top] = s;
          next_slot[top] = 0;
          if (holds) holding = top + 1;
        } else {
          bh::pull(sx, sy, dx, dy, cmass[s], law.damping);
        }
      } else {
        for (; s != 0; s = next[body_of(s)]) {
          const std::int32_t b = body_of(s);
          if (b != i) bh::pull(sx, sy, x[b] - px, y[b] - py, mass[b], law.damping);
        }
      }
    }
    ax[i] = law.gravity * sx;
    ay[i] = law.gravity * sy;
  }

  SHOAL_HD void advance(std::int32_t i, float dt) const {
    float nvx = vx[i] + ax[i] * dt, nvy = vy[i] + ay[i] * dt;
    float nx = x[i] + nvx * dt, ny = y[i] + nvy * dt;
    bh::wall(nx, nvx);
    bh::wall(ny, nvy);
    x[i] = nx, y[i] = ny, vx[i] = nvx, vy[i] = nvy;
  }
};

class simulation {
 public:
  /// n bodies of run `seed` (the app's draws); a pool of cells_per_body cells per body.
  simulation(std::uint64_t n, std::uint64_t seed, const bh::parameters& p, std::uint64_t cells_per_body = 2)
      : n_(n), p_(p), capacity_(static_cast<std::uint32_t>(cells_per_body * n + 64)), floats_(7 * n), next_(n),
        slots_(4 * capacity_), parent_(capacity_), words_(6 * capacity_), centres_(3 * capacity_), used_(1),
        overflowed_(1), order_(n) {
    float* f = floats_.data();
    std::uint32_t* w = words_.data();
    float* c = centres_.data();
    const std::uint64_t k = capacity_;
    a_ = {f,         f + n,     f + 2 * n, f + 3 * n,     f + 4 * n,     f + 5 * n,   f + 6 * n,
          next_.data(), slots_.data(), parent_.data(), w, w + k, w + 2 * k, w + 3 * k, w + 4 * k, w + 5 * k,
          c,         c + k,     c + 2 * k, used_.data(), overflowed_.data(), order_.data(), capacity_};
    overflowed_.zero();
    populate(seed);
  }

  /// Body i of run `seed`: the app's draws (a member function, not the constructor: nvcc takes
  /// no device lambda in a constructor).
  void populate(std::uint64_t seed) {
    const arrays a = a_;
    const float max_mass = p_.max_mass;
    arch::for_each_index(n_, [=] SHOAL_DEVICE(std::size_t i) {
      const bh::start_state s(i, seed, max_mass);
      a.x[i] = s.x, a.y[i] = s.y, a.vx[i] = s.vx, a.vy[i] = s.vy, a.mass[i] = s.mass;
      a.ax[i] = 0.0f, a.ay[i] = 0.0f, a.next[i] = 0;
    });
  }

  /// One step: the tree, its sums, the tree order, the walks, the moves. Enqueued.
  void step() {
    const arrays a = a_;
    arch::for_each_index(1, [=] SHOAL_DEVICE(std::size_t) {
      *a.used = 1;
      a.init_cell(0, -1, 0, 0, 0);
    });
    arch::for_each_index(n_, [=] SHOAL_DEVICE(std::size_t i) { a.insert(static_cast<std::int32_t>(i)); });
    arch::for_each_index(capacity_, [=] SHOAL_DEVICE(std::size_t c) { a.summarize(static_cast<std::int32_t>(c)); });
    arch::fill_bytes(a.order, 0xFF, n_ * sizeof(std::int32_t));  // -1: a body missing from the tree
    arch::for_each_index(n_, [=] SHOAL_DEVICE(std::size_t i) { a.find_place(static_cast<std::int32_t>(i)); });
    const bh::force_law law{p_.theta * p_.theta, p_.damping, p_.gravity};
    arch::for_each_index(n_, [=] SHOAL_DEVICE(std::size_t k) {
      const std::int32_t i = a.order[k];
      if (i >= 0) a.accelerate(i, law);
    });
    const float dt = p_.dt;
    arch::for_each_index(n_, [=] SHOAL_DEVICE(std::size_t i) { a.advance(static_cast<std::int32_t>(i), dt); });
  }

  /// "" or why the last steps went wrong (the pool was too small).
  std::string error() const {
    arch::synchronize();
    const unsigned long long lost = overflowed_.read(0);
    return lost == 0 ? "" : "barnes_hut baseline: the cell pool of " + std::to_string(capacity_) + " cells overflowed";
  }

  /// Cells in the last step's tree.
  std::uint64_t cells() const {
    arch::synchronize();
    const std::uint32_t used = used_.read(0);
    std::vector<std::uint32_t> level(capacity_);
    arch::copy_to_host(level.data(), a_.level, capacity_ * sizeof(std::uint32_t));
    std::uint64_t k = 0;
    for (std::uint32_t c = 0; c < used && c < capacity_; ++c) k += level[c] != unused_cell;
    return k;
  }

  /// Body i's state (tests): x, y, vx, vy, mass, ax, ay.
  std::vector<float> body(std::uint64_t i) const {
    arch::synchronize();
    std::vector<float> v;
    for (float* field : {a_.x, a_.y, a_.vx, a_.vy, a_.mass, a_.ax, a_.ay}) {
      float f = 0;
      arch::copy_to_host(&f, field + i, sizeof f);
      v.push_back(f);
    }
    return v;
  }

 private:
  std::uint64_t n_;
  bh::parameters p_;
  std::uint32_t capacity_;
  arch::device_buffer<float> floats_;
  arch::device_buffer<slot_word> next_;
  arch::device_buffer<slot_word> slots_;
  arch::device_buffer<std::int32_t> parent_;
  arch::device_buffer<std::uint32_t> words_;
  arch::device_buffer<float> centres_;
  arch::device_buffer<std::uint32_t> used_;
  arch::device_buffer<unsigned long long> overflowed_;
  arch::device_buffer<std::int32_t> order_;
  arrays a_{};
};

}  // namespace barnes_hut_baseline
