#pragma once
/// @file
/// Field declaration and field proxies. A class declares its fields once:
///
///   class Fish : public shoal::object<Model, Fish, Agent> {
///    public:
///     SHOAL_FIELDS(Fish, (float2, velocity), (Cell*, position), (int[4], counters))
///     ...
///   };
///
/// Each field becomes a 1-byte proxy member that reads and writes the field's element in the
/// block's Structure-of-Arrays layout (see heap/pointer.hpp for how it finds it). Proxies
/// convert to `T&`, support assignment and compound assignment, `->` (on pointers: the
/// pointed-to object; on structs: the struct's members) and `[]` on array fields. They cannot
/// be copied (a copy would not know where its object lives): write `int e = energy;` or
/// `auto e = energy.get();`, not `auto e = energy;`.

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "shoal/config.hpp"
#include "shoal/dsl/detail/pp.hpp"
#include "shoal/heap/pointer.hpp"

namespace shoal {

/// A list of types, for compile-time computations (fields of a class, classes of a heap).
template <class... Ts>
struct type_list {
  /// Number of types in the list.
  static constexpr std::size_t size = sizeof...(Ts);
};

namespace detail {

template <class A, class B>
struct concat;
template <class... A, class... B>
struct concat<type_list<A...>, type_list<B...>> {
  using type = type_list<A..., B...>;
};

/// Own fields of T: declared by SHOAL_FIELDS inside T itself (not inherited from a base).
template <class T>
struct own_fields {
  using type = type_list<>;
};
template <class T>
  requires std::is_same_v<typename T::shoal_fields_owner, T>
struct own_fields<T> {
  using type = typename T::shoal_own_fields;
};

/// All fields of T, base classes' first (the order of the SOA arrays in T's blocks).
template <class T>
struct all_fields;
template <>
struct all_fields<void> {
  using type = type_list<>;
};
template <class T>
struct all_fields {
  using type = typename concat<typename all_fields<typename T::shoal_base>::type,
                               typename own_fields<T>::type>::type;
};
template <class T>
using all_fields_t = typename all_fields<T>::type;

/// The name of field k of T's list (bases' first), as SHOAL_FIELDS spells it.
template <class T>
constexpr const char* field_name(std::size_t k) {
  constexpr std::size_t inherited = all_fields_t<T>::size - own_fields<T>::type::size;
  if constexpr (inherited > 0)
    if (k < inherited) return field_name<typename T::shoal_base>(k);
  if constexpr (own_fields<T>::type::size > 0) return T::shoal_own_field_name(static_cast<int>(k - inherited));
  return "";
}

template <class T>
struct field_shape {
  using element = T;
  static constexpr std::size_t count = 1;
};
template <class T, std::size_t N>
struct field_shape<T[N]> {
  using element = T;
  static constexpr std::size_t count = N;
};

/// Field arrays start 32-byte aligned (a GPU memory sector), 128-byte aligned (a full
/// warp-wide line) once they are that long.
SHOAL_HD constexpr std::uint64_t field_array_bytes(std::uint64_t bytes) {
  return bytes >= 128 ? (bytes + 127) / 128 * 128 : (bytes + 31) / 32 * 32;
}

/// Byte offset of field `k` of the list in a block of `capacity` slots.
template <class... Fs>
SHOAL_HD constexpr std::uint64_t field_offset(type_list<Fs...>, std::size_t k,
                                              std::uint64_t capacity) {
  constexpr std::size_t sizes[] = {sizeof(Fs)..., 0};
  std::uint64_t offset = 0;
  for (std::size_t j = 0; j < k; ++j) offset += field_array_bytes(capacity * sizes[j]);
  return offset;
}

/// Bytes of block data that `capacity` objects with these fields need.
template <class... Fs>
SHOAL_HD constexpr std::uint64_t data_bytes(type_list<Fs...> list, std::uint64_t capacity) {
  return field_offset(list, sizeof...(Fs), capacity);
}

/// Byte offset, in the block of the object `p` points to, of field `K` of Owner's field list
/// (base classes' first). Defined in heap/heap.hpp, where the heap's geometry is known: for each
/// class that has the field it is a compile-time constant, picked by the type id in `p`.
template <class Owner, std::size_t K>
SHOAL_HD SHOAL_FORCEINLINE std::uint64_t field_offset_of(std::uint64_t p);

}  // namespace detail

/// Proxy of field number `Index` (among `Owner`'s own fields) of type `T`.
template <class Owner, int Index, class T>
class field {
  using shape = detail::field_shape<T>;
  using element = typename shape::element;

 public:
  field() = default;
  field(const field&) = delete;
  /// Assigns the value of `other`'s element, not the proxy (`a.energy = b.energy` copies the energy).
  field& operator=(const field& other) { return *this = other.get(); }

