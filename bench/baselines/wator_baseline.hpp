#pragma once
/// @file
/// Static Wa-Tor baselines for the apps benchmark (DynaSOAr's methodology): the model of
/// apps/wator/wator_model.hpp written the way one would without an object heap. The agent lives
/// in its grid cell: per cell a kind (0 empty, 1 fish, 2 shark, as wator::cell_state), a breeding
/// timer and an energy, in fixed-size arrays of width × height entries, and a move copies the
/// agent's fields to the new cell. `soa_cells` keeps the three fields in three arrays, `aos_cells`
/// in one array of structs; the step code is the same template for both.
///
/// Rules, random draws (sim::random keyed by seed, cell, step, stream), constants and the claim
/// protocol are those of the app (shared through wator_model.hpp and sim/claim.hpp), so a
/// baseline run reproduces the app's populations and state hash exactly (bench/baselines/tests).
///
/// Moves are pulled by the target cell: after the request pass a claimed cell's word holds the
/// winning key, whose low half is the winner's cell. Thread t then reads only its own claim word
/// and writes only cells t and the winner's cell, which no other thread touches in that pass (a
/// requester's own cell is never requested: fish request free cells, sharks fish or free ones).
/// A starving shark marks its own, never-requested cell with `dies`, so the move pass needs no
/// read of a cell that another thread may be writing.

#include <cstdint>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/sim/claim.hpp"
#include "shoal/sim/rng.hpp"
#include "wator/wator_model.hpp"

namespace wator_baseline {

using wator::breed_after;
using wator::energy_per_fish;
using wator::energy_start;

inline constexpr std::int32_t empty = 0, fish = 1, shark = 2;  // wator::cell_state::kind
/// A starving shark's mark on its own cell: above every real key (cells are < 2^31).
inline constexpr shoal::sim::claim_word dies = shoal::sim::no_claim - 1;

/// Three fields per cell in three arrays.
struct soa_cells {
  std::int32_t* kind_;
  std::int32_t* timer_;
  std::int32_t* energy_;
  SHOAL_HD std::int32_t& kind(std::uint64_t c) const { return kind_[c]; }
  SHOAL_HD std::int32_t& timer(std::uint64_t c) const { return timer_[c]; }
  SHOAL_HD std::int32_t& energy(std::uint64_t c) const { return energy_[c]; }

  /// Owner of the arrays.
  class storage {
   public:
    explicit storage(std::uint64_t cells) : kind_(cells), timer_(cells), energy_(cells) {}
    soa_cells view() { return {kind_.data(), timer_.data(), energy_.data()}; }

   private:
    shoal::arch::device_buffer<std::int32_t> kind_, timer_, energy_;
  };
};

/// The same fields as one struct per cell.
struct aos_cells {
  struct cell {
    std::int32_t kind, timer, energy;
  };
  cell* cells_;
  SHOAL_HD std::int32_t& kind(std::uint64_t c) const { return cells_[c].kind; }
  SHOAL_HD std::int32_t& timer(std::uint64_t c) const { return cells_[c].timer; }
  SHOAL_HD std::int32_t& energy(std::uint64_t c) const { return cells_[c].energy; }

  class storage {
   public:
    explicit storage(std::uint64_t cells) : cells_(cells) {}
    aos_cells view() { return {cells_.data()}; }

   private:
    shoal::arch::device_buffer<cell> cells_;
  };
};

/// The grid geometry and seed of a run, shared with the app (`cells` and `claims` of the app's
/// grid are unused here: the baseline has its own cell arrays and claim words).
struct world {
  wator::grid geometry;  // width, height, seed, neighbours()
  shoal::sim::claim_word* claims;
};

/// Requests one of the n candidates as wator::Agent::request_one_of does (same draws, same key).
SHOAL_HD inline void request_one_of(const world& w, std::uint32_t home, const std::uint32_t* candidates,
                                    std::uint32_t n, shoal::sim::random& r) {
  if (n == 0) return;
  const std::uint32_t t = candidates[n == 1 ? 0 : r.below(n)];
  const std::uint32_t p = r.next();
  shoal::sim::request(w.claims[t], shoal::sim::claim_key(p, home));
}

/// Fills the grid as wator::populate does: a fish with probability 1/4, a shark with 1/4.
template <class Cells>
void populate(const world& w, Cells cells) {
  const wator::grid g = w.geometry;
  shoal::arch::for_each_index(g.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    shoal::sim::random r(g.seed, c, 0, wator::init_stream);
    const std::uint32_t kind = r.below(4);
    const auto timer = static_cast<std::int32_t>(r.below(breed_after));
    cells.kind(c) = kind == 0 ? fish : kind == 1 ? shark : empty;
    cells.timer(c) = kind <= 1 ? timer : 0;
    cells.energy(c) = kind == 1 ? energy_start : 0;
  });
}

