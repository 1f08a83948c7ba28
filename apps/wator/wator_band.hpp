#pragma once
/// @file
/// Wa-Tor over several processes (shoal::dist, MPI): each rank holds a band of whole rows of the
/// torus (dist::band, one halo row on each side) and the fish and sharks on them, and runs the
/// model of wator_model.hpp on it. Each phase (fish, then sharks) is the serial one with the
/// band's edges dealt with around it:
///   1. halo: the neighbours' border rows, as what each of their cells holds (nothing, a fish, a
///      shark), written into the halo cells as ghosts: pointers that carry the class (all that a
///      request looks at) and are never dereferenced;
///   2. request: the model's do-all; a request for a halo cell goes into the halo's claim word;
///   3. claims: the words of each halo row go to the row's owner, which keeps the lower key per
///      cell, and come back resolved (dist::fill_halo), so every requester sees the cell's winner;
///   4. move: the model's do-all; a winner whose target is a neighbour's takes it as its cell and
///      leaves its old one as on any move, but is not placed (band_grid::owns);
///   5. migrate: agents whose cell is now in another band go there (dist::migrate), and every
///      rank places its newcomers, removing the fish that a shark ate on arrival;
///   6. the claim words of the border and halo rows go back to no_claim (remote winners never
///      reset the owner's word).
/// Every random draw and claim key uses the global cell index, so populations and state hash are
/// those of one process, bit for bit, for any number of ranks (tests/dist/wator_band_test.cpp).
///
/// The transport is the first one of shoal::dist: host-staged rows and whole-class downloads for
/// migration. Correct for any rank count, not yet fast.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "shoal/dist/band.hpp"
#include "shoal/dist/census.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/dist/migrate.hpp"
#include "wator/wator_model.hpp"

namespace wator {

/// The grid as one rank's device code sees it: the cells and claim words of its band and halo
/// rows (local row 0 the row above the band, rows + 1 the row below), addressed by global cell
/// index, as `grid` is (see wator_model.hpp for what the phases ask of it).
struct band_grid {
  Agent** cells;                   ///< local cells: halo row, own rows, halo row
  shoal::sim::claim_word* claims;  ///< their claim words
  std::uint32_t width, height;     ///< the whole torus
  std::uint32_t first_row, rows;   ///< this rank's rows
  std::uint64_t seed;

  /// Local index of global cell c, which lies in the band or in a halo row.
  SHOAL_HD std::uint64_t local(std::uint32_t c) const {
    std::int64_t r = static_cast<std::int64_t>(c / width) - first_row + 1;
    if (r < 0) r += height;  // the torus wraps between the first and the last band
    else if (r >= static_cast<std::int64_t>(rows) + 2) r -= height;
    return static_cast<std::uint64_t>(r) * width + c % width;
  }
  SHOAL_HD bool owns(std::uint32_t c) const {
    const std::uint32_t y = c / width;
    return y >= first_row && y < first_row + rows;
  }
  SHOAL_HD Agent*& at(std::uint32_t c) const { return cells[local(c)]; }
  SHOAL_HD void von_neumann(std::uint32_t c, std::uint32_t (&n)[4]) const {
    shoal::sim::grid<Agent, shoal::sim::edges::torus>{nullptr, nullptr, width, height}.von_neumann(c, n);
  }
  SHOAL_HD void request(std::uint32_t c, shoal::sim::claim_word key) const { shoal::sim::request(claims[local(c)], key); }
  SHOAL_HD bool take(std::uint32_t c, shoal::sim::claim_word key) const { return shoal::sim::take(claims[local(c)], key); }
};

/// One rank's part of the ocean: its band's device arrays and the steps over all ranks (see the
/// file comment). Every member function that says "collective" must be called on every rank.
class band_ocean {
 public:
  /// The band of `ctx`'s rank of a width × height torus, every cell empty. Throws shoal::error,
  /// the same on every rank, when a band would have no row.
  band_ocean(shoal::runtime<Ocean>& rt, const shoal::dist::context& ctx, std::uint32_t width, std::uint32_t height,
             std::uint64_t seed)
      : rt_(&rt), ctx_(&ctx), band_(shoal::dist::band::of(ctx, width, height, 1, true)),
        cells_(band_.local_cells()), claims_(band_.local_cells()), kinds_(band_.local_cells()) {
    cells_.zero();
    kinds_.zero();
    claims_.upload(std::vector<shoal::sim::claim_word>(band_.local_cells(), shoal::sim::no_claim));
    view_ = {cells_.data(), claims_.data(), width, height, band_.first_row, band_.rows, seed};
    const auto& h = rt.view();
    const auto ghost = [&](std::uint32_t t) {
      return reinterpret_cast<Agent*>(shoal::detail::encode_pointer(h.data, 0, h.capacity[t], t));
    };
    ghost_fish_ = ghost(Ocean::type_id<Fish>);
    ghost_shark_ = ghost(Ocean::type_id<Shark>);
  }

