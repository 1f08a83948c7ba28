#pragma once
/// @file
/// DynaSOAr's Game of Life on Shoal, in both of its variants. The model is the generation model's
/// (apps/generation/generation_model.hpp: its Alive and Candidate objects, its six do-alls, its
/// state hash) with Conway's rule, S23/B3/C2 in its terms; what is here is the variants, the
/// starts and the flags.
///
/// Rules (Conway's Life on a bounded grid, as DynaSOAr's). A live cell with 2 or 3 live
/// neighbours (of the 8 around it) stays live, any other dies; a dead cell with exactly 3 is born.
/// The grid does not wrap: past an edge every cell is dead.
///
/// Variants (--variant), both with DynaSOAr's objects: an `Alive` on every live cell, created when
/// the cell is born and deleted when it dies, and a `Candidate` on every dead cell next to a live
/// one (only those can be born), created around each newborn and deleted when nothing around it
/// lives. Which cells hold objects, and the results, are the same in both; they differ in where
/// a cell finds its object:
///  - `cells` (DynaSOAr's `dynasoar`): every grid cell is a `Cell` object on the heap, made at the
///    start, and the Cell holds the pointer to the cell's agent; the grid holds the Cells. Every
///    neighbour read is two dependent loads, and the heap holds width × height Cells besides.
///  - `no-cell` (DynaSOAr's `no_cell`): the grid is a plain array of agent pointers.
///
/// Starts: DynaSOAr's datasets (--pattern FILE, a P2 or P5 PGM whose black pixels, value 0, are the
/// live cells; the grid is the image's size), or gliders (--gliders N, all heading down and to the
/// right, each in a tile of its own) with a random soup (--density, each cell live with that
/// chance, drawn from sim::random keyed by (seed, cell)). The steps draw nothing, so a run is the
/// same on every run, thread count and backend (see generation_model.hpp's determinism note).

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "generation/generation_model.hpp"
#include "shoal/io/pgm.hpp"

namespace game_of_life {

using generation::Board;
using generation::Cell;

/// Conway's Life as a Generations rule: S23/B3 without dying states.
inline constexpr generation::rule life{0b1100, 0b1000, 2};

/// Where a cell finds its object (see the file comment). The numbers are the flag's saved form.
enum class variant : std::uint32_t { cells = 0, no_cell = 1 };
inline const char* variant_name(variant v) { return v == variant::cells ? "cells" : "no-cell"; }

/// The largest grid: cell indices and counts stay in 32 bits with room to spare.
inline constexpr std::uint64_t max_cells = std::uint64_t{1} << 31;

/// The model's flags (the app's command line), also saved in checkpoints. `pattern` is only read
/// by a fresh run (a resumed one continues the checkpoint's grid); it is not adopted on --resume.
struct model_flags {
  std::uint64_t width = 2500, height = 2500;
  std::uint64_t variant = 0;  ///< a game_of_life::variant
  double density = 0.3;       ///< chance that a cell of the soup starts live
  std::uint64_t gliders = 0;  ///< gliders at the start, besides the soup
  char pattern[1024] = {};    ///< the --pattern file ("": none), NUL-terminated
};

/// The generation model's flags that describe the same grid (its checkpoint checks read them).
inline generation::model_flags generation_flags(const model_flags& f) {
  generation::model_flags g;
  g.width = f.width, g.height = f.height;
  g.survive = generation::counts_digits(life.survive);
  g.birth = generation::counts_digits(life.birth);
  g.states = life.states;
  g.density = f.density, g.burst_length = 0;
  return g;
}

/// N gliders laid out row by row in a lattice of equal tiles, each glider in the top left of its
/// tile: columns = ceil(sqrt(N)), rows = ceil(N / columns), the tiles the grid divided by those
/// (what is left at the right and bottom stays empty). A tile needs 5 × 5 cells: a glider's
/// 3 × 3 box with an empty line on every side, so that no two touch at the start.
struct gliders {
  std::uint64_t count = 0;
  std::uint32_t columns = 0, tile_width = 0, tile_height = 0;