/// The fish phase of step `step`: request pass, then move pass.
template <class Cells>
void fish_phase(const world& w, Cells cells, std::uint32_t step) {
  const std::uint64_t n = w.geometry.size();
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const auto home = static_cast<std::uint32_t>(i);
    if (cells.kind(home) != fish) return;
    cells.timer(home) += 1;
    std::uint32_t nb[4], free[4], k = 0;
    w.geometry.neighbours(home, nb);
    for (std::uint32_t d = 0; d < 4; ++d)
      if (cells.kind(nb[d]) == empty) free[k++] = nb[d];
    shoal::sim::random r(w.geometry.seed, home, step, wator::fish_stream);
    request_one_of(w, home, free, k, r);
  });
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const shoal::sim::claim_word key = w.claims[i];
    if (key == shoal::sim::no_claim) return;
    w.claims[i] = shoal::sim::no_claim;
    const auto from = static_cast<std::uint32_t>(key);  // the winner's cell: the key's low half
    const std::int32_t timer = cells.timer(from);
    const bool breeds = timer > breed_after;
    cells.kind(i) = fish;
    cells.timer(i) = breeds ? 0 : timer;
    cells.energy(i) = 0;
    cells.kind(from) = breeds ? fish : empty;  // a ripe fish leaves a newborn behind
    cells.timer(from) = 0;
  });
}

/// The shark phase of step `step`: request pass (starving sharks mark their cell), move pass.
template <class Cells>
void shark_phase(const world& w, Cells cells, std::uint32_t step) {
  const std::uint64_t n = w.geometry.size();
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const auto home = static_cast<std::uint32_t>(i);
    if (cells.kind(home) != shark) return;
    const std::int32_t energy = cells.energy(home) - 1;
    cells.energy(home) = energy;
    cells.timer(home) += 1;
    if (energy <= 0) {
      w.claims[home] = dies;
      return;
    }
    std::uint32_t nb[4], prey[4], free[4], kf = 0, ke = 0;
    w.geometry.neighbours(home, nb);
    for (std::uint32_t d = 0; d < 4; ++d) {
      const std::int32_t k = cells.kind(nb[d]);
      if (k == empty) free[ke++] = nb[d];
      else if (k == fish) prey[kf++] = nb[d];
    }
    shoal::sim::random r(w.geometry.seed, home, step, wator::shark_stream);
    if (kf > 0) request_one_of(w, home, prey, kf, r);
    else request_one_of(w, home, free, ke, r);
  });
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const shoal::sim::claim_word key = w.claims[i];
    if (key == shoal::sim::no_claim) return;
    w.claims[i] = shoal::sim::no_claim;
    if (key == dies) {
      cells.kind(i) = empty;
      cells.timer(i) = 0;
      cells.energy(i) = 0;
      return;
    }
    const auto from = static_cast<std::uint32_t>(key);
    const std::int32_t timer = cells.timer(from);
    const std::int32_t energy = cells.energy(from) + (cells.kind(i) == fish ? energy_per_fish : 0);
    const bool breeds = timer > breed_after;
    cells.kind(i) = shark;
    cells.timer(i) = breeds ? 0 : timer;
    cells.energy(i) = energy;
    cells.kind(from) = breeds ? shark : empty;
    cells.timer(from) = 0;
    cells.energy(from) = breeds ? energy_start : 0;
  });
}

/// A whole baseline run's state: the cells (SOA or AOS) and the claim words.
template <class Cells>
class simulation {
 public:
  simulation(std::uint32_t width, std::uint32_t height, std::uint64_t seed)
      : storage_(std::uint64_t{width} * height), claims_(std::uint64_t{width} * height) {
    shoal::arch::fill_bytes(claims_.data(), 0xFF, claims_.bytes());  // no_claim everywhere
    world_.geometry = wator::grid{nullptr, nullptr, width, height, seed};
    world_.claims = claims_.data();
    cells_ = storage_.view();
    populate(world_, cells_);
  }

  /// Step `s` (1, 2, ...), enqueued.
  void step(std::uint32_t s) {
    fish_phase(world_, cells_, s);
    shark_phase(world_, cells_, s);
  }

  /// Populations and wator's state hash (waits for the device).
  struct result {
    std::uint64_t fish, sharks, state_hash;
  };
  result measure() {
    shoal::arch::device_buffer<unsigned long long> sums(3);
    sums.zero();
    unsigned long long* out = sums.data();
    const Cells cells = cells_;
    shoal::arch::for_each_index(world_.geometry.size(), [=] SHOAL_DEVICE(std::size_t c) {
      const std::int32_t kind = cells.kind(c);
      if (kind == empty) return;
      shoal::arch::fetch_add_relaxed(out[kind == fish ? 0 : 1], 1ull);
      const wator::cell_state s{kind, cells.timer(c), kind == shark ? cells.energy(c) : 0};
      shoal::arch::fetch_add_relaxed(out[2], static_cast<unsigned long long>(wator::hash_cell(c, s)));
    });
    shoal::arch::synchronize();
    const auto h = sums.download();
    return {h[0], h[1], h[2]};
  }

 private:
  typename Cells::storage storage_;
  shoal::arch::device_buffer<shoal::sim::claim_word> claims_;
  world world_{};
  Cells cells_{};
};

}  // namespace wator_baseline
