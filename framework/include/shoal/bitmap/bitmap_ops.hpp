#pragma once
/// @file
/// Bulk operations on a bitmap between launches (host calls, device work): fill, rebuild the
/// nested levels, count, and check consistency. Used by hierarchical_bitmap and the heap.

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/bitmap/bitmap_ref.hpp"

namespace shoal::detail {

/// Recomputes every nested level from the level below (device side, level by level).
inline void rebuild_levels(bitmap_ref bm) {
  const bitmap_layout& layout = bm.layout();
  for (int level = 1; level < layout.levels; ++level) {
    const std::uint64_t* below = bm.level_words(level - 1);
    const std::uint64_t below_words = layout.words[level - 1];
    std::uint64_t* here = bm.level_words(level);
    arch::for_each_index(layout.words[level], [=] SHOAL_DEVICE(std::size_t w) {
      std::uint64_t v = 0;
      for (std::uint64_t b = 0; b < 64 && w * 64 + b < below_words; ++b)
        if (below[w * 64 + b] != 0) v |= std::uint64_t{1} << b;
      here[w] = v;
    });
  }
  arch::synchronize();
}

/// Sets bits [0, size()) (or clears all) and makes every level consistent.
inline void fill(bitmap_ref bm, bool value) {
  const bitmap_layout& layout = bm.layout();
  arch::fill_bytes(bm.level_words(0), 0, layout.total_words * sizeof(std::uint64_t));
  if (value) {
    const std::uint64_t n = layout.bits;
    std::uint64_t* leaves = bm.level_words(0);
    arch::for_each_index(layout.words[0], [=] SHOAL_DEVICE(std::size_t w) {
      const std::uint64_t first = w * 64;
      leaves[w] = (n - first >= 64) ? ~std::uint64_t{0} : ((std::uint64_t{1} << (n - first)) - 1);
    });
    rebuild_levels(bm);
  }
  arch::synchronize();
}

/// Number of set bits (a device reduction over the leaf words).
inline std::uint64_t count(bitmap_ref bm) {
  arch::device_buffer<unsigned long long> total(1);
  total.zero();
  unsigned long long* t = total.data();
  const std::uint64_t* leaves = bm.level_words(0);
  arch::for_each_index(bm.layout().words[0], [=] SHOAL_DEVICE(std::size_t w) {
    const int n = arch::popc(leaves[w]);
    if (n) arch::add_relaxed(*t, static_cast<unsigned long long>(n));
  });
  arch::synchronize();
  return total.read(0);
}

/// All words of a bitmap, copied to the host.
inline std::vector<std::uint64_t> download(bitmap_ref bm) {
  std::vector<std::uint64_t> all(bm.layout().total_words);
  arch::copy_to_host(all.data(), bm.level_words(0), all.size() * sizeof(std::uint64_t));
  return all;
}

/// Empty when every nested bit equals "its child word is non-zero" and no bit past the end is
/// set; otherwise the first violation. `all` holds every level (see download()).
inline std::string check_consistency(const std::vector<std::uint64_t>& all, const bitmap_layout& layout) {
  const std::uint64_t tail = layout.bits % 64;
  if (layout.bits == 0 ? all[0] != 0 : (tail && (all[layout.words[0] - 1] >> tail) != 0))
    return "bits set past the end of the bitmap";
  for (int level = 1; level < layout.levels; ++level) {
    const std::uint64_t* below = all.data() + layout.offset[level - 1];
    const std::uint64_t* here = all.data() + layout.offset[level];
    for (std::uint64_t w = 0; w < layout.words[level]; ++w) {
      std::uint64_t expect = 0;
      for (std::uint64_t b = 0; b < 64 && w * 64 + b < layout.words[level - 1]; ++b)
        if (below[w * 64 + b] != 0) expect |= std::uint64_t{1} << b;
      if (here[w] != expect)
        return "level " + std::to_string(level) + " word " + std::to_string(w) +
               " disagrees with the level below";
    }
  }
  return {};
}

}  // namespace shoal::detail
