#pragma once
/// @file
/// Defragmentation (runtime::defragment): the objects of sparsely filled blocks of a class move
/// into fewer blocks, the emptied blocks return to the free blocks, and every heap pointer to a
/// moved object is rewritten — in the heap-pointer fields of every live object (the field lists
/// say which fields may point to which classes) and in the pointer arrays outside the heap that
/// the program registered (runtime::register_pointers).
///
/// At rest only (between launches, nothing in flight). The host plans from the block headers
/// (one download): of a class's blocks filled at most `max_fill`, the fullest are kept as
/// targets, as few as hold all their objects, and the others' objects move into the targets'
/// free slots, in block and slot order, so a run gives the same heap on both backends. The
/// device copies the objects field by field and rewrites the pointers; the host then writes the
/// new headers and rebuilds the bitmaps and counters from them, as a checkpoint load does.
///
/// Where a moved object went: per source block, the index of its first move and the mask of its
/// moved slots; object s of block b is move first[b] + popcount(moved[b] below s). Two loads per
/// pointer, no search.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shoal/arch/lanes.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/checkpoint/heap_image.hpp"
#include "shoal/checkpoint/signature.hpp"
#include "shoal/heap/heap_view.hpp"
#include "shoal/heap/pointer.hpp"

namespace shoal {

/// What a defragmentation did: blocks in use (of every class) before and after, objects moved.
struct defrag_stats {
  std::uint64_t blocks_before = 0;  ///< blocks in use, every class, before
  std::uint64_t blocks_after = 0;   ///< and after
  std::uint64_t moved = 0;          ///< objects moved
};

namespace detail {

inline constexpr std::uint32_t not_moved = 0xFFFFFFFFu;

/// One field of a class in a block: `count` arrays of `capacity` elements of `bytes` bytes from
/// `offset` on (element e of slot s at offset + (e × capacity + s) × bytes).
struct field_place {
  std::uint64_t offset;
  std::uint32_t bytes;
  std::uint32_t count;
};

/// The fields of every class of the heap, flattened: class t's are [first[t], first[t + 1]).
template <class Heap>
void field_places(std::vector<field_place>& out, std::vector<std::uint32_t>& first) {
  constexpr auto& g = geometry_of<Heap>;
  std::vector<std::vector<field_place>> by_type(Heap::num_types);
  Heap::for_each_type([&]<class T>() {
    if constexpr (!abstract_object<T>) {
      constexpr std::uint32_t t = Heap::template type_id<T>;
      using fields = all_fields_t<T>;
      constexpr auto records = checkpoint::detail::describe_fields<Heap>(fields{});
      for (std::size_t k = 0; k < records.size(); ++k)
        by_type[t].push_back({field_offset(fields{}, k, g.capacity[t]), records[k].element_bytes, records[k].count});
    }
  });
  first.assign(Heap::num_types + 1, 0);
  for (std::uint32_t t = 0; t < Heap::num_types; ++t) {
    first[t] = static_cast<std::uint32_t>(out.size());
    out.insert(out.end(), by_type[t].begin(), by_type[t].end());
  }
  first[Heap::num_types] = static_cast<std::uint32_t>(out.size());
}

/// Where the moved objects went, on the device (see the file comment).
struct relocation {
  const std::uint32_t* first;  // per block: index of its first move, or not_moved
  const std::uint64_t* moved;  // per block: the slots that moved
  const std::uint64_t* to;     // per move: block × 64 + slot
  std::byte* data;
  std::uint64_t block_bytes;
  std::uint64_t blocks;

