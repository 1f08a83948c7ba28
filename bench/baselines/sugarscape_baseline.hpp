#pragma once
/// @file
/// Static Sugarscape baselines for the apps benchmark (DynaSOAr's methodology): the model of
/// apps/sugarscape/sugarscape_model.hpp written the way one would without an object heap. The
/// agent lives in its grid cell: per cell a kind (0 empty, 1 male, 2 female, as
/// sugarscape::cell_state) and the agent's fields, in fixed-size arrays of width × height
/// entries; a move or a birth writes the fields into the new cell. `soa_cells` keeps each field
/// in an array of its own, `aos_cells` one struct per cell; the step code is the same template
/// for both. Every pass is a launch over the cells.
///
/// Rules, random draws (sim::random keyed by seed, cell, step, stream), constants and the claim
/// protocol are those of the app (shared through sugarscape_model.hpp: the sugar passes, the
/// choice among the cells on the axes, the initial agents, a child's traits), so a baseline run
/// reproduces the app's populations, sugar and state hash exactly (bench/baselines/tests).
///
/// Moves and births are pulled by the target cell: after the request pass a claimed cell's word
/// holds the winning key, whose low half is the winner's cell. Thread t then reads its own claim
/// word and writes cell t and the cells of the winner (and of the mother, for a birth), whose
/// threads do nothing in that pass (their words are no_claim: occupied cells are never
/// requested, and the courted female's word was taken by the winning suitor). A mover harvests
/// in a pass of its own, after the moves.

#include <cstdint>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/sim/claim.hpp"
#include "shoal/sim/rng.hpp"
#include "sugarscape/sugarscape_model.hpp"

namespace sugarscape_baseline {

using shoal::sim::claim_word;
using shoal::sim::no_claim;

inline constexpr std::int32_t empty = 0, male = 1, female = 2;  // sugarscape::cell_state::kind

/// The fields of the agent on a cell; a male's partner is the courted female's cell (its own
/// cell when none). Moves need no target field: the claim word names the winner.
enum field : int { kind, sugar, age, vision, max_age, metabolism, endowment, max_children, children, partner, fields };

/// One array per field.
struct soa_cells {
  std::int32_t* columns[fields];
  SHOAL_HD std::int32_t& at(field f, std::uint64_t c) const { return columns[f][c]; }

  /// Owner of the arrays.
  class storage {
   public:
    explicit storage(std::uint64_t cells) : data_(cells * fields), cells_(cells) { data_.zero(); }
    soa_cells view() {
      soa_cells v{};
      for (int f = 0; f < fields; ++f) v.columns[f] = data_.data() + f * cells_;
      return v;
    }

   private:
    shoal::arch::device_buffer<std::int32_t> data_;
    std::uint64_t cells_;
  };
};

/// The same fields as one struct per cell.
struct aos_cells {
  struct cell {
    std::int32_t v[fields];
  };
  cell* cells_;
  SHOAL_HD std::int32_t& at(field f, std::uint64_t c) const { return cells_[c].v[f]; }

  class storage {
   public:
    explicit storage(std::uint64_t cells) : cells_(cells) { cells_.zero(); }
    aos_cells view() { return {cells_.data()}; }

   private:
    shoal::arch::device_buffer<cell> cells_;
  };
};

/// The traits of the agent on cell c.
template <class Cells>
SHOAL_HD sugarscape::traits traits_at(const Cells& a, std::uint64_t c) {
  return {a.at(vision, c), a.at(max_age, c), a.at(metabolism, c), a.at(endowment, c)};
}

/// Writes an agent of `k` (male or female) with traits t onto cell c, as a newborn.
template <class Cells>
SHOAL_HD void place(const Cells& a, std::uint32_t c, std::int32_t k, const sugarscape::traits& t, std::int32_t most) {
  a.at(kind, c) = k, a.at(sugar, c) = t.endowment, a.at(age, c) = 0;
  a.at(vision, c) = t.vision, a.at(max_age, c) = t.max_age, a.at(metabolism, c) = t.metabolism;
  a.at(endowment, c) = t.endowment, a.at(max_children, c) = k == female ? most : 0, a.at(children, c) = 0;
  a.at(partner, c) = static_cast<std::int32_t>(c);
}

/// Copies every field of the agent on `from` to `to` and empties `from`.
template <class Cells>
SHOAL_HD void move_agent(const Cells& a, std::uint32_t from, std::uint32_t to) {
  for (int f = 0; f < fields; ++f) a.at(static_cast<field>(f), to) = a.at(static_cast<field>(f), from);
  a.at(kind, from) = empty;
}

/// The world (the app's: sugar arrays, claim words, geometry, constants; its cells pointer is
/// unused) and the agents' arrays.
template <class Cells>
struct state {
  sugarscape::world w;
  Cells a;
};

/// Fills the grid as sugarscape::populate does.
template <class Cells>
void populate(const state<Cells>& s, const sugarscape::model_flags& f) {
  const auto most = static_cast<std::int32_t>(f.max_grow_rate);
  const sugarscape::population_rules p = sugarscape::population_rules_of(f);
  shoal::arch::for_each_index(s.w.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    s.w.grow_rate[c] = sugarscape::grow_rate_of(s.w.seed, c, most);
    const sugarscape::newcomer n = sugarscape::initial_agent(s.w.seed, c, p);
    s.a.at(kind, c) = empty;
    if (n.kind != 0) place(s.a, c, n.kind, n.t, n.max_children);
  });
}

