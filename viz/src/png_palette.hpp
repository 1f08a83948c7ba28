#pragma once
// The palette of an indexed PNG, built while the pixels are turned into indices (png_zlib.cpp).
// Simulation frames hold a few colours, so a sparse open-addressing table finds nearly every
// pixel's colour at the first probe. A 257th colour ends the attempt (the frame is then
// written as RGB or RGBA).

#include <array>
#include <cstddef>
#include <cstdint>

#include "shoal/viz/color.hpp"

namespace shoal::viz::detail {

class palette_builder {
 public:
  static constexpr std::size_t max_colours = 256;

  /// Writes row `row` (width pixels) as palette indices to out. False when it holds a colour
  /// beyond the 256th (out is then partly written; the palette is left unusable).
  bool index_row(const pixel* row, std::uint32_t width, std::uint8_t* out) {
    for (std::uint32_t x = 0; x < width; ++x) {
      const pixel p = row[x];
      // The colour's home slot answers nearly every pixel (the table is sparse, and colours
      // seen early, the common ones, took their home slots): one predictable branch per
      // pixel, where comparing with the left neighbour first mispredicts on noisy scenes.
      const std::uint16_t k = index_[home(p)];
      if (k != empty && colours_[k] == p) {
        out[x] = static_cast<std::uint8_t>(k);
        continue;
      }
      const int found = find_or_add(p);
      if (found < 0) return false;
      out[x] = static_cast<std::uint8_t>(found);
    }
    return true;
  }

  std::size_t size() const { return size_; }
  /// Colour k (k < size()), in the order first seen.
  pixel colour(std::size_t k) const { return colours_[k]; }

 private:
  // 16 slots per colour: even a full palette finds ~94% of its colours in their home slot.
  static constexpr std::uint32_t slot_bits = 12;
  static constexpr std::uint32_t slots = 1u << slot_bits;
  static constexpr std::uint16_t empty = 0xFFFF;

  // Fibonacci hashing: the top bits of the product mix all four channels.
  static std::uint32_t home(pixel p) { return (p * 0x9E3779B1u) >> (32 - slot_bits); }

  int find_or_add(pixel p) {
    std::uint32_t s = home(p);
    for (;; s = (s + 1) & (slots - 1)) {
      const std::uint16_t k = index_[s];
      if (k == empty) break;
      if (colours_[k] == p) return k;
    }
    if (size_ == max_colours) return -1;
    colours_[size_] = p;
    index_[s] = static_cast<std::uint16_t>(size_);
    return static_cast<int>(size_++);
  }

  std::array<pixel, max_colours> colours_{};
  std::array<std::uint16_t, slots> index_ = filled_index();
  std::size_t size_ = 0;

  static constexpr std::array<std::uint16_t, slots> filled_index() {
    std::array<std::uint16_t, slots> a{};
    for (auto& v : a) v = empty;
    return a;
  }
};

}  // namespace shoal::viz::detail
