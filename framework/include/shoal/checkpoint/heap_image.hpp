#pragma once
/// @file
/// A heap's contents as a checkpoint section, and back. Used by runtime::save_heap /
/// load_heap / save_pointers / load_pointers (runtime.hpp); works on the heap_view alone.
///
/// Section "heap" (little-endian):
///   u32 signature bytes, signature (signature.hpp)
///   u64 heap bytes, u64 blocks of the saved heap, u64 blocks in use (n)
///   n x { u64 block index (increasing), u64 free_slots, u32 type id, u32 0 }
///   n x block bytes: the blocks' field arrays as they are in device memory
///
/// Only blocks in use are stored; a restored block keeps its index, so the heap's order (which
/// do-all listings and all_pairs follow) is the saved one. Bitmaps, counters and the iteration
/// words are rebuilt from the headers, not stored: they are indexes over the headers, and the
/// number of counter shards differs between backends.
///
/// Heap pointers (in heap-pointer fields of live objects, and in pointer sections) are stored
/// position-independent: the block-address bits hold (block index + 1) << 8, the slot, capacity
/// and type bits are kept, and null stays 0. Every pointer is checked on save and on load: it
/// must name a slot of a concrete class that the field may point to, with that class's capacity,
/// in a block of the heap, and that slot must hold a live object of that class (a pointer to a
/// freed object is refused on save and on load). Slots that are free are stored as they are and
/// not relocated.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "shoal/arch/memory.hpp"
#include "shoal/bitmap/bitmap_ref.hpp"
#include "shoal/checkpoint/bytes.hpp"
#include "shoal/checkpoint/error.hpp"
#include "shoal/checkpoint/file.hpp"
#include "shoal/checkpoint/signature.hpp"
#include "shoal/heap/heap_view.hpp"

namespace shoal::checkpoint::detail {

namespace sd = shoal::detail;

/// The blocks in use of a saved heap, in increasing block index: what a pointer may point to.
struct used_blocks {
  const std::vector<std::uint64_t>& index;
  const std::vector<sd::block_header>& headers;

  /// "" when slot `slot` of block `b` holds a live object of type `type`, else why not. A
  /// pointer into a free slot or a block not in use would be a pointer to nothing (a use after
  /// free, a double delete); one whose type bits differ from its block's class would read
  /// another class's fields.
  std::string why_not_live(std::uint64_t b, std::uint32_t type, std::uint32_t slot) const {
    if (slot >= 64) return "names slot " + std::to_string(slot) + ", past any block's";
    const auto it = std::lower_bound(index.begin(), index.end(), b);
    if (it == index.end() || *it != b) return "points into block " + std::to_string(b) + ", which holds no objects";
    const sd::block_header& h = headers[static_cast<std::size_t>(it - index.begin())];
    if (h.type != type)
      return "points to a type " + std::to_string(type) + " object in block " + std::to_string(b) + " of type " +
             std::to_string(h.type);
    if ((h.free_slots >> slot) & 1u) return "points to free slot " + std::to_string(slot) + " of block " + std::to_string(b);
    return "";
  }
};

/// Maps heap pointers between a heap in memory and the file's position-independent form.
class pointer_codec {
 public:
  /// `packed`: when the saved blocks are packed into the lowest blocks on load, the saved
  /// indices of the blocks in use, in order (see block placement in restore_heap). `live`: the
  /// saved heap's blocks in use; every pointer must then name a live object in them.
  explicit pointer_codec(const sd::heap_view& v, const std::vector<std::uint64_t>* packed = nullptr,
                         const used_blocks* live = nullptr)
      : data_(reinterpret_cast<std::uintptr_t>(v.data)), block_bytes_(v.block_bytes), blocks_(v.blocks), packed_(packed),
        live_(live) {
    for (std::uint32_t t = 0; t < v.num_types; ++t) capacity_[t] = v.capacity[t];
    num_types_ = v.num_types;
  }

