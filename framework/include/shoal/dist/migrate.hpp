#pragma once
/// @file
/// Agent migration between ranks: every object of class T whose destination (a rule of its
/// fields, evaluated on the device) is another rank is read field by field, destroyed here, sent,
/// and made again on its destination with the same field values. The packing follows T's field
/// list (as the checkpoint code does): no per-class code.
///
///   // Walkers belong to the rank of their row band.
///   const auto band = shoal::dist::band::of(ctx, width, height, 1, true);
///   shoal::dist::migration<Walker> moves;               // kept: its buffers serve every call
///   const auto moved = moves(rt, ctx, [band] SHOAL_DEVICE(Walker* w) { return band.rank_of_row(w->y); });
///
/// The leavers are found on the device (one thread per block reads its live slots and asks the
/// rule, counting them per destination) and packed there into rows grouped by destination, so
/// only their counts and rows cross to the host, in page-locked memory (two waits);
/// they are sent with one all-to-all and the newcomers made on the device from their rows.
/// Classes with pointer fields are refused at compile time (a pointer means nothing on another
/// rank); objects of subclasses of T stay where they are (moving them as T would cut them down):
/// only objects whose class is exactly T move. dist::migrate() is one call of a migration made for
/// it.

#include <algorithm>
#include <array>
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

/// The bytes of one packed row: T's fields one after another, in field-list order.
template <class T, std::size_t K = 0>
constexpr std::size_t row_bytes() {
  if constexpr (K == shoal::detail::all_fields_t<T>::size) {
    return 0;
  } else {
    return shoal::detail::field_at<T, K>::count * sizeof(typename shoal::detail::field_at<T, K>::element) + row_bytes<T, K + 1>();
  }
}

/// Writes object p's fields (K on) into `row`.
template <class T, std::size_t K = 0>
SHOAL_HD void pack_row(std::uint64_t p, std::byte* row) {
  if constexpr (K < shoal::detail::all_fields_t<T>::size) {
    using element = typename shoal::detail::field_at<T, K>::element;
    constexpr std::size_t count = shoal::detail::field_at<T, K>::count;
    for (std::size_t e = 0; e < count; ++e) std::memcpy(row + e * sizeof(element), shoal::detail::field_element<T, K>(p, e), sizeof(element));
    pack_row<T, K + 1>(p, row + count * sizeof(element));
  }
}

/// Made in place of an object of T (the same type id, slot and block, as column_loader): writes
/// every field from one packed row instead of running a constructor of T. `this` is the new
/// object's encoded pointer.
template <class T>
class row_loader {
 public:
  SHOAL_DEVICE explicit row_loader(const std::byte* row) { read<0>(shoal::detail::bits_of(this), row); }

 private:
  template <std::size_t K>
  SHOAL_DEVICE static void read(std::uint64_t p, const std::byte* row) {
    if constexpr (K < shoal::detail::all_fields_t<T>::size) {
      using element = typename shoal::detail::field_at<T, K>::element;
      constexpr std::size_t count = shoal::detail::field_at<T, K>::count;
      for (std::size_t e = 0; e < count; ++e) std::memcpy(shoal::detail::field_element<T, K>(p, e), row + e * sizeof(element), sizeof(element));
      read<K + 1>(p, row + count * sizeof(element));
    }
  }
};

/// One thread per block: the objects of exactly class T (type id `type`) whose destination is not
/// `rank`, counted in *count and per destination in per_rank[d], and written, with their
/// destinations, while there is room (the first `room`); the destinations out of range are
/// counted in bad[0], one of them in bad[1]. A functor,
/// not a lambda: the rule's type may be local to its caller, which nvcc refuses in a device
/// lambda's enclosing function.
template <class T, class Destination>
struct leaver_scan {
  shoal::detail::heap_view h;
  std::uint32_t type;
  int rank, ranks;
  Destination destination;
  unsigned long long* count;
  T** objects;
  int* to;
  unsigned long long room;
  unsigned long long* bad;
  unsigned long long* per_rank;

  SHOAL_DEVICE void operator()(std::size_t b) const {
    if (h.headers[b].type != type) return;
    for (std::uint64_t live = h.live[b]; live != 0; live &= live - 1) {
      T* o = reinterpret_cast<T*>(
          shoal::detail::encode_pointer(h.block(b), arch::lowest_bit(live), h.capacity[type], type));
      const int d = destination(o);
      if (d == rank) continue;
      if (d < 0 || d >= ranks) {
        if (arch::fetch_add(bad[0], 1ull) == 0) bad[1] = static_cast<unsigned long long>(d);
        continue;
      }
      const unsigned long long k = arch::fetch_add(*count, 1ull);
      arch::add_relaxed(per_rank[d], 1ull);
      if (k < room) objects[k] = o, to[k] = d;
    }
  }
};

}  // namespace detail

