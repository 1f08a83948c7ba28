#pragma once
/// @file
/// Traffic over several processes (shoal::dist, MPI). The unit square is cut into vertical strips
/// of equal width, one per rank; a rank owns the cells of the streets that start in its strip and
/// holds the cars on them. Every rank builds the whole network (it depends on the flags only).
/// A step:
///  1. produce: each rank's producer cells, as in one process;
///  2. occupancy: each rank marks its occupied cells in a bitmap of the whole network, and learns
///     from their owners whether the other ranks' cells that its cars can see are occupied (the
///     cells up to max_speed past the ends of its streets, asked for once): what every plan
///     reads, the state at the start of the step;
///  3. plan (Car::plan_on) and move (Car::move_on): a car bound for another rank's cell leaves
///     its own and keeps the new cell in `position`; a car at a target leaves the run here;
///  4. migrate: those cars go to the owners of their new cells (dist::migrate), which put them
///     there.
/// Same CSV and checksum as one process for any number of ranks: plans read only the state at the
/// start of the step, every draw is keyed by a car's id or a cell, no two cars plan the same cell
/// (car.hpp), and the census is a sum.
///
/// Cost: each step a byte per cell in sight across a strip edge, and the migrating cars' rows,
/// staged through page-locked host memory, with two waits for the device: correct for any rank
/// count, not yet fast.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
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