  /// The file form of live pointer p; "" in `why` when it is valid.
  std::uint64_t to_file(std::uint64_t p, std::uint32_t targets, std::string& why) const {
    if (p == 0) return 0;
    if (!valid_bits(p, targets, why)) return 0;
    const std::uintptr_t block = sd::block_address_of(p);
    if (block < data_ || block >= data_ + blocks_ * block_bytes_ || (block - data_) % block_bytes_ != 0) {
      why = "does not point into this heap";
      return 0;
    }
    if (live_ != nullptr) {
      why = live_->why_not_live((block - data_) / block_bytes_, sd::type_of(p), sd::slot_of(p));
      if (!why.empty()) return 0;
    }
    return (p & ~sd::block_address_mask) | (((block - data_) / block_bytes_ + 1) << sd::proxy_bits);
  }
  /// The pointer in this heap for file form f.
  std::uint64_t from_file(std::uint64_t f, std::uint32_t targets, std::string& why) const {
    if (f == 0) return 0;
    if (!valid_bits(f, targets, why)) return 0;
    const std::uint64_t number = (f & sd::block_address_mask) >> sd::proxy_bits;
    if (number == 0) {
      why = "has no block";
      return 0;
    }
    std::uint64_t index = number - 1;
    if (live_ != nullptr) {
      why = live_->why_not_live(index, sd::type_of(f), sd::slot_of(f));
      if (!why.empty()) return 0;
    }
    if (packed_ != nullptr) {
      const auto it = std::lower_bound(packed_->begin(), packed_->end(), index);
      // (Checked above when `live` is given.) A pointer into a block not in use: none to go to.
      if (it == packed_->end() || *it != index) {
        why = "points into block " + std::to_string(index) + ", which holds no objects";
        return 0;
      }
      index = static_cast<std::uint64_t>(it - packed_->begin());
    }
    if (index >= blocks_) {
      why = "names block " + std::to_string(index) + " of a heap of " + std::to_string(blocks_) + " blocks";
      return 0;
    }
    return (f & ~sd::block_address_mask) | (data_ + index * block_bytes_);
  }

 private:
  bool valid_bits(std::uint64_t p, std::uint32_t targets, std::string& why) const {
    const std::uint32_t t = sd::type_of(p);
    if (sd::proxy_offset_of(p) != 0) why = "is not an object pointer (field offset bits set)";
    else if (t >= num_types_ || capacity_[t] == 0) why = "has no concrete class (type id " + std::to_string(t) + ")";
    else if (((targets >> t) & 1u) == 0) why = "points to a class the field cannot hold (type id " + std::to_string(t) + ")";
    else if (sd::capacity_of(p) != capacity_[t] || sd::slot_of(p) >= capacity_[t]) why = "has a slot or capacity its class does not have";
    else return true;
    return false;
  }

  std::uintptr_t data_;
  std::uint64_t block_bytes_, blocks_;
  const std::vector<std::uint64_t>* packed_;
  const used_blocks* live_;
  std::uint32_t capacity_[sd::max_types] = {};
  std::uint32_t num_types_ = 0;
};

/// Applies `map(value, targets)` to every heap-pointer field of every live object of the
/// blocks in `data` (n blocks, in the order of `headers`).
template <class Map>
void for_each_live_pointer(const std::array<std::vector<pointer_field>, sd::max_types>& fields,
                           const std::vector<sd::block_header>& headers, std::byte* data,
                           std::uint64_t block_bytes, const sd::heap_view& v, Map&& map) {
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const auto& h = headers[i];
    const std::uint32_t capacity = v.capacity[h.type];
    std::byte* block = data + i * block_bytes;
    for (std::uint64_t live = ~h.free_slots & v.full_mask(h.type); live != 0; live &= live - 1) {
      const int slot = std::countr_zero(live);
      for (const pointer_field& f : fields[h.type])
        for (std::uint32_t e = 0; e < f.count; ++e) {
          std::byte* at = block + f.offset + (std::uint64_t{e} * capacity + slot) * 8;
          std::uint64_t p;
          std::memcpy(&p, at, 8);
          p = map(p, f.targets, h.type);
          std::memcpy(at, &p, 8);
        }
    }
  }
}

/// Sets the nested levels of a bitmap (host copy, leaves filled): a bit is set when its word
/// one level below is non-zero, as on the device after every operation has finished.
inline void fill_levels(std::uint64_t* all, const bitmap_layout& layout) {
  for (int level = 1; level < layout.levels; ++level) {
    const std::uint64_t* below = all + layout.offset[level - 1];
    std::uint64_t* here = all + layout.offset[level];
    for (std::uint64_t w = 0; w < layout.words[level]; ++w) {
      std::uint64_t bits = 0;
      for (std::uint64_t b = 0; b < 64 && w * 64 + b < layout.words[level - 1]; ++b)
        if (below[w * 64 + b] != 0) bits |= std::uint64_t{1} << b;
      here[w] = bits;
    }
  }
}

/// Copies runs of consecutive blocks between device and host. `to_host`: device -> host.
inline void copy_blocks(const sd::heap_view& v, const std::vector<std::uint64_t>& index, std::byte* host, bool to_host) {
  for (std::size_t i = 0; i < index.size();) {
    std::size_t j = i + 1;
    while (j < index.size() && index[j] == index[j - 1] + 1) ++j;
    const std::size_t bytes = (j - i) * v.block_bytes;
    if (to_host) arch::copy_to_host(host + i * v.block_bytes, v.block(index[i]), bytes);
    else arch::copy_to_device(v.block(index[i]), host + i * v.block_bytes, bytes);
    i = j;
  }
}

