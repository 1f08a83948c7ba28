#pragma once
/// @file
/// A sim::grid split over the ranks in bands of rows (dist::band), for models whose agents live
/// on cells and move by claims (Wa-Tor's request and move phases): the model's own phases run
/// unchanged on every rank, and band_space does the communication around them.
///
///   shoal::dist::band_space<Ocean, Agent, &Agent::cell> space(rt, ctx, width, height);
///   // device code gets space.view(), a band_grid<Agent>: at(c), owns(c), neighbourhoods,
///   // request/take, all by global cell index c
///   space.fill_ghosts();                              // before the requests
///   rt.parallel_do<&Fish::request<G>>(view, step);
///   space.resolve_claims();                           // before the moves
///   rt.parallel_do<&Fish::move<G>>(view);
///   space.move_across<Fish>();                        // movers to their cells' ranks
///
/// What a model provides: its agents keep their cell's global index in a field (`Cell`), and a
/// winner whose target is not its rank's (`!g.owns(target)`) sets that field and leaves its old
/// cell as on any move, but does not write the target cell nor delete what is on it. Then:
///  - fill_ghosts: the halo cells hold ghosts of the neighbours' border cells' occupants,
///    pointers that carry the occupant's class (shoal::is/cast work) and must never be
///    dereferenced or deleted;
///  - resolve_claims: each halo row's claim words go to the row's owner, which keeps the lower key
///    per cell, and come back resolved, so every requester of a border cell sees its winner;
///  - move_across<C>: objects of C whose cell left the band go to its owner (dist::migrate), which
///    places each on its cell, deleting what was there (the prey a shark ate); then the claim words
///    of the border and halo rows go back to no_claim (a remote winner never resets the owner's).
/// Random streams and claim keys use global cell indices, so a model whose phases depend on
/// nothing else gives the same results for every rank count (tests/dist/wator_band_test.cpp).
///
/// The transport is the first of shoal::dist: rows staged through host memory, and the movers'
/// rows (found on the device) too. Correct for any rank count, not yet fast. Tested with a halo of one
/// row (Wa-Tor's reach); a model that sees further needs `halo` rows, and bands at least as high.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "shoal/dist/band.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/dist/migrate.hpp"
#include "shoal/sim/grid.hpp"

namespace shoal::dist {

/// One rank's band of a torus of T* as device code sees it (trivially copyable): the cells and
/// claim words of its rows and `halo` rows on each side, addressed by global cell index. The
/// neighbourhoods are sim::grid's, on the whole torus.
template <class T>
struct band_grid {
  T** cells;                      ///< local cells: halo rows, own rows, halo rows
  sim::claim_word* claims;        ///< their claim words
  std::uint32_t width;            ///< cells per row of the whole torus
  std::uint32_t height;           ///< rows of the whole torus
  std::uint32_t first_row;        ///< the first of this rank's rows
  std::uint32_t rows;             ///< this rank's rows
  std::uint32_t halo;             ///< rows copied from each neighbour

