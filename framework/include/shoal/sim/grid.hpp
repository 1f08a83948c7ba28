#pragma once
/// @file
/// shoal::sim::grid: a 2-D grid of object pointers for agents that live on cells (Wa-Tor's
/// fish and sharks, Sugarscape's agents, a Game of Life's live cells), with the neighbourhoods
/// device code walks and claim words for cells that several agents want in the same phase.
///
///   shoal::sim::device_grid<Agent> space(width, height);     // owns the device arrays
///   const shoal::sim::grid<Agent>& g = space.view();          // trivially copyable: pass it to device code
///
///   // device code, an agent on cell `home`:
///   std::uint32_t n[4];
///   g.von_neumann(home, n);                                   // up, right, down, left
///   g.for_each_moore(home, [&](std::uint32_t c) { live += g.cells[c] != nullptr; });
///   g.request(target, shoal::sim::claim_key(r.next(), home)); // request phase
///   if (g.take(target, shoal::sim::claim_key(p, home))) ...   // resolve phase: one winner
///
/// Cell c lies at x = c % width, y = c / width. On a torus (edges::torus) the edges wrap; on a
/// bounded grid (edges::bounded) a neighbour past an edge does not exist and is left out.
///
/// Claims resolve contests deterministically: every requester of a cell offers a key (a random
/// priority drawn from its own counter-based stream above its id, see claim.hpp), the lowest key
/// wins whatever order the threads ran in, and the winner learns it in a later phase with
/// take(), which also resets the cell's word for the next round. A model whose move is better
/// pulled by the target cell reads winner() instead and resets with release().

#include <cstddef>
#include <cstdint>
#include <string>

#include "shoal/arch/error.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/config.hpp"
#include "shoal/sim/claim.hpp"

namespace shoal::sim {

/// What lies past the edges of a grid.
enum class edges {
  torus,   ///< the edges wrap: every cell has 4 von Neumann and 8 Moore neighbours
  bounded  ///< nothing: cells on an edge have fewer neighbours
};

/// The index of no cell: what offset() answers past a bounded edge.
inline constexpr std::uint32_t no_cell = ~std::uint32_t{0};

/// The device view of a grid of `T*` (trivially copyable; device_grid owns the arrays). `cells[c]`
/// is the object on cell c or nullptr; `claims[c]` is c's claim word (no_claim between phases),
/// or the array is null when the grid was made without claims.
///
/// On a torus narrower or lower than 3 cells a neighbour may be the cell itself or appear twice
/// (a torus 2 wide has the same cell on the left and on the right).
template <class T, edges Edges = edges::torus>
struct grid {
  T** cells;            ///< the occupant of each cell, or nullptr
  claim_word* claims;   ///< the claim word of each cell (null: made without claims)
  std::uint32_t width;  ///< cells per row
  std::uint32_t height; ///< rows

  /// Whether the edges wrap.
  static constexpr bool torus = Edges == edges::torus;

  /// Number of cells.
  SHOAL_HD std::uint64_t size() const { return std::uint64_t{width} * height; }
  /// Column of cell c.
  SHOAL_HD std::uint32_t x_of(std::uint32_t c) const { return c % width; }
  /// Row of cell c.
  SHOAL_HD std::uint32_t y_of(std::uint32_t c) const { return c / width; }
  /// The cell in column x, row y (both inside the grid).
  SHOAL_HD std::uint32_t cell_at(std::uint32_t x, std::uint32_t y) const { return y * width + x; }

  /// The cell `dx` columns right of and `dy` rows below c: wrapped on a torus (any distance),
  /// no_cell past a bounded edge.
  SHOAL_HD std::uint32_t offset(std::uint32_t c, std::int64_t dx, std::int64_t dy) const {
    std::int64_t x = static_cast<std::int64_t>(c % width) + dx, y = static_cast<std::int64_t>(c / width) + dy;
    const auto w = static_cast<std::int64_t>(width), h = static_cast<std::int64_t>(height);
    if constexpr (torus) {
      x %= w, y %= h;
      if (x < 0) x += w;
      if (y < 0) y += h;
    } else {
      if (x < 0 || x >= w || y < 0 || y >= h) return no_cell;
    }
    return static_cast<std::uint32_t>(y * w + x);
  }

  /// The von Neumann neighbours of c (distance 1 along the axes) into n, in the order up, right,
  /// down, left; returns how many: 4 on a torus, on a bounded grid those that exist, in that
  /// order, at the front of n.
  SHOAL_HD std::uint32_t von_neumann(std::uint32_t c, std::uint32_t (&n)[4]) const {
    const std::uint32_t x = c % width, y = c / width;
    if constexpr (torus) {
      // Selects, not a modulo: this runs for every agent in every request phase.
      n[0] = (y == 0 ? height - 1 : y - 1) * width + x;
      n[1] = y * width + (x + 1 == width ? 0 : x + 1);
      n[2] = (y + 1 == height ? 0 : y + 1) * width + x;
      n[3] = y * width + (x == 0 ? width - 1 : x - 1);
      return 4;
    } else {
      std::uint32_t k = 0;
      if (y > 0) n[k++] = c - width;
      if (x + 1 < width) n[k++] = c + 1;
      if (y + 1 < height) n[k++] = c + width;
      if (x > 0) n[k++] = c - 1;
      return k;
    }
  }

