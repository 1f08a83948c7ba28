#pragma once
/// @file
/// Static Game of Life baseline for the apps benchmark: Life the way one writes it without an
/// object heap, and without wasting a byte on a bit. The grid is bit-packed, 64 cells of a row in
/// a word (bit b of word k of row y is cell x = 64 k + b; the bits past the width are always 0),
/// two grids used in turn. A thread computes a whole word: it loads the word and its left and
/// right neighbours in the rows above, at and below, shifts them so that bit b holds each of the
/// 8 neighbours of cell b, and adds those 8 one-bit numbers bit-sliced (full adders on whole
/// words), so 64 cells cost a few dozen logic operations. Every word is visited every step, where
/// the app visits only live cells and the dead cells next to them.
///
/// The start (game_of_life::start: pattern bits, gliders, the seeded soup) and the state hash are
/// the app's, so a run reproduces the app's live cells bit for bit (bench/baselines/tests).

#include <cstdint>
#include <utility>
#include <vector>

#include "game_of_life/game_of_life_model.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/sim/sums.hpp"

namespace game_of_life_baseline {

/// What game_of_life::start::live_at asks of a grid: where cell c lies.
struct shape {
  std::uint32_t width;
  SHOAL_HD std::uint32_t x_of(std::uint32_t c) const { return c % width; }
  SHOAL_HD std::uint32_t y_of(std::uint32_t c) const { return c / width; }
};

/// Sum and carry of three one-bit numbers in each bit position.
SHOAL_HD inline void full_add(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t& sum, std::uint64_t& carry) {
  const std::uint64_t t = a ^ b;
  sum = t ^ c;
  carry = (a & b) | (t & c);
}

/// The next state of the 64 cells of word `mid` (the row's words left and right of it in
/// `left`/`right`, the rows above and below likewise), under B3/S23.
struct rows3 {
  std::uint64_t left[3], mid[3], right[3];  ///< [0] above, [1] the row, [2] below (0 past an edge)
};
SHOAL_HD inline std::uint64_t next_word(const rows3& r) {
  std::uint64_t west[3], east[3];
  for (int i = 0; i < 3; ++i) {
    west[i] = (r.mid[i] << 1) | (r.left[i] >> 63);   // bit b: cell b - 1
    east[i] = (r.mid[i] >> 1) | (r.right[i] << 63);  // bit b: cell b + 1
  }
  // Neighbours: 3 above, 3 below, 2 beside. count = ones + 2 × (number of twos' carries).
  std::uint64_t s_above, c_above, s_below, c_below, ones, c_ones;
  full_add(west[0], r.mid[0], east[0], s_above, c_above);
  full_add(west[2], r.mid[2], east[2], s_below, c_below);
  const std::uint64_t s_beside = west[1] ^ east[1], c_beside = west[1] & east[1];
  full_add(s_above, s_below, s_beside, ones, c_ones);
  // count is 2 or 3 exactly when one of the four carries is set.
  const std::uint64_t odd = c_ones ^ c_above ^ c_below ^ c_beside;
  const std::uint64_t two_or_more = (c_ones & (c_above | c_below | c_beside)) | (c_above & (c_below | c_beside)) |
                                    (c_below & c_beside);
  const std::uint64_t two_or_three = odd & ~two_or_more;
  return two_or_three & (ones | r.mid[1]);  // 3: born or stays; 2: stays if live
}

/// A width × height grid of bits, two used in turn.
class automaton {
 public:
  automaton(std::uint32_t width, std::uint32_t height)
      : width_(width), height_(height), row_words_((width + 63) / 64),
        now_(std::uint64_t{row_words_} * height), next_(std::uint64_t{row_words_} * height) {}

  /// The app's start, cell by cell (same pattern bits, gliders and draws as game_of_life::start).
  void populate(const game_of_life::start& s) {
    std::uint64_t* now = now_.data();
    const std::uint32_t w = width_, rw = row_words_;
    shoal::arch::for_each_index(now_.size(), [=] SHOAL_DEVICE(std::size_t i) {
      const auto y = static_cast<std::uint32_t>(i / rw), x0 = static_cast<std::uint32_t>(i % rw) * 64;
      std::uint64_t bits = 0;
      for (std::uint32_t b = 0; b < 64 && x0 + b < w; ++b)
        if (s.live_at(shape{w}, y * w + x0 + b)) bits |= std::uint64_t{1} << b;
      now[i] = bits;
    });
  }

  /// One step (enqueued, not waited for).
  void step() {
    const std::uint64_t* now = now_.data();
    std::uint64_t* next = next_.data();
    const std::uint32_t rw = row_words_, h = height_;
    // The last word of a row keeps its bits past the width at 0.
    const std::uint64_t last_mask = width_ % 64 == 0 ? ~std::uint64_t{0} : (std::uint64_t{1} << (width_ % 64)) - 1;
    shoal::arch::for_each_index(now_.size(), [=] SHOAL_DEVICE(std::size_t i) {
      const std::int64_t y = static_cast<std::int64_t>(i / rw);
      const auto k = static_cast<std::uint32_t>(i % rw);
      rows3 r{};
      for (int d = 0; d < 3; ++d) {
        const std::int64_t yy = y + d - 1;
        if (yy < 0 || yy >= static_cast<std::int64_t>(h)) continue;
        const std::uint64_t* row = now + static_cast<std::uint64_t>(yy) * rw;
        r.mid[d] = row[k];
        r.left[d] = k > 0 ? row[k - 1] : 0;
        r.right[d] = k + 1 < rw ? row[k + 1] : 0;
      }
      next[i] = next_word(r) & (k + 1 == rw ? last_mask : ~std::uint64_t{0});
    });
    std::swap(now_, next_);
  }

  /// Live cells and the state hash (generation::hash_cell of each live cell, summed; waits), in
  /// game_of_life's totals (no Candidates here).
  generation::totals measure(shoal::sim::sums& sums) const {
    sums.zero();
    const shoal::sim::sums::ref out = sums.device();
    const std::uint64_t* now = now_.data();
    const std::uint32_t w = width_, rw = row_words_;
    shoal::arch::for_each_index(now_.size(), [=] SHOAL_DEVICE(std::size_t i) {
      std::uint64_t bits = now[i];
      if (bits == 0) return;
      const std::uint64_t first = (i / rw) * w + (i % rw) * 64;
      std::uint64_t hash = 0;
      out.add(0, shoal::arch::popc(bits));
      for (; bits != 0; bits &= bits - 1)
        hash += generation::hash_cell(first + static_cast<std::uint64_t>(shoal::arch::lowest_bit(bits)), generation::live);
      out.add(3, static_cast<long long>(hash));
    });
    const auto v = sums.read();
    return {static_cast<std::uint64_t>(v[0]), 0, 0, static_cast<std::uint64_t>(v[3])};
  }

  /// Whether each cell is live, cell c = y × width + x (tests).
  std::vector<std::uint8_t> live_cells() const {
    const std::vector<std::uint64_t> words = now_.download();
    std::vector<std::uint8_t> out(std::uint64_t{width_} * height_);
    for (std::uint64_t y = 0; y < height_; ++y)
      for (std::uint64_t x = 0; x < width_; ++x)
        out[y * width_ + x] = (words[y * row_words_ + x / 64] >> (x % 64)) & 1u;
    return out;
  }

 private:
  std::uint32_t width_, height_, row_words_;
  shoal::arch::device_buffer<std::uint64_t> now_, next_;
};

}  // namespace game_of_life_baseline
