#pragma once
/// @file
/// Parallel do-all (DESIGN §6), bulk creation, and sequential iteration from device code.
///
/// A do-all over class U is two launches and no host synchronisation: (1) enumeration compacts
/// the set bits of allocated[U] into a dense list of blocks and snapshots each block's occupancy
/// into its word of heap_view::snapshots; (2) the visit launch, sized on the device from the
/// list length, runs capacity(U) consecutive threads per listed block, thread i visiting slot
/// i % capacity of block list[i / capacity] if that slot's snapshot bit is still set. On cuda the
/// two are one CUDA graph launch (see launch_graph.hpp), and on Hopper the visit is a programmatic
/// dependent of the enumeration, so its blocks get ready while the enumeration runs.
///
/// Semantics: every object live when the do-all starts is visited exactly once; objects created
/// during it are not visited (a fresh slot's snapshot bit is 0); an object destroyed during it is
/// not visited after its destruction (destroy clears its snapshot bit before the slot can be
/// reused) when the destruction comes before the visit: by the object itself, by objects visited
/// earlier by the same warp (on the GPU) or thread, or before the do-all. A destroy by a thread
/// running at the same time in another warp is concurrent with the visit, as any two threads
/// using one object without synchronisation are; the snapshot word is read one item ahead (see
/// for_each_listed).

#include <cstdint>
#include <type_traits>

#include "shoal/arch/atomic.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/launch_graph.hpp"
#include "shoal/bitmap/ordered_list.hpp"
#include "shoal/dsl/object.hpp"
#include "shoal/heap/allocator.hpp"
#include "shoal/heap/heap_view.hpp"

namespace shoal {

namespace detail {

template <class M>
struct member_function;
template <class C, class R, class... A>
struct member_function<R (C::*)(A...)> {
  using owner = C;
  static constexpr bool is_const = false;
};
template <class C, class R, class... A>
struct member_function<R (C::*)(A...) const> {
  using owner = C;
  static constexpr bool is_const = true;
};

/// The arguments of a launch as one trivially copyable value: nvcc's device lambdas cannot
/// capture the elements of a parameter pack, but they can capture this.
template <class... Ts>
struct value_pack {
  template <class F>
  SHOAL_HD void apply(F&& f) const {
    f();
  }
};
template <class T, class... Ts>
struct value_pack<T, Ts...> {
  T head;
  value_pack<Ts...> tail;
  template <class F>
  SHOAL_HD void apply(F&& f) const {
    tail.apply([&](const Ts&... rest) { f(head, rest...); });
  }
};
inline value_pack<> make_value_pack() { return {}; }
template <class T, class... Ts>
value_pack<T, Ts...> make_value_pack(T head, Ts... tail) {
  return {head, make_value_pack(tail...)};
}

/// Launch 1 of a do-all over type t: the list of its blocks that hold objects and their
/// occupancy snapshots, taken from heap_view::live (a slot that a stock holds in reserve is
/// neither free nor live, and no do-all visits it).
/// `*count` must be 0: the previous do-all's visit launch reset it (no memset of its own).
///
/// Each group of 32 consecutive items (one warp on the GPU: items go to consecutive lanes and
/// warps start at multiples of 32) lists the blocks of 4 bitmap words, 256 blocks, in 8 rounds:
/// in round k item j looks at block 32k + j of them. So a round's header reads and snapshot writes
/// are contiguous (one warp, 512 and 256 bytes) — a thread per 8 adjacent blocks made every
/// warp-wide access touch 32 separate sectors, and took 54 µs at 10^8 objects for 44 MB of
/// traffic. The group appends its blocks with one atomic, in block order. A thread per block would
/// make a do-all over few objects pay a thread for every block of the heap.
struct block_lister {
  static constexpr std::uint32_t group = 32, rounds = 8;  // rounds × group = 4 words of 64 blocks
  const std::uint64_t* leaves;
  std::uint64_t words;
  const std::uint64_t* live;
  std::uint64_t* snapshots;
  std::uint32_t* list;
  unsigned long long* count;

