#pragma once
/// @file
/// The base of every heap class, and the device API: `new`/`delete` (or shoal::make /
/// shoal::destroy) inside kernels launched by a shoal::runtime, plus runtime type checks.
///
///   class Agent : public shoal::object<Model, Agent> { SHOAL_ABSTRACT(Agent) ... };
///   class Fish  : public shoal::object<Model, Fish, Agent> { ... };
///
/// `new Fish(c)` returns nullptr when the heap is full (the class's operator new is noexcept,
/// so the constructor is skipped). `delete agent` through a base pointer runs the destructor of
/// the object's real class (C++20 destroying delete; no vtable). Prefer constructors that take
/// arguments or `new Fish` over `new Fish()`: value-initialising a class whose default
/// constructor is implicit zero-fills the (non-existent) C++ object.

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "shoal/arch/launch.hpp"
#include "shoal/heap/allocator.hpp"
#include "shoal/heap/heap.hpp"

namespace shoal {

namespace detail {
struct object_root {};

/// The heap of the launch this thread runs in (set by runtime launches).
SHOAL_DEVICE SHOAL_FORCEINLINE const heap_view& current_heap() {
  return *static_cast<const heap_view*>(arch::launch_context());
}

template <class Model, class Base>
SHOAL_DEVICE void destroy_as_dynamic_type(Base* p) {
  // Dispatch on the type id carried by the pointer to the destructor of the real class.
  const std::uint32_t t = type_of(bits_of(p));
  Model::for_each_type([&]<class U>() {
    if constexpr (std::is_base_of_v<Base, U> && !abstract_object<U>) {
      if (t == Model::template type_id<U>) static_cast<U*>(p)->~U();
    }
  });
}
}  // namespace detail

/// Base of every heap class: `Self` is the class itself, `Base` its heap base class (void if none),
/// `Model` the shoal::heap that lists them.
template <class Model, class Self, class Base = void>
class object : public std::conditional_t<std::is_void_v<Base>, detail::object_root, Base> {
  static_assert(Model::template contains<Self>,
                "shoal: this class is not registered in the shoal::heap<...> it derives its "
                "object<> from; add it to the heap's list of classes");
  static_assert(std::is_void_v<Base> || Model::template contains<Base>,
                "shoal: the base class is not registered in the same shoal::heap<...>");

 public:
  /// The heap (class list) the class belongs to.
  using shoal_model = Model;
  /// The heap base class (void if none), whose fields come first in the class's blocks.
  using shoal_base = Base;
  /// The class itself.
  using shoal_class = Self;

  object() = default;
  object(const object&) = delete;
  object& operator=(const object&) = delete;

  /// Allocates a slot of Self from the current launch's heap; nullptr when it is full.
  SHOAL_HD static void* operator new(std::size_t) noexcept {
#if SHOAL_IN_DEVICE_CODE
    static_assert(!abstract_object<Self>, "cannot create an object of an abstract class");
    static_assert(!std::is_polymorphic_v<Self>,
                  "shoal heap classes cannot have virtual functions (there is no C++ object to "
                  "hold a vtable pointer); use shoal::is/cast and base-class do-alls instead");
    static_assert(sizeof(Self) == (detail::all_fields_t<Self>::size > 0 ? detail::all_fields_t<Self>::size : 1),
                  "shoal heap classes may only have fields declared with SHOAL_FIELDS");
    return detail::allocate(detail::current_heap(), Model::template type_id<Self>);
#else
    return nullptr;  // objects are created in device code only
#endif
  }
  /// Placement new: constructs in a slot already allocated (parallel_new's bulk creation).
  SHOAL_HD static void* operator new(std::size_t, void* where) noexcept { return where; }
  /// Frees a slot whose constructor did not complete (cpu backend, throwing constructor).
  SHOAL_HD static void operator delete(void* p) noexcept {
#if SHOAL_IN_DEVICE_CODE
    if (p != nullptr) detail::deallocate(detail::current_heap(), p);
#else
    (void)p;
#endif
  }
  /// Matches the placement new: a constructor that throws there frees nothing.
  SHOAL_HD static void operator delete(void*, void*) noexcept {}

  /// `delete p`: runs the destructor of p's real class, then frees its slot.
  SHOAL_HD static void operator delete(object* o, std::destroying_delete_t) noexcept {
#if SHOAL_IN_DEVICE_CODE
    Self* p = static_cast<Self*>(o);
    if (p == nullptr) return;
#if defined(SHOAL_CHECKS)
    // Check before the destructor runs: it would read the fields of a dead object.
    if (!detail::check_destroy(detail::current_heap(), p)) return;
#endif
    detail::destroy_as_dynamic_type<Model, Self>(p);
    detail::deallocate(detail::current_heap(), p);
#else
    (void)o;
#endif
  }

  /// Id of the object's real class (its index in the heap's class list).
  SHOAL_HD std::uint32_t type_id() const { return detail::type_of(detail::bits_of(this)); }
};

/// Creates an object of T in device code; nullptr when the heap is full.
template <class T, class... Args>
SHOAL_DEVICE T* make(Args&&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return new T;
  } else {
    return new T(std::forward<Args>(args)...);
  }
}

/// Destroys an object created by make/new (nullptr is ignored).
template <class T>
SHOAL_DEVICE void destroy(T* p) {
  delete p;
}

/// True when p (non-null) points to an object of class U or of a subclass of U.
template <class U, class T>
SHOAL_HD bool is(const T* p) {
  using Model = typename T::shoal_model;
  if (p == nullptr) return false;
  const std::uint32_t t = detail::type_of(detail::bits_of(p));
  bool match = false;
  Model::for_each_type([&]<class V>() {
    if constexpr (std::is_base_of_v<U, V> || std::is_same_v<U, V>)
      match = match || t == Model::template type_id<V>;
  });
  return match;
}

/// p as a U* if it points to a U (or subclass), else nullptr.
template <class U, class T>
SHOAL_HD U* cast(T* p) {
  return is<U>(p) ? static_cast<U*>(p) : nullptr;
}

}  // namespace shoal