  /// Address of this object's element (of element `i` for array fields).
  SHOAL_HD element* address(std::size_t i = 0) const {
    const std::uint64_t p = reinterpret_cast<std::uintptr_t>(this);
    const std::uint64_t capacity = detail::capacity_of(p);
    constexpr std::size_t chain_index =
        detail::all_fields_t<Owner>::size - detail::own_fields<Owner>::type::size + Index;
    auto* array = reinterpret_cast<element*>(detail::block_address_of(p) +
                                             detail::field_offset_of<Owner, chain_index>(p));
    return array + i * capacity + detail::slot_of(p);
  }

  /// This object's element, for `auto e = energy.get();` (proxies cannot be copied).
  SHOAL_HD element& get() const
    requires(shape::count == 1)
  {
    return *address();
  }
  /// Converts to this object's element, so a field reads like a variable (`int e = energy;`).
  SHOAL_HD operator element&() const
    requires(shape::count == 1)
  {
    return *address();
  }
  /// Element `i` of this object's array field.
  SHOAL_HD element& operator[](std::size_t i) const
    requires(shape::count > 1)
  {
    return *address(i);
  }
  /// Number of elements: N for an array field `T[N]`, else 1.
  static constexpr std::size_t size() { return shape::count; }

  /// Assigns `value` to this object's element.
  template <class U>
  SHOAL_HD field& operator=(U&& value)
    requires(shape::count == 1 && std::is_assignable_v<element&, U &&>)
  {
    *address() = std::forward<U>(value);
    return *this;
  }

  /// Pointer fields: the pointed-to object. Struct fields: the struct, for `->member`.
  SHOAL_HD auto operator->() const
    requires(shape::count == 1)
  {
    if constexpr (std::is_pointer_v<element>) {
      return *address();
    } else {
      return address();
    }
  }

#define SHOAL_FIELD_COMPOUND(op)                                        \
  template <class U>                                                    \
  SHOAL_HD field& operator op(U&& value)                                \
    requires(shape::count == 1)                                         \
  {                                                                     \
    *address() op std::forward<U>(value);                               \
    return *this;                                                       \
  }
  SHOAL_FIELD_COMPOUND(+=)
  SHOAL_FIELD_COMPOUND(-=)
  SHOAL_FIELD_COMPOUND(*=)
  SHOAL_FIELD_COMPOUND(/=)
  SHOAL_FIELD_COMPOUND(%=)
  SHOAL_FIELD_COMPOUND(&=)
  SHOAL_FIELD_COMPOUND(|=)
  SHOAL_FIELD_COMPOUND(^=)
  SHOAL_FIELD_COMPOUND(<<=)
  SHOAL_FIELD_COMPOUND(>>=)
#undef SHOAL_FIELD_COMPOUND

  /// Pre-increments this object's element; returns the element.
  SHOAL_HD element& operator++() requires(shape::count == 1) { return ++*address(); }
  /// Pre-decrements this object's element; returns the element.
  SHOAL_HD element& operator--() requires(shape::count == 1) { return --*address(); }
  /// Post-increments this object's element; returns its old value.
  SHOAL_HD element operator++(int) requires(shape::count == 1) { return (*address())++; }
  /// Post-decrements this object's element; returns its old value.
  SHOAL_HD element operator--(int) requires(shape::count == 1) { return (*address())--; }

 private:
  char unused_;  // one byte: each proxy gets its own offset in the C++ object
};

}  // namespace shoal

#define SHOAL_FIELD_TYPE_(i, t) , SHOAL_PP_FIRST(t)
#define SHOAL_FIELD_DECL_(i, t) ::shoal::field<shoal_fields_owner, i, SHOAL_PP_FIRST(t)> SHOAL_PP_SECOND(t);
#define SHOAL_FIELD_NAME_(i, t) , SHOAL_PP_STRING(SHOAL_PP_SECOND(t))

/// Declares the fields of `Class`, each once, as `(type, name)` pairs. Array fields are
/// written `(int[4], name)`. Types containing commas need an alias.
#define SHOAL_FIELDS(Class, ...)                                                          \
 public:                                                                                  \
  using shoal_fields_owner = Class;                                                       \
  using shoal_own_fields =                                                                \
      ::shoal::detail::drop_first_t<void SHOAL_PP_FOR_EACH_I(SHOAL_FIELD_TYPE_, __VA_ARGS__)>; \
  SHOAL_PP_FOR_EACH_I(SHOAL_FIELD_DECL_, __VA_ARGS__)                                     \
  /* The name of own field i, as written (a function: a class local to a function may have \
     no static data member). */                                                           \
  static constexpr const char* shoal_own_field_name(int i) {                              \
    constexpr const char* names[] = {nullptr SHOAL_PP_FOR_EACH_I(SHOAL_FIELD_NAME_, __VA_ARGS__)}; \
    return names[i + 1];                                                                  \
  }

namespace shoal::detail {
template <class First, class... Rest>
struct drop_first {
  using type = type_list<Rest...>;
};
template <class... Ts>
using drop_first_t = typename drop_first<Ts...>::type;
}  // namespace shoal::detail