  block_lister(const heap_view& h, std::uint32_t t, std::uint32_t* list_, unsigned long long* count_)
      : leaves(h.allocated(t).level_words(0)),
        words(h.layout.words[0]),
        live(h.live),
        snapshots(h.snapshots),
        list(list_),
        count(count_) {}

  /// The items of the launch: a group for every 4 bitmap words.
  std::uint64_t items() const { return (words + 3) / 4 * group; }

  SHOAL_DEVICE void operator()(std::size_t i) const {
    // The visit launch (a dependent) may get its blocks ready now; it waits for our results.
    arch::allow_dependent_launch();
    const std::uint64_t first_word = i / group * 4;
    const auto j = static_cast<std::uint32_t>(i % group);
    // Plain loads: nothing writes the bitmap or the live words while this launch runs (it
    // starts after the previous kernel), and all eight reads are in flight together.
    std::uint32_t mine = 0;  // bit k: this item's block of round k holds objects of t
    std::uint64_t occupied[rounds];
#pragma unroll
    for (std::uint32_t k = 0; k < rounds; ++k) {
      const std::uint64_t w = first_word + k / 2;
      const std::uint64_t b = w * 64 + 32 * (k % 2) + j;
      occupied[k] = w < words && ((leaves[w] >> (b % 64)) & 1u) != 0 ? live[b] : 0;
      if (occupied[k] != 0) mine |= 1u << k;
    }
    // Where each round's blocks go in the group's part of the list: before round k come the
    // earlier rounds' blocks, then those of lower items in round k.
    const arch::lane_mask lanes = arch::active_lanes();
    std::uint32_t below[rounds], total = 0;
#pragma unroll
    for (std::uint32_t k = 0; k < rounds; ++k) {
      const arch::lane_mask m = arch::ballot(lanes, ((mine >> k) & 1u) != 0);
      below[k] = total + static_cast<std::uint32_t>(arch::popc(m & arch::lanes_below()));
      total += static_cast<std::uint32_t>(arch::popc(m));
    }
    if (total == 0) return;
    const int leader = arch::lowest_bit(lanes);
    unsigned long long at = 0;
    if (arch::lane_id() == leader) at = arch::fetch_add_relaxed(*count, static_cast<unsigned long long>(total));
    at = arch::shuffle(lanes, at, leader);
#pragma unroll
    for (std::uint32_t k = 0; k < rounds; ++k)
      if ((mine >> k) & 1u) {
        const std::uint64_t b = (first_word + k / 2) * 64 + 32 * (k % 2) + j;
        list[at + below[k]] = static_cast<std::uint32_t>(b);
        snapshots[b] = occupied[k];
      }
  }
};

#if !defined(SHOAL_BACKEND_CUDA)
/// cpu: launch 1 as one loop that descends allocated[t]'s levels, so that it reads only the words
/// above blocks in use and its cost follows the objects, not the heap's capacity (block_lister
/// runs an item per 8 blocks of the whole heap: 5 objects took 2.5 ms a do-all in a 2 GiB heap).
/// Lists the blocks in order and snapshots their occupancy, as block_lister does. Runs on the
/// host thread between launches (cpu launches return when their work is done), so plain loads.
inline void list_blocks_in_use(const heap_view& h, std::uint32_t t, std::uint32_t* list, unsigned long long* count) {
  const bitmap_ref allocated = h.allocated(t);
  unsigned long long n = 0;
  auto descend = [&](auto&& self, int level, std::uint64_t w) -> void {
    for (std::uint64_t bits = allocated.level_words(level)[w]; bits != 0; bits &= bits - 1) {
      const std::uint64_t below = w * 64 + static_cast<std::uint64_t>(arch::lowest_bit(bits));
      if (level > 0) {
        self(self, level - 1, below);
      } else if (h.live[below] != 0) {
        list[n++] = static_cast<std::uint32_t>(below);
        h.snapshots[below] = h.live[below];
      }
    }
  };
  descend(descend, allocated.layout().top(), 0);
  *count = n;
}
#endif

/// What one thread of the visit launch does for slot `slot` of listed block `b`, given the block's
/// snapshot word: call Method on the object there if the snapshot holds it. A named functor, not
/// a device lambda: nvcc names a device lambda after its enclosing function's template arguments,
/// and cannot spell a pointer to a const member function there (`&C::m const`).
template <class U, class T, auto Method, std::uint32_t Capacity, class Pack>
struct visit_slot {
  std::byte* data;
  std::uint64_t block_bytes;
  std::uint32_t type;
  Pack arguments;