  /// The whole torus's geometry (no arrays): for the neighbourhoods.
  SHOAL_HD sim::grid<T, sim::edges::torus> shape() const { return {nullptr, nullptr, width, height}; }
  /// Local index of global cell c, which lies in the band or in its halo.
  SHOAL_HD std::uint64_t local(std::uint32_t c) const {
    std::int64_t r = static_cast<std::int64_t>(c / width) - first_row + halo;
    if (r < 0) r += height;  // the torus wraps between the last band and the first
    else if (r >= static_cast<std::int64_t>(rows + 2 * halo)) r -= height;
    return static_cast<std::uint64_t>(r) * width + c % width;
  }
  /// Whether cell c is one of this rank's.
  SHOAL_HD bool owns(std::uint32_t c) const {
    const std::uint32_t y = c / width;
    return y >= first_row && y < first_row + rows;
  }
  /// The occupant of cell c (a ghost in the halo).
  SHOAL_HD T*& at(std::uint32_t c) const { return cells[local(c)]; }
  /// Cells of the whole torus.
  SHOAL_HD std::uint64_t size() const { return std::uint64_t{width} * height; }
  /// sim::grid::von_neumann on the whole torus.
  SHOAL_HD std::uint32_t von_neumann(std::uint32_t c, std::uint32_t (&n)[4]) const { return shape().von_neumann(c, n); }
  /// sim::grid::moore on the whole torus.
  SHOAL_HD std::uint32_t moore(std::uint32_t c, std::uint32_t (&n)[8]) const { return shape().moore(c, n); }
  /// sim::grid::for_each_von_neumann on the whole torus.
  template <class F>
  SHOAL_HD void for_each_von_neumann(std::uint32_t c, F&& f) const { shape().for_each_von_neumann(c, f); }
  /// sim::grid::for_each_moore on the whole torus.
  template <class F>
  SHOAL_HD void for_each_moore(std::uint32_t c, F&& f) const { shape().for_each_moore(c, f); }
  /// As sim::grid::request, for a cell of the band or its halo.
  SHOAL_HD void request(std::uint32_t c, sim::claim_word key) const { sim::request(claims[local(c)], key); }
  /// As sim::grid::take, for a cell of the band or its halo.
  SHOAL_HD bool take(std::uint32_t c, sim::claim_word key) const { return sim::take(claims[local(c)], key); }
};

/// Owns one rank's band of a width × height torus of T* (T a class of Heap, or a base of its
/// classes) and does the communication around a model's phases (see the file comment). `Cell` is
/// the field of T that holds an object's global cell index. Member functions marked collective
/// must be called on every rank, in the same order.
template <class Heap, class T, auto Cell>
class band_space {
 public:
  /// Every cell empty, every claim word no_claim. Throws shoal::error, the same on every rank,
  /// when a band would have fewer rows than the halo.
  band_space(runtime<Heap>& rt, const context& ctx, std::uint32_t width, std::uint32_t height, std::uint32_t halo = 1)
      : rt_(&rt), ctx_(&ctx), band_(band::of(ctx, width, height, halo, true)), cells_(band_.local_cells()),
        claims_(band_.local_cells()), kinds_(band_.local_cells()) {
    cells_.zero();
    kinds_.zero();
    claims_.upload(std::vector<sim::claim_word>(band_.local_cells(), sim::no_claim));
    view_ = {cells_.data(), claims_.data(), width, height, band_.first_row, band_.rows, halo};
  }

  /// What device code gets (see band_grid).
  const band_grid<T>& view() const { return view_; }
  /// This rank's rows.
  const dist::band& rows() const { return band_; }

  /// Calls f(c) on the device for every cell c (global index) of this rank's rows.
  template <class F>
  void for_each_own_cell(F f) {
    const std::uint64_t first = std::uint64_t{band_.first_row} * band_.width;
    rt_->launch(std::uint64_t{band_.rows} * band_.width,
                [=] SHOAL_DEVICE(std::size_t i) { f(static_cast<std::uint32_t>(first + i)); });
  }

  /// Before a phase's requests: the halo cells get ghosts of what the neighbours' border cells
  /// hold. Collective.
  void fill_ghosts() {
    const band_grid<T> g = view_;
    std::uint8_t* kinds = kinds_.data();
    // Type id + 1 of each border cell's occupant (0: empty); a heap has at most 32 classes.
    over_border_rows(/*halo=*/false, [=] SHOAL_DEVICE(std::uint64_t l) {
      const T* a = g.cells[l];
      kinds[l] = a == nullptr ? 0 : static_cast<std::uint8_t>(shoal::detail::type_of(shoal::detail::bits_of(a)) + 1);
    });
    rt_->synchronize();
    fill_halo(*ctx_, band_, kinds);
    const shoal::detail::heap_view h = rt_->view();  // by value: block 0 and the capacities
    over_border_rows(/*halo=*/true, [=] SHOAL_DEVICE(std::uint64_t l) {
      const std::uint32_t k = kinds[l];
      g.cells[l] = k == 0 ? nullptr : reinterpret_cast<T*>(shoal::detail::encode_pointer(h.data, 0, h.capacity[k - 1], k - 1));
    });
  }

