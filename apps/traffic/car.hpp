#pragma once
/// @file
/// A car of the traffic model and the rules it follows each step (Nagel–Schreckenberg on a
/// street network, as in DynaSOAr's traffic benchmark).
///
/// Every cell holds the Car* standing on it (nullptr: free). In plan(), a car accelerates by 1
/// or 2 up to its maximum, then walks its path cell by cell up to that velocity, choosing a
/// random outgoing street at each intersection, stopping before an occupied cell, before a red
/// light and where a slower street's limit says so, and at a target; then it slows down by 1 with
/// probability `slow`. The result is the cell it will move to in move(), where a car that arrives
/// at a target leaves (`delete`).
///
/// Planning reads only the state at the start of the step (nothing moves until every car has
/// planned), so no two cars ever plan the same cell: their paths could only meet behind an
/// intersection, and only one incoming street of an intersection has green. Moves therefore
/// never conflict, and the outcome does not depend on the order in which threads run.
///
/// Randomness is drawn by (seed, stable id, step, stream): a car's id is the step that created
/// it and its producer cell. Neither a thread nor a heap slot ever enters a draw.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "shoal/shoal.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"

#include "cell_info.hpp"

namespace traffic {

class Car;
using TrafficHeap = shoal::heap<Car>;

/// Random streams of the model (the network's are 100 and above).
namespace stream {
inline constexpr std::uint32_t car = 0;       // id: car (acceleration, turns, slow-down)
inline constexpr std::uint32_t produce = 1;   // id: producer cell (whether, maximum velocity)
}  // namespace stream

/// The network as the device sees it.
struct network_view {
  const std::uint32_t* cell_info;  // per cell, cell_info.hpp
  const std::uint32_t* out_first;  // per intersection, 4 first cells of its outgoing streets
  Car** occupant;                  // per cell: the car on it, or nullptr
};

/// What plan() needs besides the network (one trivially copyable value per do-all).
struct plan_args {
  network_view net;
  std::uint64_t seed;
  shoal::sim::probability slow;
  std::uint32_t step;
  std::uint32_t light_period;
};

/// Totals kept on the device across steps.
struct totals {
  unsigned long long created, removed;
};

/// The sums of a census (census()), in a sim::sums.
enum tally : std::size_t { tally_cars, tally_speed, tally_stopped, tally_checksum, tally_count };

/// A car's contribution to the checksum: a hash of its identity and state, summed over all cars
/// (a sum does not depend on the order in which the cars are visited).
SHOAL_HD inline std::uint64_t car_hash(std::uint64_t id, std::uint32_t position, std::uint32_t velocity) {
  std::uint64_t z = id * 0x9E3779B97F4A7C15ull + (static_cast<std::uint64_t>(position) << 4) + velocity;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// What a car plans for this step: its new velocity and the cell it will move to.
struct planned {
  std::uint32_t velocity, destination;
};

/// The rules of Car::plan as a function of a car's state (see the file comment), so that the
/// static baselines of bench/baselines/ plan with this very code. `occupied(c)` says whether a
/// car stands on cell c at the start of the step (a.net.occupant is not read here).
template <class Occupied>
SHOAL_HD planned plan_path(const plan_args& a, Occupied occupied, std::uint64_t id, std::uint32_t start,
                           std::uint32_t velocity, std::uint32_t max_velocity) {
  shoal::sim::random r(a.seed, id, a.step, stream::car);
  std::uint32_t info = a.net.cell_info[start];
  std::uint32_t v = std::min<std::uint32_t>(velocity + 1 + r.below(2), max_velocity);
  v = std::min(v, cell::limit_at(info, a.step, a.light_period));  // a car on a red light waits
  std::uint32_t at = start, before = start, moved = 0;
  for (std::uint32_t d = 1; d <= v; ++d) {
    const std::uint32_t next =
        cell::is_end(info)
            ? a.net.out_first[cell::max_degree * cell::intersection(info) + r.below(cell::num_out(info))]
            : at + 1;
    if (occupied(next)) break;
    const std::uint32_t next_info = a.net.cell_info[next];
    const std::uint32_t limit = cell::limit_at(next_info, a.step, a.light_period);
    if (limit < v) {
      if (limit < d) break;  // cannot enter it even at its limit: stop before it
      v = limit;             // slow down to the limit and go on
    }
    before = at;
    at = next;
    info = next_info;
    moved = d;
    if (cell::is_target(info)) break;  // the car leaves here
  }
  if (moved > 0 && r.chance(a.slow)) {
    moved -= 1;
    at = before;
  }
  return {moved, at};
}

class Car : public shoal::object<TrafficHeap, Car> {
 public:
  SHOAL_FIELDS(Car, (std::uint64_t, id), (std::uint32_t, position), (std::uint32_t, destination),
               (std::uint32_t, velocity), (std::uint32_t, max_velocity))

  /// A car standing still on `cell` (the caller marks the cell occupied).
  SHOAL_HD Car(std::uint64_t car_id, std::uint32_t cell, std::uint32_t max_v, std::uint32_t v = 0) {
    id = car_id;
    position = cell;
    destination = cell;
    velocity = v;
    max_velocity = max_v;
  }

  /// Step 2: choose the cell to move to (see the file comment).
  SHOAL_HD void plan(plan_args a) {
    Car** occupant = a.net.occupant;
    const planned p = plan_path(a, [occupant](std::uint32_t c) { return occupant[c] != nullptr; }, id, position,
                                velocity, max_velocity);
    velocity = p.velocity;
    destination = p.destination;
  }

  /// Step 3: go to the planned cell; leave the simulation at a target.
  SHOAL_HD void move(network_view net, totals* t) { move_on(net, t, nullptr, 0); }

  /// Step 2 over MPI ranks (traffic_regions.hpp): as plan(), with whether each cell is occupied
  /// read from `occupied`, a bitmap of the whole network's cells (other ranks' cars included).
  SHOAL_HD void plan_on(plan_args a, const std::uint64_t* occupied) {
    const planned p = plan_path(a, [occupied](std::uint32_t c) { return ((occupied[c / 64] >> (c % 64)) & 1u) != 0; },
                                id, position, velocity, max_velocity);
    velocity = p.velocity;
    destination = p.destination;
  }

  /// Step 3, also over MPI ranks: as move(), but a car bound for a cell of another rank (`owner`
  /// per cell; nullptr: every cell is this rank's) only leaves its own: it migrates there, and
  /// that rank puts it on the cell.
  SHOAL_HD void move_on(network_view net, totals* t, const std::uint32_t* owner, std::uint32_t rank) {
    const std::uint32_t from = position, to = destination;
    if (from == to) return;
    net.occupant[from] = nullptr;
    if (cell::is_target(net.cell_info[to])) {
      shoal::arch::fetch_add(t->removed, 1ull);
      delete this;
      return;
    }
    if (owner == nullptr || owner[to] == rank) net.occupant[to] = this;
    position = to;
  }

  SHOAL_HD void count(shoal::sim::sums::ref t) {
    const std::uint32_t v = velocity;
    t.add(tally_cars, 1);
    t.add(tally_speed, v);
    if (v == 0) t.add(tally_stopped, 1);
    t.add(tally_checksum, static_cast<long long>(car_hash(id, position, v)));  // wraps: a sum mod 2^64
  }

  /// Shows the car to `f` as f(cell, velocity): what the viewer paints and counts
  /// (traffic_view.hpp), without the model knowing about pictures.
  template <class F>
  SHOAL_HD void show(F f) {
    f(static_cast<std::uint32_t>(position), static_cast<std::uint32_t>(velocity));
  }

  /// For tests and tools: the car's state into `out[slot]`, slots handed out by `next`.
  struct state {
    std::uint64_t id;
    std::uint32_t position, destination, velocity, max_velocity;
  };
  SHOAL_HD void report(state* out, unsigned long long* next) {
    const unsigned long long k = shoal::arch::fetch_add(*next, 1ull);
    out[k] = state{id, position, destination, velocity, max_velocity};
  }
};

}  // namespace traffic
