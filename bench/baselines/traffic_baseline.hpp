#pragma once
/// @file
/// Static traffic baselines for the apps benchmark (DynaSOAr's methodology): the model of
/// apps/traffic written without an object heap. A car lives in the cell it stands on: per cell
/// its id (~0: no car), velocity, top speed and planned destination, in fixed-size arrays of one
/// entry per street cell. `soa_cars` keeps the fields in four arrays, `aos_cars` in one array of
/// structs; the step code is one template for both.
///
/// The network (network.hpp), the producer rule, the path planning (traffic::plan_path, the very
/// function Car::plan calls), the random streams and the checksum (car_hash) are the app's, so a
/// baseline run reproduces the app's census exactly (bench/baselines/tests).
///
/// A move writes the car into a second set of arrays (cleared first) that becomes the current
/// one after the step: moving cars in place would race with the car leaving the cell it enters.

#include <cstdint>
#include <utility>
#include <vector>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/sim/rng.hpp"
#include "traffic/car.hpp"
#include "traffic/network.hpp"
#include "traffic/traffic_model.hpp"

namespace traffic_baseline {

inline constexpr std::uint64_t no_car = ~std::uint64_t{0};

/// The four fields per cell in four arrays.
struct soa_cars {
  std::uint64_t* id_;
  std::uint32_t* velocity_;
  std::uint32_t* max_velocity_;
  std::uint32_t* destination_;
  SHOAL_HD std::uint64_t& id(std::uint64_t c) const { return id_[c]; }
  SHOAL_HD std::uint32_t& velocity(std::uint64_t c) const { return velocity_[c]; }
  SHOAL_HD std::uint32_t& max_velocity(std::uint64_t c) const { return max_velocity_[c]; }
  SHOAL_HD std::uint32_t& destination(std::uint64_t c) const { return destination_[c]; }

  class storage {
   public:
    explicit storage(std::uint64_t cells) : id_(cells), velocity_(cells), max_velocity_(cells), destination_(cells) {}
    soa_cars view() { return {id_.data(), velocity_.data(), max_velocity_.data(), destination_.data()}; }
    /// Every cell free (only the ids need resetting: the other fields are written with a car).
    void clear() { shoal::arch::fill_bytes(id_.data(), 0xFF, id_.bytes()); }

   private:
    shoal::arch::device_buffer<std::uint64_t> id_;
    shoal::arch::device_buffer<std::uint32_t> velocity_, max_velocity_, destination_;
  };
};

/// The same fields as one struct per cell.
struct aos_cars {
  struct car {
    std::uint64_t id;
    std::uint32_t velocity, max_velocity, destination, unused;
  };
  car* cars_;
  SHOAL_HD std::uint64_t& id(std::uint64_t c) const { return cars_[c].id; }
  SHOAL_HD std::uint32_t& velocity(std::uint64_t c) const { return cars_[c].velocity; }
  SHOAL_HD std::uint32_t& max_velocity(std::uint64_t c) const { return cars_[c].max_velocity; }
  SHOAL_HD std::uint32_t& destination(std::uint64_t c) const { return cars_[c].destination; }

  class storage {
   public:
    explicit storage(std::uint64_t cells) : cars_(cells) {}
    aos_cars view() { return {cars_.data()}; }
    /// Every cell free: one pass that writes the id of each struct.
    void clear() {
      car* c = cars_.data();
      shoal::arch::for_each_index(cars_.size(), [=] SHOAL_DEVICE(std::size_t i) { c[i].id = no_car; });
    }

   private:
    shoal::arch::device_buffer<car> cars_;
  };
};

template <class Cars>
class simulation {
 public:
  simulation(const traffic::network& net, const traffic::model_params& p)
      : params_(p),
        cells_(net.cells()),
        cell_info_(net.cells()),
        out_first_(std::size_t{traffic::cell::max_degree} * net.intersections()),
        producers_(net.producers.size()),
        current_(net.cells()),
        next_(net.cells()),
        totals_(1),
        car_probability_(p.car_probability),
        slow_probability_(p.slow_probability) {
    cell_info_.upload(net.cell_info);
    out_first_.upload(net.out_first_cells());
    producers_.upload(net.producers);
    current_.clear();
    totals_.zero();
  }

  /// Enqueues one step: produce, plan, move (into the other arrays), swap.
  void step() {
    produce();
    plan();
    move();
    ++step_;
  }