  const band_grid& view() const { return view_; }
  const shoal::dist::band& band() const { return band_; }

  /// Fills the band's rows as wator::populate fills the whole grid (same draws per cell).
  void populate() {
    const band_grid g = view_;
    rt_->launch(std::uint64_t{band_.rows} * band_.width, [=] SHOAL_DEVICE(std::size_t i) {
      const auto c = static_cast<std::uint32_t>(std::uint64_t{g.first_row} * g.width + i);
      shoal::sim::random r(g.seed, c, 0, init_stream);
      const std::uint32_t kind = r.below(4);
      const auto timer = static_cast<std::int32_t>(r.below(breed_after));
      if (kind == 0) g.at(c) = new Fish(c, timer);
      else if (kind == 1) g.at(c) = new Shark(c, timer, energy_start);
    });
  }

  /// Step `s` (1, 2, ...) on every rank: the fish phase, then the shark phase. Collective.
  void step(std::uint32_t s) {
    phase<Fish>(s);
    phase<Shark>(s);
  }

  /// Fish and sharks on all ranks. Collective.
  populations count() {
    shoal::sim::census<Ocean> census(*rt_);
    const auto all = shoal::dist::count_everywhere(census, *ctx_);
    return {shoal::sim::census<Ocean>::of<Fish>(all), shoal::sim::census<Ocean>::of<Shark>(all)};
  }

  /// wator::state_hash of the whole torus: each rank hashes its rows, the sums are added. Collective.
  std::uint64_t state_hash() {
    shoal::arch::device_buffer<unsigned long long> sum(1);
    sum.zero();
    unsigned long long* out = sum.data();
    const band_grid g = view_;
    rt_->launch(std::uint64_t{band_.rows} * band_.width, [=] SHOAL_DEVICE(std::size_t i) {
      const auto c = static_cast<std::uint32_t>(std::uint64_t{g.first_row} * g.width + i);
      Agent* a = g.at(c);
      if (a != nullptr) shoal::arch::fetch_add_relaxed(*out, static_cast<unsigned long long>(hash_cell(c, state_of(a))));
    });
    return ctx_->sum(std::vector<std::uint64_t>{sum.read(0)})[0];
  }

  // The steps of a phase. Public only because nvcc refuses device lambdas in private member
  // functions.

  /// One phase for class T (Fish or Shark) of step s. Collective.
  template <class T>
  void phase(std::uint32_t s) {
    fill_ghosts();
    rt_->parallel_do<&T::template request<band_grid>>(view_, s);
    resolve_claims();
    rt_->parallel_do<&T::template move<band_grid>>(view_);
    const auto& b = band_;
    shoal::dist::migrate<T>(*rt_, *ctx_, [&](const auto& rows, std::size_t i) {
      return b.rank_of_row(rows.template get<&Agent::cell>()[i] / b.width);
    });
    rt_->parallel_do<T, &Agent::settle<band_grid>>(view_);
    reset_claims();
  }