template <class Heap>
std::string class_name(std::uint32_t t) {
  std::string name = "type " + std::to_string(t);
  Heap::for_each_type([&]<class T>() {
    if (Heap::template type_id<T> == t) name = std::string(detail::unqualified(sd::type_name<T>()));
  });
  return name;
}

/// The "heap" section of the heap `v` (quiescent: the caller has synchronised).
/// The indices and headers of the blocks in use of heap `v` (quiescent), downloaded.
inline void download_used_blocks(const sd::heap_view& v, std::vector<std::uint64_t>& index,
                                 std::vector<sd::block_header>& used) {
  std::vector<sd::block_header> all(v.blocks);
  arch::copy_to_host(all.data(), v.headers, all.size() * sizeof(sd::block_header));
  for (std::uint64_t b = 0; b < v.blocks; ++b)
    if (all[b].type != sd::no_type) index.push_back(b), used.push_back(all[b]);
}

template <class Heap>
std::vector<std::byte> capture_heap(const sd::heap_view& v, std::uint64_t heap_bytes) {
  std::vector<std::uint64_t> index;
  std::vector<sd::block_header> used;
  download_used_blocks(v, index, used);

  std::vector<std::byte> out;
  byte_sink s(out);
  const auto sig = signature<Heap>();
  s.put(static_cast<std::uint32_t>(sig.size()));
  s.put_bytes(sig);
  s.put(heap_bytes);
  s.put(v.blocks);
  s.put(static_cast<std::uint64_t>(used.size()));
  for (std::size_t i = 0; i < used.size(); ++i) {
    s.put(index[i]);
    s.put(used[i].free_slots);
    s.put(used[i].type);
    s.put(std::uint32_t{0});
  }
  const std::size_t data_at = out.size();
  out.resize(data_at + used.size() * v.block_bytes);
  copy_blocks(v, index, out.data() + data_at, true);

  const used_blocks live{index, used};
  const pointer_codec codec(v, nullptr, &live);
  for_each_live_pointer(pointer_fields<Heap>(), used, out.data() + data_at, v.block_bytes, v,
                        [&](std::uint64_t p, std::uint32_t targets, std::uint32_t type) {
                          std::string why;
                          const std::uint64_t f = codec.to_file(p, targets, why);
                          if (!why.empty()) {
                            std::ostringstream os;
                            os << "cannot save the heap: a heap-pointer field of a " << class_name<Heap>(type)
                               << " holds 0x" << std::hex << p << ", which " << why;
                            throw checkpoint_error(os.str());
                          }
                          return f;
                        });
  return out;
}

/// What a heap section says about the heap it needs.
struct heap_section_info {
  std::uint64_t heap_bytes = 0;
  std::uint64_t saved_blocks = 0;
  std::uint64_t blocks_needed = 0;  ///< highest block index in use + 1
};

/// A parsed and checked heap section (nothing written to any device yet).
struct heap_image {
  heap_section_info info;
  std::vector<std::uint64_t> index;
  std::vector<sd::block_header> headers;
  std::span<const std::byte> data;
};

