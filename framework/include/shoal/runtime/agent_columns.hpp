#pragma once
/// @file
/// shoal::agent_columns<T>: objects of class T on the host, one column (a std::vector) per field,
/// for initial conditions read from elsewhere and for analysis and tests (FLAME GPU 2's
/// AgentVector, Mesa's model.agents):
///
///   shoal::agent_columns<Fish> fish(3);                       // 3 rows, every field value-initialised
///   fish.get<&Agent::cell>() = {4, 9, 17};                    // a column, by the field's member
///   fish.get<&Agent::timer>() = {0, 2, 1};
///   rt.upload(fish);                                          // 3 Fish in the heap, fields as given
///   rt.upload<Fish>(cells, targets, priorities, timers);      // or one vector per field, in order
///
///   const auto all = rt.download<Agent>();                    // every live Fish and Shark
///   for (std::size_t i = 0; i < all.size(); ++i)
///     if (shoal::is<Shark>(all.objects()[i])) sharks_energy += ...;
///   const std::vector<std::uint32_t>& cells = all.get<&Agent::cell>();
///
/// Columns follow the class's field list: its bases' fields first, then its own, each in
/// declaration order (SHOAL_FIELDS). A field `(E, name)` is a `std::vector<E>`, an array field
/// `(E[N], name)` a `std::vector<std::array<E, N>>`. A column is named by the field's member
/// pointer (`&Fish::energy`, or `&Agent::cell` for a field a base declares) or by its position.
/// Heap pointers in fields are device pointers: compare them with objects(), do not dereference
/// them on the host.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "shoal/arch/error.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/dsl/field.hpp"
#include "shoal/heap/heap.hpp"
#include "shoal/heap/heap_view.hpp"
#include "shoal/heap/pointer.hpp"

namespace shoal {

template <class T>
class agent_columns;

namespace detail {

/// The host type of one row of a field's column: E, or std::array<E, N> for an array field.
template <class F>
struct column_row {
  using type = F;
};
template <class E, std::size_t N>
struct column_row<E[N]> {
  using type = std::array<E, N>;
};

template <class List>
struct column_tuple;
template <class... Fs>
struct column_tuple<type_list<Fs...>> {
  using type = std::tuple<std::vector<typename column_row<Fs>::type>...>;
  using fields = std::tuple<Fs...>;  // a holder, to name field K's type
};

template <class V>
inline constexpr bool is_std_vector = false;
template <class E, class A>
inline constexpr bool is_std_vector<std::vector<E, A>> = true;

/// The position, in T's field list, of the field that `member` (e.g. &Agent::cell) names.
template <class T, class Owner, int Index, class F, class M>
constexpr std::size_t field_position(field<Owner, Index, F> M::*) {
  static_assert(std::is_same_v<Owner, T> || std::is_base_of_v<Owner, T>,
                "agent_columns<T>::get<&C::name>(): the field is not one of T's (nor of a base of T)");
  return all_fields_t<Owner>::size - own_fields<Owner>::type::size + static_cast<std::size_t>(Index);
}

/// Field K of T's list (bases' first): its type, element type and number of elements.
template <class T, std::size_t K>
struct field_at {
  using type = std::tuple_element_t<K, typename column_tuple<all_fields_t<T>>::fields>;
  using element = typename field_shape<type>::element;
  static constexpr std::size_t count = field_shape<type>::count;
};

/// The address of element e of field K of object p of T or of a subclass of T: base fields come
/// first in every subclass, so the offset follows from T's list and the capacity p carries.
template <class T, std::size_t K>
SHOAL_HD SHOAL_FORCEINLINE typename field_at<T, K>::element* field_element(std::uint64_t p, std::size_t e) {
  using element = typename field_at<T, K>::element;
  const std::uint64_t capacity = capacity_of(p);
  auto* array = reinterpret_cast<element*>(block_address_of(p) + field_offset(all_fields_t<T>{}, K, capacity));
  return array + e * capacity + slot_of(p);
}

/// Copies field K of the n objects `objects` (device array) into `out` (device array of
/// n × count elements, object-major).
template <class T, std::size_t K>
void gather_field(T* const* objects, std::size_t n, typename field_at<T, K>::element* out) {
  constexpr std::size_t count = field_at<T, K>::count;
  arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
    const std::uint64_t p = bits_of(objects[i]);
    for (std::size_t e = 0; e < count; ++e) out[i * count + e] = *field_element<T, K>(p, e);
  });
}

