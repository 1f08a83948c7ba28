#pragma once
/// @file
/// N-body over MPI ranks (shoal::dist): rank r holds bodies [n r / N, n (r + 1) / N) of the run,
/// the very bodies one process makes (Body(i, seed, p) is a function of i). Bodies never move
/// between ranks; each step every rank gathers every body's position and mass (dist::gatherer:
/// host staging or NCCL) and gives its own bodies their accelerations from all of them in
/// shared-memory tiles (runtime::all_pairs with partners from every rank), then advances them as
/// nbody::step does.
///
/// The partners of a body are summed in another order than runtime::all_pairs sums them, so a run
/// agrees with one process's to within rounding, not bit for bit (tests/dist/nbody_ranks_test.cpp
/// states the tolerance, the one of the cpu and cuda backends against each other).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "nbody/nbody_model.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/dist/gatherer.hpp"

namespace nbody {

class ranked_bodies {
 public:
  /// Rank ctx.rank()'s share of a run of n bodies. Collective.
  ranked_bodies(shoal::runtime<Space>& rt, const shoal::dist::context& ctx, std::uint64_t n, std::uint64_t seed,
                const parameters& p)
      : rt_(&rt), ctx_(&ctx), seed_(seed), p_(p), first_(first_of(n, ctx.rank(), ctx.size())),
        last_(first_of(n, ctx.rank() + 1, ctx.size())), gatherer_(ctx), all_(ctx.size() > 1 ? n : 0) {
    for (int r = 0; r < ctx.size(); ++r)
      part_bytes_.push_back((first_of(n, r + 1, ctx.size()) - first_of(n, r, ctx.size())) * sizeof(gravity::value));
  }

  /// The first body of rank r of `ranks` in a run of n (r = ranks: n).
  static std::uint64_t first_of(std::uint64_t n, int r, int ranks) {
    return n * static_cast<std::uint64_t>(r) / static_cast<std::uint64_t>(ranks);
  }

  /// How many bodies this rank holds.
  std::uint64_t share() const { return last_ - first_; }

  /// Makes this rank's bodies, in the heap in index order (parallel_new): the order in which
  /// forces() gathers them, and so sums every body's partners, is the same on every run.
  void populate() { rt_->parallel_new<Body>(last_ - first_, static_cast<unsigned long long>(first_), seed_, p_); }

  /// One step on every rank: forces from all bodies, then motion. Collective.
  void step() {
    forces();
    rt_->parallel_do<&Body::advance>(p_.dt);
  }

  /// Bodies, kinetic energy and momentum over all ranks (each rank's measure(), added in rank
  /// order). Collective.
  totals measure(shoal::sim::sums& scratch) {
    const totals mine = nbody::measure(*rt_, scratch);
    std::vector<std::byte> bytes(sizeof mine);
    std::memcpy(bytes.data(), &mine, sizeof mine);
    const auto all = ctx_->exchange(std::vector<std::vector<std::byte>>(static_cast<std::size_t>(ctx_->size()), bytes));
    totals sum{0, 0, 0, 0};
    for (const auto& m : all) {
      totals t;
      std::memcpy(&t, m.data(), sizeof t);
      sum.bodies += t.bodies, sum.kinetic_energy += t.kinetic_energy;
      sum.momentum_x += t.momentum_x, sum.momentum_y += t.momentum_y;
    }
    return sum;
  }

  /// Every rank's bodies' positions and masses to every rank (dist::gatherer), then this rank's
  /// bodies' accelerations from all of them, in shared-memory tiles (runtime::all_pairs with
  /// partners from every rank). Collective.
  void forces() {
    const gravity law{p_.softening * p_.softening, p_.gravity};
    rt_->template all_pairs<Body>(law, [this](gravity::value* mine, std::uint64_t n) {
      using partners = shoal::detail::partner_values<gravity::value>;
      if (ctx_->size() == 1) return partners{mine, n, 0};
      // Bodies never die nor move between ranks: n is this rank's share, at its place in the run.
      if (n != 0) shoal::arch::copy_on_device_enqueued(all_.data() + first_, mine, n * sizeof(gravity::value));
      gatherer_.gather(all_.data(), part_bytes_);
      return partners{all_.data(), all_.size(), first_};
    });
  }

 private:
  shoal::runtime<Space>* rt_;
  const shoal::dist::context* ctx_;
  std::uint64_t seed_;
  parameters p_;
  std::uint64_t first_, last_;
  shoal::dist::gatherer gatherer_;
  shoal::arch::device_buffer<gravity::value> all_;  // every body's value, in index order (ranks > 1)
  std::vector<std::uint64_t> part_bytes_;           // each rank's part of all_
};

}  // namespace nbody
