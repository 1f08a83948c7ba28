#pragma once
/// @file
/// Defragmentation (runtime::defragment): the objects of sparsely filled blocks of a class move
/// into fewer blocks, the emptied blocks return to the free blocks, and every heap pointer to a
/// moved object is rewritten — in the heap-pointer fields of every live object (the field lists
/// say which fields may point to which classes) and in the pointer arrays outside the heap that
/// the program registered (runtime::register_pointers).
///
/// At rest only (between launches, nothing in flight), and on the device but for one small
/// download: a kernel counts, per asked class, its blocks filled at most `max_fill` by their
/// number of objects (a histogram of 65 bins); from it the host picks, per class, the fill
/// `theta` above which every such block stays (a target) and how many of those filled exactly
/// `theta` stay too (the lowest-indexed), so that the targets are as few as hold all the class's
/// sparse objects. Device scans then rank the targets, their free slots and the objects of the
/// other sparse blocks (the sources); source object r goes to target free slot r, in block and
/// slot order, so a run gives the same heap on both backends. The device copies the objects
/// field by field and rewrites the pointers, then writes the new headers and rebuilds the
/// bitmaps and counters from the headers, as a checkpoint load does. The runtime keeps the
/// scratch memory between calls.
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
#include "shoal/arch/scan.hpp"
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

/// Device memory a runtime keeps for its defragmentations, grown when a call needs more: no
/// allocation (and no implicit synchronisation of a free) per call once it is large enough.
struct defrag_scratch {
  arch::device_buffer<std::byte> arena;      // per-block arrays and the histograms
  arch::device_buffer<std::uint64_t> moves;  // per move: where it goes, then where it comes from
  arch::device_buffer<std::byte> scan_temp;  // the device scans' working memory
};

/// Whether block b holds class t filled at most `limit`; its objects in `live` (block headers as
/// they were before the defragmentation: read only until they are rewritten).
struct sparse_block {
  heap_view hv;
  std::uint32_t type, limit;
  SHOAL_HD bool operator()(std::uint64_t b, std::uint64_t& live) const {
    const block_header h = hv.headers[b];
    if (h.type != type) return false;
    live = ~h.free_slots & hv.full_mask(type);
    return static_cast<std::uint32_t>(arch::popc(live)) <= limit;
  }
};

/// Carves typed arrays out of one device buffer (each 256-byte aligned).
class scratch_carver {
 public:
  /// Reserves `bytes`; returns their offset.
  std::uint64_t add(std::uint64_t bytes) {
    const std::uint64_t at = used_;
    used_ += (bytes + 255) / 256 * 256;
    return at;
  }
  std::uint64_t bytes() const { return used_; }

 private:
  std::uint64_t used_ = 0;
};

/// Per class, what the plan decides from the histogram of its sparse blocks' fill.
struct class_plan {
  std::uint32_t type = 0, capacity = 0, limit = 0;
  std::uint32_t theta = 0;    // blocks filled more than theta stay (targets) ...
  std::uint64_t need = 0;     // ... and the `need` lowest-indexed ones filled exactly theta
  std::uint64_t keep = 0;     // targets: as few blocks as hold every sparse object
  std::uint64_t sources = 0;  // sparse blocks that empty into them (and are freed)
  std::uint64_t moves = 0;    // objects that move
  std::uint64_t move_base = 0;
};

/// A number per class (and one past the last), passed to kernels by value (a lambda cannot
/// capture a type local to its function).
struct per_class {
  std::uint32_t of[max_types + 1];
};

/// Block roles in a defragmentation.
inline constexpr std::uint32_t role_none = 0, role_target = 1, role_source = 2;

