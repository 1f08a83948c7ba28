#pragma once
/// @file
/// Owning host object of a hierarchical bitmap in device memory (RAII, movable). Hand
/// `ref()` to device code; use the host methods between launches.

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/bitmap/bitmap_ops.hpp"
#include "shoal/bitmap/bitmap_ref.hpp"

namespace shoal {

/// Owner of a hierarchical bitmap's words in device memory (layout: see bitmap_ref.hpp).
class hierarchical_bitmap {
 public:
  /// A bitmap of `bits` bits, all clear (or all set).
  explicit hierarchical_bitmap(std::uint64_t bits, bool all_set = false)
      : layout_(checked_layout(bits)), words_(layout_.total_words) {
    all_set ? set_all() : clear_all();
  }

  /// Device view of the bitmap, to pass to kernels by value.
  bitmap_ref ref() const { return bitmap_ref(words_.data(), layout_); }
  /// Number of bits.
  std::uint64_t size() const { return layout_.bits; }
  /// Sizes and offsets of the levels.
  const bitmap_layout& layout() const { return layout_; }

  /// Clears every bit at every level.
  void clear_all() { detail::fill(ref(), false); }
  /// Sets bits [0, size()) and makes every level consistent.
  void set_all() { detail::fill(ref(), true); }

  /// Replaces the leaf words (bits at or past size() must be zero) and rebuilds the levels.
  void assign_leaves(const std::vector<std::uint64_t>& leaves) {
    if (leaves.size() != layout_.words[0]) throw error("assign_leaves: wrong number of words");
    arch::copy_to_device(words_.data(), leaves.data(), leaves.size() * sizeof(std::uint64_t));
    detail::rebuild_levels(ref());
  }
  /// Recomputes every nested level from the level below.
  void rebuild_levels() { detail::rebuild_levels(ref()); }
  /// Number of set bits.
  std::uint64_t count() const { return detail::count(ref()); }

  /// A host copy of the leaf words (level 0).
  std::vector<std::uint64_t> leaf_words() const {
    std::vector<std::uint64_t> v(layout_.words[0]);
    arch::copy_to_host(v.data(), words_.data(), v.size() * sizeof(std::uint64_t));
    return v;
  }

  /// Empty when the nested levels agree with the leaves; otherwise the first violation.
  /// Exact only after quiescence.
  std::string check_consistency() const {
    return detail::check_consistency(detail::download(ref()), layout_);
  }

 private:
  static bitmap_layout checked_layout(std::uint64_t bits) {
    if (bits > (std::uint64_t{1} << 36))
      throw error("hierarchical_bitmap: at most 2^36 bits, asked for " + std::to_string(bits));
    return bitmap_layout::for_bits(bits);
  }

  bitmap_layout layout_;
  arch::device_buffer<std::uint64_t> words_;
};

}  // namespace shoal
