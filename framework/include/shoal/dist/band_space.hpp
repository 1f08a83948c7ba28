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
/// What a model provides: its agents keep their cell's global index in a field (`Cell`), the
/// cells between resolve_claims and the moves are those the requests saw, an agent moves at most
/// `halo` rows in a phase, and a winner whose target is not its rank's (`!g.owns(target)`) sets
/// that field and leaves its old cell as on any move, but does not write the target cell nor
/// delete what is on it. Then:
///  - fill_ghosts: the halo cells hold ghosts of the neighbours' border cells' occupants,
///    pointers that carry the occupant's class (shoal::is/cast work) and must never be
///    dereferenced or deleted;
///  - resolve_claims: each halo row's claim words go to the row's owner, which keeps the lower key
///    per cell, and come back resolved, so every requester of a border cell sees its winner;
///  - move_across<C>: objects of C that stood on a border cell before the moves and whose cell
///    left the band go to its owner, which
///    places each on its cell, deleting what was there (the prey a shark ate); then the claim words
///    of the border and halo rows go back to no_claim (a remote winner never resets the owner's).
/// Random streams and claim keys use global cell indices, so a model whose phases depend on
/// nothing else gives the same results for every rank count (tests/dist/wator_band_test.cpp).
///
/// Every exchange is a swap of fixed-size device buffers with the two neighbours
/// (dist::neighbour_link: host staging or NCCL, SHOAL_DIST_TRANSPORT): the kinds of the border
/// cells' occupants, claim words, and the movers, packed on the device field by field into one
/// slot per halo cell (a cell has at most one winner, so a phase moves at most the halo's cells
/// each way and nothing needs counting first). The host waits once per move_across, to learn
/// whether any rank failed. Tested with a halo of one row (Wa-Tor's reach); a model that sees
/// further needs `halo` rows, and bands at least as high.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "shoal/dist/band.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/dist/migrate.hpp"
#include "shoal/dist/neighbour_link.hpp"
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

namespace detail {

/// Where a class's movers travel: one slot per halo cell on each side (up: the rank above's
/// cells, down: the rank below's), a present word per slot, then one column per field. The same
/// layout on both sides of a swap.
template <class C>
struct mover_slots {
  std::byte* base;          ///< side 0 (up), then side 1 (down), side_bytes each
  std::uint64_t slots;      ///< slots per side: halo × width
  std::uint64_t side_bytes;  ///< bytes of one side (16-byte aligned)
  std::uint64_t column[shoal::detail::all_fields_t<C>::size > 0 ? shoal::detail::all_fields_t<C>::size : 1];  ///< offset of field K's column in a side

  /// The layout for `slots` slots per side at `base`.
  static mover_slots at(std::byte* base, std::uint64_t slots) {
    mover_slots m{base, slots, 0, {}};
    std::uint64_t at = slots * sizeof(std::uint32_t);
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((at = (at + 15) / 16 * 16, m.column[K] = at,
        at += slots * shoal::detail::field_at<C, K>::count * sizeof(typename shoal::detail::field_at<C, K>::element)),
       ...);
    }(std::make_index_sequence<shoal::detail::all_fields_t<C>::size>{});
    m.side_bytes = (at + 15) / 16 * 16;
    return m;
  }
  /// The first byte of side s.
  SHOAL_HD std::byte* side(int s) const { return base + s * side_bytes; }
  /// Side s's present words: 1 where a slot holds a mover.
  SHOAL_HD std::uint32_t* present(int s) const { return reinterpret_cast<std::uint32_t*>(side(s)); }
  /// Side s's column of field K (slot-major, `count` elements per slot).
  template <std::size_t K>
  SHOAL_HD typename shoal::detail::field_at<C, K>::element* field(int s) const {
    return reinterpret_cast<typename shoal::detail::field_at<C, K>::element*>(side(s) + column[K]);
  }
  /// What column_loader reads for side s: its columns (slot-major, as upload's).
  SHOAL_HD shoal::detail::column_source<C> source(int s) const {
    shoal::detail::column_source<C> src{};
    for (std::size_t k = 0; k < shoal::detail::all_fields_t<C>::size; ++k) src.columns[k] = side(s) + column[k];
    src.placed = nullptr;
    return src;
  }
};

/// Counts of one move_across, on the device: movers that left, movers made here, objects whose
/// cell was outside the band and its halo or shared a halo cell with another (a model's bug), and
/// one such cell.
struct mover_counts {
  unsigned long long sent, received, bad, bad_cell;
};