/// The cells of other ranks than `rank` that its cars may look at when they plan: up to `reach`
/// cells past the end of each of its streets, along every way out of every intersection on the
/// way (a street shorter than what is left of the reach leads on to the next intersection).
inline std::vector<std::uint32_t> cells_in_sight(const network& net, const std::vector<std::uint32_t>& owner,
                                                 std::uint32_t rank, std::uint32_t reach) {
  std::vector<std::uint8_t> wanted(net.cells(), 0);
  std::vector<std::uint32_t> explored(net.intersections(), 0);  // the largest reach left seen there
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ahead;    // (intersection, reach left)
  for (const street& s : net.streets)
    if (owner[s.first] == rank) ahead.emplace_back(s.to, reach);
  while (!ahead.empty()) {
    const auto [i, left] = ahead.back();
    ahead.pop_back();
    if (left <= explored[i]) continue;
    explored[i] = left;
    for (std::uint32_t k = 0; k < net.num_out[i]; ++k) {
      const street& o = net.streets[net.out[i][k]];
      for (std::uint32_t j = 0; j < std::min(left, o.cells); ++j)
        if (owner[o.first + j] != rank) wanted[o.first + j] = 1;
      if (o.cells < left) ahead.emplace_back(o.to, left - o.cells);
    }
  }
  std::vector<std::uint32_t> cells;
  for (std::uint32_t c = 0; c < wanted.size(); ++c)
    if (wanted[c] != 0) cells.push_back(c);
  return cells;
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
    plan_sight(net, p.max_speed);
  }

  shoal::runtime<TrafficHeap>& runtime() { return model_.runtime(); }

  /// Step 1.
  void produce() { model_.produce(); }
  /// Step 2 (collective): this rank's occupied cells, and those of the other ranks' cells that its
  /// cars may look at (cells_in_sight), each owner sending a byte per cell asked for.
  void share_occupancy() {
    shoal::runtime<TrafficHeap>& rt = model_.runtime();
    Car* const* occupant = model_.view().occupant;
    std::uint64_t* bits = occupied_.data();
    const std::uint64_t cells = owner_host_.size();
    // Enqueued, and one wait (runtime::wait: the stocks keep their reservations for the step's
    // births) for the flags asked for to reach page-locked memory.
    rt.launch_async(occupied_.size(), [=] SHOAL_DEVICE(std::size_t w) {
      std::uint64_t word = 0;
      for (std::uint64_t b = 0; b < 64 && w * 64 + b < cells; ++b)
        if (occupant[w * 64 + b] != nullptr) word |= std::uint64_t{1} << b;
      bits[w] = word;
    });
    const std::uint32_t* served = served_.data();
    std::uint8_t* served_flags = served_flags_.data();
    rt.launch_async(served_.size(), [=] SHOAL_DEVICE(std::size_t i) {
      served_flags[i] = occupant[served[i]] != nullptr ? 1 : 0;
    });
    std::byte* flags = flags_out_.at_least(served_.size());
    if (served_.size() != 0) shoal::arch::copy_to_host_enqueued(flags, served_flags, served_.size());
    rt.wait();
    std::vector<std::vector<std::byte>> to(served_from_.size() - 1);
    for (std::size_t q = 0; q + 1 < served_from_.size(); ++q) to[q].assign(flags + served_from_[q], flags + served_from_[q + 1]);
    const std::vector<std::vector<std::byte>> answers = ctx_->exchange(to);
    std::size_t seen = 0;
    for (const auto& message : answers) seen += message.size();
    if (seen != sighted_.size()) throw shoal::error("traffic_mpi: an owner sent the occupancy of other cells than asked");
    if (seen == 0) return;
    // The last step's copy from this buffer is done: rt.wait() above waited for it.
    std::byte* in = flags_in_.at_least(seen);
    for (std::size_t at = 0; const auto& message : answers) {
      if (message.empty()) continue;
      std::memcpy(in + at, message.data(), message.size());
      at += message.size();
    }
    std::uint8_t* sighted_flags = sighted_flags_.data();
    shoal::arch::copy_to_device_enqueued(sighted_flags, in, seen);
    const std::uint32_t* sighted = sighted_.data();
    rt.launch_async(seen, [=] SHOAL_DEVICE(std::size_t i) {
      const std::uint32_t c = sighted[i];
      if (sighted_flags[i] != 0) shoal::arch::or_relaxed(bits[c / 64], std::uint64_t{1} << (c % 64));
    });
  }
  /// Step 3.
  void plan() { model_.runtime().parallel_do<&Car::plan_on>(model_.plan_arguments(), occupied_.data()); }
  void move() {
    model_.runtime().parallel_do<&Car::move_on>(model_.view(), model_.device_totals(), owner_.data(), rank_);
  }
  /// Step 4 (collective): returns what moved.
  shoal::dist::migrate_stats migrate() {
    const std::uint32_t* owner = owner_.data();
    const shoal::dist::migrate_stats moved =
        moves_(model_.runtime(), *ctx_, [owner] SHOAL_DEVICE(Car* c) { return static_cast<int>(owner[c->position]); });
    if (moves_.arrived_count() != 0) place(moves_.arrived(), moves_.arrived_count());
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

  /// Asks each owner once for the cells in sight of this rank's cars (collective), and learns which
  /// of its own cells the others want.
  void plan_sight(const network& net, std::uint32_t max_speed) {
    const std::vector<std::uint32_t> wanted = cells_in_sight(net, owner_host_, rank_, max_speed);
    std::vector<std::vector<std::uint32_t>> by_owner(static_cast<std::size_t>(ctx_->size()));
    for (const std::uint32_t c : wanted) by_owner[owner_host_[c]].push_back(c);
    std::vector<std::vector<std::byte>> to(by_owner.size());
    std::vector<std::uint32_t> sighted;
    for (std::size_t q = 0; q < by_owner.size(); ++q) {
      const auto* bytes = reinterpret_cast<const std::byte*>(by_owner[q].data());
      to[q].assign(bytes, bytes + by_owner[q].size() * sizeof(std::uint32_t));
      sighted.insert(sighted.end(), by_owner[q].begin(), by_owner[q].end());  // in the order the answers come
    }
    std::vector<std::uint32_t> served;
    served_from_.assign(1, 0);
    for (const auto& message : ctx_->exchange(to)) {
      const std::size_t n = message.size() / sizeof(std::uint32_t);
      const std::size_t at = served.size();
      served.resize(at + n);
      std::memcpy(served.data() + at, message.data(), n * sizeof(std::uint32_t));
      served_from_.push_back(served.size());
    }
    for (const std::uint32_t c : served)
      if (c >= owner_host_.size() || owner_host_[c] != rank_) throw shoal::error("traffic_mpi: a rank asked for a cell this rank does not own");
    served_ = shoal::arch::device_buffer<std::uint32_t>(served.size());
    served_flags_ = shoal::arch::device_buffer<std::uint8_t>(served.size());
    sighted_ = shoal::arch::device_buffer<std::uint32_t>(sighted.size());
    sighted_flags_ = shoal::arch::device_buffer<std::uint8_t>(sighted.size());
    if (!served.empty()) served_.upload(served);
    if (!sighted.empty()) sighted_.upload(sighted);
  }

  /// Puts the cars that arrived on their cells. (Public: nvcc refuses device lambdas in private
  /// member functions.)
  void place(Car* const* cars, std::size_t n) {
    Car** occupant = model_.view().occupant;
    model_.runtime().launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
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
  shoal::arch::device_buffer<std::uint32_t> served_;        ///< own cells other ranks look at, by rank
  std::vector<std::size_t> served_from_;                     ///< where each rank's part of served_ starts
  shoal::arch::device_buffer<std::uint8_t> served_flags_;   ///< whether each is occupied
  shoal::arch::device_buffer<std::uint32_t> sighted_;       ///< other ranks' cells in sight, by owner
  shoal::arch::device_buffer<std::uint8_t> sighted_flags_;  ///< whether each is occupied
  shoal::arch::pinned_bytes flags_out_, flags_in_;          ///< served_flags_ and sighted_flags_ on the host
  shoal::dist::migration<Car> moves_;                       ///< step 4's buffers
};

}  // namespace traffic