/// Where upload's objects take their fields from: one device array per field (n × count
/// elements, object-major), and where to put each object's pointer (or null).
template <class T>
struct column_source {
  const void* columns[all_fields_t<T>::size > 0 ? all_fields_t<T>::size : 1];
  T** placed;
};

/// Made by parallel_new in place of an object of T (the same type id, slot and block): writes
/// every field of the object from the uploaded columns instead of running a constructor of T.
/// It has no data of its own: `this` is the new object's encoded pointer.
template <class T>
class column_loader {
 public:
  SHOAL_DEVICE column_loader(std::size_t i, column_source<T> source) {
    const std::uint64_t p = bits_of(this);
    write<0>(p, i, source);
    if (source.placed != nullptr) source.placed[i] = reinterpret_cast<T*>(this);
  }

 private:
  template <std::size_t K>
  SHOAL_DEVICE static void write(std::uint64_t p, std::size_t i, const column_source<T>& source) {
    if constexpr (K < all_fields_t<T>::size) {
      using element = typename field_at<T, K>::element;
      constexpr std::size_t count = field_at<T, K>::count;
      const auto* column = static_cast<const element*>(source.columns[K]);
      for (std::size_t e = 0; e < count; ++e) *field_element<T, K>(p, e) = column[i * count + e];
      write<K + 1>(p, i, source);
    }
  }
};

/// A column's rows as a flat array of elements (object-major), for the copy to the device.
template <class T, std::size_t K, class Column>
std::unique_ptr<typename field_at<T, K>::element[]> flatten(const Column& column) {
  constexpr std::size_t count = field_at<T, K>::count;
  auto flat = std::make_unique<typename field_at<T, K>::element[]>(column.size() * count);
  for (std::size_t i = 0; i < column.size(); ++i) {
    if constexpr (count == 1) flat[i] = column[i];
    else
      for (std::size_t e = 0; e < count; ++e) flat[i * count + e] = column[i][e];
  }
  return flat;
}

/// What runtime::download and runtime::upload do with agent_columns' insides.
struct columns_access {
  template <class T>
  static std::vector<T*>& objects(agent_columns<T>& c) {
    return c.objects_;
  }
};

}  // namespace detail

/// Objects of class T (and, from a download, of its subclasses) on the host, one column per
/// field. See the file's description.
template <class T>
class agent_columns {
  using tuple = typename detail::column_tuple<detail::all_fields_t<T>>::type;

 public:
  /// Number of fields, bases' first: the columns.
  static constexpr std::size_t field_count = detail::all_fields_t<T>::size;
  /// The column type of field number K: `std::vector<E>` or `std::vector<std::array<E, N>>`.
  template <std::size_t K>
  using column_type = std::tuple_element_t<K, tuple>;

  /// No rows.
  agent_columns() = default;
  /// `n` rows, every field value-initialised (zero for numbers and pointers).
  explicit agent_columns(std::size_t n) { resize(n); }
  /// One column per field, in the order of the field list (bases' first); all of one length.
  /// Throws shoal::error naming the first column whose length differs from the first one's.
  template <class... Columns>
    requires(sizeof...(Columns) == field_count && field_count > 0 &&
             (detail::is_std_vector<std::remove_cvref_t<Columns>> && ...))
  explicit agent_columns(Columns&&... columns) : columns_(std::forward<Columns>(columns)...) {
    const std::string bad = check();
    if (!bad.empty()) throw error("shoal::agent_columns<" + std::string(detail::type_name<T>()) + ">: " + bad);
  }

  /// Number of rows (objects).
  std::size_t size() const {
    if constexpr (field_count > 0) return std::get<0>(columns_).size();
    else return objects_.size();
  }
  /// Sets every column to `n` rows (new rows value-initialised).
  void resize(std::size_t n) {
    std::apply([n](auto&... c) { (c.resize(n), ...); }, columns_);
  }

  /// The column of the field `Member` names: `get<&Fish::energy>()`, `get<&Agent::cell>()`.
  template <auto Member>
  auto& get() {
    return std::get<detail::field_position<T>(Member)>(columns_);
  }
  /// The column of the field `Member` names (read only).
  template <auto Member>
  const auto& get() const {
    return std::get<detail::field_position<T>(Member)>(columns_);
  }
  /// The column of field number K of the field list (bases' first).
  template <std::size_t K>
  column_type<K>& column() {
    return std::get<K>(columns_);
  }
  /// The column of field number K (read only).
  template <std::size_t K>
  const column_type<K>& column() const {
    return std::get<K>(columns_);
  }

