#pragma once
/// @file
/// Owning host object of a hierarchical bitmap in device memory (RAII, movable). Hand
/// `ref()` to device code; use the host methods between launches.

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/bitmap/bitmap_ref.hpp"

namespace shoal {

class hierarchical_bitmap {
 public:
  /// A bitmap of `bits` bits, all clear (or all set).
  explicit hierarchical_bitmap(std::uint64_t bits, bool all_set = false)
      : layout_(bitmap_layout::for_bits(bits)), words_(layout_.total_words) {
    if (bits > (std::uint64_t{1} << 36))
      throw error("hierarchical_bitmap: at most 2^36 bits, asked for " + std::to_string(bits));
    all_set ? set_all() : clear_all();
  }

  bitmap_ref ref() const { return bitmap_ref(words_.data(), layout_); }
  std::uint64_t size() const { return layout_.bits; }
  const bitmap_layout& layout() const { return layout_; }

  void clear_all() { words_.zero(); }

  /// Sets bits [0, size()) and makes every level consistent.
  void set_all() {
    words_.zero();
    const std::uint64_t n = layout_.bits;
    std::uint64_t* leaves = words_.data();
    arch::for_each_index(layout_.words[0], [=] SHOAL_DEVICE(std::size_t w) {
      const std::uint64_t first = w * 64;
      leaves[w] = (n - first >= 64) ? ~std::uint64_t{0} : ((std::uint64_t{1} << (n - first)) - 1);
    });
    rebuild_levels();
  }

  /// Replaces the leaf words (bits at or past size() must be zero) and rebuilds the levels.
  void assign_leaves(const std::vector<std::uint64_t>& leaves) {
    if (leaves.size() != layout_.words[0]) throw error("assign_leaves: wrong number of words");
    arch::copy_to_device(words_.data(), leaves.data(), leaves.size() * sizeof(std::uint64_t));
    rebuild_levels();
  }

  /// Recomputes every nested level from the level below (device side, level by level).
  void rebuild_levels() {
    for (int level = 1; level < layout_.levels; ++level) {
      const std::uint64_t* below = words_.data() + layout_.offset[level - 1];
      const std::uint64_t below_words = layout_.words[level - 1];
      std::uint64_t* here = words_.data() + layout_.offset[level];
      arch::for_each_index(layout_.words[level], [=] SHOAL_DEVICE(std::size_t w) {
        std::uint64_t v = 0;
        for (std::uint64_t b = 0; b < 64 && w * 64 + b < below_words; ++b)
          if (below[w * 64 + b] != 0) v |= std::uint64_t{1} << b;
        here[w] = v;
      });
    }
    arch::synchronize();
  }

  /// Number of set bits (a device reduction over the leaf words).
  std::uint64_t count() const {
    arch::device_buffer<unsigned long long> total(1);
    total.zero();
    unsigned long long* t = total.data();
    const std::uint64_t* leaves = words_.data();
    arch::for_each_index(layout_.words[0], [=] SHOAL_DEVICE(std::size_t w) {
      const int n = arch::popc(leaves[w]);
      if (n) arch::fetch_add_relaxed(*t, static_cast<unsigned long long>(n));
    });
    arch::synchronize();
    return total.read(0);
  }

  std::vector<std::uint64_t> leaf_words() const {
    std::vector<std::uint64_t> v(layout_.words[0]);
    arch::copy_to_host(v.data(), words_.data(), v.size() * sizeof(std::uint64_t));
    return v;
  }

  /// Empty when every nested bit equals "its child word is non-zero" and no bit past size()
  /// is set; otherwise a description of the first violation. Exact only after quiescence.
  std::string check_consistency() const {
    std::vector<std::uint64_t> all(layout_.total_words);
    arch::copy_to_host(all.data(), words_.data(), all.size() * sizeof(std::uint64_t));
    const std::uint64_t tail = layout_.bits % 64;
    if (layout_.bits == 0 ? all[0] != 0 : (tail && (all[layout_.words[0] - 1] >> tail) != 0))
      return "bits set past the end of the bitmap";
    for (int level = 1; level < layout_.levels; ++level) {
      const std::uint64_t* below = all.data() + layout_.offset[level - 1];
      const std::uint64_t* here = all.data() + layout_.offset[level];
      for (std::uint64_t w = 0; w < layout_.words[level]; ++w) {
        std::uint64_t expect = 0;
        for (std::uint64_t b = 0; b < 64 && w * 64 + b < layout_.words[level - 1]; ++b)
          if (below[w * 64 + b] != 0) expect |= std::uint64_t{1} << b;
        if (here[w] != expect)
          return "level " + std::to_string(level) + " word " + std::to_string(w) +
                 " disagrees with the level below";
      }
    }
    return {};
  }

 private:
  bitmap_layout layout_;
  arch::device_buffer<std::uint64_t> words_;
};

}  // namespace shoal