/// Moves objects of class T between ranks (see the file comment), keeping its device and
/// page-locked buffers from call to call: a model that migrates every step keeps one.
template <class T>
class migration {
 public:
  static_assert(detail::no_pointer_fields<T>(),
                "shoal::dist::migrate: a class with pointer fields cannot move to another rank (the "
                "pointers would mean nothing there); keep such links in a grid or by id");

  migration() = default;

  /// Moves every object of class T (exactly T) whose `destination(T*)`, a device function (e.g.
  /// `[=] SHOAL_DEVICE(Walker* w) { return w->home; }`), is another rank there; the destination
  /// must lie in [0, ctx.size()). A collective call: every rank calls it, with the same T. Throws
  /// shoal::error on every rank, before anything moves, if any rank's rule gave a rank out of
  /// range. If a receiving heap cannot hold its newcomers, that rank throws out_of_memory naming
  /// T and the others shoal::error (the objects sent to it are lost: the run cannot go on). Waits
  /// for the device. Afterwards arrived() holds the objects made here (placing them is the
  /// caller's: band_space::move_across does it for a grid).
  template <class Heap, class Destination>
  migrate_stats operator()(runtime<Heap>& rt, const context& ctx, Destination destination) {
    const std::size_t n = find_leavers(rt, ctx, destination);
    // Rows grouped by destination, in the order the threads packed them within a group: where a
    // newcomer lands in its heap depends on the device's allocation anyway, and nothing a model
    // computes depends on that order (the tests compare fields and checksums).
    const unsigned long long* per_rank = seen() + first_rank_count;
    const std::byte* rows = pack_and_destroy(rt, ctx, n);
    std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(ctx.size()));
    for (std::size_t r = 0, at = 0; r < out.size(); at += per_rank[r++] * bytes)
      if (per_rank[r] != 0) out[r].assign(rows + at, rows + at + per_rank[r] * bytes);