/// One thread per border cell: the object that stood there before the moves (resolve_claims
/// kept them), if it is still a live object of exactly class C and its cell is now another rank's,
/// is packed into the slot of its halo cell and destroyed. Only objects on border cells can reach
/// a halo cell in one move, so the heap need not be searched (a thread per heap block cost
/// 0.15 ms a call at Wa-Tor's defaults on the H200). A functor (see leaver_scan for why).
template <class C, class T, auto Cell>
struct mover_pack {
  shoal::detail::heap_view h;       ///< the heap (by value)
  std::uint32_t type;               ///< C's type id
  band_grid<T> g;                   ///< the band
  T* const* before;                 ///< border cells' occupants before the moves
  mover_slots<C> out;               ///< where the movers go
  mover_counts* counts;             ///< what happened

  SHOAL_DEVICE void operator()(std::size_t i) const {
    const T* a = before[i];
    if (a == nullptr) return;
    const std::uint64_t p = shoal::detail::bits_of(a);
    if (shoal::detail::type_of(p) != type) return;
    // It may have died in the moves (and its slot gone to a newborn of C, which did not move).
    const std::uint64_t b = h.block_of(p);
    if (h.headers[b].type != type || ((h.live[b] >> shoal::detail::slot_of(p)) & 1) == 0) return;
    C* o = reinterpret_cast<C*>(const_cast<T*>(a));
    const std::uint32_t c = static_cast<std::uint32_t>(o->*Cell);
    if (g.owns(c)) return;
    // Rows above the band (side 0) or below it (side 1), counted on the torus.
    const std::uint32_t y = c / g.width, x = c % g.width;
    const std::uint32_t up = (g.first_row + g.height - y) % g.height;                 // 1..halo above
    const std::uint32_t down = (y + 2 * g.height - g.first_row - g.rows) % g.height;  // 0..halo-1 below
    int s;
    std::uint64_t slot;
    if (c < g.size() && up >= 1 && up <= g.halo) s = 0, slot = std::uint64_t{g.halo - up} * g.width + x;
    else if (c < g.size() && down < g.halo) s = 1, slot = std::uint64_t{down} * g.width + x;
    else return fail(c);
    if (arch::exchange(out.present(s)[slot], 1u) != 0) return fail(c);  // two on one cell
    pack<0>(p, s, slot);
    arch::fetch_add_relaxed(counts->sent, 1ull);
    destroy(o);
  }
  /// Counts a mover on a cell outside the band and halo, or on a halo cell taken already.
  SHOAL_DEVICE void fail(std::uint32_t c) const {
    if (arch::fetch_add(counts->bad, 1ull) == 0) counts->bad_cell = c;
  }
  template <std::size_t K>
  SHOAL_DEVICE void pack(std::uint64_t p, int s, std::uint64_t slot) const {
    if constexpr (K < shoal::detail::all_fields_t<C>::size) {
      constexpr std::size_t count = shoal::detail::field_at<C, K>::count;
      auto* column = out.template field<K>(s);
      for (std::size_t e = 0; e < count; ++e) column[slot * count + e] = *shoal::detail::field_element<C, K>(p, e);
      pack<K + 1>(p, s, slot);
    }
  }
};

