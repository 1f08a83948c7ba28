#pragma once
/// @file
/// A grid split over the ranks in bands of whole rows, each rank holding its own rows and `halo`
/// rows of each neighbour, and the halo exchange that refreshes those copies (per-cell values such
/// as Sugarscape's sugar, which a rank's agents read near its edges).
///
///   const auto b = dist::band::of(ctx, width, height, /*halo=*/1, /*torus=*/true);
///   arch::device_buffer<float> sugar(b.local_cells());   // halo rows, own rows, halo rows
///   ... update the own rows on the device ...
///   dist::fill_halo(ctx, b, sugar.data());                // the neighbours' border rows
///
/// Row y of the grid is local row y - first_row + halo; local rows [0, halo) are the copy of the
/// rows above the band, [halo + rows, rows + 2 halo) of those below. On a torus the bands wrap; on
/// a bounded grid the halo past the grid's edge is never written. The exchanges go through a
/// dist::neighbour_link (host staging or NCCL).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "shoal/arch/error.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/dist/neighbour_link.hpp"

namespace shoal::dist {

/// This rank's band of a width × height grid (see the file comment).
struct band {
  std::uint32_t width = 0;      ///< cells per row
  std::uint32_t height = 0;     ///< rows of the whole grid
  std::uint32_t halo = 0;       ///< rows copied from each neighbour
  std::uint32_t first_row = 0;  ///< the first of this rank's rows
  std::uint32_t rows = 0;       ///< this rank's rows
  int rank = 0;                 ///< this rank
  int ranks = 1;                ///< the rank count
  bool torus = true;            ///< whether the grid wraps (top and bottom bands are neighbours)

  /// The band of `ctx`'s rank: rows split as evenly as whole rows allow (rank r owns rows from
  /// height × r / ranks on). Throws shoal::error, the same on every rank, when a band would have
  /// fewer rows than the halo (or none).
  static band of(const context& ctx, std::uint32_t width, std::uint32_t height, std::uint32_t halo, bool torus) {
    band b;
    b.width = width, b.height = height, b.halo = halo, b.rank = ctx.rank(), b.ranks = ctx.size(), b.torus = torus;
    b.first_row = b.start(b.rank);
    b.rows = b.start(b.rank + 1) - b.first_row;
    const std::uint32_t fewest = height / static_cast<std::uint32_t>(b.ranks);
    if (width == 0 || fewest == 0 || fewest < halo)
      throw error("shoal::dist::band: a " + std::to_string(width) + "x" + std::to_string(height) + " grid over " +
                  std::to_string(b.ranks) + " ranks gives bands of " + std::to_string(fewest) +
                  " rows, fewer than one or than the halo of " + std::to_string(halo));
    return b;
  }

  /// The first row of rank r's band (r = ranks: the grid's height).
  SHOAL_HD std::uint32_t start(int r) const {
    return static_cast<std::uint32_t>(std::uint64_t{height} * static_cast<std::uint64_t>(r) / static_cast<std::uint64_t>(ranks));
  }
  /// The rank whose band holds row y of the grid.
  SHOAL_HD int rank_of_row(std::uint32_t y) const {
    int r = static_cast<int>(std::uint64_t{y} * static_cast<std::uint64_t>(ranks) / height);
    while (r + 1 < ranks && start(r + 1) <= y) ++r;
    while (r > 0 && start(r) > y) --r;
    return r;
  }
  /// Cells of the local array: own rows and both halos.
  std::uint64_t local_cells() const { return std::uint64_t{rows + 2 * halo} * width; }
  /// The local index of cell (x, y) of the grid, for a row of this band or of its halos.
  std::uint64_t local_cell(std::uint32_t x, std::uint32_t y) const {
    std::int64_t r = static_cast<std::int64_t>(y) - first_row + halo;
    if (torus && r < 0) r += height;
    if (torus && r >= static_cast<std::int64_t>(rows + 2 * halo)) r -= height;
    return static_cast<std::uint64_t>(r) * width + x;
  }
  /// The rank above (holding the rows before first_row), or -1 past a bounded edge.
  int above() const { return rank > 0 ? rank - 1 : torus ? ranks - 1 : -1; }
  /// The rank below (holding the rows after this band), or -1 past a bounded edge.
  int below() const { return rank + 1 < ranks ? rank + 1 : torus ? 0 : -1; }
};

/// Fills the halo rows of `cells` (a device array of b.local_cells() values, laid out as band
/// says) with the neighbours' border rows, through `link` (made with b.above() and b.below()): one
/// swap, ordered before later work on the device's stream. A collective call.
template <class T>
void fill_halo(neighbour_link& link, const band& b, T* cells) {
  static_assert(std::is_trivially_copyable_v<T>, "fill_halo copies the cells' bytes");
  const std::size_t w = b.width, h = b.halo, rows = b.rows;
  // My first rows are the lower halo of the rank above, my last rows the upper halo of the one below.
  link.swap(cells + h * w, cells, cells + rows * w, cells + (h + rows) * w, h * w * sizeof(T));
}

/// As above, through a link of its own with the default transport (made and freed each call: a
/// model that exchanges every step keeps a neighbour_link instead). Returns when the halo rows are
/// on the device.
template <class T>
void fill_halo(const context& ctx, const band& b, T* cells) {
  neighbour_link link(ctx, b.above(), b.below());
  fill_halo(link, b, cells);
  arch::synchronize();
}

}  // namespace shoal::dist
