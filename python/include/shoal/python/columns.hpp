#pragma once
/// @file
/// A class's fields as arrays for Python (shoal/python/model.hpp uses these):
///
/// - gathered columns (`m.agents(name)`, `m.agents(name, device=True)`): one row per live object
///   of the class and its subclasses, in heap order, gathered by one launch per field
///   (runtime::plan_rows, detail::gather_rows). On the cpu backend the gather writes the NumPy
///   array itself; on the GPU it writes a device array, which `device=True` hands to Python as it
///   is (DLPack, for torch.from_dlpack and cupy.from_dlpack) and the default copies once to
///   page-locked host memory that the model keeps for reuse (pinned_pool).
/// - the heap's own columns (`m.agent_view(name)`): for a concrete class, each field as an array
///   of blocks × slots (× elements) over the heap's memory itself, strided by the block size, with
///   no copy: writes through it change the objects. A slot holds an object of the class where the
///   `live` array (computed at the call, one byte per slot) says 1; the other slots (free, reserved
///   or another class's block) hold whatever is there. The arrays stay valid while the model lives;
///   their contents and `live` are those of the call's moment, until the model steps again.
///
/// A field of numbers becomes an array of that type (a trailing axis of N for an array field
/// `T[N]`), a pointer field the addresses as uint64 (0 for null), any other type its bytes (uint8).

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "shoal/shoal.hpp"

namespace shoal::python::detail {

namespace nb = nanobind;

/// How field K of T looks to Python: its cells' type and how many make a row.
template <class T, std::size_t K>
struct column_shape {
  using field = shoal::detail::field_at<T, K>;
  using element = typename field::element;
  static constexpr bool numbers = std::is_arithmetic_v<element> || std::is_pointer_v<element>;
  using cell = std::conditional_t<std::is_arithmetic_v<element>, element,
                                  std::conditional_t<std::is_pointer_v<element>, std::uint64_t, std::uint8_t>>;
  /// Cells per element: 1 for numbers and pointers, the element's bytes otherwise.
  static constexpr std::size_t per_element = numbers ? 1 : sizeof(element);
  static constexpr std::size_t per_row = field::count * per_element;
};

inline int device_type() {
#if defined(SHOAL_BACKEND_CUDA)
  return nb::device::cuda::value;
#else
  return nb::device::cpu::value;
#endif
}
inline int device_id() {
#if defined(SHOAL_BACKEND_CUDA)
  int d = 0;
  SHOAL_CUDA_CHECK(cudaGetDevice(&d));
  return d;
#else
  return 0;
#endif
}

/// An array over `data` owned by `owner`, on the host (NumPy) or on the backend's device (an
/// array that speaks DLPack).
template <class Cell>
nb::object array_of(void* data, const std::vector<std::size_t>& shape, nb::handle owner, bool on_device,
                    const std::vector<std::int64_t>& strides = {}) {
  const std::int64_t* s = strides.empty() ? nullptr : strides.data();
  if (!on_device) return nb::ndarray<nb::numpy, Cell>(data, shape.size(), shape.data(), owner, s).cast();
  return nb::ndarray<nb::array_api, Cell>(data, shape.size(), shape.data(), owner, s, nb::dtype<Cell>(), device_type(),
                                          device_id())
      .cast();
}

/// A capsule that deletes `p` (a heap-allocated T) with the Python object that holds it.
template <class T>
nb::capsule owner_of(T* p) {
  return nb::capsule(p, [](void* q) noexcept { delete static_cast<T*>(q); });
}

/// The shape of `rows` rows of a column: (rows,) or (rows, per_row).
inline std::vector<std::size_t> rows_shape(std::size_t rows, std::size_t per_row) {
  return per_row == 1 ? std::vector<std::size_t>{rows} : std::vector<std::size_t>{rows, per_row};
}

/// Page-locked host memory for the host copies of columns, kept for reuse: a copy to pageable
/// memory that was just allocated ran at 1.1 GB/s on the H200 (its pages fault in as the driver
/// fills them; PCIe gave 52.9 GB/s to pinned memory in the same run). An array's buffer comes back
/// here when Python frees the array, and serves the next read of the same size or smaller; at
/// most `keep` bytes wait here (page-locked memory is the machine's, not only ours).
class pinned_pool : public std::enable_shared_from_this<pinned_pool> {
 public:
  explicit pinned_pool(std::size_t keep = std::size_t{2} << 30) : keep_(keep) {}
  pinned_pool(const pinned_pool&) = delete;
  pinned_pool& operator=(const pinned_pool&) = delete;
  ~pinned_pool() {
    for (auto& [bytes, p] : free_) release(p);
  }