  SHOAL_DEVICE void operator()(std::uint32_t b, std::uint32_t slot, std::uint64_t snapshot) const {
    if (((snapshot >> slot) & 1u) == 0) return;
    auto* object = reinterpret_cast<U*>(encode_pointer(data + b * block_bytes, slot, Capacity, type));
    arguments.apply([&](const auto&... a) { (static_cast<T*>(object)->*Method)(a...); });
  }
};

/// A listed block's snapshot word. Coherent load: a destroy earlier in this do-all clears the bit,
/// and the slot may already hold a new object that must not be visited. for_each_listed reads it
/// one item ahead, and again after any destroy in the warp, so it is never waited for in the
/// common case and never stale for the warp's own destroys.
struct snapshot_word {
  const std::uint64_t* snapshots;
  SHOAL_DEVICE std::uint64_t operator()(std::uint32_t b) const { return arch::load_relaxed(snapshots[b]); }
};

/// Launch 2 visits every object of concrete type U in the snapshot, as a T (U or a base): the
/// launch runs visit_slot over Capacity (U's slots per block) items per listed block; Capacity
/// is a compile-time constant so that splitting a thread index into (block, slot) is a multiply
/// and a shift, not a 64-bit division. The launch also resets the counter the next enumeration
/// will append to.
template <class U, class T, auto Method, std::uint32_t Capacity, class... Args>
auto slot_visitor(const heap_view& h, std::uint32_t type, Args... args) {
  using pack = decltype(make_value_pack(args...));
  return visit_slot<U, T, Method, Capacity, pack>{h.data, h.block_bytes, type, make_value_pack(args...)};
}

/// Host side: counts n failed allocations of t (a request that cannot fit at all).
inline void record_oom_on_host(const heap_view& h, std::uint32_t t, unsigned long long n) {
  unsigned long long failed = 0;
  arch::copy_to_host(&failed, &h.errors->failed_allocations[t], sizeof failed);
  failed += n;
  arch::copy_to_device(&h.errors->failed_allocations[t], &failed, sizeof failed);
}

}  // namespace detail

/// Calls f(p) for every live object p of class T (and its subclasses), one after another, from
/// device code running in a runtime launch (e.g. inside a method: n-body's force loop).
template <class T, class F>
SHOAL_DEVICE void device_do(F&& f) {
  using Model = typename T::shoal_model;
  const detail::heap_view& h = detail::current_heap();
  Model::for_each_type([&]<class U>() {
    if constexpr (!abstract_object<U> && (std::is_same_v<T, U> || std::is_base_of_v<T, U>)) {
      const std::uint32_t t = Model::template type_id<U>;
      const std::uint64_t* leaves = h.allocated(t).level_words(0);
      for (std::uint64_t w = 0; w < h.layout.words[0]; ++w) {
        for (std::uint64_t word = arch::load_relaxed(leaves[w]); word != 0; word &= word - 1) {
          const std::uint64_t b = w * 64 + arch::lowest_bit(word);
          for (std::uint64_t live = arch::load_relaxed(h.live[b]); live != 0;
               live &= live - 1) {
            auto* object = reinterpret_cast<U*>(detail::encode_pointer(
                h.block(b), arch::lowest_bit(live), h.capacity[t], t));
            f(static_cast<T*>(object));
          }
        }
      }
    }
  });
}

}  // namespace shoal
