#pragma once
/// @file
/// Bitmaps in a known random state for benchmarks: filled on the device from a hash (so that
/// sizes of 2^30 bits cost no host-side generation or transfer), and a snapshot that puts
/// every word back between benchmark iterations with one device-to-device copy.

#include <cstdint>

#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/bitmap/hierarchical_bitmap.hpp"

namespace shoal::bench {

/// splitmix64's finalizer: a well-mixed 64-bit value per (index, seed).
SHOAL_HD inline std::uint64_t mix_hash(std::uint64_t index, std::uint64_t seed) {
  std::uint64_t z = index * 0x9E3779B97F4A7C15ull + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Bit i is set iff mix_hash(i, seed) < fraction * 2^64: every bit independently with
/// probability `fraction` (in [0, 1)), reproducibly for a given seed. Rebuilds the levels.
inline void fill_at_random(hierarchical_bitmap& bm, double fraction, std::uint64_t seed) {
  const auto threshold = static_cast<std::uint64_t>(fraction * 18446744073709551616.0);
  const std::uint64_t bits = bm.size();
  std::uint64_t* leaves = bm.ref().level_words(0);
  arch::for_each_index(bm.layout().words[0], [=] SHOAL_DEVICE(std::size_t w) {
    std::uint64_t word = 0;
    for (int b = 0; b < 64; ++b) {
      const std::uint64_t i = w * 64 + b;
      if (i < bits && mix_hash(i, seed) < threshold) word |= std::uint64_t{1} << b;
    }
    leaves[w] = word;
  });
  bm.rebuild_levels();
}

/// Every word of a bitmap, all levels included. Relies on the layout documented in
/// bitmap_ref.hpp: the levels are one array of layout().total_words words that starts at
/// level_words(0).
class bitmap_snapshot {
 public:
  explicit bitmap_snapshot(const hierarchical_bitmap& bm) : words_(bm.layout().total_words) {
    arch::copy_on_device(words_.data(), bm.ref().level_words(0), words_.bytes());
  }
  /// Puts the words back into `bm`, which must have the layout the snapshot was taken of.
  /// Ordered before later work on the default stream.
  void restore(hierarchical_bitmap& bm) const {
    if (bm.layout().total_words != words_.size())
      throw error("bitmap_snapshot::restore: the bitmap has another layout");
    arch::copy_on_device(bm.ref().level_words(0), words_.data(), words_.bytes());
  }

 private:
  arch::device_buffer<std::uint64_t> words_;
};

}  // namespace shoal::bench
