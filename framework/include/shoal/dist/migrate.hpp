#pragma once
/// @file
/// Agent migration between ranks: every object of class T whose destination (a rule of its
/// fields, evaluated on the device) is another rank is read field by field, destroyed here, sent,
/// and made again on its destination with the same field values. The packing follows T's field
/// list (as the checkpoint code does): no per-class code.
///
///   // Walkers belong to the rank of their row band.
///   const auto band = shoal::dist::band::of(ctx, width, height, 1, true);
///   const auto moved = shoal::dist::migrate<Walker>(rt, ctx, [band] SHOAL_DEVICE(Walker* w) {
///     return band.rank_of_row(w->y);
///   });
///
/// The leavers are found on the device (one thread per block reads its live slots and asks the
/// rule), so only they cross to the host: their fields are gathered there, sent with one
/// all-to-all, and the newcomers made on the device from their rows. Classes with pointer fields
/// are refused at compile time (a pointer means nothing on another rank); objects of subclasses of
/// T stay where they are (moving them as T would cut them down): only objects whose class is
/// exactly T move.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "shoal/arch/error.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/runtime/agent_columns.hpp"
#include "shoal/runtime/runtime.hpp"

namespace shoal::dist {

/// What one migrate() did on this rank.
struct migrate_stats {
  std::uint64_t sent = 0;      ///< objects that left this rank
  std::uint64_t received = 0;  ///< objects made here from other ranks
};

namespace detail {

template <class T, std::size_t K = 0>
constexpr bool no_pointer_fields() {
  if constexpr (K == shoal::detail::all_fields_t<T>::size) {
    return true;
  } else {
    using element = typename shoal::detail::field_at<T, K>::element;
    return !std::is_pointer_v<element> && std::is_trivially_copyable_v<element> && no_pointer_fields<T, K + 1>();
  }
}

/// Appends row i of `rows` to `out`, field by field.
template <class T, std::size_t K = 0>
void pack_row(const agent_columns<T>& rows, std::size_t i, std::vector<std::byte>& out) {
  if constexpr (K < agent_columns<T>::field_count) {
    const auto& value = rows.template column<K>()[i];
    const auto* bytes = reinterpret_cast<const std::byte*>(&value);
    out.insert(out.end(), bytes, bytes + sizeof value);
    pack_row<T, K + 1>(rows, i, out);
  }
}

/// The bytes of one packed row.
template <class T, std::size_t K = 0>
constexpr std::size_t row_bytes() {
  if constexpr (K == agent_columns<T>::field_count) {
    return 0;
  } else {
    return sizeof(typename agent_columns<T>::template column_type<K>::value_type) + row_bytes<T, K + 1>();
  }
}

/// Reads row i of `rows` from `in` (row_bytes<T>() bytes).
template <class T, std::size_t K = 0>
void unpack_row(const std::byte* in, agent_columns<T>& rows, std::size_t i) {
  if constexpr (K < agent_columns<T>::field_count) {
    auto& value = rows.template column<K>()[i];
    std::memcpy(&value, in, sizeof value);
    unpack_row<T, K + 1>(in + sizeof value, rows, i);
  }
}

/// Makes one object of T per row, with the row's field values, through the allocator (so in the
/// holes that departures leave, as births fill them) rather than runtime::upload, which takes
/// fresh blocks only: a heap that objects keep leaving and entering would fill with part-empty
/// blocks. Writes object i to made[i] (nullptr: none). Throws out_of_memory naming T when the
/// heap cannot hold them.
template <class T, class Heap>
void make_from_rows(runtime<Heap>& rt, const agent_columns<T>& rows, T** made) {
  const shoal::detail::uploaded_columns<T> staged(rows);
  const shoal::detail::column_source<T> source = staged.source(nullptr);
  rt.launch(rows.size(), [=] SHOAL_DEVICE(std::size_t i) {
    void* slot = T::operator new(sizeof(T));
    if (slot != nullptr) ::new (slot) shoal::detail::column_loader<T>(i, source);
    made[i] = static_cast<T*>(slot);
  });
}

/// Destroys the objects `gone` (in a function of its own: nvcc refuses a device lambda in a
/// function whose template arguments include a local type, such as migrate's rule).
template <class T, class Heap>
void destroy_all(runtime<Heap>& rt, const std::vector<T*>& gone) {
  if (gone.empty()) return;
  arch::device_buffer<T*> objects(gone.size());
  objects.upload(gone);
  T** p = objects.data();
  rt.launch(gone.size(), [=] SHOAL_DEVICE(std::size_t i) { destroy(p[i]); });
}

/// One thread per block: the objects of exactly class T (type id `type`) whose destination is not
/// `rank`. A first pass (`objects` nullptr) counts them and the destinations out of range (bad[0],
/// and one of them in bad[1]); the second writes them and their destinations. A functor, not a
/// lambda: the rule's type may be local to its caller, which nvcc refuses in a device lambda's
/// enclosing function.
template <class T, class Destination>
struct leaver_scan {
  shoal::detail::heap_view h;
  std::uint32_t type;
  int rank, ranks;
  Destination destination;
  unsigned long long* count;
  T** objects;
  int* to;
  unsigned long long* bad;

