#pragma once
/// @file
/// Columns of a class gathered on the device into contiguous arrays, one row per live object in
/// heap order (block index, then slot): what a reader outside Shoal (NumPy, PyTorch) wants, made
/// on the device with one launch per field and no list of objects.
///
///   detail::row_plan plan = rt.plan_rows<T>();   // where each block's rows start
///   detail::gather_rows<T, K>(rt.view(), plan, out);   // out: plan.rows × count elements of field K
///
/// runtime::download builds a list of object pointers on the host and copies it up first: right
/// for its objects() column, but for 10^7 objects that list alone is 80 MB each way, and reading
/// every block header to the host took longer than the data (a 2 GiB heap has a million blocks).
/// A plan is made on the device: each block's rows of T counted from its live word, and an
/// exclusive sum of the counts gives the row of each block's first object.

#include <cstdint>

#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/arch/scan.hpp"
#include "shoal/heap/heap.hpp"
#include "shoal/heap/heap_view.hpp"
#include "shoal/runtime/agent_columns.hpp"

namespace shoal::detail {

/// Where the rows of T and of its concrete subclasses are: `first[b]`, on the device, is the row
/// of block b's first object of those classes (blocks + 1 entries; the last is `rows`).
struct row_plan {
  std::size_t rows = 0;
  std::uint32_t types = 0;  ///< bit t: class t is T or a concrete subclass
  arch::device_buffer<std::uint64_t> first;
};

/// The type ids of T and of its concrete subclasses, as bits.
template <class Heap, class T>
constexpr std::uint32_t row_types() {
  std::uint32_t types = 0;
  Heap::for_each_type([&]<class U>() {
    if constexpr (!abstract_object<U> && (std::is_same_v<T, U> || std::is_base_of_v<T, U>))
      types |= std::uint32_t{1} << Heap::template type_id<U>;
  });
  return types;
}

/// The slots of block b that hold rows: its live objects, if it belongs to one of `types`.
SHOAL_HD inline std::uint64_t row_slots(const heap_view& h, std::uint64_t b, std::uint32_t types) {
  const std::uint32_t t = h.headers[b].type;
  return t < 32 && ((types >> t) & 1u) != 0 ? h.live[b] : 0;
}

/// The plan for a settled heap (heap_view::live exact: runtime::plan_rows settles the stocks and
/// waits first). `scratch` is the caller's working memory for the sum.
template <class Heap, class T>
row_plan plan_rows(const heap_view& h, arch::device_buffer<std::byte>& scratch) {
  row_plan plan;
  plan.types = row_types<Heap, T>();
  plan.first = arch::device_buffer<std::uint64_t>(h.blocks + 1);
  std::uint64_t* first = plan.first.data();
  const heap_view v = h;
  const std::uint32_t types = plan.types;
  arch::for_each_index(h.blocks + 1, [=] SHOAL_DEVICE(std::size_t b) {
    first[b] = b < v.blocks ? static_cast<std::uint64_t>(arch::popc(row_slots(v, b, types))) : 0u;
  });
  arch::exclusive_sum(first, first, h.blocks + 1, scratch);
  plan.rows = plan.first.read(h.blocks);
  return plan;
}

/// Field K of the object in `slot` of block b (whose rows are `rows`) into its row of `out`.
template <class T, std::size_t K>
SHOAL_HD SHOAL_FORCEINLINE void copy_row(const heap_view& v, const std::uint64_t* first, std::uint64_t b,
                                         std::uint32_t slot, std::uint64_t rows,
                                         typename field_at<T, K>::element* out) {
  constexpr std::size_t count = field_at<T, K>::count;
  const std::uint32_t t = v.headers[b].type;
  const std::uint64_t p = encode_pointer(v.block(b), slot, v.capacity[t], t);
  const std::uint64_t row = first[b] + static_cast<std::uint64_t>(arch::popc(rows & low_bits(slot)));
  for (std::size_t k = 0; k < count; ++k) out[row * count + k] = *field_element<T, K>(p, k);
}

/// Field K of every row of `plan` into `out` (plan.rows × count elements, row-major), on the
/// device; on the GPU one thread per slot (neighbouring threads read neighbouring slots), on the
/// cpu one per block. Enqueued: the caller waits.
template <class T, std::size_t K>
void gather_rows(const heap_view& h, const row_plan& plan, typename field_at<T, K>::element* out) {
  if (plan.rows == 0) return;
  const std::uint64_t* first = plan.first.data();
  const heap_view v = h;
  const std::uint32_t types = plan.types;
#if defined(SHOAL_BACKEND_CUDA)
  arch::for_each_index(h.blocks * 64, [=] SHOAL_DEVICE(std::size_t i) {
    const std::uint64_t rows = row_slots(v, i / 64, types);
    const auto slot = static_cast<std::uint32_t>(i % 64);
    if (((rows >> slot) & 1u) != 0) copy_row<T, K>(v, first, i / 64, slot, rows, out);
  });
#else
  arch::for_each_index(h.blocks, [=](std::size_t b) {
    const std::uint64_t rows = row_slots(v, b, types);
    for (std::uint64_t left = rows; left != 0; left &= left - 1)
      copy_row<T, K>(v, first, b, static_cast<std::uint32_t>(arch::lowest_bit(left)), rows, out);
  });
#endif
}

/// One byte per slot of every block of the heap, blocks × capacity (`out`, on the device): 1
/// where the slot holds an object of concrete type t. From heap_view::live, exact for a settled heap.
inline void mark_live_slots(const heap_view& h, std::uint32_t t, std::uint8_t* out, std::uint32_t capacity) {
  const heap_view v = h;
  arch::for_each_index(h.blocks * capacity, [=] SHOAL_DEVICE(std::size_t i) {
    const std::uint64_t b = i / capacity;
    const auto slot = static_cast<std::uint32_t>(i % capacity);
    out[i] = v.headers[b].type == t && ((v.live[b] >> slot) & 1u) != 0 ? 1 : 0;
  });
}

}  // namespace shoal::detail