template <class Heap>
heap_image parse_heap(std::span<const std::byte> payload, const std::string& what) {
  byte_source in(payload, what + ": heap section");
  const auto sig_bytes = in.get<std::uint32_t>();
  const auto sig = in.take(sig_bytes);
  const auto mine = signature<Heap>();
  if (!std::equal(sig.begin(), sig.end(), mine.begin(), mine.end())) {
    const auto theirs = describe_signature(sig, what + ": heap signature");
    const auto ours = describe_signature(mine, "this program's heap signature");
    // Name the first class whose fields differ (such a change also moves every class's
    // capacity and offsets, and the block size: those say less), then the first class placed
    // differently, then the first line.
    std::string diff = "its heap has other classes than this program's";
    auto before_bar = [](const std::string& l) { return l.substr(0, l.find(" | ")); };
    const std::size_t lines = std::max(theirs.size(), ours.size());
    bool found = false;
    for (int pass = 0; pass < 2 && !found; ++pass)
      for (std::size_t i = 1; i <= lines && !found; ++i) {
        const std::size_t k = i % lines;
        const std::string a = k < theirs.size() ? theirs[k] : "(nothing)", b = k < ours.size() ? ours[k] : "(nothing)";
        if (pass == 0 ? before_bar(a) != before_bar(b) : a != b) {
          diff += ": the file has " + a + "; this program has " + b;
          found = true;
        }
      }
    throw checkpoint_error(what + " does not match: " + diff);
  }
  constexpr auto& g = sd::geometry_of<Heap>;
  heap_image img;
  img.info.heap_bytes = in.get<std::uint64_t>();
  img.info.saved_blocks = in.get<std::uint64_t>();
  const auto used = in.get<std::uint64_t>();
  // A heap of that many bytes holds fewer blocks than that (blocks plus their bookkeeping).
  if (img.info.saved_blocks > img.info.heap_bytes / g.block_bytes)
    in.fail("claims " + std::to_string(img.info.saved_blocks) + " blocks in a heap of " +
            std::to_string(img.info.heap_bytes) + " bytes (corrupt)");
  if (used > img.info.saved_blocks || used > in.left() / (24 + g.block_bytes))
    in.fail("claims " + std::to_string(used) + " blocks in use (corrupt)");
  for (std::uint64_t i = 0; i < used; ++i) {
    const auto b = in.get<std::uint64_t>();
    sd::block_header h{};
    h.free_slots = in.get<std::uint64_t>();
    h.type = in.get<std::uint32_t>();
    const auto zero = in.get<std::uint32_t>();
    const bool concrete = h.type < Heap::num_types && g.capacity[h.type] != 0;
    const std::uint64_t full = concrete ? (g.capacity[h.type] >= 64 ? ~0ull : (1ull << g.capacity[h.type]) - 1) : 0;
    if (b >= img.info.saved_blocks || (i > 0 && b <= img.index.back()) || zero != 0 || !concrete ||
        (h.free_slots & ~full) != 0 || h.free_slots == full)
      in.fail("has an invalid header for block " + std::to_string(b) + " (corrupt)");
    img.index.push_back(b);
    img.headers.push_back(h);
  }
  img.data = in.take(used * g.block_bytes);
  if (in.left() != 0) in.fail("has bytes after its last block (corrupt)");
  img.info.blocks_needed = used == 0 ? 0 : img.index.back() + 1;
  return img;
}

/// Block placement. Saved blocks keep their indices when the heap has room for the highest one.
/// Otherwise (the same bytes hold fewer blocks on the other backend, whose counters take more
/// room, and blocks in use are spread over the whole heap) they are packed into the lowest
/// blocks in their order, so that heap order is still the saved one; pointers follow them, and a
/// dangling pointer into a block that was not in use becomes null. True when packing.
inline bool packs_blocks(const heap_image& img, const sd::heap_view& v, const std::string& what) {
  if (img.info.blocks_needed <= v.blocks) return false;
  if (img.index.size() > v.blocks)
    throw checkpoint_error(what + " needs a heap of at least " + std::to_string(img.index.size()) +
                           " blocks (it was saved from " + std::to_string(img.info.heap_bytes) +
                           " bytes); this heap has " + std::to_string(v.blocks));
  return true;
}

/// Writes every block's header to the device, with what the headers imply: its live word, the
/// leaf and upper words of the bitmaps (free, allocated[t], active[t]) and the counters (free
/// blocks; block operations none in flight). For a heap at rest (settled stocks): a checkpoint load.
inline void write_heap_index(const sd::heap_view& v, const std::vector<sd::block_header>& headers, std::uint32_t types) {
  const std::uint64_t words = v.layout.total_words;
  std::vector<std::uint64_t> maps((1 + 2 * std::uint64_t{types}) * words, 0);
  auto set = [&](std::uint64_t map, std::uint64_t b) { maps[map * words + b / 64] |= std::uint64_t{1} << (b % 64); };
  auto counters = std::make_unique<sd::heap_counters>();
  std::vector<std::uint64_t> live(v.blocks, 0);
  long long free_blocks = 0;
  for (std::uint64_t b = 0; b < v.blocks; ++b) {
    const sd::block_header& h = headers[b];
    if (h.type == sd::no_type) {
      set(0, b), ++free_blocks;
      continue;
    }
    live[b] = ~h.free_slots & v.full_mask(h.type);
    set(1 + h.type, b);
    if (h.free_slots != 0) set(1 + types + h.type, b);
  }
  counters->free_blocks[0] = free_blocks;
  for (std::uint64_t m = 0; m < 1 + 2 * std::uint64_t{types}; ++m) fill_levels(maps.data() + m * words, v.layout);
  arch::copy_to_device(v.headers, headers.data(), headers.size() * sizeof(sd::block_header));
  arch::copy_to_device(v.live, live.data(), live.size() * sizeof(std::uint64_t));
  arch::copy_to_device(v.bitmap_words, maps.data(), maps.size() * sizeof(std::uint64_t));
  arch::copy_to_device(v.counters, counters.get(), sizeof(sd::heap_counters));
}