  /// From a download: the object each row was read from (a device pointer; shoal::is<U> and
  /// type_id() tell its class on the host). Empty for columns built on the host.
  const std::vector<T*>& objects() const { return objects_; }

  /// "" when every column has size() rows, else which column does not.
  std::string check() const {
    std::string bad;
    std::size_t k = 0;
    const auto note = [&](std::size_t rows) {
      if (bad.empty() && rows != size())
        bad = "column " + std::to_string(k) + " (of " + std::to_string(field_count) + ", bases' fields first) has " +
              std::to_string(rows) + " rows, column 0 has " + std::to_string(size());
      ++k;
    };
    std::apply([&](const auto&... c) { (note(c.size()), ...); }, columns_);
    return bad;
  }

 private:
  friend struct detail::columns_access;
  tuple columns_;
  std::vector<T*> objects_;
};

namespace detail {

/// The live objects of T and its concrete subclasses, in heap order (block index, then slot),
/// from the block headers (downloaded by the caller after the device is idle).
template <class Heap, class T>
std::vector<T*> objects_in_heap_order(const heap_view& h, const std::vector<block_header>& headers) {
  std::uint32_t types = 0;
  Heap::for_each_type([&]<class U>() {
    if constexpr (!abstract_object<U> && (std::is_same_v<T, U> || std::is_base_of_v<T, U>))
      types |= std::uint32_t{1} << Heap::template type_id<U>;
  });
  std::vector<T*> out;
  for (std::uint64_t b = 0; b < headers.size(); ++b) {
    const std::uint32_t t = headers[b].type;
    if (t >= Heap::num_types || ((types >> t) & 1u) == 0) continue;
    const std::uint32_t capacity = h.capacity[t];
    for (std::uint64_t live = ~headers[b].free_slots & h.full_mask(t); live != 0; live &= live - 1) {
      const auto slot = static_cast<std::uint32_t>(arch::lowest_bit(live));
      out.push_back(reinterpret_cast<T*>(encode_pointer(h.data + b * h.block_bytes, slot, capacity, t)));
    }
  }
  return out;
}

/// Fills every column of `out` from the objects in out.objects() (gathered on the device).
template <class T>
void download_columns(agent_columns<T>& out) {
  const std::vector<T*>& objects = columns_access::objects(out);
  const std::size_t n = objects.size();
  out.resize(n);
  if (n == 0) return;
  arch::device_buffer<T*> on_device(n);
  on_device.upload(objects);
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (
        [&] {
          using element = typename field_at<T, K>::element;
          constexpr std::size_t count = field_at<T, K>::count;
          arch::device_buffer<element> gathered(n * count);
          gather_field<T, K>(on_device.data(), n, gathered.data());
          arch::synchronize();
          auto flat = std::make_unique<element[]>(n * count);
          arch::copy_to_host(flat.get(), gathered.data(), n * count * sizeof(element));
          auto& column = out.template column<K>();
          for (std::size_t i = 0; i < n; ++i) {
            if constexpr (count == 1) column[i] = flat[i];
            else
              for (std::size_t e = 0; e < count; ++e) column[i][e] = flat[i * count + e];
          }
        }(),
        ...);
  }(std::make_index_sequence<agent_columns<T>::field_count>{});
}

/// The device copies of upload's columns (kept until the objects are made).
template <class T>
class uploaded_columns {
 public:
  explicit uploaded_columns(const agent_columns<T>& c) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (
          [&] {
            using element = typename field_at<T, K>::element;
            constexpr std::size_t bytes = sizeof(element) * field_at<T, K>::count;
            const auto flat = flatten<T, K>(c.template column<K>());
            buffers_[K] = arch::device_buffer<std::byte>(c.size() * bytes);
            arch::copy_to_device(buffers_[K].data(), flat.get(), c.size() * bytes);
          }(),
          ...);
    }(std::make_index_sequence<agent_columns<T>::field_count>{});
  }
  /// What the objects read, placing their pointers in `placed` (a device array, or null).
  column_source<T> source(T** placed) const {
    column_source<T> s{};
    for (std::size_t k = 0; k < agent_columns<T>::field_count; ++k) s.columns[k] = buffers_[k].data();
    s.placed = placed;
    return s;
  }

 private:
  std::array<arch::device_buffer<std::byte>, agent_columns<T>::field_count> buffers_;
};

}  // namespace detail
}  // namespace shoal