  SHOAL_DEVICE void operator()(std::size_t b) const {
    if (h.headers[b].type != type) return;
    for (std::uint64_t live = h.live[b]; live != 0; live &= live - 1) {
      T* o = reinterpret_cast<T*>(
          shoal::detail::encode_pointer(h.block(b), arch::lowest_bit(live), h.capacity[type], type));
      const int d = destination(o);
      if (d == rank) continue;
      if (d < 0 || d >= ranks) {
        if (objects == nullptr && arch::fetch_add(bad[0], 1ull) == 0) bad[1] = static_cast<unsigned long long>(d);
        continue;
      }
      const unsigned long long k = arch::fetch_add(*count, 1ull);
      if (objects != nullptr) objects[k] = o, to[k] = d;
    }
  }
};

/// The objects of exactly T that leave this rank, in heap order, and their destinations; `bad`
/// says why not when the rule gave a rank out of range.
template <class T, class Heap, class Destination>
std::vector<std::pair<T*, int>> find_leavers(runtime<Heap>& rt, const context& ctx, Destination destination,
                                             std::string& bad) {
  rt.synchronize();  // the allocation stocks settled: the live words are exact
  const shoal::detail::heap_view h = rt.view();
  arch::device_buffer<unsigned long long> counters(4);  // the passes' counts, then bad[0..1]
  counters.zero();
  leaver_scan<T, Destination> scan{h, Heap::template type_id<T>, ctx.rank(), ctx.size(), destination,
                                   counters.data(), nullptr, nullptr, counters.data() + 2};
  rt.launch(h.blocks, scan);
  const std::vector<unsigned long long> counted = counters.download();
  if (counted[2] != 0)
    bad = std::to_string(counted[2]) + " object(s) of rank " + std::to_string(ctx.rank()) + ", e.g. one with destination " +
          std::to_string(static_cast<int>(counted[3])) + ", outside 0.." + std::to_string(ctx.size() - 1);
  const std::size_t n = counted[0];
  std::vector<std::pair<T*, int>> leavers(n);
  if (n == 0) return leavers;
  arch::device_buffer<T*> objects(n);
  arch::device_buffer<int> to(n);
  scan.count = counters.data() + 1, scan.objects = objects.data(), scan.to = to.data();
  rt.launch(h.blocks, scan);
  const std::vector<T*> o = objects.download();
  const std::vector<int> d = to.download();
  for (std::size_t i = 0; i < n; ++i) leavers[i] = {o[i], d[i]};
  // Heap order, not the order the threads found them in: the same run sends the same messages.
  std::sort(leavers.begin(), leavers.end(), [](const auto& a, const auto& b) {
    return reinterpret_cast<std::uintptr_t>(a.first) < reinterpret_cast<std::uintptr_t>(b.first);
  });
  return leavers;
}

}  // namespace detail

/// Moves every object of class T (exactly T) whose `destination(T*)`, a device function (e.g.
/// `[=] SHOAL_DEVICE(Walker* w) { return w->home; }`), is another rank there; the destination must
/// lie in [0, ctx.size()). A collective call: every rank calls it, with the same T. Throws
/// shoal::error on every rank, before anything moves, if any rank's rule gave a rank out of range.
/// If a receiving heap cannot hold its newcomers, that rank throws out_of_memory naming T and the
/// others shoal::error (the objects sent to it are lost: the run cannot go on). Waits for the device.
/// If `arrived` is given, it ends holding the objects made here (placing them is the caller's:
/// band_space::move_across does it for a grid).
template <class T, class Heap, class Destination>
migrate_stats migrate(runtime<Heap>& rt, const context& ctx, Destination destination,
                      arch::device_buffer<T*>* arrived = nullptr) {
  static_assert(detail::no_pointer_fields<T>(),
                "shoal::dist::migrate: a class with pointer fields cannot move to another rank (the "
                "pointers would mean nothing there); keep such links in a grid or by id");
  std::string bad;
  const std::vector<std::pair<T*, int>> leavers = detail::find_leavers<T>(rt, ctx, destination, bad);
  // Every rank learns whether one of them failed before anyone destroys or sends a thing.
  if (ctx.any(!bad.empty()))
    throw error("shoal::dist::migrate<" + std::string(shoal::detail::type_name<T>()) + ">: " +
                (bad.empty() ? "another rank's destination rule gave a rank out of range" : bad));

  agent_columns<T> rows;
  std::vector<T*> leaving(leavers.size());
  for (std::size_t i = 0; i < leavers.size(); ++i) leaving[i] = leavers[i].first;
  shoal::detail::columns_access::objects(rows) = leaving;
  shoal::detail::download_columns(rows);
  std::vector<std::vector<std::byte>> to(static_cast<std::size_t>(ctx.size()));
  for (std::size_t i = 0; i < leavers.size(); ++i) detail::pack_row(rows, i, to[static_cast<std::size_t>(leavers[i].second)]);

  detail::destroy_all(rt, leaving);
  const auto from = ctx.exchange(to);

  constexpr std::size_t bytes = detail::row_bytes<T>();
  std::size_t arriving = 0;
  for (const auto& message : from) arriving += message.size() / bytes;
  agent_columns<T> newcomers(arriving);
  std::size_t row = 0;
  for (const auto& message : from)
    for (std::size_t at = 0; at + bytes <= message.size(); at += bytes) detail::unpack_row(message.data() + at, newcomers, row++);
  // A rank whose heap cannot hold its newcomers says so to the others, which would otherwise wait
  // for it in their next collective call.
  std::exception_ptr failure;
  try {
    arch::device_buffer<T*> made(arriving);
    if (arriving != 0) detail::make_from_rows(rt, newcomers, made.data());
    if (arrived != nullptr) *arrived = std::move(made);
  } catch (const error&) {
    failure = std::current_exception();
  }
  if (ctx.any(failure != nullptr)) {
    if (failure != nullptr) std::rethrow_exception(failure);
    throw error("shoal::dist::migrate<" + std::string(shoal::detail::type_name<T>()) +
                ">: another rank could not make the objects it received");
  }
  return {leaving.size(), arriving};
}

}  // namespace shoal::dist