/// Replaces the contents of heap `v` (cleared, quiescent) with `img`. Everything is checked and
/// relocated on the host first, so a bad file leaves the device untouched.
template <class Heap>
void restore_heap(const sd::heap_view& v, const heap_image& img, const std::string& what) {
  const bool packed = packs_blocks(img, v, what);
  std::vector<std::uint64_t> placed = img.index;
  if (packed)
    for (std::size_t i = 0; i < placed.size(); ++i) placed[i] = i;
  std::vector<std::byte> data(img.data.begin(), img.data.end());
  const used_blocks live{img.index, img.headers};
  const pointer_codec codec(v, packed ? &img.index : nullptr, &live);
  for_each_live_pointer(pointer_fields<Heap>(), img.headers, data.data(), v.block_bytes, v,
                        [&](std::uint64_t f, std::uint32_t targets, std::uint32_t type) {
                          std::string why;
                          const std::uint64_t p = codec.from_file(f, targets, why);
                          if (!why.empty())
                            throw checkpoint_error(what + " is corrupt: a heap-pointer field of a " +
                                                   class_name<Heap>(type) + " " + why);
                          return p;
                        });

  std::vector<sd::block_header> headers(v.blocks, sd::block_header{0, sd::no_type, 0});
  for (std::size_t i = 0; i < placed.size(); ++i) headers[placed[i]] = img.headers[i];

  // Only copies from here on, no launches: a load costs no more than its bytes.
  copy_blocks(v, placed, data.data(), false);
  arch::fill_bytes(v.errors, 0, sizeof(sd::heap_errors));
  write_heap_index(v, headers, Heap::num_types);
  arch::synchronize();
}

/// A "pointers" section: u64 count, then the pointers in file form.
template <class Heap>
std::vector<std::byte> capture_pointers(const sd::heap_view& v, const void* device, std::uint64_t n,
                                        std::uint32_t targets, const std::string& name) {
  std::vector<std::uint64_t> p(n);
  if (n > 0) arch::copy_to_host(p.data(), device, n * 8);
  std::vector<std::uint64_t> index;
  std::vector<sd::block_header> used;
  download_used_blocks(v, index, used);
  const used_blocks live{index, used};
  const pointer_codec codec(v, nullptr, &live);
  std::vector<std::byte> out;
  byte_sink s(out);
  s.put(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string why;
    const std::uint64_t f = codec.to_file(p[i], targets, why);
    if (!why.empty()) {
      std::ostringstream os;
      os << "cannot save pointers '" << name << "': element " << i << " holds 0x" << std::hex << p[i] << ", which " << why;
      throw checkpoint_error(os.str());
    }
    s.put(f);
  }
  return out;
}

/// The pointers of a "pointers" section relocated into heap `v`, which holds (or is about to hold)
/// `img` as restore_heap places it. Reads only the section and the heap's geometry, so a caller
/// can check every section before it touches the heap.
template <class Heap>
std::vector<std::uint64_t> decode_pointers(const sd::heap_view& v, const heap_image& img, std::span<const std::byte> payload,
                                           std::uint64_t n, std::uint32_t targets, const std::string& what) {
  byte_source in(payload, what);
  const auto count = in.get<std::uint64_t>();
  if (count != n)
    in.fail("holds " + std::to_string(count) + " pointers; " + std::to_string(n) + " were asked for");
  if (in.left() != n * 8) in.fail("has " + std::to_string(in.left()) + " bytes for " + std::to_string(n) + " pointers (corrupt)");
  const used_blocks live{img.index, img.headers};
  const pointer_codec codec(v, packs_blocks(img, v, what) ? &img.index : nullptr, &live);
  std::vector<std::uint64_t> p(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string why;
    p[i] = codec.from_file(in.get<std::uint64_t>(), targets, why);
    if (!why.empty()) in.fail("is corrupt: element " + std::to_string(i) + " " + why);
  }
  return p;
}

/// Relocates a "pointers" section into heap `v`, which holds `img` (placed as restore_heap did).
template <class Heap>
void restore_pointers(const sd::heap_view& v, const heap_image& img, std::span<const std::byte> payload,
                      void* device, std::uint64_t n, std::uint32_t targets, const std::string& what) {
  const std::vector<std::uint64_t> p = decode_pointers<Heap>(v, img, payload, n, targets, what);
  if (n > 0) arch::copy_to_device(device, p.data(), n * 8);
}

}  // namespace shoal::checkpoint::detail
