#pragma once
/// @file
/// Wa-Tor over several processes (shoal::dist, MPI): each rank holds a band of rows of the torus
/// and the fish and sharks on them, and runs the phases of wator_model.hpp on it; the
/// communication around them is shoal::dist::band_space's. Populations and state hash are those
/// of one process, bit for bit, for any number of ranks (tests/dist/wator_band_test.cpp).

#include <cstdint>
#include <vector>

#include "shoal/dist/band_space.hpp"
#include "shoal/dist/census.hpp"
#include "wator/wator_model.hpp"

namespace wator {

/// The grid of one rank's device code: its band (dist::band_grid) and the run's seed.
struct band_grid : shoal::dist::band_grid<Agent> {
  std::uint64_t seed;
};

/// One rank's part of the ocean. The member functions are collective: every rank calls them.
class band_ocean {
 public:
  /// The band of `ctx`'s rank of a width × height torus, every cell empty. Throws shoal::error,
  /// the same on every rank, when a band would have no row.
  band_ocean(shoal::runtime<Ocean>& rt, const shoal::dist::context& ctx, std::uint32_t width, std::uint32_t height,
             std::uint64_t seed)
      : rt_(&rt), ctx_(&ctx), space_(rt, ctx, width, height), view_{space_.view(), seed} {}

  const band_grid& view() const { return view_; }

  /// Fills the band's rows as wator::populate fills the whole grid (the same draws per cell).
  void populate() {
    const band_grid g = view_;
    space_.for_each_own_cell([=] SHOAL_DEVICE(std::uint32_t c) {
      shoal::sim::random r(g.seed, c, 0, init_stream);
      const std::uint32_t kind = r.below(4);
      const auto timer = static_cast<std::int32_t>(r.below(breed_after));
      if (kind == 0) g.at(c) = new Fish(c, timer);
      else if (kind == 1) g.at(c) = new Shark(c, timer, energy_start);
    });
  }

  /// Step `s` (1, 2, ...): the fish phase, then the shark phase, as wator::step. `timer` times
  /// the exchanges (halo, claims, migrate) beside the do-alls.
  void step(std::uint32_t s, shoal::sim::phase_timer& timer) {
    phase<Fish>(s, timer);
    phase<Shark>(s, timer);
  }

  /// Fish and sharks on all ranks.
  populations count() {
    shoal::sim::census<Ocean> census(*rt_);
    const auto all = shoal::dist::count_everywhere(census, *ctx_);
    return {shoal::sim::census<Ocean>::of<Fish>(all), shoal::sim::census<Ocean>::of<Shark>(all)};
  }

  /// wator::state_hash of the whole torus: each rank hashes its rows, the sums are added.
  std::uint64_t state_hash() {
    shoal::arch::device_buffer<unsigned long long> sum(1);
    sum.zero();
    unsigned long long* out = sum.data();
    const band_grid g = view_;
    space_.for_each_own_cell([=] SHOAL_DEVICE(std::uint32_t c) {
      Agent* a = g.at(c);
      if (a != nullptr) shoal::arch::fetch_add_relaxed(*out, static_cast<unsigned long long>(hash_cell(c, state_of(a))));
    });
    return ctx_->sum(std::vector<std::uint64_t>{sum.read(0)})[0];
  }

  /// After a resume (runtime::load_heap): every agent on its cell, as `cell` says.
  void place_all() {
    place_all_of<Fish>();
    place_all_of<Shark>();
  }
  /// place_all() for class T. (Public: see phase().)
  template <class T>
  void place_all_of() {
    const std::vector<T*> objects = rt_->template download<T>().objects();
    if (objects.empty()) return;
    shoal::arch::device_buffer<T*> on_device(objects.size());
    on_device.upload(objects);
    space_.place(on_device);
  }

  /// One phase for class T (Fish or Shark) of step s. (Public: nvcc refuses device lambdas in
  /// private member functions, and this one's do-alls instantiate some.)
  template <class T>
  void phase(std::uint32_t s, shoal::sim::phase_timer& timer) {
    {
      auto p = timer.phase("halo");
      space_.fill_ghosts();
    }
    rt_->parallel_do<&T::template request<band_grid>>(view_, s);
    {
      auto p = timer.phase("claims");
      space_.resolve_claims();
    }
    rt_->parallel_do<&T::template move<band_grid>>(view_);
    auto p = timer.phase("migrate");
    space_.template move_across<T>();
  }

 private:
  shoal::runtime<Ocean>* rt_;
  const shoal::dist::context* ctx_;
  shoal::dist::band_space<Ocean, Agent, &Agent::cell> space_;
  band_grid view_;
};

}  // namespace wator