/// The defragmentation of the classes in `types` (a mask of type ids); see the file comment.
/// The heap must be at rest. Everything runs on the device but the plan's few numbers per class:
/// one small download (the fill histograms), then kernels and scans only.
template <class Heap>
defrag_stats defragment_heap(const heap_view& v, std::uint32_t types, double max_fill,
                             const std::vector<registered_pointers>& arrays, defrag_scratch& scratch) {
  constexpr std::uint32_t T = Heap::num_types;
  constexpr std::uint32_t bins = 65;  // live objects in a block: 0..64
  const std::uint64_t B = v.blocks;
  const heap_view hv = v;

  // The field tables of step 4, known from the class list alone: every pointer field that may
  // need rewriting, and every field that moves.
  const auto heap_pointer_fields = checkpoint::pointer_fields<Heap>();
  std::size_t pointer_field_count = 0;
  for (std::uint32_t t = 0; t < T; ++t) pointer_field_count += heap_pointer_fields[t].size();
  std::vector<field_place> places;
  std::vector<std::uint32_t> place_first;
  field_places<Heap>(places, place_first);

  // Scratch: histograms and counts, then per-block arrays and the field tables, all in the arena
  // the runtime keeps (a device buffer of their own per call cost a cudaMalloc and a cudaFree,
  // which waits for the device, each).
  scratch_carver c;
  const std::uint64_t at_hist = c.add((T * bins + 2) * 8);
  const std::uint64_t at_rank = c.add(B * 8), at_src = c.add(B * 8), at_free = c.add(B * 8);
  const std::uint64_t at_first = c.add(B * 4), at_role = c.add(B * 4), at_taken = c.add(B * 4);
  const std::uint64_t at_moved = c.add(B * 8);
  const std::uint64_t at_rewrite = c.add(pointer_field_count * sizeof(field_place));
  const std::uint64_t at_places = c.add(places.size() * sizeof(field_place));
  if (scratch.arena.size() < c.bytes()) scratch.arena = arch::device_buffer<std::byte>(c.bytes());
  std::byte* base = scratch.arena.data();
  auto* hist = reinterpret_cast<std::uint64_t*>(base + at_hist);  // [T][bins], then used blocks, free blocks
  auto* rank = reinterpret_cast<std::uint64_t*>(base + at_rank);
  auto* src = reinterpret_cast<std::uint64_t*>(base + at_src);
  auto* fre = reinterpret_cast<std::uint64_t*>(base + at_free);
  auto* first = reinterpret_cast<std::uint32_t*>(base + at_first);
  auto* role = reinterpret_cast<std::uint32_t*>(base + at_role);
  auto* taken = reinterpret_cast<std::uint32_t*>(base + at_taken);
  auto* moved = reinterpret_cast<std::uint64_t*>(base + at_moved);
  auto* d_rewrite = reinterpret_cast<field_place*>(base + at_rewrite);
  auto* d_places = reinterpret_cast<field_place*>(base + at_places);

  // 1. Fill histograms of the sparse blocks of each asked class, and the blocks in use.
  per_class lim{};  // per class: blocks with fewer objects are sparse (0: class not asked)
  for (std::uint32_t t = 0; t < T; ++t)
    lim.of[t] = ((types >> t) & 1u) != 0 && v.capacity[t] != 0 ? static_cast<std::uint32_t>(max_fill * v.capacity[t]) + 1 : 0;
  arch::fill_bytes_enqueued(hist, 0, (T * bins + 2) * 8);
  // One add per warp and counter: one add per block, most of them to the blocks-in-use counter,
  // took 28 µs for 164 k blocks (H200).
  arch::for_each_index(B, [=] SHOAL_DEVICE(std::size_t b) {
    const block_header h = hv.headers[b];
    const bool used = h.type != no_type;
    const auto live = used ? static_cast<std::uint32_t>(arch::popc(~h.free_slots & hv.full_mask(h.type))) : 0u;
    const bool sparse = used && live < lim.of[h.type];
    const arch::lane_mask lanes = arch::active_lanes();
    const arch::lane_mask in_use = arch::ballot(lanes, used);
    if (arch::lane_id() == arch::lowest_bit(lanes) && in_use != 0)
      arch::add_relaxed(hist[T * bins], static_cast<std::uint64_t>(arch::popc(in_use)));
    const arch::lane_mask counted = arch::ballot(lanes, sparse);
    if (!sparse) return;
    const arch::lane_mask same = arch::match_any(counted, h.type * bins + live);
    if (arch::lane_id() == arch::lowest_bit(same)) arch::add_relaxed(hist[h.type * bins + live], static_cast<std::uint64_t>(arch::popc(same)));
  });
  std::vector<std::uint64_t> h(T * bins + 2);
  arch::copy_to_host(h.data(), hist, h.size() * 8);
  defrag_stats stats;
  stats.blocks_before = h[T * bins];

  // 2. The plan of each class: the fullest sparse blocks stay (lowest index first among equals).
  std::vector<class_plan> plans;
  std::uint64_t move_total = 0;
  for (std::uint32_t t = 0; t < T; ++t) {
    if (lim.of[t] == 0) continue;
    class_plan p;
    p.type = t, p.capacity = v.capacity[t], p.limit = lim.of[t] - 1;
    std::uint64_t sparse = 0, live = 0;
    for (std::uint32_t k = 0; k <= p.limit; ++k) sparse += h[t * bins + k], live += k * h[t * bins + k];
    p.keep = (live + p.capacity - 1) / p.capacity;
    if (sparse <= p.keep) continue;  // already as dense as it gets
    p.theta = bins;                  // no targets unless some block holds an object
    std::uint64_t above = 0, kept_live = 0;
    for (std::uint32_t k = p.limit + 1; k-- > 0 && p.keep > 0;) {
      const std::uint64_t n = h[t * bins + k];
      if (above + n >= p.keep) {
        p.theta = k, p.need = p.keep - above;
        kept_live += p.need * k;
        break;
      }
      above += n, kept_live += n * k;
    }
    p.sources = sparse - p.keep;
    p.moves = live - kept_live;
    p.move_base = move_total;
    move_total += p.moves;
    plans.push_back(p);
  }
  if (plans.empty()) {
    stats.blocks_after = stats.blocks_before;
    return stats;
  }
  std::uint32_t moved_types = 0;
  for (const class_plan& p : plans) {
    moved_types |= std::uint32_t{1} << p.type;
    stats.blocks_after += p.sources;
    stats.moved += p.moves;
  }
  stats.blocks_after = stats.blocks_before - stats.blocks_after;
  if (scratch.moves.size() < 2 * move_total) scratch.moves = arch::device_buffer<std::uint64_t>(2 * move_total);
  std::uint64_t* to = scratch.moves.data();
  std::uint64_t* from = to + move_total;

  // 3. Per class: roles, ranks (device scans) and each moving object's destination.
  arch::fill_bytes_enqueued(role, 0, B * 4);
  arch::fill_bytes_enqueued(first, 0xFF, B * 4);  // not_moved
  arch::fill_bytes_enqueued(moved, 0, B * 8);
  for (const class_plan& p : plans) {
    const std::uint32_t t = p.type, limit = p.limit, theta = p.theta, capacity = p.capacity;
    const std::uint64_t need = p.need, moves = p.moves, move_base = p.move_base;
    const sparse_block sparse_live{hv, t, limit};
    arch::for_each_index(B, [=] SHOAL_DEVICE(std::size_t b) {
      std::uint64_t live = 0;
      rank[b] = sparse_live(b, live) && static_cast<std::uint32_t>(arch::popc(live)) == theta ? 1 : 0;
    });
    arch::exclusive_sum(rank, rank, B, scratch.scan_temp);  // among the blocks filled theta
    arch::for_each_index(B, [=] SHOAL_DEVICE(std::size_t b) {
      std::uint64_t live = 0;
      src[b] = fre[b] = 0;
      if (!sparse_live(b, live)) return;
      const auto n = static_cast<std::uint32_t>(arch::popc(live));
      const bool target = n > theta || (n == theta && rank[b] < need);
      role[b] = target ? role_target : role_source;
      if (target) fre[b] = capacity - n;
      else src[b] = n;
    });
    arch::exclusive_sum(src, src, B, scratch.scan_temp);  // first move of each source (in t)
    arch::exclusive_sum(fre, fre, B, scratch.scan_temp);  // first free slot of each target (in t)
    // Move r of class t: the r-th object of its sources, in block and slot order, goes to the r-th
    // free slot of its targets, in the same order. Each block writes its own moves (a source its
    // objects, a target the slots it is given), in one pass: a thread per slot that searched the
    // targets for its move's took 100 µs for 465 k moves, the whole copy 73 (H200).
    arch::for_each_index(B, [=] SHOAL_DEVICE(std::size_t b) {
      std::uint64_t live = 0;
      if (!sparse_live(b, live)) return;
      if (role[b] == role_source) {
        if (live == 0) return;
        first[b] = static_cast<std::uint32_t>(move_base + src[b]), moved[b] = live;
        std::uint64_t r = move_base + src[b];
        for (std::uint64_t left = live; left != 0; left &= left - 1) from[r++] = b * 64 + arch::lowest_bit(left);
        return;
      }
      const std::uint64_t room = capacity - static_cast<std::uint64_t>(arch::popc(live));
      const std::uint64_t given = fre[b] >= moves ? 0 : std::min(room, moves - fre[b]);
      taken[b] = static_cast<std::uint32_t>(given);
      std::uint64_t free = hv.full_mask(t) & ~live;
      for (std::uint64_t j = 0; j < given; ++j, free &= free - 1) to[move_base + fre[b] + j] = b * 64 + arch::lowest_bit(free);
    });
  }
  const relocation relocate{first, moved, to, v.data, v.block_bytes, v.blocks};

  // 4. Rewrite every heap pointer to a moved object (fields of live objects where they are now,
  //    then the registered arrays), then copy the moved objects, their pointers already rewritten.
  std::vector<field_place> rewrite;
  per_class rf{};  // class t's fields to rewrite: rewrite[rf.of[t] .. rf.of[t + 1])
  for (std::uint32_t t = 0; t < T; ++t) {
    rf.of[t] = static_cast<std::uint32_t>(rewrite.size());
    for (const auto& pf : heap_pointer_fields[t])
      if ((pf.targets & moved_types) != 0) rewrite.push_back({pf.offset, 8, pf.count});
  }
  rf.of[T] = static_cast<std::uint32_t>(rewrite.size());
  if (!rewrite.empty()) arch::copy_to_device(d_rewrite, rewrite.data(), rewrite.size() * sizeof(field_place));
  if (!places.empty()) arch::copy_to_device(d_places, places.data(), places.size() * sizeof(field_place));
  if (!rewrite.empty()) {
    const field_place* rw = d_rewrite;
    arch::for_each_index(B * 64, [=] SHOAL_DEVICE(std::size_t i) {
      const std::uint64_t b = i / 64, s = i % 64;
      const block_header hb = hv.headers[b];
      if (hb.type == no_type || rf.of[hb.type] == rf.of[hb.type + 1] || ((hb.free_slots >> s) & 1u) != 0 ||
          ((hv.full_mask(hb.type) >> s) & 1u) == 0)
        return;
      const std::uint32_t capacity = hv.capacity[hb.type];
      std::byte* block = hv.data + b * hv.block_bytes;
      for (std::uint32_t k = rf.of[hb.type]; k < rf.of[hb.type + 1]; ++k)
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
  {
    per_class pr{};  // class t's fields: places[pr.of[t] .. pr.of[t + 1])
    for (std::uint32_t t = 0; t <= T; ++t) pr.of[t] = place_first[t];
    const field_place* pl = d_places;
    arch::for_each_index(move_total, [=] SHOAL_DEVICE(std::size_t i) {
      const std::uint64_t b = from[i] / 64, s = from[i] % 64, dest = to[i];
      const std::uint32_t t = hv.headers[b].type;
      const std::uint32_t capacity = hv.capacity[t];
      const std::byte* from = hv.data + b * hv.block_bytes;
      std::byte* into = hv.data + dest / 64 * hv.block_bytes;
      const std::uint64_t ds = dest % 64;
      for (std::uint32_t k = pr.of[t]; k < pr.of[t + 1]; ++k)
        for (std::uint32_t e = 0; e < pl[k].count; ++e) {
          const std::uint64_t row = pl[k].offset + std::uint64_t{e} * capacity * pl[k].bytes;
          copy_element(into + row + ds * pl[k].bytes, from + row + s * pl[k].bytes, pl[k].bytes);
        }
    });
  }

  // 5. The new headers and live words: sources are free, targets lose the free slots they were
  //    given.
  arch::for_each_index(B, [=] SHOAL_DEVICE(std::size_t b) {
    if (role[b] == role_source) {
      hv.headers[b] = block_header{0, no_type, 0};
      hv.live[b] = 0;
    } else if (role[b] == role_target) {
      std::uint64_t free = hv.headers[b].free_slots & hv.full_mask(hv.headers[b].type), given = 0;
      for (std::uint32_t j = 0; j < taken[b]; ++j) given |= free & (~free + 1), free &= free - 1;
      hv.headers[b].free_slots &= ~given;
      hv.live[b] |= given;
    }
  });

  // 6. Bitmaps and counters from the headers, as a checkpoint load writes them: leaves, then
  //    each level above from the one below.
  //    A thread per block or word below, the bits of a word gathered in the warp (one atomic OR
  //    per warp and word): a thread per word that read its 64 blocks or words one after another
  //    took 57 µs for 164 k blocks (H200).
  std::uint64_t* free_count = hist + T * bins + 1;
  const bitmap_layout layout = v.layout;
  const std::uint64_t maps = 1 + 2 * std::uint64_t{T};
  arch::fill_bytes_enqueued(hv.bitmap_words, 0, maps * layout.total_words * sizeof(std::uint64_t));
  arch::for_each_index(B, [=] SHOAL_DEVICE(std::size_t b) {
    const block_header hb = hv.headers[b];
    const bool is_free = hb.type == no_type;
    const std::uint64_t w = b / 64, bit = std::uint64_t{1} << (b % 64);
    // Lanes of one leaf word and one class (or free): their bits in one OR per map.
    const arch::lane_mask same = arch::match_any(arch::active_lanes(), w * (T + 1) + (is_free ? T : hb.type));
    const std::uint64_t bits = arch::reduce_or(same, bit);
    const std::uint64_t active = arch::reduce_or(same, !is_free && hb.free_slots != 0 ? bit : 0);
    if (arch::lane_id() != arch::lowest_bit(same)) return;
    std::uint64_t* words = hv.bitmap_words + layout.offset[0] + w;
    if (is_free) {
      arch::or_relaxed(words[0], bits);
      arch::add_relaxed(*free_count, static_cast<std::uint64_t>(arch::popc(bits)));
      return;
    }
    arch::or_relaxed(words[(1 + hb.type) * layout.total_words], bits);
    if (active != 0) arch::or_relaxed(words[(1 + T + hb.type) * layout.total_words], active);
  });
  for (int level = 1; level < layout.levels; ++level) {
    const std::uint64_t here = layout.offset[level], below = layout.offset[level - 1];
    const std::uint64_t below_words = layout.words[level - 1];
    arch::for_each_index(maps * below_words, [=] SHOAL_DEVICE(std::size_t i) {
      const std::uint64_t m = i / below_words, u = i % below_words;
      const bool set = hv.bitmap_words[m * layout.total_words + below + u] != 0;
      const arch::lane_mask same = arch::match_any(arch::active_lanes(), m * below_words + u / 64);
      const std::uint64_t bits = arch::reduce_or(same, set ? std::uint64_t{1} << (u % 64) : 0);
      if (arch::lane_id() == arch::lowest_bit(same) && bits != 0)
        arch::or_relaxed(hv.bitmap_words[m * layout.total_words + here + u / 64], bits);
    });
  }
  arch::fill_bytes_enqueued(v.counters, 0, sizeof(heap_counters));
  heap_counters* counters = v.counters;
  arch::for_each_index(1, [=] SHOAL_DEVICE(std::size_t) { counters->free_blocks[0] = static_cast<long long>(*free_count); });
  arch::synchronize();
  return stats;
}

}  // namespace detail
}  // namespace shoal
