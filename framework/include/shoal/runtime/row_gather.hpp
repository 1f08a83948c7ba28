#pragma once
/// @file
/// Columns of a class gathered on the device into contiguous arrays, one row per live object in
/// heap order (block index, then slot): what a reader outside Shoal (NumPy, PyTorch) wants, made
/// with one launch per field and no list of objects.
///
///   const detail::row_plan plan = detail::plan_rows<Heap, T>(h, rt.download_headers());
///   detail::gather_rows<T, K>(h, plan, out);   // out: plan.rows × count elements of field K
///
/// runtime::download builds a list of object pointers on the host and copies it up first: right
/// for its objects() column, but for 10^7 objects that list alone is 80 MB each way. A plan is a
/// record per block that holds rows (its live slots and its first row), so the rows of a block are
/// found by one population count.

#include <cstdint>
#include <vector>

#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/heap/heap.hpp"
#include "shoal/heap/heap_view.hpp"
#include "shoal/runtime/agent_columns.hpp"

namespace shoal::detail {

/// A block that holds rows: its index, its live slots and the row of its lowest one.
struct row_block {
  std::uint64_t block;
  std::uint64_t live;
  std::uint64_t first;
};

/// Where the rows of T and of its concrete subclasses are, on the device.
struct row_plan {
  std::size_t rows = 0;
  std::size_t blocks = 0;
  arch::device_buffer<row_block> entries;
};

/// The plan from the block headers of a quiescent heap (runtime::download_headers settles the
/// stocks first, so that a block's free-slot word is exact: its live slots are the others).
template <class Heap, class T>
row_plan plan_rows(const heap_view& h, const std::vector<block_header>& headers) {
  std::uint32_t types = 0;
  Heap::for_each_type([&]<class U>() {
    if constexpr (!abstract_object<U> && (std::is_same_v<T, U> || std::is_base_of_v<T, U>))
      types |= std::uint32_t{1} << Heap::template type_id<U>;
  });
  std::vector<row_block> entries;
  std::uint64_t rows = 0;
  for (std::uint64_t b = 0; b < headers.size(); ++b) {
    const std::uint32_t t = headers[b].type;
    if (t >= Heap::num_types || ((types >> t) & 1u) == 0) continue;
    const std::uint64_t live = ~headers[b].free_slots & h.full_mask(t);
    if (live == 0) continue;
    entries.push_back({b, live, rows});
    rows += static_cast<std::uint64_t>(arch::popc(live));
  }
  row_plan plan;
  plan.rows = rows;
  plan.blocks = entries.size();
  if (!entries.empty()) {
    plan.entries = arch::device_buffer<row_block>(entries.size());
    plan.entries.upload(entries);
  }
  return plan;
}

/// Field K of every row of `plan` into `out` (plan.rows × count elements, row-major), on the
/// device; one thread per slot of a listed block. Enqueued: the caller waits.
template <class T, std::size_t K>
void gather_rows(const heap_view& h, const row_plan& plan, typename field_at<T, K>::element* out) {
  if (plan.blocks == 0) return;
  constexpr std::size_t count = field_at<T, K>::count;
  const row_block* entries = plan.entries.data();
  const heap_view v = h;
  arch::for_each_index(plan.blocks * 64, [=] SHOAL_DEVICE(std::size_t i) {
    const row_block e = entries[i / 64];
    const auto slot = static_cast<std::uint32_t>(i % 64);
    if (((e.live >> slot) & 1u) == 0) return;
    const std::uint32_t t = v.headers[e.block].type;
    const std::uint64_t p = encode_pointer(v.block(e.block), slot, v.capacity[t], t);
    const std::uint64_t row = e.first + static_cast<std::uint64_t>(arch::popc(e.live & low_bits(slot)));
    for (std::size_t k = 0; k < count; ++k) out[row * count + k] = *field_element<T, K>(p, k);
  });
}

/// One byte per slot of every block of the heap, blocks × 64 (`out`, on the device): 1 where the
/// slot holds an object of concrete type t. From heap_view::live, exact for a settled heap.
inline void mark_live_slots(const heap_view& h, std::uint32_t t, std::uint8_t* out, std::uint32_t capacity) {
  const heap_view v = h;
  arch::for_each_index(h.blocks * capacity, [=] SHOAL_DEVICE(std::size_t i) {
    const std::uint64_t b = i / capacity;
    const auto slot = static_cast<std::uint32_t>(i % capacity);
    out[i] = v.headers[b].type == t && ((v.live[b] >> slot) & 1u) != 0 ? 1 : 0;
  });
}

}  // namespace shoal::detail
