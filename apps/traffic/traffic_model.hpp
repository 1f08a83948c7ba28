#pragma once
/// @file
/// The traffic model on the Shoal heap: Nagel–Schreckenberg cars on a street network
/// (network.hpp), as in DynaSOAr's traffic benchmark.
///
/// Cars are heap objects, created with `new` at producer cells and removed with `delete` at
/// target cells; every cell holds the Car* standing on it (nullptr: free). One step is
///   1. produce: every free producer cell creates a car with probability `car_probability`
///      (maximum velocity max_speed/2 .. max_speed - 1);
///   2. plan (a do-all over cars): accelerate by 1 or 2 up to the car's maximum, then walk the
///      path cell by cell up to that velocity, choosing a random outgoing street at each
///      intersection, stopping before an occupied cell, before a red light and where a slower
///      street's limit says so, and at a target; then slow down by 1 with probability
///      `slow_probability`. The result is the cell the car will move to.
///   3. move (a do-all over cars): every car moves to its planned cell; one that arrives at a
///      target leaves (`delete`).
/// Planning reads only the state at the start of the step (nothing moves until every car has
/// planned), so no two cars ever plan the same cell: their paths could only meet behind an
/// intersection, and only one incoming street of an intersection has green. Moves therefore
/// never conflict, and the outcome does not depend on the order in which threads run.
///
/// Randomness is drawn by (seed, stable id, step, stream): a car's id is the producer cell and
/// the step that created it, a producer's is its cell. Neither a thread nor a heap slot ever
/// enters a draw, so both backends compute the same run.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "shoal/shoal.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"

#include "cell_info.hpp"
#include "network.hpp"

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
    shoal::sim::random r(a.seed, id, a.step, stream::car);
    const std::uint32_t start = position;
    std::uint32_t info = a.net.cell_info[start];
    std::uint32_t v = std::min<std::uint32_t>(velocity + 1 + r.below(2), max_velocity);
    v = std::min(v, cell::limit_at(info, a.step, a.light_period));  // a car on a red light waits
    std::uint32_t at = start, before = start, moved = 0;
    for (std::uint32_t d = 1; d <= v; ++d) {
      const std::uint32_t next =
          cell::is_end(info)
              ? a.net.out_first[cell::max_degree * cell::intersection(info) + r.below(cell::num_out(info))]
              : at + 1;
      if (a.net.occupant[next] != nullptr) break;
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
    velocity = moved;
    destination = at;
  }

  /// Step 3: go to the planned cell; leave the simulation at a target.
  SHOAL_HD void move(network_view net, totals* t) {
    const std::uint32_t from = position, to = destination;
    if (from == to) return;
    net.occupant[from] = nullptr;
    if (cell::is_target(net.cell_info[to])) {
      shoal::arch::fetch_add(t->removed, 1ull);
      delete this;
      return;
    }
    net.occupant[to] = this;
    position = to;
  }

  SHOAL_HD void count(shoal::sim::sums::ref t) {
    const std::uint32_t v = velocity;
    t.add(tally_cars, 1);
    t.add(tally_speed, v);
    if (v == 0) t.add(tally_stopped, 1);
    t.add(tally_checksum, static_cast<long long>(car_hash(id, position, v)));  // wraps: a sum mod 2^64
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

/// DynaSOAr's defaults.
struct model_params {
  double car_probability = 0.02;   // per free producer cell and step
  double slow_probability = 0.2;   // random slow-down
  std::uint32_t light_period = 5;  // steps between two switches of a traffic light
  std::uint32_t max_speed = 10;    // car maximum velocities: max_speed/2 .. max_speed - 1
  std::uint64_t seed = 42;
};

/// What census() reports.
struct census_result {
  std::uint64_t step = 0;
  std::uint64_t cars = 0, created = 0, removed = 0, speed_sum = 0, stopped = 0, checksum = 0;
};

namespace detail {

/// Step 1, one thread per producer cell.
inline void produce(shoal::runtime<TrafficHeap>& rt, const std::uint32_t* producers, std::size_t n,
                    network_view net, std::uint64_t seed, std::uint32_t step, shoal::sim::probability p,
                    std::uint32_t low, std::uint32_t span, totals* t) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t k) {
    const std::uint32_t cell = producers[k];
    if (net.occupant[cell] != nullptr) return;
    shoal::sim::random r(seed, cell, step, stream::produce);
    if (!r.chance(p)) return;
    Car* car = new Car((static_cast<std::uint64_t>(step) << 32) | cell, cell, low + r.below(span));
    if (car == nullptr) return;  // the heap is full: the runtime reports out_of_memory
    net.occupant[cell] = car;
    shoal::arch::fetch_add(t->created, 1ull);
  });
}

inline void place(shoal::runtime<TrafficHeap>& rt, Car** occupant, std::uint32_t cell, std::uint64_t id,
                  std::uint32_t max_velocity, std::uint32_t velocity) {
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    if (occupant[cell] != nullptr) return;
    occupant[cell] = new Car(id, cell, max_velocity, velocity);
  });
}