/// One step, enqueued: the passes of sugarscape::step, over the cells.
template <class Cells>
void step(const state<Cells>& s, std::uint32_t now) {
  using shoal::sim::claim_key;
  using rng = shoal::sim::random;
  const sugarscape::world w = s.w;
  const Cells a = s.a;
  const std::uint64_t n = w.size();
  // Phase 1: sugar.
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t c) { sugarscape::grow(w, c); });
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t c) { sugarscape::diffuse(w, static_cast<std::uint32_t>(c)); });
  // Phase 2: age, burn, die.
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t c) {
    if (a.at(kind, c) == empty) return;
    const std::int32_t years = a.at(age, c) + 1, left = a.at(sugar, c) - a.at(metabolism, c);
    if (years > a.at(max_age, c) || left <= 0) {
      a.at(kind, c) = empty;
      return;
    }
    a.at(age, c) = years, a.at(sugar, c) = left;
  });
  // Phase 3: request the richest free cell in sight; the requested cells pull their winners;
  // everyone harvests.
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const auto home = static_cast<std::uint32_t>(i);
    if (a.at(kind, home) == empty) return;
    rng r(w.seed, home, now, sugarscape::move_stream);
    const std::uint32_t t = sugarscape::best_on_axes(w.g, home, static_cast<std::uint32_t>(a.at(vision, home)), r,
                                                     [&](std::uint32_t c) {
                                                       return a.at(kind, c) == empty ? std::int64_t{w.sugar[c]} : std::int64_t{-1};
                                                     });
    if (t == home) return;
    w.g.request(t, claim_key(r.next(), home));
  });
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const claim_word key = w.g.claims[i];
    if (key == no_claim) return;
    w.g.claims[i] = no_claim;
    move_agent(a, static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(i));
  });
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t c) {
    if (a.at(kind, c) == empty) return;
    a.at(sugar, c) += w.sugar[c];
    w.sugar[c] = 0;
  });
  // Phase 4: mating. Ready males court the richest fertile female in sight.
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const auto home = static_cast<std::uint32_t>(i);
    if (a.at(kind, home) != male) return;
    a.at(partner, home) = static_cast<std::int32_t>(home);
    const std::int32_t mine = a.at(sugar, home);
    if (!sugarscape::ready(mine, a.at(endowment, home), a.at(age, home), w.min_mating_age)) return;
    rng r(w.seed, home, now, sugarscape::court_stream);
    const std::uint32_t f = sugarscape::best_on_axes(
        w.g, home, static_cast<std::uint32_t>(a.at(vision, home)), r, [&](std::uint32_t c) {
          const bool fertile = a.at(kind, c) == female && a.at(children, c) < a.at(max_children, c) &&
                               sugarscape::ready(a.at(sugar, c), a.at(endowment, c), a.at(age, c), w.min_mating_age);
          return fertile ? std::int64_t{a.at(sugar, c)} : std::int64_t{-1};
        });
    if (f == home) return;
    a.at(partner, home) = static_cast<std::int32_t>(f);
    w.g.request(f, sugarscape::suitor_key(mine, home));
  });
  // The suitor a female took asks for a free cell for the child.
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const auto home = static_cast<std::uint32_t>(i);
    if (a.at(kind, home) != male) return;
    const auto f = static_cast<std::uint32_t>(a.at(partner, home));
    if (f == home) return;
    if (!w.g.take(f, sugarscape::suitor_key(a.at(sugar, home), home))) return;
    rng r(w.seed, home, now, sugarscape::birth_stream);
    const std::uint32_t b = sugarscape::best_on_axes(w.g, home, static_cast<std::uint32_t>(a.at(vision, home)), r,
                                                     [&](std::uint32_t c) {
                                                       return a.at(kind, c) == empty ? std::int64_t{0} : std::int64_t{-1};
                                                     });
    if (b == home) return;
    w.g.request(b, claim_key(r.next(), home));
  });
  // The birth cells pull their winners' children.
  shoal::arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const claim_word key = w.g.claims[i];
    if (key == no_claim) return;
    w.g.claims[i] = no_claim;
    const auto b = static_cast<std::uint32_t>(i), m = static_cast<std::uint32_t>(key);
    const auto f = static_cast<std::uint32_t>(a.at(partner, m));
    const std::int32_t mine = a.at(endowment, m), hers = a.at(endowment, f);
    const sugarscape::traits t = sugarscape::child_traits(traits_at(a, m), traits_at(a, f));
    rng r(w.seed, m, now, sugarscape::child_stream);
    place(a, b, r.below(2) == 0 ? male : female, t, a.at(max_children, f));
    a.at(children, f) += 1;
    a.at(sugar, f) -= hers / 2;
    a.at(sugar, m) -= mine / 2;
  });
}

