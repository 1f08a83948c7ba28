#pragma once
/// @file
/// Traffic over several processes (shoal::dist, MPI). The unit square is cut into vertical strips
/// of equal width, one per rank; a rank owns the cells of the streets that start in its strip and
/// holds the cars on them. Every rank builds the whole network (it depends on the flags only).
/// A step:
///  1. produce: each rank's producer cells, as in one process;
///  2. occupancy: each rank marks its occupied cells in a bitmap of the whole network, and the
///     ranks' bitmaps are joined (one allreduce): what every plan reads, the state at the start
///     of the step, including cars of other ranks a few cells ahead;
///  3. plan (Car::plan_on) and move (Car::move_on): a car bound for another rank's cell leaves
///     its own and keeps the new cell in `position`; a car at a target leaves the run here;
///  4. migrate: those cars go to the owners of their new cells (dist::migrate), which put them
///     there.
/// Same CSV and checksum as one process for any number of ranks: plans read only the state at the
/// start of the step, every draw is keyed by a car's id or a cell, no two cars plan the same cell
/// (car.hpp), and the census is a sum.
///
/// Cost: a bit per cell of the whole network goes through an allreduce each step, staged through
/// host memory, as are the migrating cars' rows: correct for any rank count, not yet fast.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/checkpoint/saved_heap.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/dist/migrate.hpp"
#include "traffic_model.hpp"

namespace traffic {

/// The rank of each cell: the strip (of `ranks` equal ones) that holds its street's first
/// intersection.
inline std::vector<std::uint32_t> cell_owners(const network& net, int ranks) {
  std::vector<std::uint32_t> owner(net.cells(), 0);
  const auto last = static_cast<std::uint32_t>(ranks - 1);
  for (const street& s : net.streets) {
    const auto strip = static_cast<std::uint32_t>(std::max(0.0f, net.x[s.from]) * static_cast<float>(ranks));
    std::fill_n(owner.begin() + s.first, s.cells, std::min(strip, last));
  }
  return owner;
}

/// The network with only the producer cells of `rank`.
inline network producing_part(network net, const std::vector<std::uint32_t>& owner, std::uint32_t rank) {
  std::erase_if(net.producers, [&](std::uint32_t c) { return owner[c] != rank; });
  return net;
}

/// Throws checkpoint_error unless every car of the checkpoint stands on a cell of `rank`.
inline void check_rank_part(const shoal::checkpoint::reader& r, const std::vector<std::uint32_t>& owner,
                            std::uint32_t rank) {
  using saved = shoal::checkpoint::saved_heap<TrafficHeap>;
  const saved heap(r);
  heap.for_each<Car>([&](saved::object o) {
    const std::uint32_t position = heap.read<Car>(o, &Car::position);
    if (position < owner.size() && owner[position] != rank)
      throw shoal::checkpoint_error(heap.name() + " is invalid: a car is on cell " + std::to_string(position) +
                                    ", which is rank " + std::to_string(owner[position]) + "'s");
  });
}

/// One rank's part of the traffic simulation (see the file comment). The member functions that
/// say so are collective: every rank calls them, in the same order.
class region_simulation {
 public:
  region_simulation(const network& net, const model_params& p, std::size_t heap_bytes, const shoal::dist::context& ctx)
      : ctx_(&ctx),
        rank_(static_cast<std::uint32_t>(ctx.rank())),
        owner_host_(cell_owners(net, ctx.size())),
        model_(producing_part(net, owner_host_, rank_), p, heap_bytes),
        owner_(owner_host_.size()),
        occupied_((net.cells() + 63) / 64) {
    owner_.upload(owner_host_);
  }

  shoal::runtime<TrafficHeap>& runtime() { return model_.runtime(); }
  /// This rank's cells' owners (all ranks'), for tests.
  const std::vector<std::uint32_t>& owners() const { return owner_host_; }

  /// Step 1.
  void produce() { model_.produce(); }
  /// Step 2 (collective).
  void share_occupancy() {
    Car* const* occupant = model_.view().occupant;
    std::uint64_t* bits = occupied_.data();
    const std::uint64_t cells = owner_host_.size();
    model_.runtime().launch(occupied_.size(), [=] SHOAL_DEVICE(std::size_t w) {
      std::uint64_t word = 0;
      for (std::uint64_t b = 0; b < 64 && w * 64 + b < cells; ++b)
        if (occupant[w * 64 + b] != nullptr) word |= std::uint64_t{1} << b;
      bits[w] = word;
    });
    occupied_.upload(ctx_->bit_or(occupied_.download()));
  }
  /// Step 3.
  void plan() { model_.runtime().parallel_do<&Car::plan_on>(model_.plan_arguments(), occupied_.data()); }
  void move() {
    model_.runtime().parallel_do<&Car::move_on>(model_.view(), model_.device_totals(), owner_.data(), rank_);
  }
  /// Step 4 (collective): returns what moved.
  shoal::dist::migrate_stats migrate() {
    const std::uint32_t* owner = owner_.data();
    shoal::arch::device_buffer<Car*> arrived;
    const shoal::dist::migrate_stats moved = shoal::dist::migrate<Car>(
        model_.runtime(), *ctx_, [owner] SHOAL_DEVICE(Car* c) { return static_cast<int>(owner[c->position]); }, &arrived);
    if (arrived.size() != 0) place(arrived);
    return moved;
  }
  void finish_step() { model_.finish_step(); }

  /// The census of every rank's cars (collective).
  census_result census() {
    const census_result c = model_.census();
    const std::vector<std::uint64_t> all =
        ctx_->sum(std::vector<std::uint64_t>{c.cars, c.created, c.removed, c.speed_sum, c.stopped, c.checksum});
    return {c.step, all[0], all[1], all[2], all[3], all[4], all[5]};
  }

  /// This rank's part of a checkpoint: its cars, its cells' occupants, its totals.
  void save(shoal::checkpoint::writer& w) { model_.save(w); }
  /// Loads this rank's part; throws checkpoint_error, changing nothing, for a part whose cars are
  /// not all on this rank's cells or that does not pass simulation::load's checks.
  void load(const shoal::checkpoint::reader& r) {
    check_rank_part(r, owner_host_, rank_);
    model_.load(r);
  }

  /// Puts the cars that arrived on their cells. (Public: nvcc refuses device lambdas in private
  /// member functions.)
  void place(const shoal::arch::device_buffer<Car*>& arrived) {
    Car** occupant = model_.view().occupant;
    Car* const* cars = arrived.data();
    model_.runtime().launch(arrived.size(), [=] SHOAL_DEVICE(std::size_t i) {
      Car* car = cars[i];
      if (car != nullptr) occupant[car->position] = car;
    });
  }

 private:
  const shoal::dist::context* ctx_;
  std::uint32_t rank_;
  std::vector<std::uint32_t> owner_host_;
  simulation model_;
  shoal::arch::device_buffer<std::uint32_t> owner_;
  shoal::arch::device_buffer<std::uint64_t> occupied_;
};

}  // namespace traffic
