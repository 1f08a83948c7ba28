#pragma once
/// @file
/// Tiled all-pairs interaction over the objects of one class (n-body's force loop).
///
/// One thread per object walking the heap for every other object (`device_do`) reads each
/// partner through pointer decoding and scattered loads. Here the partners' data is first
/// gathered into a dense array in object order (block index, then slot), then every object
/// sweeps that array in tiles staged in shared memory, so the inner loop is arithmetic on
/// shared-memory values. When there are too few objects to fill the GPU, the partner range is
/// cut into slices computed by different threads and combined afterwards in slice order.
///
/// An interaction `Op` (trivially copyable; its data members are its parameters) provides:
///
///     using value = ...;        // what one object shows the others (trivially copyable)
///     using accumulator = ...;  // what one object sums over the others (value-initialised)
///     SHOAL_HD value project(T* self) const;
///     SHOAL_HD void interact(const value& self, const value& other, accumulator& acc) const;
///     SHOAL_HD void combine(accumulator& acc, const accumulator& part) const;  // optional
///     SHOAL_HD void apply(T* self, const accumulator& acc) const;
///
/// interact() is called once for every ordered pair of distinct live objects, apply() once per
/// object after all its interactions (so apply() may write fields that project() reads). The
/// callbacks must not create or destroy objects. Partners are summed in object order, so a run
/// is reproducible on one backend; the backends may differ in the last bits (different
/// association of the sums when the range is sliced, and fused multiply-adds on the GPU).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "shoal/arch/launch.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/bitmap/ordered_list.hpp"
#include "shoal/heap/heap_view.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <cub/block/block_scan.cuh>
#endif

namespace shoal {

template <class Op>
concept combinable_interaction = requires(const Op& op, typename Op::accumulator& a) {
  op.combine(a, a);
};

namespace detail {

/// Totals of an ordered block listing: its length and the objects in the listed blocks.
struct listing_totals {
  unsigned long long blocks;
  unsigned long long objects;
};

#if defined(SHOAL_BACKEND_CUDA)

inline constexpr int listing_threads = 1024;

/// One block of threads: the first dense object index of every listed block (an exclusive
/// prefix sum of their live objects, in list order) and the number of objects.
template <int Threads>  // a template, so that the header may be included by many translation units
__global__ void __launch_bounds__(Threads)
    first_objects_kernel(const std::uint32_t* list, const std::uint64_t* live_slots, std::uint32_t* first_object,
                         listing_totals* totals) {
  using scan = cub::BlockScan<unsigned long long, Threads>;
  __shared__ typename scan::TempStorage temp;
  __shared__ unsigned long long carry;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  const unsigned long long blocks = totals->blocks;
  for (unsigned long long base = 0; base < blocks; base += Threads) {
    const unsigned long long k = base + threadIdx.x;
    const unsigned long long live =
        k < blocks ? static_cast<unsigned long long>(arch::popc(live_slots[list[k]])) : 0;
    unsigned long long at = 0, total = 0;
    scan(temp).ExclusiveSum(live, at, total);
    if (k < blocks) first_object[k] = static_cast<std::uint32_t>(carry + at);
    __syncthreads();  // every thread has read carry
    if (threadIdx.x == 0) carry += total;
    __syncthreads();
  }
  if (threadIdx.x == 0) totals->objects = carry;
}

#endif  // SHOAL_BACKEND_CUDA

/// The blocks of type t in increasing order, the first dense object index of each (from
/// heap_view::live), and the totals. Enqueued; does not wait.
inline void list_blocks_in_order(const heap_view& h, std::uint32_t t, std::uint32_t* list,
                                 std::uint32_t* first_object, listing_totals* totals) {
  list_set_bits(h.allocated(t).level_words(0), h.layout.words[0], list, ~0ull, &totals->blocks);
#if defined(SHOAL_BACKEND_CUDA)
  first_objects_kernel<listing_threads><<<1, listing_threads>>>(list, h.live, first_object, totals);
  SHOAL_CUDA_CHECK(cudaGetLastError());
#else
  unsigned long long objects = 0;
  for (unsigned long long k = 0; k < totals->blocks; ++k) {
    first_object[k] = static_cast<std::uint32_t>(objects);
    objects += arch::popc(h.live[list[k]]);
  }
  totals->objects = objects;
#endif
}

#if defined(SHOAL_BACKEND_CUDA)

inline constexpr int pair_tile = 128;

/// Block (x, s): objects [x·tile, x·tile + tile) against partner slice s. Object i's own value
/// is partner self_begin + i, the one pair it skips: only the tiles that hold it test for it.
template <class T, class Op>
__global__ void __launch_bounds__(pair_tile)
    all_pairs_kernel(Op op, const typename Op::value* partners, std::uint64_t count, std::uint64_t self_begin,
                     std::uint64_t n, std::uint64_t slice_length, typename Op::accumulator* partial,
                     T* const* objects, const void* context) {
  using value = typename Op::value;
  using accumulator = typename Op::accumulator;
  __shared__ alignas(value) unsigned char raw[pair_tile * sizeof(value)];
  value* tile = reinterpret_cast<value*>(raw);
  if (threadIdx.x == 0) arch::detail::launch_context_ptr = context;
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * pair_tile + threadIdx.x;
  const bool active = i < n;
  const std::uint64_t me = self_begin + i;
  const value self = active ? partners[me] : value{};
  accumulator acc{};
  const std::uint64_t begin = static_cast<std::uint64_t>(blockIdx.y) * slice_length;
  const std::uint64_t end = begin + slice_length < count ? begin + slice_length : count;
  for (std::uint64_t base = begin; base < end; base += pair_tile) {
    __syncthreads();
    if (base + threadIdx.x < end) new (&tile[threadIdx.x]) value(partners[base + threadIdx.x]);
    __syncthreads();
    if (!active) continue;
    const int m = static_cast<int>(end - base < pair_tile ? end - base : pair_tile);
    if (me - base < static_cast<std::uint64_t>(m)) {
      const int own = static_cast<int>(me - base);
      for (int k = 0; k < m; ++k)
        if (k != own) op.interact(self, tile[k], acc);
    } else if (m == pair_tile) {
#pragma unroll 16
      for (int k = 0; k < pair_tile; ++k) op.interact(self, tile[k], acc);
    } else {
      for (int k = 0; k < m; ++k) op.interact(self, tile[k], acc);
    }
  }
  if (!active) return;
  if (gridDim.y == 1) op.apply(objects[i], acc);
  else partial[static_cast<std::uint64_t>(blockIdx.y) * n + i] = acc;
}

#endif  // SHOAL_BACKEND_CUDA

/// Device memory an all-pairs interaction reuses from call to call (grown on demand).
struct all_pairs_scratch {
  arch::device_buffer<std::uint32_t> first_object;  // per listed block
  arch::device_buffer<listing_totals> totals{1};
  arch::device_buffer<std::byte> bytes;    // values, object pointers
  arch::device_buffer<std::byte> partial;  // partial accumulators of the slices

