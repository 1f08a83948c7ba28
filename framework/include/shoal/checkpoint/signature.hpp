#pragma once
/// @file
/// What a heap's checkpoint depends on, computed at compile time from its classes: the type
/// signature (class names, bases, capacities, block size, and per field its kind, element size,
/// alignment, count and offset in a block), and where the heap-pointer fields are, which are
/// relocated on load.
///
/// A field whose element is `U*` with U a class of the same heap is a heap pointer: it is
/// stored in the file relative to the heap and relocated on load (arrays `U*[N]` too). Pointers
/// to anything else (`int*`, `void*`, a host struct), pointers in nested arrays, and member
/// pointers would dangle after a load and make a heap not `savable` (a compile-time error in
/// save/load). What cannot be seen at compile time is NOT relocated: a pointer inside a struct
/// field, or an address kept in an integer; such a heap loads, but those values are the old
/// addresses.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "shoal/checkpoint/bytes.hpp"
#include "shoal/heap/heap.hpp"

namespace shoal::checkpoint {

/// How a field's elements are stored and compared in a signature; heap pointers are relocated.
enum class field_kind : std::uint32_t {
  heap_pointer = 1,
  signed_integer = 2,
  unsigned_integer = 3,
  boolean = 4,
  floating = 5,
  enumeration = 6,
  other = 7,  ///< a struct or array element: copied byte for byte
};

/// One field of a class as the type signature records it (detail::describe_field).
struct field_record {
  field_kind kind;  ///< what the elements are
  std::uint32_t element_bytes;  ///< sizeof an element
  std::uint32_t element_align;  ///< alignof an element
  std::uint32_t count;    ///< N of a `T[N]` field, else 1
  std::uint32_t targets;  ///< heap pointers: the type ids it may point to (bit mask)
};

namespace detail {

template <class Heap, class E>
inline constexpr bool is_heap_pointer =
    std::is_pointer_v<E> && Heap::template contains<std::remove_cv_t<std::remove_pointer_t<E>>>;

/// Element types whose values would be wrong after a load and that we can see.
template <class Heap, class E>
inline constexpr bool is_unsavable =
    (std::is_pointer_v<E> && !is_heap_pointer<Heap, E>) || std::is_member_pointer_v<E> ||
    (std::is_array_v<E> && (std::is_pointer_v<std::remove_all_extents_t<E>> ||
                            std::is_member_pointer_v<std::remove_all_extents_t<E>>));

/// Concrete classes a `U*` may point to: U and its subclasses. (Folds over the class list
/// rather than calling for_each_type with a template lambda: nvcc 13 crashes on template
/// lambdas evaluated in these constant expressions.)
template <class U, class... V>
constexpr std::uint32_t subclass_mask_of(type_list<V...>) {
  std::uint32_t mask = 0;
  std::uint32_t id = 0;
  ((mask |= ((std::is_same_v<U, V> || std::is_base_of_v<U, V>) && !abstract_object<V>) ? std::uint32_t{1} << id : 0u,
    ++id),
   ...);
  return mask;
}
template <class Heap, class U>
constexpr std::uint32_t subclass_mask() {
  return subclass_mask_of<U>(typename Heap::types{});
}

template <class Heap, class F>
constexpr field_record describe_field() {
  using shape = shoal::detail::field_shape<F>;
  using E = typename shape::element;
  field_record r{field_kind::other, sizeof(E), alignof(E), static_cast<std::uint32_t>(shape::count), 0};
  if constexpr (is_heap_pointer<Heap, E>) {
    r.kind = field_kind::heap_pointer;
    r.targets = subclass_mask<Heap, std::remove_cv_t<std::remove_pointer_t<E>>>();
  } else if constexpr (std::is_same_v<std::remove_cv_t<E>, bool>) {
    r.kind = field_kind::boolean;
  } else if constexpr (std::is_enum_v<E>) {
    r.kind = field_kind::enumeration;
  } else if constexpr (std::is_integral_v<E>) {
    r.kind = std::is_signed_v<E> ? field_kind::signed_integer : field_kind::unsigned_integer;
  } else if constexpr (std::is_floating_point_v<E>) {
    r.kind = field_kind::floating;
  }
  return r;
}

template <class Heap, class... Fs>
constexpr std::array<field_record, sizeof...(Fs)> describe_fields(type_list<Fs...>) {
  return {describe_field<Heap, Fs>()...};
}

template <class Heap, class... Fs>
constexpr bool fields_savable(type_list<Fs...>) {
  return (!is_unsavable<Heap, typename shoal::detail::field_shape<Fs>::element> && ...);
}

/// "Fish" from "wator::Fish" or "{anonymous}::Fish": namespaces are left out, because nvcc's
/// front end renames anonymous namespaces and a file must load on both backends.
inline std::string_view unqualified(std::string_view name) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i + 1 < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    else if (name[i] == '>') --depth;
    else if (depth == 0 && name[i] == ':' && name[i + 1] == ':') start = i + 2;
  }
  return name.substr(start);
}

}  // namespace detail