  /// The app's census_result (waits for the device).
  traffic::census_result census() {
    shoal::arch::device_buffer<unsigned long long> sums(4);
    sums.zero();
    unsigned long long* out = sums.data();
    const Cars cars = current_.view();
    shoal::arch::for_each_index(cells_, [=] SHOAL_DEVICE(std::size_t c) {
      const std::uint64_t id = cars.id(c);
      if (id == no_car) return;
      const std::uint32_t v = cars.velocity(c);
      shoal::arch::fetch_add_relaxed(out[0], 1ull);
      shoal::arch::fetch_add_relaxed(out[1], static_cast<unsigned long long>(v));
      if (v == 0) shoal::arch::fetch_add_relaxed(out[2], 1ull);
      shoal::arch::fetch_add_relaxed(out[3], static_cast<unsigned long long>(
                                                 traffic::car_hash(id, static_cast<std::uint32_t>(c), v)));
    });
    shoal::arch::synchronize();
    const auto s = sums.download();
    const traffic::totals t = totals_.read(0);
    return {step_, s[0], t.created, t.removed, s[1], s[2], s[3]};
  }

  // The three parts of a step (public: nvcc refuses device lambdas in private members).
  traffic::plan_args args() const {
    return {{cell_info_.data(), out_first_.data(), nullptr}, params_.seed, slow_probability_,
            static_cast<std::uint32_t>(step_), params_.light_period};
  }

  /// traffic::detail::produce on the cell arrays.
  void produce() {
    const Cars cars = current_.view();
    const std::uint32_t* producers = producers_.data();
    const std::uint64_t seed = params_.seed;
    const auto s = static_cast<std::uint32_t>(step_);
    const shoal::sim::probability p = car_probability_;
    const std::uint32_t low = params_.max_speed / 2, span = params_.max_speed - low;
    traffic::totals* t = totals_.data();
    shoal::arch::for_each_index(producers_.size(), [=] SHOAL_DEVICE(std::size_t k) {
      const std::uint32_t c = producers[k];
      if (cars.id(c) != no_car) return;
      shoal::sim::random r(seed, c, s, traffic::stream::produce);
      if (!r.chance(p)) return;
      cars.id(c) = (static_cast<std::uint64_t>(s) << 32) | c;
      cars.velocity(c) = 0;
      cars.max_velocity(c) = low + r.below(span);
      cars.destination(c) = c;
      shoal::arch::fetch_add(t->created, 1ull);
    });
  }

  void plan() {
    const Cars cars = current_.view();
    const traffic::plan_args a = args();
    shoal::arch::for_each_index(cells_, [=] SHOAL_DEVICE(std::size_t i) {
      const std::uint64_t id = cars.id(i);
      if (id == no_car) return;
      const auto c = static_cast<std::uint32_t>(i);
      const traffic::planned p = traffic::plan_path(
          a, [cars](std::uint32_t x) { return cars.id(x) != no_car; }, id, c, cars.velocity(c),
          cars.max_velocity(c));
      cars.velocity(c) = p.velocity;
      cars.destination(c) = p.destination;
    });
  }

  void move() {
    next_.clear();
    const Cars from = current_.view(), to = next_.view();
    const std::uint32_t* info = cell_info_.data();
    traffic::totals* t = totals_.data();
    shoal::arch::for_each_index(cells_, [=] SHOAL_DEVICE(std::size_t c) {
      const std::uint64_t id = from.id(c);
      if (id == no_car) return;
      const std::uint32_t d = from.destination(c);
      if (d != c && traffic::cell::is_target(info[d])) {
        shoal::arch::fetch_add(t->removed, 1ull);
        return;
      }
      to.id(d) = id;
      to.velocity(d) = from.velocity(c);
      to.max_velocity(d) = from.max_velocity(c);
      to.destination(d) = d;
    });
    std::swap(current_, next_);
  }

 private:
  traffic::model_params params_;
  std::uint64_t cells_;
  shoal::arch::device_buffer<std::uint32_t> cell_info_;
  shoal::arch::device_buffer<std::uint32_t> out_first_;
  shoal::arch::device_buffer<std::uint32_t> producers_;
  typename Cars::storage current_, next_;
  shoal::arch::device_buffer<traffic::totals> totals_;
  shoal::sim::probability car_probability_, slow_probability_;
  std::uint64_t step_ = 0;
};

}  // namespace traffic_baseline
