#pragma once
/// @file
/// Live objects per class, counted on the device: one thread per heap block adds the popcount
/// of its occupied slots to its class's counter. Reads only the block headers, so it costs a
/// launch over the blocks (not the objects) plus one small copy: cheap enough for every CSV row,
/// not something to do every step.
///
///   sim::census<Ocean> census(rt);
///   const auto counts = census.count();           // waits for queued work, then counts
///   std::uint64_t fish = census.of<Fish>(counts);  // a class and its subclasses

#include <bit>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/dsl/object.hpp"
#include "shoal/runtime/runtime.hpp"

namespace shoal::sim {

/// Counts the live objects of every class of a runtime's heap on the device, for CSV rows and
/// the viewer: count() waits and returns the counts by type id, count_into() adds them to
/// device words without waiting, of<T>() sums a class and its subclasses.
template <class Heap>
class census {
 public:
  /// Counts in `rt`'s heap; `rt` must outlive the census.
  explicit census(runtime<Heap>& rt) : rt_(&rt), counts_(Heap::num_types) {}

  /// Live objects of every class of the heap, indexed by type id (abstract classes: 0). Runs
  /// after the work already queued, and waits for it (errors it recorded are thrown here).
  std::vector<std::uint64_t> count() {
    counts_.zero();
    count_into(counts_.data());
    rt_->synchronize();
    const auto raw = counts_.download();
    return std::vector<std::uint64_t>(raw.begin(), raw.end());
  }

  /// Adds the live objects of each class to counts[type id] (Heap::num_types words of device
  /// memory), after the work already queued, without waiting (the viewer's populations).
  void count_into(unsigned long long* counts) {
    const detail::heap_view v = rt_->view();
    rt_->launch_async(v.blocks, [=] SHOAL_DEVICE(std::size_t b) {
      const std::uint32_t t = v.headers[b].type;
      if (t >= v.num_types) return;  // a free block
      const std::uint64_t live = v.live[b];  // not ~free_slots: stocks may hold slots in reserve
      if (live != 0) arch::fetch_add(counts[t], static_cast<unsigned long long>(arch::popc(live)));
    });
  }

  /// Objects of T and its subclasses in a count() result.
  template <class T>
  static std::uint64_t of(const std::vector<std::uint64_t>& counts) {
    std::uint64_t n = 0;
    Heap::for_each_type([&]<class U>() {
      if constexpr (std::is_same_v<T, U> || std::is_base_of_v<T, U>) n += counts[Heap::template type_id<U>];
    });
    return n;
  }

 private:
  runtime<Heap>* rt_;
  arch::device_buffer<unsigned long long> counts_;
};

}  // namespace shoal::sim