namespace detail {
template <class Heap, class... T>
constexpr bool all_savable(type_list<T...>) {
  return (fields_savable<Heap>(shoal::detail::all_fields_t<T>{}) && ...);
}
}  // namespace detail
/// True when every field of every class of the heap can be saved and restored (see the file
/// comment); save and load refuse other heaps at compile time.
template <class Heap>
inline constexpr bool savable = detail::all_savable<Heap>(typename Heap::types{});

/// Instantiated by save and load: stops the build for a heap that is not savable.
template <class Heap>
constexpr void require_savable() {
  static_assert(savable<Heap>,
                "this heap cannot be checkpointed: a field holds a pointer that is not to a class of this "
                "heap (or pointers in a nested array, or a member pointer), which would dangle after a load");
}

/// A heap-pointer field of a class, at the class's capacity: `count` 8-byte arrays of
/// `capacity` elements starting at `offset` in the block (element i of slot s at
/// offset + (i * capacity + s) * 8).
struct pointer_field {
  std::uint64_t offset;  ///< byte offset of the first array in the block
  std::uint32_t count;  ///< arrays: N of a `U*[N]` field, else 1
  std::uint32_t targets;  ///< the type ids it may point to (bit mask)
};

/// The heap-pointer fields of every class (indexed by type id).
template <class Heap>
std::array<std::vector<pointer_field>, shoal::detail::max_types> pointer_fields() {
  std::array<std::vector<pointer_field>, shoal::detail::max_types> out;
  constexpr auto& g = shoal::detail::geometry_of<Heap>;
  Heap::for_each_type([&]<class T>() {
    if constexpr (!abstract_object<T>) {
      using fields = shoal::detail::all_fields_t<T>;
      constexpr std::uint32_t t = Heap::template type_id<T>;
      constexpr auto records = detail::describe_fields<Heap>(fields{});
      for (std::size_t k = 0; k < records.size(); ++k)
        if (records[k].kind == field_kind::heap_pointer)
          out[t].push_back({shoal::detail::field_offset(fields{}, k, g.capacity[t]), records[k].count, records[k].targets});
    }
  });
  return out;
}