    const auto from = ctx.size() > 1 ? ctx.exchange(out) : std::vector<std::vector<std::byte>>(1);
    std::size_t arriving = 0;
    for (const auto& message : from) arriving += message.size() / bytes;
    // A rank whose heap cannot hold its newcomers says so to the others, which would otherwise
    // wait for it in their next collective call.
    std::exception_ptr failure;
    try {
      make(rt, from, arriving);
    } catch (const error&) {
      failure = std::current_exception();
    }
    if (ctx.any(failure != nullptr)) {
      if (failure != nullptr) std::rethrow_exception(failure);
      throw error("shoal::dist::migrate<" + std::string(shoal::detail::type_name<T>()) +
                  ">: another rank could not make the objects it received");
    }
    return {n, arriving};
  }

  /// The objects the last call made here (device array of arrived_count(); nullptr entries for
  /// none).
  T* const* arrived() const { return made_.data(); }
  /// How many the last call made here.
  std::size_t arrived_count() const { return arrived_; }

  // Helpers of operator(), public only because nvcc refuses device lambdas in private member
  // functions (and in functions whose template arguments include a local type: the rule's).

  /// Finds this rank's leavers (found_, found_to_) and returns their number; throws on every rank
  /// when a rule gave a rank out of range.
  template <class Heap, class Destination>
  std::size_t find_leavers(runtime<Heap>& rt, const context& ctx, Destination destination) {
    for (;;) {
      const std::size_t words = first_rank_count + static_cast<std::size_t>(ctx.size());
      if (counters_.size() < words) counters_ = arch::device_buffer<unsigned long long>(words);
      arch::fill_bytes_enqueued(counters_.data(), 0, counters_.bytes());
      rt.launch_async(rt.view().blocks,
                      detail::leaver_scan<T, Destination>{rt.view(), Heap::template type_id<T>, ctx.rank(), ctx.size(), destination,
                                                          counters_.data(), found_.data(), found_to_.data(), found_.size(),
                                                          counters_.data() + 1, counters_.data() + first_rank_count});
      auto* c = reinterpret_cast<unsigned long long*>(seen_.at_least(words * sizeof(unsigned long long)));
      arch::copy_to_host_enqueued(c, counters_.data(), words * sizeof(unsigned long long));
      rt.wait();  // stocks kept: the step's births go on after the migration
      const std::size_t n = c[0];
      // Every rank learns whether one of them failed, or must look again with more room, before
      // any goes on (they must make the same collective calls).
      const std::vector<std::uint64_t> any = ctx.sum({c[1] != 0 ? 1u : 0u, n > found_.size() ? 1u : 0u});
      if (any[0] != 0)
        throw error("shoal::dist::migrate<" + std::string(shoal::detail::type_name<T>()) + ">: " +
                    (c[1] != 0 ? std::to_string(c[1]) + " object(s) of rank " + std::to_string(ctx.rank()) +
                                     ", e.g. one with destination " + std::to_string(static_cast<int>(c[2])) + ", outside 0.." +
                                     std::to_string(ctx.size() - 1)
                               : std::string("another rank's destination rule gave a rank out of range")));
      if (any[1] == 0) return n;
      if (n > found_.size()) found_ = arch::device_buffer<T*>(2 * n), found_to_ = arch::device_buffer<int>(2 * n);
    }
  }

  /// Packs the n leavers that find_leavers() wrote into rows on the device, grouped by
  /// destination (the counts per rank that it brought to the host give each group's first row),
  /// destroys them, and returns the rows in page-locked host memory.
  template <class Heap>
  const std::byte* pack_and_destroy(runtime<Heap>& rt, const context& ctx, std::size_t n) {
    if (n == 0) return nullptr;
    const auto ranks = static_cast<std::size_t>(ctx.size());
    const unsigned long long* per_rank = seen() + first_rank_count;
    auto* first = reinterpret_cast<unsigned long long*>(firsts_.at_least(ranks * sizeof(unsigned long long)));
    for (std::size_t r = 0, at = 0; r < ranks; at += per_rank[r++]) first[r] = at;
    if (cursors_.size() < ranks) cursors_ = arch::device_buffer<unsigned long long>(ranks);
    arch::copy_to_device_enqueued(cursors_.data(), first, ranks * sizeof(unsigned long long));
    ensure(rows_, n * bytes);
    T* const* objects = found_.data();
    const int* to = found_to_.data();
    unsigned long long* cursor = cursors_.data();
    std::byte* rows = rows_.data();
    rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
      const unsigned long long k = arch::fetch_add_relaxed(cursor[to[i]], 1ull);
      detail::pack_row<T>(shoal::detail::bits_of(objects[i]), rows + k * bytes);
      destroy(objects[i]);
    });
    std::byte* host = stage(n * bytes);
    arch::copy_to_host_enqueued(host, rows, n * bytes);
    rt.wait();
    return host;
  }

  /// Makes one object of T per row of the messages `from` (`arriving` rows in all) through the
  /// allocator (so in the holes that departures leave, as births fill them) rather than
  /// runtime::upload, which takes fresh blocks only. Throws out_of_memory naming T when the heap
  /// cannot hold them.
  template <class Heap>
  void make(runtime<Heap>& rt, const std::vector<std::vector<std::byte>>& from, std::size_t arriving) {
    arrived_ = arriving;
    if (arriving == 0) return;
    std::byte* host = stage(arriving * bytes);
    for (std::size_t at = 0; const auto& message : from) {
      std::memcpy(host + at, message.data(), message.size() - message.size() % bytes);
      at += message.size() - message.size() % bytes;
    }
    ensure(rows_, arriving * bytes);
    ensure(made_, arriving);
    std::byte* rows = rows_.data();
    T** made = made_.data();
    arch::copy_to_device_enqueued(rows, host, arriving * bytes);
    rt.launch_async(arriving, [=] SHOAL_DEVICE(std::size_t i) {
      void* slot = T::operator new(sizeof(T));
      if (slot != nullptr) ::new (slot) detail::row_loader<T>(rows + i * bytes);
      made[i] = static_cast<T*>(slot);
    });
    rt.wait();
  }

 private:
  static constexpr std::size_t bytes = detail::row_bytes<T>();

  template <class U>
  static void ensure(arch::device_buffer<U>& b, std::size_t n) {
    if (b.size() < n) b = arch::device_buffer<U>(n + n / 2);
  }
  std::byte* stage(std::size_t n) { return staging_.at_least(n); }

  // Words of counters_: leavers, out-of-range count, one of them, unused, then leavers per rank.
  static constexpr std::size_t first_rank_count = 4;
  arch::device_buffer<unsigned long long> counters_;
  arch::pinned_bytes seen_;                          // counters_ on the host
  const unsigned long long* seen() const { return reinterpret_cast<const unsigned long long*>(seen_.data()); }
  arch::pinned_bytes firsts_;                        // each destination's first row, on its way to cursors_
  arch::device_buffer<unsigned long long> cursors_;  // the next row of each destination's group
  arch::device_buffer<T*> found_;
  arch::device_buffer<int> found_to_;
  arch::device_buffer<std::byte> rows_;
  arch::device_buffer<T*> made_;
  arch::pinned_bytes staging_;
  std::size_t arrived_ = 0;
};

/// One migration of T (see migration::operator()); if `arrived` is given, it ends holding the
/// objects made here. A model that migrates every step keeps a dist::migration instead, whose
/// buffers serve every call.
template <class T, class Heap, class Destination>
migrate_stats migrate(runtime<Heap>& rt, const context& ctx, Destination destination,
                      arch::device_buffer<T*>* arrived = nullptr) {
  migration<T> m;
  const migrate_stats moved = m(rt, ctx, destination);
  if (arrived != nullptr) {
    *arrived = arch::device_buffer<T*>(m.arrived_count());
    arch::copy_on_device(arrived->data(), m.arrived(), m.arrived_count() * sizeof(T*));
  }
  return moved;
}

}  // namespace shoal::dist
