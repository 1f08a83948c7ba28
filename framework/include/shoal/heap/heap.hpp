#pragma once
/// @file
/// shoal::heap<Types...>: the compile-time list of every class that lives in a heap. Classes
/// may be declared before they are defined:
///
///   class Cell; class Agent; class Fish; class Shark;
///   using Model = shoal::heap<Cell, Agent, Fish, Shark>;
///
/// A class's type id is its index in the list. Block sizes and capacities are computed on the
/// host once all classes are complete (heap_geometry).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "shoal/dsl/field.hpp"
#include "shoal/heap/pointer.hpp"

namespace shoal {

namespace detail {
template <class T, class... Ts>
constexpr int index_of() {
  int i = 0;
  const bool found = ((std::is_same_v<T, Ts> ? true : (++i, false)) || ...);
  return found ? i : -1;
}

/// Readable type name for messages ("Fish"), from the compiler's function signature.
template <class T>
constexpr std::string_view type_name() {
#if defined(__clang__) || defined(__GNUC__)
  constexpr std::string_view f = __PRETTY_FUNCTION__;
  constexpr std::string_view key = "T = ";
  constexpr auto start = f.find(key) + key.size();
  constexpr auto end = f.find_first_of(";]", start);
  return f.substr(start, end - start);
#else
  return "object";
#endif
}
}  // namespace detail

/// A class marked abstract is never instantiated: it gets no blocks and does not take part in
/// the block-size rule. Write SHOAL_ABSTRACT(Agent) inside class Agent.
#define SHOAL_ABSTRACT(Class) using shoal_abstract_class = Class;

template <class T>
concept abstract_object = requires { typename T::shoal_abstract_class; } &&
                          std::is_same_v<typename T::shoal_abstract_class, T>;

/// The compile-time list of every class of a model (see the file comment); at most 32 classes.
template <class... Types>
class heap {
  static_assert(sizeof...(Types) > 0, "shoal::heap needs at least one class");
  static_assert(sizeof...(Types) <= detail::max_types, "shoal::heap holds at most 32 classes");

 public:
  /// The classes, as a type_list.
  using types = type_list<Types...>;
  /// Number of classes.
  static constexpr std::uint32_t num_types = sizeof...(Types);

  /// Whether T is one of the classes.
  template <class T>
  static constexpr bool contains = detail::index_of<T, Types...>() >= 0;

  /// T's type id: its index in the list (a compile error if T is not in it).
  template <class T>
  static constexpr std::uint32_t type_id = [] {
    static_assert(contains<T>,
                  "this class is not registered in the shoal::heap<...> it names: add it to the "
                  "heap's list of classes");
    return static_cast<std::uint32_t>(detail::index_of<T, Types...>());
  }();

  /// Calls `f.template operator()<T>()` for every class T of the list.
  template <class F>
  static constexpr void for_each_type(F&& f) {
    (f.template operator()<Types>(), ...);
  }
};

namespace detail {

/// Block size and per-type capacities (host side; every class must be complete here).
struct heap_geometry {
  std::uint64_t block_bytes = 0;
  std::array<std::uint32_t, max_types> capacity{};
  std::array<std::uint64_t, max_types> row_bytes{};  // bytes of one object's fields
};

template <class T>
constexpr std::uint64_t object_data_bytes(std::uint64_t capacity) {
  return data_bytes(all_fields_t<T>{}, capacity);
}

template <class Heap>
constexpr heap_geometry compute_geometry() {
  heap_geometry g;
  // The smallest concrete class gets 64 slots and fixes the block size; the largest must fit
  // at least once.
  std::uint64_t smallest = ~std::uint64_t{0}, largest_one = 0;
  Heap::for_each_type([&]<class T>() {
    static_assert(sizeof(T) < block_alignment,
                  "a shoal class may have at most 255 fields (including its bases')");
    if constexpr (!abstract_object<T>) {
      smallest = std::min(smallest, object_data_bytes<T>(64));
      largest_one = std::max(largest_one, object_data_bytes<T>(1));
    }
  });
  if (smallest == ~std::uint64_t{0}) smallest = block_alignment;  // only abstract classes
  std::uint64_t block = std::max({smallest, largest_one, block_alignment});
  block = (block + block_alignment - 1) / block_alignment * block_alignment;
  g.block_bytes = block;
  Heap::for_each_type([&]<class T>() {
    constexpr std::uint32_t id = Heap::template type_id<T>;
    g.row_bytes[id] = object_data_bytes<T>(1);
    if constexpr (!abstract_object<T>) {
      std::uint32_t c = 64;
      while (c > 1 && object_data_bytes<T>(c) > block) --c;
      g.capacity[id] = c;
    }
  });
  return g;
}

/// The geometry as a compile-time constant: do-all kernels divide by a constant capacity.
template <class Heap>
inline constexpr heap_geometry geometry_of = compute_geometry<Heap>();

/// (field.hpp) The offset of a field array is a function of the block's capacity, a compile-time
/// constant per class: a select among the classes that have the field (one for a class without
/// subclasses) instead of summing the rounded sizes of the fields before it at run time, which
/// put a chain of integer operations between loading a pointer and loading through it.
template <class Owner, std::size_t K>
SHOAL_HD SHOAL_FORCEINLINE std::uint64_t field_offset_of(std::uint64_t p) {
  using Model = typename Owner::shoal_model;
  const std::uint32_t type = type_of(p);
  std::uint64_t offset = 0;
  Model::for_each_type([&]<class V>() {
    if constexpr (!abstract_object<V> && std::is_base_of_v<Owner, V>) {
      constexpr std::uint32_t id = Model::template type_id<V>;
      constexpr std::uint64_t at = field_offset(all_fields_t<V>{}, K, geometry_of<Model>.capacity[id]);
      if (type == id) offset = at;
    }
  });
  return offset;
}

}  // namespace detail
}  // namespace shoal
