#pragma once
/// @file
/// Work sized on the device: a launch over a count that device code wrote, with no trip to the
/// host in between. A phase that should run over a subset (cells where a newborn may appear,
/// agents that met a condition) lets device code push the subset into a device_list, then
/// launches over exactly the items pushed:
///
///   shoal::device_list<std::uint32_t> births(grid_cells);       // room for one entry per cell
///   auto b = births.view();
///   births.clear();                                             // enqueued: count = 0
///   rt.launch_async(grid_cells, [=] SHOAL_DEVICE (std::size_t c) {
///     if (wants_a_newborn(c)) b.push(static_cast<std::uint32_t>(c));
///   });
///   rt.launch_async(births, [=] SHOAL_DEVICE (std::uint32_t c) { cells[c] = new Fish(c); });
///
/// or over a bare counter, `rt.launch_async(counter.count(most), f)` with f(i) for i < *counter.
///
/// Cost on cuda: the launch cannot know the count when it is enqueued, so it is a grid-stride
/// kernel sized for the most items there can be (`max`), capped at one wave of resident blocks
/// (8 blocks of 256 threads per multiprocessor: 1,056 blocks on an H100). Every thread reads the
/// count once (an L2 hit) and runs its share; a small count pays for starting that wave,
/// where a launch sized on the host would have paid for a copy of the count to the host and a
/// wait for the stream to drain. On cpu the count is read when the launch starts and the loop
/// is the ordinary one.
///
/// The order of a list is the order the pushes happened to run in, which is not reproducible
/// across runs or backends: key random streams and claims by the item, never by its position.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/config.hpp"

namespace shoal {

/// A launch size that only the device knows: `*value` items, written by work enqueued earlier
/// on the stream. `max` is the most there can be and sizes the launch; a larger count still
/// runs every item (each thread then takes more), only slower.
struct device_count {
  const unsigned long long* value;  ///< in device memory
  std::uint64_t max;                ///< sizes the grid
};

/// One counter in device memory (RAII, movable), zero when made. Device code adds to it
/// through data() with the arch atomics (`shoal::arch::fetch_add(*c, 1ull)`); count() makes it a
/// launch size.
class device_counter {
 public:
  device_counter() : word_(1) { word_.zero(); }

  /// The word, for device code.
  unsigned long long* data() const { return word_.data(); }
  /// As a launch size: `*data()` items, at most about `max`.
  device_count count(std::uint64_t max) const { return {word_.data(), max}; }
  /// Sets the counter to 0, enqueued after the work before it (no wait).
  void clear() { arch::fill_bytes_enqueued(word_.data(), 0, sizeof(unsigned long long)); }
  /// Waits for the device and returns the counter.
  unsigned long long read() const {
    arch::synchronize();
    return word_.read(0);
  }

 private:
  arch::device_buffer<unsigned long long> word_;
};

/// The device view of a device_list (trivially copyable; pass it to device code by value).
template <class T>
struct list_view {
  T* items;                      ///< room for `capacity` items
  unsigned long long* counts;    ///< [0]: items stored, [1]: pushes refused since the last clear
  std::uint64_t capacity;        ///< the most items the list holds

  /// Appends `value`; false when the list is full (the push is then counted as refused, see
  /// device_list::refused()). Any number of threads at once. The lanes of a warp that push
  /// together take consecutive places with one atomic.
  SHOAL_DEVICE bool push(const T& value) const {
    const arch::lane_mask lanes = arch::active_lanes();
    const int rank = arch::rank_in(lanes);
    unsigned long long first = 0;
    if (rank == 0) first = arch::fetch_add_relaxed(counts[0], static_cast<unsigned long long>(arch::popc(lanes)));
    first = arch::shuffle(lanes, first, arch::lowest_bit(lanes));
    const unsigned long long at = first + static_cast<unsigned long long>(rank);
    if (at < capacity) {
      items[at] = value;
      return true;
    }
    // Full: give the place back, so that the count never stays above the capacity (every
    // refused push undoes only its own increment, so no stored item is lost or duplicated).
    arch::fetch_sub(counts[0], 1ull);
    arch::add_relaxed(counts[1], 1ull);
    return false;
  }
  /// Item i (i < the count, after the launch that pushed it has ended).
  SHOAL_HD T& operator[](std::size_t i) const { return items[i]; }
  /// The number of items, for device code that runs after the pushes ended.
  SHOAL_HD std::uint64_t size() const { return arch::load_relaxed(counts[0]); }
};

/// An append-only list in device memory (RAII, movable) of at most `capacity` items of a
/// trivially copyable T, filled by device code (list_view::push) and read by a launch over its
/// items (runtime::launch with the list) or downloaded. Empty when made; clear() empties it
/// again, enqueued on the stream.
template <class T>
class device_list {
 public:
  /// Room for `capacity` items (at least 1).
  explicit device_list(std::size_t capacity) : items_(capacity), counts_(2) {
    if (capacity == 0) throw error("shoal::device_list: a list needs room for at least one item");
    counts_.zero();
  }

  /// What device code takes (by value).
  list_view<T> view() const { return {items_.data(), counts_.data(), items_.size()}; }
  /// The most items it holds.
  std::size_t capacity() const { return items_.size(); }
  /// As a launch size: the items stored, at most capacity().
  device_count count() const { return {counts_.data(), items_.size()}; }

  /// Empties the list and resets the refused pushes, enqueued after the work before it (no wait).
  void clear() { arch::fill_bytes_enqueued(counts_.data(), 0, counts_.bytes()); }
  /// Waits for the device; the number of items stored.
  std::size_t size() const { return static_cast<std::size_t>(read_counts()[0]); }
  /// Waits for the device; the pushes refused since the last clear() because the list was full.
  std::uint64_t refused() const { return read_counts()[1]; }
  /// Waits for the device; the items stored, in list order.
  std::vector<T> download() const {
    std::vector<T> out(size());
    arch::copy_to_host(out.data(), items_.data(), out.size() * sizeof(T));
    return out;
  }

 private:
  std::vector<unsigned long long> read_counts() const {
    arch::synchronize();
    return counts_.download();
  }

  arch::device_buffer<T> items_;
  arch::device_buffer<unsigned long long> counts_;
};

}  // namespace shoal