  /// The Moore neighbours of c (the 8 cells around it) into n, row by row from the top left:
  /// up-left, up, up-right, left, right, down-left, down, down-right; returns how many: 8 on a
  /// torus, on a bounded grid those that exist, in that order, at the front of n.
  SHOAL_HD std::uint32_t moore(std::uint32_t c, std::uint32_t (&n)[8]) const {
    const std::uint32_t x = c % width, y = c / width;
    std::uint32_t k = 0;
    if constexpr (torus) {
      const std::uint32_t xs[3] = {x == 0 ? width - 1 : x - 1, x, x + 1 == width ? 0 : x + 1};
      const std::uint32_t rows[3] = {(y == 0 ? height - 1 : y - 1) * width, y * width,
                                     (y + 1 == height ? 0 : y + 1) * width};
      for (int r = 0; r < 3; ++r)
        for (int col = 0; col < 3; ++col)
          if (r != 1 || col != 1) n[k++] = rows[r] + xs[col];
    } else {
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (dx == 0 && dy == 0) continue;
          const std::int64_t nx = std::int64_t{x} + dx, ny = std::int64_t{y} + dy;
          if (nx >= 0 && nx < width && ny >= 0 && ny < height)
            n[k++] = static_cast<std::uint32_t>(ny * width + nx);
        }
    }
    return k;
  }

  /// Calls f(cell) for every von Neumann neighbour of c, in von_neumann()'s order.
  template <class F>
  SHOAL_HD void for_each_von_neumann(std::uint32_t c, F&& f) const {
    std::uint32_t n[4];
    const std::uint32_t k = von_neumann(c, n);
    for (std::uint32_t i = 0; i < k; ++i) f(n[i]);
  }

  /// Calls f(cell) for every Moore neighbour of c, in moore()'s order.
  template <class F>
  SHOAL_HD void for_each_moore(std::uint32_t c, F&& f) const {
    std::uint32_t n[8];
    const std::uint32_t k = moore(c, n);
    for (std::uint32_t i = 0; i < k; ++i) f(n[i]);
  }

  /// Calls f(cell, distance) for the cells up to `reach` away from c along the four axes (what
  /// a Sugarscape agent sees): distance 1 up, right, down, left, then distance 2, and so on.
  /// Past a bounded edge a direction ends. On a torus a reach of half the width or height or
  /// more sees some cells twice.
  template <class F>
  SHOAL_HD void for_each_on_axes(std::uint32_t c, std::uint32_t reach, F&& f) const {
    for (std::uint32_t d = 1; d <= reach; ++d) {
      const auto s = static_cast<std::int64_t>(d);
      const std::uint32_t around[4] = {offset(c, 0, -s), offset(c, s, 0), offset(c, 0, s), offset(c, -s, 0)};
      for (std::uint32_t a : around)
        if (a != no_cell) f(a, d);
    }
  }

  /// Request phase: offers `key` for `cell` (the lowest key offered in the phase wins; build it
  /// with claim_key(priority, requester id)). Any number of threads, any order.
  SHOAL_HD void request(std::uint32_t cell, claim_word key) const { sim::request(claims[cell], key); }
  /// Resolve phase: true for the one requester whose key won `cell`, which also resets the
  /// cell's word to no_claim. Every requester of a cell must ask (a winner that never asks
  /// leaves the word set for the next round).
  SHOAL_HD bool take(std::uint32_t cell, claim_word key) const { return sim::take(claims[cell], key); }
  /// After the request phase: the winning key of `cell` (no_claim: nobody requested it). For
  /// moves pulled by the target cell, which then calls release().
  SHOAL_HD claim_word winner(std::uint32_t cell) const { return arch::load_relaxed(claims[cell]); }
  /// Resets the claim word of `cell` to no_claim (after reading winner()).
  SHOAL_HD void release(std::uint32_t cell) const { arch::store_relaxed(claims[cell], no_claim); }
};

/// Whether device code should get claim words with a grid.
enum class grid_claims {
  with,    ///< one claim word per cell (8 bytes), all no_claim
  without  ///< no claims array (grid::claims is null)
};

/// The device arrays of a grid (RAII, movable): `width × height` cells, all empty, and their
/// claim words, all no_claim. view() is what device code takes.
template <class T, edges Edges = edges::torus>
class device_grid {
 public:
  /// Throws shoal::error for an empty grid or one of 2^32 - 1 cells or more (cell indices are
  /// 32-bit and no_cell is reserved), backend_error when the device cannot hold it.
  device_grid(std::uint32_t width, std::uint32_t height, grid_claims claims = grid_claims::with) {
    const std::uint64_t n = std::uint64_t{width} * height;
    if (width == 0 || height == 0 || n >= no_cell)
      throw error("shoal::sim::device_grid: a grid of " + std::to_string(width) + " x " + std::to_string(height) +
                  " cells: needs at least one cell and fewer than 2^32 - 1");
    cells_ = arch::device_buffer<T*>(n);
    if (claims == grid_claims::with) claims_ = arch::device_buffer<claim_word>(n);
    view_ = grid<T, Edges>{cells_.data(), claims_.data(), width, height};
    clear();
  }

  /// The view device code takes (by value).
  const grid<T, Edges>& view() const { return view_; }
  /// Number of cells.
  std::uint64_t size() const { return view_.size(); }

  /// Empties every cell (the objects are not destroyed) and resets every claim word.
  void clear() {
    cells_.zero();
    arch::fill_bytes(claims_.data(), 0xFF, claims_.bytes());  // no_claim is all ones
  }

 private:
  arch::device_buffer<T*> cells_;
  arch::device_buffer<claim_word> claims_;
  grid<T, Edges> view_{};
};

}  // namespace shoal::sim
