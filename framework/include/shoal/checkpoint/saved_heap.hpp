#pragma once
/// @file
/// The objects of a checkpoint's heap section, read on the host before anything is copied to a
/// device: what an app checks before it resumes from a file it did not write (grid indices in
/// range, floats finite, each cell's occupant pointing back at it).
///
///   const shoal::checkpoint::saved_heap<Ocean> saved(reader);      // parses and checks the section
///   saved.for_each<Fish>([&](saved_heap<Ocean>::object o) {
///     const std::uint32_t cell = saved.read<Fish>(o, &Fish::cell);  // the field's saved value
///   });
///   const auto cells = saved.pointers(reader, "wator.cells", n);   // each element null or a live object
///
/// Structure (block headers, pointer liveness, classes) is checked by the loader itself
/// (heap_image.hpp); this is for what only the app knows.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "shoal/checkpoint/error.hpp"
#include "shoal/checkpoint/file.hpp"
#include "shoal/checkpoint/heap_image.hpp"

namespace shoal::checkpoint {

/// The heap section of a checkpoint, parsed and checked on the host without a device, so that
/// an app can check its objects' saved fields before it loads them: for_each() visits the
/// objects of a class, read() gives a field's saved value, pointer() / pointers() resolve
/// saved heap pointers to objects.
template <class Heap>
class saved_heap {
 public:
  /// One live object of the section: its block (position among the blocks in use) and slot.
  struct object {
    std::size_t block;  ///< position among the blocks in use (below blocks())
    std::uint32_t slot;  ///< slot in the block
    std::uint32_t type;  ///< type id of its class
    /// Same block, slot and type.
    bool operator==(const object&) const = default;
  };

  /// Parses and checks the heap section of `r` as the loader does (its type signature against
  /// Heap's, its structure); throws checkpoint_error if it is missing or does not fit.
  explicit saved_heap(const reader& r)
      : name_(r.name()), img_(detail::parse_heap<Heap>(r.section(section_kind::heap, "heap"), r.name())) {}

  /// The checkpoint, for messages: "checkpoint '<path>'".
  const std::string& name() const { return name_; }
  /// Blocks in use; object::block is below this.
  std::size_t blocks() const { return img_.index.size(); }
  /// A number per object slot, dense: block * 64 + slot (for "seen" arrays).
  static std::size_t ordinal(const object& o) { return o.block * 64 + o.slot; }

  /// Calls f(object) for every live object of class T (exactly T, not its subclasses).
  template <class T, class F>
  void for_each(F&& f) const {
    constexpr std::uint32_t t = Heap::template type_id<T>;
    for (std::size_t i = 0; i < img_.headers.size(); ++i) {
      const auto& h = img_.headers[i];
      if (h.type != t) continue;
      for (std::uint64_t live = ~h.free_slots & full_mask(t); live != 0; live &= live - 1)
        f(object{i, static_cast<std::uint32_t>(std::countr_zero(live)), t});
    }
  }

  /// The saved value of field `member` (declared in C or a base of C) of object `o`, of class C;
  /// element `e` of an array field. Heap pointers are in the file's form (see pointer()).
  template <class C, class Owner, int Index, class T, class M>
  typename shoal::detail::field_shape<T>::element read(const object& o, shoal::field<Owner, Index, T> M::*,
                                                       std::size_t e = 0) const {
    using element = typename shoal::detail::field_shape<T>::element;
    static_assert(std::is_base_of_v<Owner, C> || std::is_same_v<Owner, C>, "the field is not one of C's");
    constexpr std::size_t chain = shoal::detail::all_fields_t<Owner>::size -
                                  shoal::detail::own_fields<Owner>::type::size + Index;
    constexpr std::uint32_t t = Heap::template type_id<C>;
    constexpr auto& g = shoal::detail::geometry_of<Heap>;
    if (o.type != t || e >= shoal::detail::field_shape<T>::count)
      throw checkpoint_error(name_ + ": read of a field of another class (a bug of the caller)");
    const std::uint64_t capacity = g.capacity[t];
    const std::uint64_t at = o.block * g.block_bytes +
                             shoal::detail::field_offset(shoal::detail::all_fields_t<C>{}, chain, capacity) +
                             (e * capacity + o.slot) * sizeof(element);
    element v;
    std::memcpy(&v, img_.data.data() + at, sizeof(element));
    return v;
  }

  /// The live object a pointer in the file's form names; nullopt for null. Throws
  /// checkpoint_error naming `what` when it names no live object.
  std::optional<object> pointer(std::uint64_t f, const std::string& what) const {
    if (f == 0) return std::nullopt;
    const std::uint64_t number = (f & shoal::detail::block_address_mask) >> shoal::detail::proxy_bits;
    const std::uint32_t type = shoal::detail::type_of(f), slot = shoal::detail::slot_of(f);
    std::string why;
    if (number == 0) why = "has no block";
    else if (type >= Heap::num_types || slot >= shoal::detail::geometry_of<Heap>.capacity[type] ||
             shoal::detail::proxy_offset_of(f) != 0 || shoal::detail::capacity_of(f) != shoal::detail::geometry_of<Heap>.capacity[type])
      why = "is not a pointer to an object of this heap";
    else why = detail::used_blocks{img_.index, img_.headers}.why_not_live(number - 1, type, slot);
    const auto it = std::lower_bound(img_.index.begin(), img_.index.end(), number - 1);
    if (!why.empty()) throw checkpoint_error(name_ + " is corrupt: " + what + " " + why);
    return object{static_cast<std::size_t>(it - img_.index.begin()), slot, type};
  }

  /// The `n` elements of pointers section `section`, each null or a live object.
  std::vector<std::optional<object>> pointers(const reader& r, std::string_view section, std::uint64_t n) const {
    const auto payload = r.section(section_kind::pointers, section);
    const std::string what = name_ + ": pointers '" + std::string(section) + "'";
    byte_source in(payload, what);
    if (in.get<std::uint64_t>() != n || in.left() != n * 8)
      in.fail("does not hold " + std::to_string(n) + " pointers (corrupt)");
    std::vector<std::optional<object>> out;
    out.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i)
      out.push_back(pointer(in.get<std::uint64_t>(), "pointers '" + std::string(section) + "' element " + std::to_string(i)));
    return out;
  }

 private:
  static std::uint64_t full_mask(std::uint32_t t) {
    const std::uint32_t c = shoal::detail::geometry_of<Heap>.capacity[t];
    return c >= 64 ? ~0ull : (1ull << c) - 1;
  }

  std::string name_;
  detail::heap_image img_;
};

}  // namespace shoal::checkpoint