  /// Between a phase's requests and its moves: every claim word of a border cell holds the lowest
  /// key that any rank's requester offered, here and in the neighbours' halos. Collective.
  void resolve_claims() {
    rt_->synchronize();
    const std::size_t w = band_.width, bytes = std::size_t{band_.halo} * w * sizeof(sim::claim_word);
    std::vector<std::vector<std::byte>> to(static_cast<std::size_t>(band_.ranks));
    // The halo above holds the last rows of the rank above (tag 0), the halo below the first
    // rows of the rank below (tag 1).
    const auto send = [&](int dest, std::uint64_t local_row, std::byte tag) {
      auto& m = to[static_cast<std::size_t>(dest)];
      m.push_back(tag);
      const std::size_t at = m.size();
      m.resize(at + bytes);
      arch::copy_to_host(m.data() + at, claims_.data() + local_row * w, bytes);
    };
    send(band_.above(), 0, std::byte{0});
    send(band_.below(), band_.halo + band_.rows, std::byte{1});
    const auto from = ctx_->exchange(to);
    std::vector<sim::claim_word> mine(bytes / sizeof(sim::claim_word)), theirs(mine.size());
    for (const auto& m : from)
      for (std::size_t at = 0; at + 1 + bytes <= m.size(); at += 1 + bytes) {
        const std::uint64_t row = m[at] == std::byte{0} ? band_.rows : band_.halo;  // my last or first rows
        arch::copy_to_host(mine.data(), claims_.data() + row * w, bytes);
        std::memcpy(theirs.data(), m.data() + at + 1, bytes);
        for (std::size_t x = 0; x < mine.size(); ++x) mine[x] = std::min(mine[x], theirs[x]);
        arch::copy_to_device(claims_.data() + row * w, mine.data(), bytes);
      }
    fill_halo(*ctx_, band_, claims_.data());
  }

  /// After a phase's moves: objects of C whose cell is now another rank's go there and are placed
  /// on their cells (what was on a cell is deleted); border and halo claim words are reset.
  /// Collective. Returns what moved.
  template <class C>
  migrate_stats move_across() {
    const dist::band& b = band_;
    arch::device_buffer<C*> arrived;
    const migrate_stats moved = migrate<C>(*rt_, *ctx_, [b] SHOAL_DEVICE(C* a) {
      return b.rank_of_row(static_cast<std::uint32_t>(a->*Cell) / b.width);
    }, &arrived);
    if (arrived.size() != 0) place(arrived);
    sim::claim_word* claims = claims_.data();
    const auto clear = [=] SHOAL_DEVICE(std::uint64_t l) { claims[l] = sim::no_claim; };
    over_border_rows(false, clear);
    over_border_rows(true, clear);
    return moved;
  }

  // Helpers of the above, public only because nvcc refuses device lambdas in private member
  // functions.

  /// Calls f(local index) on the device for every cell of the halo rows (halo) or of the band's
  /// border rows, the ones its neighbours copy (!halo).
  template <class F>
  void over_border_rows(bool halo, F f) {
    const std::uint64_t w = band_.width, h = band_.halo, rows = band_.rows;
    const std::uint64_t top = halo ? 0 : h, bottom = halo ? h + rows : rows;  // first local row of each part
    rt_->launch(2 * h * w, [=] SHOAL_DEVICE(std::size_t i) {
      const std::uint64_t part = i / (h * w), within = i % (h * w);
      f((part == 0 ? top : bottom) * w + within);
    });
  }

  /// Puts the objects `arrived` on their cells, deleting what was there.
  template <class C>
  void place(const arch::device_buffer<C*>& arrived) {
    const band_grid<T> g = view_;
    C* const* objects = arrived.data();
    rt_->launch(arrived.size(), [=] SHOAL_DEVICE(std::size_t i) {
      C* a = objects[i];
      if (a == nullptr) return;
      T*& here = g.at(static_cast<std::uint32_t>(a->*Cell));
      if (here != nullptr) delete here;
      here = a;
    });
  }

 private:
  runtime<Heap>* rt_;
  const context* ctx_;
  dist::band band_;
  arch::device_buffer<T*> cells_;
  arch::device_buffer<sim::claim_word> claims_;
  arch::device_buffer<std::uint8_t> kinds_;
  band_grid<T> view_{};
};

}  // namespace shoal::dist