  std::byte* reserve(std::size_t n) {
    if (bytes.size() < n) bytes = arch::device_buffer<std::byte>(n + n / 4);
    return bytes.data();
  }
};

inline std::size_t round_up_256(std::size_t n) { return (n + 255) / 256 * 256; }

/// The values every object interacts with (device memory): `count` of them, the caller's own
/// objects' at [self_begin, self_begin + its object count).
template <class Value>
struct partner_values {
  const Value* values;
  std::uint64_t count;
  std::uint64_t self_begin;
};

/// all_pairs' partners when they are the objects themselves.
struct own_partners {
  template <class Value>
  partner_values<Value> operator()(Value* values, std::uint64_t n) const {
    return {values, n, 0};
  }
};

/// all_pairs' first part: lists T's blocks in order and gathers what each object shows the others
/// (`values`) and the objects (`objects`), in object order, into scratch; returns their number.
/// Waits once, for that number.
template <class T, std::uint32_t Capacity, class Op>
std::uint64_t gather_pair_values(const heap_view& h, const heap_view* device_view, std::uint32_t type, std::uint32_t* list,
                                 all_pairs_scratch& scratch, const Op& op, typename Op::value*& values, T**& objects) {
  using value = typename Op::value;
  if (scratch.first_object.size() < h.blocks) scratch.first_object = arch::device_buffer<std::uint32_t>(h.blocks);
  std::uint32_t* first = scratch.first_object.data();
  list_blocks_in_order(h, type, list, first, scratch.totals.data());
  const listing_totals totals = scratch.totals.read(0);
  const std::uint64_t n = totals.objects;
  values = nullptr, objects = nullptr;
  if (n == 0) return 0;

  const std::size_t values_bytes = round_up_256(n * sizeof(value));
  const std::size_t objects_bytes = round_up_256(n * sizeof(T*));
  std::byte* base = scratch.reserve(values_bytes + objects_bytes);
  value* out_values = values = reinterpret_cast<value*>(base);
  T** out_objects = objects = reinterpret_cast<T**>(base + values_bytes);

  // Gather: object k of the dense order is slot `slot` of listed block `pos`.
  std::byte* data = h.data;
  const std::uint64_t block_bytes = h.block_bytes;
  const std::uint64_t* live_slots = h.live;
  arch::for_each_index(
      totals.blocks * Capacity,
      [=] SHOAL_DEVICE(std::size_t i) {
        const std::size_t pos = i / Capacity;
        const auto slot = static_cast<std::uint32_t>(i % Capacity);
        const std::uint32_t b = list[pos];
        const std::uint64_t live = live_slots[b];
        if (((live >> slot) & 1u) == 0) return;
        const std::uint64_t k = first[pos] + arch::popc(live & ((std::uint64_t{1} << slot) - 1));
        T* object = reinterpret_cast<T*>(encode_pointer(data + b * block_bytes, slot, Capacity, type));
        out_values[k] = op.project(object);
        out_objects[k] = object;
      },
      device_view);
  return n;
}

/// all_pairs' second part: each of the n `objects` sums its interactions with every partner but
/// itself and applies the result. Enqueued.
template <class T, class Op>
void interact_with_partners(const heap_view* device_view, all_pairs_scratch& scratch, const Op& op, T* const* objects,
                            std::uint64_t n, const partner_values<typename Op::value>& partners) {
  using value = typename Op::value;
  using accumulator = typename Op::accumulator;
  const value* all = partners.values;
  const std::uint64_t count = partners.count, self_begin = partners.self_begin;

  // Slices: enough threads to fill the GPU when the objects alone do not (cuda only; the cpu
  // backend has few threads and sums every partner in one pass).
  std::uint64_t slices = 1, slice_length = count;
#if defined(SHOAL_BACKEND_CUDA)
  if constexpr (combinable_interaction<Op>) {
    const std::uint64_t tiles = (n + pair_tile - 1) / pair_tile, partner_tiles = (count + pair_tile - 1) / pair_tile;
    const std::uint64_t threads_wanted = static_cast<std::uint64_t>(arch::probe_device().multiprocessors) * 2048;
    const std::uint64_t want = std::clamp<std::uint64_t>((threads_wanted + tiles * pair_tile - 1) / (tiles * pair_tile), 1, partner_tiles);
    slice_length = (partner_tiles + want - 1) / want * pair_tile;
    slices = (count + slice_length - 1) / slice_length;
  }
#endif
  accumulator* partial = nullptr;
  if (slices > 1) {
    if (scratch.partial.bytes() < slices * n * sizeof(accumulator))
      scratch.partial = arch::device_buffer<std::byte>(slices * n * sizeof(accumulator));
    partial = reinterpret_cast<accumulator*>(scratch.partial.data());
  }

#if defined(SHOAL_BACKEND_CUDA)
  const dim3 grid(static_cast<unsigned>((n + pair_tile - 1) / pair_tile), static_cast<unsigned>(slices));
  all_pairs_kernel<T, Op><<<grid, pair_tile>>>(op, all, count, self_begin, n, slice_length, partial, objects, device_view);
  SHOAL_CUDA_CHECK(cudaGetLastError());
  if (slices > 1) {
    if constexpr (combinable_interaction<Op>) {
      arch::for_each_index(
          n,
          [=] SHOAL_DEVICE(std::size_t i) {
            accumulator acc = partial[i];
            for (std::uint64_t s = 1; s < slices; ++s) op.combine(acc, partial[s * n + i]);
            op.apply(objects[i], acc);
          },
          device_view);
    }
  }
#else
  (void)scratch;
  (void)slice_length;
  (void)partial;
  arch::for_each_index(
      n,
      [=](std::size_t i) {
        const value self = all[self_begin + i];
        accumulator acc{};
        for (std::uint64_t j = 0; j < count; ++j)
          if (j != self_begin + i) op.interact(self, all[j], acc);
        op.apply(objects[i], acc);
      },
      device_view);
#endif
}

/// The whole interaction over the objects of concrete class T (type id `type`, `Capacity`
/// slots per block). `list` holds room for every block of the heap. `share(values, n)` is given
/// the objects' values, gathered on the device in object order, and returns the partners (see
/// runtime::all_pairs). Waits once, for the number of objects; the rest is enqueued. (No device
/// lambda here: nvcc refuses one in a function whose template arguments include a local type,
/// such as a lambda's for `share`.)
template <class T, std::uint32_t Capacity, class Op, class Share = own_partners>
void all_pairs(const heap_view& h, const heap_view* device_view, std::uint32_t type,
               std::uint32_t* list, all_pairs_scratch& scratch, const Op& op, Share share = {}) {
  static_assert(std::is_trivially_copyable_v<Op> && std::is_trivially_copyable_v<typename Op::value> &&
                    std::is_trivially_copyable_v<typename Op::accumulator>,
                "an all-pairs interaction, its value and its accumulator must be trivially copyable");
  typename Op::value* values = nullptr;
  T** objects = nullptr;
  const std::uint64_t n = gather_pair_values<T, Capacity>(h, device_view, type, list, scratch, op, values, objects);
  const partner_values<typename Op::value> partners = share(values, n);  // collective for a share over ranks
  if (n != 0) interact_with_partners<T>(device_view, scratch, op, objects, n, partners);
}

}  // namespace detail
}  // namespace shoal