inline void occupant_ids(shoal::runtime<TrafficHeap>& rt, Car* const* occupant, std::uint64_t* ids,
                         std::size_t cells) {
  rt.launch(cells, [=] SHOAL_DEVICE(std::size_t c) {
    const Car* car = occupant[c];
    ids[c] = car == nullptr ? ~std::uint64_t{0} : static_cast<std::uint64_t>(car->id);
  });
}

}  // namespace detail

/// A network on the device, its cars on a Shoal heap, and the step loop. step() only enqueues
/// work (no host synchronisation); census() and the inspection functions wait.
class simulation {
 public:
  simulation(const network& net, const model_params& p, std::size_t heap_bytes)
      : params_(p),
        rt_(heap_bytes),
        cell_info_(net.cells()),
        out_first_(std::size_t{cell::max_degree} * net.intersections()),
        occupant_(net.cells()),
        producers_(net.producers.size()),
        totals_(1),
        tally_(tally_count),
        car_probability_(p.car_probability),
        slow_probability_(p.slow_probability) {
    if (p.max_speed < 2 || p.max_speed > cell::max_limit + 1)
      throw std::invalid_argument("the maximum speed must be 2..16");
    if (p.light_period == 0) throw std::invalid_argument("the light period must be at least 1 step");
    cell_info_.upload(net.cell_info);
    out_first_.upload(net.out_first_cells());
    occupant_.zero();
    producers_.upload(net.producers);
    totals_.zero();
  }

  network_view view() const { return {cell_info_.data(), out_first_.data(), occupant_.data()}; }

  /// Enqueues one step (produce, plan, move).
  void step() {
    produce();
    plan();
    move();
    finish_step();
  }
  /// The three parts of a step, for phase timing; call them in this order, then finish_step().
  void produce() {
    const std::uint32_t low = params_.max_speed / 2;
    detail::produce(rt_, producers_.data(), producers_.size(), view(), params_.seed,
                    static_cast<std::uint32_t>(step_), car_probability_, low, params_.max_speed - low,
                    totals_.data());
  }
  void plan() {
    rt_.parallel_do<&Car::plan>(plan_args{view(), params_.seed, slow_probability_,
                                          static_cast<std::uint32_t>(step_), params_.light_period});
  }
  void move() { rt_.parallel_do<&Car::move>(view(), totals_.data()); }
  void finish_step() { ++step_; }

  /// Steps done so far.
  std::uint64_t steps() const { return step_; }

  /// Counts the cars (waits for the device; throws what the heap recorded, e.g. out_of_memory).
  census_result census() {
    tally_.zero();
    rt_.parallel_do<&Car::count>(tally_.device());
    rt_.synchronize();
    const std::vector<long long> t = tally_.read();
    const totals n = totals_.read(0);
    auto u = [](long long x) { return static_cast<std::uint64_t>(x); };
    return {step_,          u(t[tally_cars]),    n.created, n.removed,
            u(t[tally_speed]), u(t[tally_stopped]), u(t[tally_checksum])};
  }

  /// Every car's state, sorted by id (tests and tools).
  std::vector<Car::state> cars() {
    const census_result c = census();
    shoal::arch::device_buffer<Car::state> out(std::max<std::uint64_t>(1, c.cars));
    shoal::arch::device_buffer<unsigned long long> next(1);
    next.zero();
    rt_.parallel_do<&Car::report>(out.data(), next.data());
    rt_.synchronize();
    std::vector<Car::state> all = out.download();
    all.resize(c.cars);
    std::sort(all.begin(), all.end(), [](const Car::state& a, const Car::state& b) { return a.id < b.id; });
    return all;
  }

  /// The id of the car on each cell, ~0 for a free cell.
  std::vector<std::uint64_t> occupancy() {
    shoal::arch::device_buffer<std::uint64_t> ids(occupant_.size());
    detail::occupant_ids(rt_, occupant_.data(), ids.data(), occupant_.size());
    return ids.download();
  }

  /// Puts a car on a free cell (tests); does nothing if the cell is occupied.
  void place(std::uint32_t cell, std::uint64_t id, std::uint32_t max_velocity, std::uint32_t velocity = 0) {
    detail::place(rt_, occupant_.data(), cell, id, max_velocity, velocity);
  }

  shoal::runtime<TrafficHeap>& runtime() { return rt_; }
  const model_params& params() const { return params_; }

 private:
  model_params params_;
  shoal::runtime<TrafficHeap> rt_;
  shoal::arch::device_buffer<std::uint32_t> cell_info_;
  shoal::arch::device_buffer<std::uint32_t> out_first_;
  shoal::arch::device_buffer<Car*> occupant_;
  shoal::arch::device_buffer<std::uint32_t> producers_;
  shoal::arch::device_buffer<totals> totals_;
  shoal::sim::sums tally_;
  shoal::sim::probability car_probability_, slow_probability_;
  std::uint64_t step_ = 0;
};

}  // namespace traffic