/// The type signature of a heap as bytes (stored in the heap section and compared on load).
template <class Heap>
std::vector<std::byte> signature() {
  std::vector<std::byte> out;
  byte_sink s(out);
  constexpr auto& g = shoal::detail::geometry_of<Heap>;
  // The pointer encoding (docs/ARCHITECTURE.md §5) is part of what a file's pointers mean.
  s.put(static_cast<std::uint32_t>(shoal::detail::proxy_bits | shoal::detail::slot_shift << 8 |
                                   shoal::detail::capacity_shift << 16 | shoal::detail::type_shift << 24));
  s.put(static_cast<std::uint32_t>(Heap::num_types));
  s.put(static_cast<std::uint64_t>(g.block_bytes));
  Heap::for_each_type([&]<class T>() {
    using fields = shoal::detail::all_fields_t<T>;
    constexpr std::uint32_t t = Heap::template type_id<T>;
    s.put_string(detail::unqualified(shoal::detail::type_name<T>()));
    s.put(static_cast<std::uint32_t>(abstract_object<T>));
    std::uint32_t base = 0xFFFFFFFFu;
    if constexpr (!std::is_void_v<typename T::shoal_base>) base = Heap::template type_id<typename T::shoal_base>;
    s.put(base);
    s.put(static_cast<std::uint32_t>(g.capacity[t]));
    constexpr auto records = detail::describe_fields<Heap>(fields{});
    s.put(static_cast<std::uint32_t>(records.size()));
    for (std::size_t k = 0; k < records.size(); ++k) {
      const auto& r = records[k];
      s.put(static_cast<std::uint32_t>(r.kind));
      s.put(r.element_bytes);
      s.put(r.element_align);
      s.put(r.count);
      s.put(r.targets);
      s.put(static_cast<std::uint64_t>(shoal::detail::field_offset(fields{}, k, g.capacity[t])));
    }
  });
  return out;
}

/// One line per part of a signature: first "pointer layout .., N classes, blocks of B bytes",
/// then per class "class 1 'Fish' base 0, fields: signed 4B/4, ... | 64 slots, fields at 0 256 ..."
/// (what the class is, then " | " and where it lies in a block), to say where two differ. Throws checkpoint_error on bytes that are not a signature.
inline std::vector<std::string> describe_signature(std::span<const std::byte> bytes, const std::string& what) {
  static constexpr const char* kinds[] = {"?", "heap pointer", "signed", "unsigned", "bool", "float", "enum", "bytes"};
  byte_source in(bytes, what);
  std::vector<std::string> lines;
  const auto encoding = in.get<std::uint32_t>();
  const auto types = in.get<std::uint32_t>();
  const auto block = in.get<std::uint64_t>();
  if (types > static_cast<std::uint32_t>(shoal::detail::max_types)) in.fail("names " + std::to_string(types) + " classes");
  lines.push_back("pointer layout " + std::to_string(encoding & 0xFF) + "/" + std::to_string((encoding >> 8) & 0xFF) +
                  "/" + std::to_string((encoding >> 16) & 0xFF) + "/" + std::to_string(encoding >> 24) + ", " +
                  std::to_string(types) + " classes, blocks of " + std::to_string(block) + " bytes");
  for (std::uint32_t t = 0; t < types; ++t) {
    std::string line = "class " + std::to_string(t) + " '" + in.get_string(256) + "'";
    const auto abstract = in.get<std::uint32_t>();
    const auto base = in.get<std::uint32_t>();
    const auto capacity = in.get<std::uint32_t>();
    const auto fields = in.get<std::uint32_t>();
    if (fields > 255) in.fail("gives a class " + std::to_string(fields) + " fields");
    line += abstract ? " (abstract)" : "";
    if (base != 0xFFFFFFFFu) line += " base " + std::to_string(base);
    line += ", fields:";
    std::string placement = " | " + std::to_string(capacity) + " slots, fields at";
    for (std::uint32_t k = 0; k < fields; ++k) {
      const auto kind = in.get<std::uint32_t>();
      const auto bytes_each = in.get<std::uint32_t>();
      const auto align = in.get<std::uint32_t>();
      const auto count = in.get<std::uint32_t>();
      const auto targets = in.get<std::uint32_t>();
      const auto offset = in.get<std::uint64_t>();
      line += std::string(k ? "," : "") + " " + (kind < 8 ? kinds[kind] : "?") + " " + std::to_string(bytes_each) +
              "B/" + std::to_string(align) + (count > 1 ? "[" + std::to_string(count) + "]" : "") +
              (targets ? " to mask " + std::to_string(targets) : "");
      placement += " " + std::to_string(offset);
    }
    line += placement;
    lines.push_back(line);
  }
  if (in.left() != 0) in.fail("has bytes after its last class");
  return lines;
}

}  // namespace shoal::checkpoint
