#pragma once
/// @file
/// The traffic simulation: a street network (network.hpp) on the device, its cars (car.hpp) on
/// a Shoal heap, and the step loop. One step is
///   1. produce: one launch over the producer cells; a free one creates a car with probability
///      `car_probability` (top speed max_speed/2 .. max_speed - 1), id = step × 2^32 + cell;
///   2. plan: a do-all over the cars (Car::plan);
///   3. move: a do-all over the cars (Car::move).
/// step() only enqueues work; census() and the inspection functions wait for the device.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "shoal/shoal.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"

#include "car.hpp"
#include "cell_info.hpp"
#include "network.hpp"
#include "traffic_resume.hpp"

namespace traffic {

/// DynaSOAr's defaults.
struct model_params {
  double car_probability = 0.02;   // per free producer cell and step
  double slow_probability = 0.2;   // random slow-down
  std::uint32_t light_period = 5;  // steps between two switches of a traffic light
  std::uint32_t max_speed = 10;    // car maximum velocities: max_speed/2 .. max_speed - 1
  std::uint64_t seed = 42;
};

/// The app's own flags.
struct options {
  network_params network;
  model_params model;
};

/// The flags that define the network and the model, saved in checkpoints.
struct saved_model {
  std::uint64_t intersections, light_period, max_speed;
  double cell_length, producer_ratio, target_ratio, car_probability, slow_probability;
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
  void plan() { rt_.parallel_do<&Car::plan>(plan_arguments()); }
  void move() { rt_.parallel_do<&Car::move>(view(), totals_.data()); }
  /// What Car::plan gets in this step.
  plan_args plan_arguments() const {
    return {view(), params_.seed, slow_probability_, static_cast<std::uint32_t>(step_), params_.light_period};
  }
  /// The totals on the device that produce() and Car::move count into.
  totals* device_totals() { return totals_.data(); }
  void finish_step() { ++step_; }

  /// Steps done so far.
  std::uint64_t steps() const { return step_; }

  /// Checkpoints: the cars, each cell's occupant, the totals and the step. The network is not
  /// saved: it is rebuilt from its parameters, which the caller saves.
  void save(shoal::checkpoint::writer& w) {
    rt_.save_heap(w);
    rt_.save_pointers(w, "traffic.occupant", occupant_.data(), occupant_.size());
    w.value("traffic.totals", totals_.read(0));
    w.value("traffic.step", step_);
  }
  /// Continues a saved run on the same network. Every saved value is checked first
  /// (check_saved_state): a file that does not fit throws checkpoint_error, changing nothing.
  void load(const shoal::checkpoint::reader& r) {
    const auto t = r.value<totals>("traffic.totals");
    const auto step = r.value<std::uint64_t>("traffic.step");
    check_saved_state(r, occupant_.size());
    rt_.load_heap(r);
    rt_.load_pointers(r, "traffic.occupant", occupant_.data(), occupant_.size());
    totals_.write(0, t);
    step_ = step;
  }

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