/// The local index of distinct border cell i of band b (see band_space::border_cells_distinct).
SHOAL_HD inline std::uint64_t distinct_border_cell(const band& b, std::uint64_t i) {
  const std::uint64_t w = b.width, h = b.halo;
  if (b.rows <= 2 * b.halo) return h * w + i;  // every own row
  return i < h * w ? h * w + i : std::uint64_t{b.rows} * w + (i - h * w);
}

}  // namespace detail

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
      : rt_(&rt), ctx_(&ctx), band_(band::of(ctx, width, height, halo, true)), link_(ctx, band_.above(), band_.below()),
        cells_(band_.local_cells()), claims_(band_.local_cells()), kinds_(band_.local_cells()),
        thick_bands_(height / static_cast<std::uint32_t>(ctx.size()) >= 2 * halo), their_claims_(4 * border_cells()),
        before_(border_cells_distinct()), counts_(1) {
    cells_.zero();
    kinds_.zero();
    claims_.upload(std::vector<sim::claim_word>(band_.local_cells(), sim::no_claim));
    view_ = {cells_.data(), claims_.data(), width, height, band_.first_row, band_.rows, halo};
  }

  /// What device code gets (see band_grid).
  const band_grid<T>& view() const { return view_; }
  /// This rank's rows.
  const dist::band& rows() const { return band_; }
  /// The transport of the exchanges.
  transport how() const { return link_.how(); }

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
    fill_halo(link_, band_, kinds);
    const shoal::detail::heap_view h = rt_->view();  // by value: block 0 and the capacities
    over_border_rows(/*halo=*/true, [=] SHOAL_DEVICE(std::uint64_t l) {
      const std::uint32_t k = kinds[l];
      g.cells[l] = k == 0 ? nullptr : reinterpret_cast<T*>(shoal::detail::encode_pointer(h.data, 0, h.capacity[k - 1], k - 1));
    });
  }

  /// Between a phase's requests and its moves: every claim word of a border cell holds the lowest
  /// key that any rank's requester offered, here and in the neighbours' halos, and so does its
  /// copy in their halos; notes the border cells' occupants (the objects that may leave in the
  /// moves). Collective.
  void resolve_claims() {
    const std::uint64_t w = band_.width, h = band_.halo, rows = band_.rows, n = border_cells();
    sim::claim_word* claims = claims_.data();
    sim::claim_word* theirs = their_claims_.data();
    if (thick_bands_) {
      // A border cell lies in one neighbour's halo only: the two ranks that can claim it swap
      // their words for it and both keep the lower. Upper halo and first rows are contiguous
      // local rows, and so are last rows and lower halo, each lined up with what arrives.
      link_.swap(claims, theirs, claims + rows * w, theirs + 2 * n, 2 * n * sizeof(sim::claim_word));
      rt_->launch_async(4 * n, [=] SHOAL_DEVICE(std::size_t i) {
        sim::claim_word& mine = claims[(i < 2 * n ? 0 : rows * w - 2 * n) + i];
        if (theirs[i] < mine) mine = theirs[i];
      });
      return note_border_occupants();
    }
    // Bands thinner than two halos: a cell may be claimed from three ranks. The halos' words go
    // to the owner, which keeps the lowest, then back.
    link_.swap(claims, theirs, claims + (h + rows) * w, theirs + n, n * sizeof(sim::claim_word));
    rt_->launch_async(2 * n, [=] SHOAL_DEVICE(std::size_t i) {
      // Atomic: the first and last rows may be the same.
      if (theirs[i] != sim::no_claim) sim::request(claims[(i < n ? h * w : rows * w - n) + i], theirs[i]);
    });
    fill_halo(link_, band_, claims);
    note_border_occupants();
  }

  /// The objects that may leave in the moves: those on border cells now. (Public: nvcc refuses
  /// device lambdas in private member functions.)
  void note_border_occupants() {
    T** cells = cells_.data();
    T** before = before_.data();
    const dist::band b = band_;
    rt_->launch_async(border_cells_distinct(), [=] SHOAL_DEVICE(std::size_t i) {
      before[i] = cells[detail::distinct_border_cell(b, i)];
    });
  }

  /// After a phase's moves: objects of C whose cell is now another rank's go there and are placed
  /// on their cells (what was on a cell is deleted); border and halo claim words are reset.
  /// Collective. Returns what moved. Throws shoal::error on every rank when a rank found an
  /// object of C on a cell outside its band and halo, or two on one halo cell (the model broke
  /// the rules of the file comment), and out_of_memory naming C where a heap could not make its
  /// newcomers (shoal::error on the other ranks).
  template <class C>
  migrate_stats move_across() {
    static_assert(detail::no_pointer_fields<C>(),
                  "shoal::dist::band_space::move_across: a class with pointer fields cannot move to another rank");
    const detail::mover_slots<C> layout = detail::mover_slots<C>::at(nullptr, border_cells());
    if (outgoing_.bytes() < 2 * layout.side_bytes) {
      rt_->synchronize();  // the last swaps may still read the old buffers
      outgoing_ = arch::device_buffer<std::byte>(2 * layout.side_bytes);
      incoming_ = arch::device_buffer<std::byte>(2 * layout.side_bytes);
    }
    const detail::mover_slots<C> out = detail::mover_slots<C>::at(outgoing_.data(), border_cells());
    const detail::mover_slots<C> in = detail::mover_slots<C>::at(incoming_.data(), border_cells());
    arch::fill_bytes_enqueued(out.base, 0, 2 * out.side_bytes);
    arch::fill_bytes_enqueued(counts_.data(), 0, sizeof(detail::mover_counts));
    rt_->launch_async(border_cells_distinct(), detail::mover_pack<C, T, Cell>{rt_->view(), Heap::template type_id<C>, view_,
                                                                            before_.data(), out, counts_.data()});
    // Side 0 goes up, and what comes from below is the rank below's side 0: my rows.
    link_.swap(out.side(0), in.side(1), out.side(1), in.side(0), out.side_bytes);
    place_movers(in);
    sim::claim_word* claims = claims_.data();
    const auto clear = [=] SHOAL_DEVICE(std::uint64_t l) { claims[l] = sim::no_claim; };
    over_border_rows(false, clear);
    over_border_rows(true, clear);
    return finish_move<C>();
  }

  // Helpers of the above, public only because nvcc refuses device lambdas in private member
  // functions.

  /// Makes an object of C from every filled slot of `in` and puts it on its cell, deleting what
  /// was there.
  template <class C>
  void place_movers(const detail::mover_slots<C>& in) {
    const band_grid<T> g = view_;
    detail::mover_counts* counts = counts_.data();
    const std::uint64_t slots = in.slots;
    rt_->launch_async(2 * slots, [=] SHOAL_DEVICE(std::size_t i) {
      const int s = i < slots ? 0 : 1;
      const std::uint64_t slot = i - s * slots;
      if (in.present(s)[slot] == 0) return;
      void* made = C::operator new(sizeof(C));
      if (made == nullptr) return;  // recorded by the heap: out_of_memory at the wait
      C* a = reinterpret_cast<C*>(::new (made) shoal::detail::column_loader<C>(slot, in.source(s)));
      arch::fetch_add_relaxed(counts->received, 1ull);
      const std::uint32_t c = static_cast<std::uint32_t>(a->*Cell);
      if (!g.owns(c)) {
        if (arch::fetch_add(counts->bad, 1ull) == 0) counts->bad_cell = c;
        destroy(a);
        return;
      }
      T*& here = g.at(c);
      if (here != nullptr) delete here;
      here = a;
    });
  }

  /// Calls f(local index) on the device for every cell of the halo rows (halo) or of the band's
  /// border rows, the ones its neighbours copy (!halo).
  template <class F>
  void over_border_rows(bool halo, F f) {
    const std::uint64_t w = band_.width, h = band_.halo, rows = band_.rows;
    const std::uint64_t top = halo ? 0 : h, bottom = halo ? h + rows : rows;  // first local row of each part
    rt_->launch_async(2 * h * w, [=] SHOAL_DEVICE(std::size_t i) {
      const std::uint64_t part = i / (h * w), within = i % (h * w);
      f((part == 0 ? top : bottom) * w + within);
    });
  }

  /// Puts the objects `arrived` on their cells, deleting what was there (after a resume).
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
  /// Cells of `halo` rows.
  std::uint64_t border_cells() const { return std::uint64_t{band_.halo} * band_.width; }
  /// Cells of the border rows, each counted once (a band of fewer than 2 × halo rows is all border).
  std::uint64_t border_cells_distinct() const {
    return std::uint64_t{std::min(band_.rows, 2 * band_.halo)} * band_.width;
  }

  /// The wait at the end of move_across: this rank's errors, then every rank's.
  template <class C>
  migrate_stats finish_move() {
    arch::copy_to_host_enqueued(seen_.get(), counts_.data(), sizeof(detail::mover_counts));
    std::exception_ptr failure;
    try {
      rt_->wait();  // the stocks keep their reservations for the next phase's births
    } catch (const error&) {
      failure = std::current_exception();
    }
    const detail::mover_counts seen = *seen_.get();
    const std::string what = "shoal::dist::band_space::move_across<" + std::string(shoal::detail::type_name<C>()) + ">: ";
    if (failure == nullptr && seen.bad != 0)
      failure = std::make_exception_ptr(error(what + std::to_string(seen.bad) + " object(s) of rank " + std::to_string(ctx_->rank()) +
                                              " on a cell outside its band and halo or sharing a halo cell, e.g. cell " +
                                              std::to_string(seen.bad_cell)));
    if (ctx_->any(failure != nullptr)) {
      if (failure != nullptr) std::rethrow_exception(failure);
      throw error(what + "another rank failed");
    }
    return {seen.sent, seen.received};
  }

  runtime<Heap>* rt_;
  const context* ctx_;
  dist::band band_;
  neighbour_link link_;
  arch::device_buffer<T*> cells_;
  arch::device_buffer<sim::claim_word> claims_;
  arch::device_buffer<std::uint8_t> kinds_;
  bool thick_bands_;  // every rank's band has at least 2 × halo rows (the same on every rank)
  arch::device_buffer<sim::claim_word> their_claims_;  // what the neighbours' swap brings
  arch::device_buffer<T*> before_;  // border cells' occupants before the moves (resolve_claims)
  arch::device_buffer<std::byte> outgoing_, incoming_;  // movers' slots (mover_slots), grown to the largest class
  arch::device_buffer<detail::mover_counts> counts_;
  arch::pinned_value<detail::mover_counts> seen_;
  band_grid<T> view_{};
};

}  // namespace shoal::dist