  gliders() = default;
  gliders(std::uint64_t n, std::uint64_t width, std::uint64_t height) : count(n) {
    if (n == 0) return;
    std::uint64_t c = 1;
    while (c * c < n) ++c;
    const std::uint64_t rows = (n + c - 1) / c;
    columns = static_cast<std::uint32_t>(c);
    tile_width = static_cast<std::uint32_t>(width / c), tile_height = static_cast<std::uint32_t>(height / rows);
  }
  bool fit() const { return count == 0 || (tile_width >= 5 && tile_height >= 5); }

  /// Whether cell (x, y) is a cell of a glider: offsets (1, 0), (2, 1), (0, 2), (1, 2), (2, 2)
  /// of its box, which starts one cell into the tile.
  SHOAL_HD bool holds(std::uint32_t x, std::uint32_t y) const {
    if (count == 0) return false;
    const std::uint64_t tx = x / tile_width, ty = y / tile_height;
    if (tx >= columns || ty * columns + tx >= count) return false;
    const std::int64_t dx = static_cast<std::int64_t>(x - tx * tile_width) - 1,
                       dy = static_cast<std::int64_t>(y - ty * tile_height) - 1;
    if (dx < 0 || dx > 2 || dy < 0 || dy > 2) return false;
    return dy == 2 || (dy == 0 && dx == 1) || (dy == 1 && dx == 2);
  }
};

/// A pattern's live cells, one bit per cell (bit c % 64 of word c / 64), and their number.
struct pattern_bits {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint64_t> words;
  std::uint64_t live = 0;
};

/// Reads a PGM file as a start (black pixels, value 0, are live). Throws io::pgm_error, one line
/// naming the file, for anything but a readable image of at most max_cells pixels.
inline pattern_bits read_pattern(const std::string& path) {
  const shoal::io::pgm_image img = shoal::io::read_pgm(path, max_cells);
  pattern_bits p;
  p.width = img.width, p.height = img.height;
  p.words.assign((img.pixels.size() + 63) / 64, 0);
  for (std::uint64_t c : shoal::io::pixels_equal_to(img, 0)) {
    p.words[c / 64] |= std::uint64_t{1} << (c % 64);
    ++p.live;
  }
  return p;
}

/// How a run starts, as device code asks it (populate's live_at): the pattern's bits (nullptr:
/// none), the gliders and the soup.
struct start {
  const std::uint64_t* pattern;
  gliders glide;
  shoal::sim::probability density;
  std::uint64_t seed;

  template <class W>
  SHOAL_HD bool live_at(const W& w, std::uint32_t c) const {
    if (pattern != nullptr && ((pattern[c / 64] >> (c % 64)) & 1u) != 0) return true;
    if (glide.holds(w.x_of(c), w.y_of(c))) return true;
    return density.threshold() != 0 &&
           shoal::sim::random(seed, c, 0, generation::init_stream).chance(density);
  }
};

/// The start of the flags on the host: the pattern read again (the command line read it once to
/// check it) and put on the device in `bits`, which must outlive the populate.
inline start start_of(const model_flags& f, std::uint64_t seed, shoal::arch::device_buffer<std::uint64_t>& bits) {
  start s{nullptr, gliders(f.gliders, f.width, f.height), shoal::sim::probability(f.density), seed};
  if (f.pattern[0] != '\0') {
    const pattern_bits p = read_pattern(f.pattern);
    bits = shoal::arch::device_buffer<std::uint64_t>(p.words.size());
    bits.upload(p.words);
    s.pattern = bits.data();
  }
  return s;
}

/// Heap a grid of `cells` needs if every cell held an Alive (the larger agent), with room for
/// blocks that are only partly full (1.5 ×), and in the `cells` variant a Cell on every cell.
inline std::uint64_t heap_bytes_needed(std::uint64_t cells, variant v) {
  using rt = shoal::runtime<Board>;
  const std::uint64_t agents = rt::bytes_for<generation::Alive>(cells);
  return (v == variant::cells ? agents + rt::bytes_for<Cell>(cells) : agents) * 3 / 2;
}

}  // namespace game_of_life