  /// `bits` rewritten if it points to a moved object; anything else (null, a pointer elsewhere)
  /// is returned as it is.
  SHOAL_HD std::uint64_t operator()(std::uint64_t bits) const {
    const std::uintptr_t address = block_address_of(bits);
    const auto base = reinterpret_cast<std::uintptr_t>(data);
    if (bits == 0 || address < base || address >= base + blocks * block_bytes) return bits;
    const std::uint64_t b = (address - base) / block_bytes;
    if (first[b] == not_moved) return bits;
    const std::uint32_t s = slot_of(bits);
    const std::uint64_t mask = moved[b];
    if (((mask >> s) & 1u) == 0) return bits;
    const std::uint64_t dest = to[first[b] + arch::popc(mask & low_bits(s))];
    return encode_pointer(data + dest / 64 * block_bytes, static_cast<std::uint32_t>(dest % 64), capacity_of(bits),
                          type_of(bits)) |
           proxy_offset_of(bits);
  }
};

/// Copies `bytes` bytes (1, 2, 4 or 8, or a multiple of 8: fields are naturally aligned).
SHOAL_HD inline void copy_element(std::byte* to, const std::byte* from, std::uint32_t bytes) {
  if (bytes % 8 == 0) {
    for (std::uint32_t i = 0; i < bytes; i += 8)
      *reinterpret_cast<std::uint64_t*>(to + i) = *reinterpret_cast<const std::uint64_t*>(from + i);
  } else if (bytes % 4 == 0) {
    for (std::uint32_t i = 0; i < bytes; i += 4)
      *reinterpret_cast<std::uint32_t*>(to + i) = *reinterpret_cast<const std::uint32_t*>(from + i);
  } else {
    for (std::uint32_t i = 0; i < bytes; ++i) to[i] = from[i];
  }
}

/// A pointer array outside the heap that defragmentation rewrites and checkpoints save and load
/// (runtime::register_pointers).
struct registered_pointers {
  std::string name;     // its checkpoint section
  void* device_array;   // of n heap pointers (T*)
  std::size_t n;
  std::uint32_t types;  // mask of the classes its pointers may point to (T and its subclasses)
};

/// The defragmentation of the classes in `types` (a mask of type ids); see the file comment.
/// The heap must be at rest.
template <class Heap>
defrag_stats defragment_heap(const heap_view& v, std::uint32_t types, double max_fill,
                             const std::vector<registered_pointers>& arrays) {
  std::vector<block_header> headers(v.blocks);
  arch::copy_to_host(headers.data(), v.headers, headers.size() * sizeof(block_header));
  defrag_stats stats;
  for (const block_header& h : headers) stats.blocks_before += h.type != no_type;

  // The plan: moves (from, to as block × 64 + slot) grouped by source block, in block order.
  std::vector<std::uint32_t> first(v.blocks, not_moved);
  std::vector<std::uint64_t> moved(v.blocks, 0);
  std::vector<std::uint64_t> from, to;
  std::vector<std::uint32_t> move_type;
  std::uint32_t moved_types = 0;
  for (std::uint32_t t = 0; t < Heap::num_types; ++t) {
    const std::uint32_t capacity = v.capacity[t];
    if (((types >> t) & 1u) == 0 || capacity == 0) continue;  // not asked, or abstract
    const std::uint64_t full = v.full_mask(t);
    const auto limit = static_cast<std::uint32_t>(max_fill * capacity);
    struct candidate {
      std::uint64_t block;
      std::uint32_t live;
    };
    std::vector<candidate> sparse;
    std::uint64_t live_total = 0;
    for (std::uint64_t b = 0; b < v.blocks; ++b) {
      if (headers[b].type != t) continue;
      const auto live = static_cast<std::uint32_t>(std::popcount(~headers[b].free_slots & full));
      if (live > limit) continue;
      sparse.push_back({b, live});
      live_total += live;
    }
    const std::uint64_t keep = (live_total + capacity - 1) / capacity;
    if (sparse.size() <= keep) continue;  // already as dense as it gets
    // Fullest first (then lower index): they stay; the rest empty into them.
    std::stable_sort(sparse.begin(), sparse.end(), [](const candidate& a, const candidate& b) { return a.live > b.live; });
    std::vector<std::uint64_t> targets, sources;
    for (std::size_t i = 0; i < sparse.size(); ++i) (i < keep ? targets : sources).push_back(sparse[i].block);
    std::sort(targets.begin(), targets.end());
    std::sort(sources.begin(), sources.end());
    std::size_t target = 0;
    for (const std::uint64_t b : sources) {
      const std::uint64_t live = ~headers[b].free_slots & full;
      if (live != 0) {
        first[b] = static_cast<std::uint32_t>(from.size());
        moved[b] = live;
      }
      for (std::uint64_t l = live; l != 0; l &= l - 1) {
        while ((headers[targets[target]].free_slots & full) == 0) ++target;  // keep: room for all
        const std::uint64_t d = targets[target];
        const int slot = std::countr_zero(headers[d].free_slots & full);
        headers[d].free_slots &= ~(std::uint64_t{1} << slot);
        from.push_back(b * 64 + static_cast<std::uint64_t>(std::countr_zero(l)));
        to.push_back(d * 64 + static_cast<std::uint64_t>(slot));
        move_type.push_back(t);
      }
      headers[b] = block_header{0, no_type, 0};
    }
    moved_types |= std::uint32_t{1} << t;
  }
  if (moved_types == 0) {
    stats.blocks_after = stats.blocks_before;
    return stats;
  }
  stats.moved = from.size();

  // The device: copy the objects, then rewrite the pointers (in moved objects too).
  std::vector<field_place> places;
  std::vector<std::uint32_t> place_first;
  field_places<Heap>(places, place_first);
  arch::device_buffer<field_place> d_places(std::max<std::size_t>(places.size(), 1));
  arch::device_buffer<std::uint32_t> d_place_first(place_first.size()), d_first(v.blocks), d_type(std::max<std::size_t>(from.size(), 1));
  arch::device_buffer<std::uint64_t> d_moved(v.blocks), d_from(std::max<std::size_t>(from.size(), 1)),
      d_to(std::max<std::size_t>(to.size(), 1));
  if (!places.empty()) d_places.upload(places);
  d_place_first.upload(place_first);
  d_first.upload(first);
  d_moved.upload(moved);
  if (!from.empty()) {
    d_from.upload(from);
    d_to.upload(to);
    d_type.upload(move_type);
  }
  {
    const field_place* pl = d_places.data();
    const std::uint32_t* pf = d_place_first.data();
    const std::uint64_t* f = d_from.data();
    const std::uint64_t* d = d_to.data();
    const std::uint32_t* mt = d_type.data();
    std::byte* data = v.data;
    const std::uint64_t block_bytes = v.block_bytes;
    const heap_view hv = v;
    arch::for_each_index(from.size(), [=] SHOAL_DEVICE(std::size_t i) {
      const std::uint32_t t = mt[i];
      const std::uint32_t capacity = hv.capacity[t];
      const std::byte* src = data + f[i] / 64 * block_bytes;
      std::byte* dst = data + d[i] / 64 * block_bytes;
      const std::uint64_t s = f[i] % 64, ds = d[i] % 64;
      for (std::uint32_t k = pf[t]; k < pf[t + 1]; ++k)
        for (std::uint32_t e = 0; e < pl[k].count; ++e) {
          const std::uint64_t row = pl[k].offset + std::uint64_t{e} * capacity * pl[k].bytes;
          copy_element(dst + row + ds * pl[k].bytes, src + row + s * pl[k].bytes, pl[k].bytes);
        }
    });
  }
  const relocation relocate{d_first.data(), d_moved.data(), d_to.data(), v.data, v.block_bytes, v.blocks};

  // Heap-pointer fields that may point to a moved class, of every live object (after the moves).
  const auto heap_pointer_fields = checkpoint::pointer_fields<Heap>();
  std::vector<field_place> rewrite;
  std::vector<std::uint32_t> rewrite_first(Heap::num_types + 1, 0);
  for (std::uint32_t t = 0; t < Heap::num_types; ++t) {
    rewrite_first[t] = static_cast<std::uint32_t>(rewrite.size());
    for (const auto& pf : heap_pointer_fields[t])
      if ((pf.targets & moved_types) != 0) rewrite.push_back({pf.offset, 8, pf.count});
  }
  rewrite_first[Heap::num_types] = static_cast<std::uint32_t>(rewrite.size());
  std::vector<std::uint64_t> blocks;  // blocks in use whose class has such fields
  std::vector<std::uint64_t> live;
  for (std::uint64_t b = 0; b < v.blocks && !rewrite.empty(); ++b) {
    const std::uint32_t t = headers[b].type;
    if (t == no_type || rewrite_first[t] == rewrite_first[t + 1]) continue;
    blocks.push_back(b);
    live.push_back(~headers[b].free_slots & v.full_mask(t));
  }
  // Freed only after the synchronize below: the kernels read them.
  arch::device_buffer<field_place> d_rewrite(std::max<std::size_t>(rewrite.size(), 1));
  arch::device_buffer<std::uint32_t> d_rewrite_first(rewrite_first.size());
  arch::device_buffer<std::uint64_t> d_blocks(std::max<std::size_t>(blocks.size(), 1)), d_live(std::max<std::size_t>(live.size(), 1));
  if (!blocks.empty()) {
    d_rewrite.upload(rewrite);
    d_rewrite_first.upload(rewrite_first);
    d_blocks.upload(blocks);
    d_live.upload(live);
    const field_place* rw = d_rewrite.data();
    const std::uint32_t* rf = d_rewrite_first.data();
    const std::uint64_t* bl = d_blocks.data();
    const std::uint64_t* lv = d_live.data();
    const heap_view hv = v;
    arch::for_each_index(blocks.size() * 64, [=] SHOAL_DEVICE(std::size_t i) {
      const std::uint64_t s = i % 64;
      if (((lv[i / 64] >> s) & 1u) == 0) return;
      const std::uint64_t b = bl[i / 64];
      const std::uint32_t t = hv.headers[b].type;  // unchanged: headers are written after
      const std::uint32_t capacity = hv.capacity[t];
      std::byte* block = hv.data + b * hv.block_bytes;
      for (std::uint32_t k = rf[t]; k < rf[t + 1]; ++k)
        for (std::uint32_t e = 0; e < rw[k].count; ++e) {
          auto* p = reinterpret_cast<std::uint64_t*>(block + rw[k].offset + (std::uint64_t{e} * capacity + s) * 8);
          *p = relocate(*p);
        }
    });
  }
  for (const registered_pointers& a : arrays) {
    auto* p = static_cast<std::uint64_t*>(a.device_array);
    arch::for_each_index(a.n, [=] SHOAL_DEVICE(std::size_t i) { p[i] = relocate(p[i]); });
  }
  arch::synchronize();  // the buffers above are freed on return

  // Headers, bitmaps and counters from the new headers (as a checkpoint load writes them).
  for (const block_header& h : headers) stats.blocks_after += h.type != no_type;
  checkpoint::detail::write_heap_index(v, headers, Heap::num_types);
  arch::synchronize();
  return stats;
}

}  // namespace detail
}  // namespace shoal