  /// A buffer of at least `bytes` that gives itself back to the pool when deleted.
  struct buffer {
    std::shared_ptr<pinned_pool> pool;
    void* data;
    std::size_t bytes;
    buffer(std::shared_ptr<pinned_pool> p, void* d, std::size_t b) : pool(std::move(p)), data(d), bytes(b) {}
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    ~buffer() { pool->give_back(data, bytes); }
  };
  buffer* take(std::size_t bytes) {
    bytes = bytes == 0 ? 1 : bytes;
    std::lock_guard<std::mutex> lock(mutex_);
    // The smallest kept buffer that holds it, unless it is more than twice as large.
    auto it = free_.lower_bound(bytes);
    if (it != free_.end() && it->first <= 2 * bytes) {
      auto* b = new buffer(shared_from_this(), it->second, it->first);
      kept_ -= it->first;
      free_.erase(it);
      return b;
    }
    void* p = nullptr;
#if defined(SHOAL_BACKEND_CUDA)
    SHOAL_CUDA_CHECK(cudaMallocHost(&p, bytes));
#else
    p = ::operator new(bytes);
#endif
    return new buffer(shared_from_this(), p, bytes);
  }

 private:
  void give_back(void* p, std::size_t bytes) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.emplace(bytes, p);
    kept_ += bytes;
    while (kept_ > keep_ && !free_.empty()) {  // the largest go first
      auto last = std::prev(free_.end());
      kept_ -= last->first;
      release(last->second);
      free_.erase(last);
    }
  }
  static void release(void* p) noexcept {
#if defined(SHOAL_BACKEND_CUDA)
    cudaFreeHost(p);
#else
    ::operator delete(p);
#endif
  }

  std::mutex mutex_;
  std::multimap<std::size_t, void*> free_;
  std::size_t kept_ = 0;
  std::size_t keep_;
};

/// What a model keeps for reading columns: the pinned buffers, and on the GPU the device array
/// that a host read gathers into before its copy (grown as needed).
struct column_memory {
  std::shared_ptr<pinned_pool> pinned = std::make_shared<pinned_pool>();
  arch::device_buffer<std::byte> gathered;
};

/// Field K of the rows of `plan` as an array owning its memory: on the device (DLPack) when
/// `on_device` and the backend is cuda, else on the host.
template <class T, std::size_t K>
nb::object gathered_column(const shoal::detail::heap_view& h, const shoal::detail::row_plan& plan, bool on_device,
                           column_memory& memory) {
  using shape = column_shape<T, K>;
  using element = typename shape::field::element;
  using cell = typename shape::cell;
  const std::size_t elements = plan.rows * shape::field::count;
  const std::size_t bytes = elements * sizeof(element);
  const std::vector<std::size_t> dims = rows_shape(plan.rows, shape::per_row);
  if (!shoal::detail::gpu_backend) {  // device memory is host memory: gather into the array itself
    auto* host = new std::unique_ptr<std::byte[]>(std::make_unique_for_overwrite<std::byte[]>(bytes == 0 ? 1 : bytes));
    nb::capsule owner = owner_of(host);
    shoal::detail::gather_rows<T, K>(h, plan, reinterpret_cast<element*>(host->get()));
    arch::synchronize();
    return array_of<cell>(host->get(), dims, owner, false);
  }
  if (on_device) {
    auto* gathered = new arch::device_buffer<element>(elements == 0 ? 1 : elements);
    nb::capsule owner = owner_of(gathered);
    shoal::detail::gather_rows<T, K>(h, plan, gathered->data());
    arch::synchronize();
    return array_of<cell>(gathered->data(), dims, owner, true);
  }
  if (memory.gathered.size() < bytes) memory.gathered = arch::device_buffer<std::byte>(bytes);
  shoal::detail::gather_rows<T, K>(h, plan, reinterpret_cast<element*>(memory.gathered.data()));
  auto* host = memory.pinned->take(bytes);
  nb::capsule owner = owner_of(host);
  arch::copy_to_host(host->data, memory.gathered.data(), bytes);  // after the gather (one stream)
  return array_of<cell>(host->data, dims, owner, false);
}

