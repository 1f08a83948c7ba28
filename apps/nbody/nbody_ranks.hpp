#pragma once
/// @file
/// N-body over MPI ranks (shoal::dist): rank r holds bodies [n r / N, n (r + 1) / N) of the run,
/// the very bodies one process makes (Body(i, seed, p) is a function of i). Bodies never move
/// between ranks; each step every rank gathers every body's position and mass (one exchange, an
/// allgather staged through host memory) and gives its own bodies their accelerations from all of
/// them with gravity::interact, then advances them as nbody::step does.
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

namespace nbody {

class ranked_bodies {
 public:
  /// Rank ctx.rank()'s share of a run of n bodies. Collective.
  ranked_bodies(shoal::runtime<Space>& rt, const shoal::dist::context& ctx, std::uint64_t n, std::uint64_t seed,
                const parameters& p)
      : rt_(&rt), ctx_(&ctx), seed_(seed), p_(p),
        first_(n * static_cast<std::uint64_t>(ctx.rank()) / static_cast<std::uint64_t>(ctx.size())),
        last_(n * static_cast<std::uint64_t>(ctx.rank() + 1) / static_cast<std::uint64_t>(ctx.size())) {}

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

  /// Every rank's bodies' positions and masses to every rank, then this rank's bodies'
  /// accelerations from all of them. Collective. (Public: nvcc refuses device lambdas in private
  /// member functions.)
  void forces() {
    const shoal::agent_columns<Body> mine = rt_->template download<Body>();
    const auto& xs = mine.get<&Body::x>();
    const auto& ys = mine.get<&Body::y>();
    const auto& ms = mine.get<&Body::mass>();
    std::vector<gravity::value> values(xs.size());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = {xs[i], ys[i], ms[i]};
    std::vector<std::byte> bytes(values.size() * sizeof(gravity::value));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    const auto from = ctx_->exchange(std::vector<std::vector<std::byte>>(static_cast<std::size_t>(ctx_->size()), bytes));
    std::vector<gravity::value> everyone;
    for (const auto& m : from) {
      const std::size_t at = everyone.size();
      everyone.resize(at + m.size() / sizeof(gravity::value));
      if (!m.empty()) std::memcpy(everyone.data() + at, m.data(), m.size());
    }
    if (mine.size() == 0) return;
    shoal::arch::device_buffer<gravity::value> partners(everyone.size());
    partners.upload(everyone);
    shoal::arch::device_buffer<Body*> bodies(mine.size());
    bodies.upload(mine.objects());
    const gravity law{p_.softening * p_.softening, p_.gravity};
    const gravity::value* all = partners.data();
    Body* const* own = bodies.data();
    const std::size_t count = everyone.size();
    rt_->launch(mine.size(), [=] SHOAL_DEVICE(std::size_t i) {
      Body* b = own[i];
      const gravity::value self = law.project(b);
      gravity::acceleration a{0.0f, 0.0f};
      for (std::size_t j = 0; j < count; ++j) law.interact(self, all[j], a);
      law.apply(b, a);
    });
  }

 private:
  shoal::runtime<Space>* rt_;
  const shoal::dist::context* ctx_;
  std::uint64_t seed_;
  parameters p_;
  std::uint64_t first_, last_;
};

}  // namespace nbody