/// A whole baseline run's state: the world's arrays, the cells (SOA or AOS), the claim words.
template <class Cells>
class simulation {
 public:
  simulation(const sugarscape::model_flags& f, std::uint64_t seed)
      : storage_(f.width * f.height), sugar_(f.width * f.height), grow_rate_(f.width * f.height),
        share_(f.width * f.height), claims_(f.width * f.height) {
    sugar_.zero();
    share_.zero();
    shoal::arch::fill_bytes(claims_.data(), 0xFF, claims_.bytes());  // no_claim everywhere
    const sugarscape::cell_grid g{nullptr, claims_.data(), static_cast<std::uint32_t>(f.width),
                                  static_cast<std::uint32_t>(f.height)};
    state_.w = sugarscape::world{g, sugar_.data(), grow_rate_.data(), share_.data(), seed,
                                 static_cast<std::int32_t>(f.sugar_capacity), static_cast<std::int32_t>(f.max_diffusion),
                                 static_cast<std::int32_t>(f.min_mating_age)};
    state_.a = storage_.view();
    populate(state_, f);
  }

  /// Step `s` (1, 2, ...), enqueued.
  void step(std::uint32_t s) { sugarscape_baseline::step(state_, s); }

  /// The app's totals (sugarscape::measure): populations, sugar, state hash (waits).
  sugarscape::totals measure() {
    shoal::arch::device_buffer<unsigned long long> sums(5);
    sums.zero();
    unsigned long long* out = sums.data();
    const state<Cells> s = state_;
    shoal::arch::for_each_index(s.w.size(), [=] SHOAL_DEVICE(std::size_t c) {
      sugarscape::cell_state x{s.w.sugar[c], 0, 0, 0, 0, 0, 0, 0, 0, 0};
      shoal::arch::fetch_add_relaxed(out[2], static_cast<unsigned long long>(x.sugar));
      const std::int32_t k = s.a.at(kind, c);
      if (k == empty) return;
      x = {x.sugar, k, s.a.at(sugar, c), s.a.at(age, c), s.a.at(vision, c), s.a.at(max_age, c), s.a.at(metabolism, c),
           s.a.at(endowment, c), k == female ? s.a.at(children, c) : 0, k == female ? s.a.at(max_children, c) : 0};
      shoal::arch::fetch_add_relaxed(out[k == male ? 0 : 1], 1ull);
      shoal::arch::fetch_add_relaxed(out[3], static_cast<unsigned long long>(x.agent_sugar));
      shoal::arch::fetch_add_relaxed(out[4], static_cast<unsigned long long>(sugarscape::hash_cell(c, x)));
    });
    shoal::arch::synchronize();
    const auto h = sums.download();
    return {h[0], h[1], h[2], h[3], h[4]};
  }

 private:
  typename Cells::storage storage_;
  shoal::arch::device_buffer<std::int32_t> sugar_, grow_rate_, share_;
  shoal::arch::device_buffer<claim_word> claims_;
  state<Cells> state_{};
};

}  // namespace sugarscape_baseline