  /// Local rows `a` and `b` (one launch over both).
  template <class F>
  void over_two_rows(std::uint64_t a, std::uint64_t b, F f) {
    const std::uint64_t w = band_.width;
    rt_->launch(2 * w, [=] SHOAL_DEVICE(std::size_t i) { f(((i < w) ? a : b) * w + i % w); });
  }

  /// Step 1: the halo cells hold ghosts of what the neighbours' border cells hold. Collective.
  void fill_ghosts() {
    const band_grid g = view_;
    std::uint8_t* kinds = kinds_.data();
    over_two_rows(1, band_.rows, [=] SHOAL_DEVICE(std::uint64_t l) {
      const Agent* a = g.cells[l];
      kinds[l] = a == nullptr ? 0 : shoal::is<Shark>(a) ? 2 : 1;
    });
    rt_->synchronize();
    shoal::dist::fill_halo(*ctx_, band_, kinds);
    Agent* const fish = ghost_fish_;
    Agent* const shark = ghost_shark_;
    over_two_rows(0, band_.rows + 1, [=] SHOAL_DEVICE(std::uint64_t l) {
      g.cells[l] = kinds[l] == 0 ? nullptr : kinds[l] == 1 ? fish : shark;
    });
  }

  /// Step 3: each halo row's claims to the row's owner, which keeps the lower key per cell; then
  /// every rank's halos get the resolved words of its neighbours' border rows. Collective.
  void resolve_claims() {
    rt_->synchronize();
    const std::size_t w = band_.width, bytes = w * sizeof(shoal::sim::claim_word);
    std::vector<std::vector<std::byte>> to(static_cast<std::size_t>(band_.ranks));
    // The halo above is the last row of the rank above (tag 0), the halo below the first row of
    // the rank below (tag 1).
    const auto send = [&](int dest, std::uint64_t local_row, std::byte tag) {
      auto& m = to[static_cast<std::size_t>(dest)];
      m.push_back(tag);
      const std::size_t at = m.size();
      m.resize(at + bytes);
      shoal::arch::copy_to_host(m.data() + at, claims_.data() + local_row * w, bytes);
    };
    send(band_.above(), 0, std::byte{0});
    send(band_.below(), band_.rows + 1, std::byte{1});
    const auto from = ctx_->exchange(to);
    std::vector<shoal::sim::claim_word> mine(w), theirs(w);
    for (const auto& m : from)
      for (std::size_t at = 0; at + 1 + bytes <= m.size(); at += 1 + bytes) {
        const std::uint64_t row = m[at] == std::byte{0} ? band_.rows : 1;
        shoal::arch::copy_to_host(mine.data(), claims_.data() + row * w, bytes);
        std::memcpy(theirs.data(), m.data() + at + 1, bytes);
        for (std::size_t x = 0; x < w; ++x) mine[x] = std::min(mine[x], theirs[x]);
        shoal::arch::copy_to_device(claims_.data() + row * w, mine.data(), bytes);
      }
    shoal::dist::fill_halo(*ctx_, band_, claims_.data());
  }

  /// Step 6: border and halo rows' claim words back to no_claim.
  void reset_claims() {
    shoal::sim::claim_word* claims = claims_.data();
    const auto clear = [=] SHOAL_DEVICE(std::uint64_t l) { claims[l] = shoal::sim::no_claim; };
    over_two_rows(0, band_.rows + 1, clear);
    over_two_rows(1, band_.rows, clear);
  }

 private:
  shoal::runtime<Ocean>* rt_;
  const shoal::dist::context* ctx_;
  shoal::dist::band band_;
  shoal::arch::device_buffer<Agent*> cells_;
  shoal::arch::device_buffer<shoal::sim::claim_word> claims_;
  shoal::arch::device_buffer<std::uint8_t> kinds_;
  band_grid view_{};
  Agent* ghost_fish_ = nullptr;
  Agent* ghost_shark_ = nullptr;
};

}  // namespace wator