/// Every field of T's rows in `plan`, by name.
template <class T, std::size_t... K>
nb::dict gathered_columns(const shoal::detail::heap_view& h, const shoal::detail::row_plan& plan, bool on_device,
                          column_memory& memory, std::index_sequence<K...>) {
  nb::dict out;
  ((out[shoal::detail::field_name<T>(K)] = gathered_column<T, K>(h, plan, on_device, memory)), ...);
  return out;
}

/// Field K of the concrete class T (type id t) over every block of the heap, in place: blocks ×
/// capacity (× elements, × bytes), strided by the block size; `owner` keeps the heap alive.
template <class T, std::size_t K>
nb::object heap_column(const shoal::detail::heap_view& h, std::uint32_t t, nb::handle owner) {
  using shape = column_shape<T, K>;
  using element = typename shape::field::element;
  using cell = typename shape::cell;
  const std::uint32_t capacity = h.capacity[t];
  std::byte* first = h.data + shoal::detail::field_offset(shoal::detail::all_fields_t<T>{}, K, capacity);
  const auto cell_bytes = static_cast<std::int64_t>(sizeof(cell));
  const auto block = static_cast<std::int64_t>(h.block_bytes) / cell_bytes;  // a multiple: blocks are 64-byte aligned
  // Element e of slot s: (e × capacity + s) elements after the field's start.
  std::vector<std::size_t> dims{h.blocks, capacity};
  std::vector<std::int64_t> strides{block, static_cast<std::int64_t>(shape::per_element)};
  if constexpr (shape::field::count > 1) {
    dims.push_back(shape::field::count);
    strides.push_back(static_cast<std::int64_t>(capacity * shape::per_element));
  }
  if constexpr (shape::per_element > 1) {
    dims.push_back(shape::per_element);
    strides.push_back(1);
  }
  static_assert(sizeof(element) % sizeof(cell) == 0);
  return array_of<cell>(first, dims, owner, shoal::detail::gpu_backend, strides);
}

template <class T, std::size_t... K>
nb::dict heap_columns(const shoal::detail::heap_view& h, std::uint32_t t, nb::handle owner, std::index_sequence<K...>) {
  nb::dict out;
  ((out[shoal::detail::field_name<T>(K)] = heap_column<T, K>(h, t, owner)), ...);
  return out;
}

/// One byte per slot of the heap's blocks (blocks × capacity of t): 1 where an object of t is.
inline nb::object live_slots(const shoal::detail::heap_view& h, std::uint32_t t) {
  const std::uint32_t capacity = h.capacity[t];
  auto* marks = new arch::device_buffer<std::uint8_t>(h.blocks * capacity);
  nb::capsule owner = owner_of(marks);
  shoal::detail::mark_live_slots(h, t, marks->data(), capacity);
  arch::synchronize();
  return array_of<std::uint8_t>(marks->data(), {h.blocks, capacity}, owner, shoal::detail::gpu_backend);
}

}  // namespace shoal::python::detail
