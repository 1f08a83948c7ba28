#pragma once
/// @file
/// shoal::runtime<Heap>: owns a heap in device memory (RAII, movable, not copyable), launches
/// kernels that may create and destroy objects, turns device-side error records into host
/// exceptions, and reports statistics and consistency.

#include <array>
#include <memory>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/bitmap/bitmap_ops.hpp"
#include "shoal/checkpoint/heap_image.hpp"
#include "shoal/dsl/object.hpp"
#include "shoal/heap/heap.hpp"
#include "shoal/runtime/agent_columns.hpp"
#include "shoal/runtime/defragment.hpp"
#include "shoal/runtime/all_pairs.hpp"
#include "shoal/runtime/device_list.hpp"
#include "shoal/runtime/do_all.hpp"
#include "shoal/runtime/errors.hpp"
#include "shoal/runtime/method_name.hpp"
#include "shoal/runtime/parallel_new.hpp"
#include "shoal/runtime/row_gather.hpp"
#include "shoal/sim/phase_timer.hpp"

namespace shoal {

/// One class's share of the heap, as runtime::stats() reports it.
struct type_stats {
  std::string name;  ///< the class's name (or "type t")
  std::uint32_t capacity = 0;  ///< slots per block (0: abstract)
  std::uint64_t blocks = 0;  ///< blocks in use by the class
  std::uint64_t live = 0;  ///< live objects
  std::uint64_t failed_allocations = 0;  ///< since clear() or the last error thrown
};

/// A snapshot of the heap's occupancy from runtime::stats(): its geometry, free blocks and
/// per-class counts.
struct heap_stats {
  std::uint64_t heap_bytes = 0;  ///< the size asked of the constructor
  std::uint64_t block_bytes = 0;  ///< bytes of one block's data
  std::uint64_t blocks = 0;  ///< blocks in the heap
  std::uint64_t free_blocks = 0;  ///< blocks owned by no class
  std::vector<type_stats> types;  ///< one per class, by type id
  /// Blocks in use by fill level: bin i holds fill in [i/10, (i+1)/10), bin 10 full blocks.
  std::array<std::uint64_t, 11> fill_histogram{};
  /// Live objects of every class.
  std::uint64_t live() const {
    std::uint64_t n = 0;
    for (const auto& t : types) n += t.live;
    return n;
  }
};

/// The host side of a Shoal model: owns the device heap of the classes of `Heap` (a
/// shoal::heap<...>) and runs work on it. launch() runs a lambda per index, parallel_do() a method on
/// every live object, parallel_new() and upload() create objects in bulk, download() reads
/// them back. stats() and verify() report occupancy and consistency; save() / load() and
/// save_heap() / load_heap() / save_pointers() write and read checkpoints. Errors the device
/// records surface as exceptions at synchronize(). Movable, not copyable.
template <class Heap>
class runtime {
 public:
  /// A heap of at most `heap_bytes` bytes of device memory (one allocation).
  explicit runtime(std::size_t heap_bytes) : heap_bytes_(heap_bytes) {
    geometry_ = detail::compute_geometry<Heap>();
    const std::uint64_t bb = geometry_.block_bytes;
    const std::uint64_t bitmaps = 1 + 2 * Heap::num_types;
    auto total = [](std::uint64_t m) { return bytes_for_blocks(m); };
    // The most blocks that fit, by bisection (total() grows with m; a search step by step from
    // an estimate took 2^41 steps for a heap of 2^60 bytes).
    std::uint64_t m = 0;
    // Block indices are 32-bit (the do-all list, parallel_new's arithmetic): below 2^32 blocks,
    // a heap of over a TiB (the block bitmaps would hold 2^36).
    const std::uint64_t most = std::min<std::uint64_t>(heap_bytes / (bb + block_extra_bytes), UINT32_MAX);
    for (std::uint64_t hi = most + 1; m + 1 < hi;) {
      const std::uint64_t mid = m + (hi - m) / 2;
      (total(mid) <= heap_bytes ? m : hi) = mid;
    }
    if (m == 0)
      throw error("shoal: a heap of " + std::to_string(heap_bytes) +
                  " bytes is too small: one block needs " + std::to_string(total(1)) + " bytes");
    memory_ = arch::device_buffer<std::byte>(total(m));
    do_all_list_ = arch::device_buffer<std::uint32_t>(m);
    do_all_count_ = arch::device_buffer<unsigned long long>(2);

    auto& v = view_;
    v = detail::heap_view{};
    v.data = memory_.data();
    v.block_bytes = bb;
    v.blocks = m;
    v.num_types = Heap::num_types;
    v.headers = reinterpret_cast<detail::block_header*>(v.data + m * bb);
    v.snapshots = reinterpret_cast<std::uint64_t*>(v.headers + m);
    v.live = v.snapshots + m;
    v.bitmap_words = v.live + m;
    v.layout = bitmap_layout::for_bits(m);
    word_offsets_ = arch::device_buffer<unsigned long long>(v.layout.words[0]);
    // parallel_new's planning launch: at most 8 blocks of 256 threads per multiprocessor.
    chunk_counts_ = arch::device_buffer<unsigned long long>(8 * static_cast<std::size_t>(arch::probe_device().multiprocessors));
    parallel_new_made_ = arch::device_buffer<unsigned long long>(1);
    v.errors = reinterpret_cast<detail::heap_errors*>(v.bitmap_words + bitmaps * v.layout.total_words);
    v.counters = reinterpret_cast<detail::heap_counters*>(reinterpret_cast<std::byte*>(v.errors) + errors_bytes);
    for (std::uint32_t t = 0; t < Heap::num_types; ++t)
      v.capacity[t] = static_cast<std::uint8_t>(geometry_.capacity[t]);
    // The allocation stocks, one per class and processor: outside the heap's bytes (their number
    // depends on the device), about 2.3 KiB each.
    v.stocks_per_type = stocks_per_type();
    stocks_ = arch::device_buffer<detail::stock>(std::size_t{Heap::num_types} * v.stocks_per_type);
    v.stocks = stocks_.data();
    device_view_ = reinterpret_cast<detail::heap_view*>(
        reinterpret_cast<std::byte*>(v.counters) + counters_bytes);
    if (reinterpret_cast<std::uintptr_t>(memory_.data()) + memory_.size() >=
        (std::uint64_t{1} << detail::address_bits))
      throw error("shoal: the heap lies above 2^47, where object pointers cannot address it");
    clear();
  }

  /// The heap size to give the constructor so that it holds `counts` objects of the classes `Ts`
  /// at once, every class's blocks full but its last one:
  ///
  ///   const std::size_t bytes = shoal::runtime<Ocean>::bytes_for<Fish, Shark>(cells / 4, cells / 4);
  ///
  /// Objects made and destroyed over time leave blocks part-full, so a model whose population
  /// moves needs room on top of this (the apps ask for 1.5–3×).
  template <class... Ts, class... Counts>
  static std::size_t bytes_for(Counts... counts) {
    static_assert(sizeof...(Ts) == sizeof...(Counts) && sizeof...(Ts) > 0,
                  "bytes_for<Classes...>(counts...): one count per class");
    static_assert((!abstract_object<Ts> && ...), "bytes_for: an abstract class has no objects of its own");
    constexpr detail::heap_geometry g = detail::geometry_of<Heap>;
    std::uint64_t blocks = 0;
    ((blocks += (static_cast<std::uint64_t>(counts) + g.capacity[Heap::template type_id<Ts>] - 1) /
                g.capacity[Heap::template type_id<Ts>]),
     ...);
    return bytes_for_blocks(std::max<std::uint64_t>(blocks, 1));
  }

  /// Takes over the other runtime's heap and device memory.
  runtime(runtime&&) noexcept = default;
  /// Frees this heap and takes over the other's.
  runtime& operator=(runtime&&) noexcept = default;
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// Destroys every object without running destructors and resets the error records.
  void clear() {
    auto& v = view_;
    detail::block_header* headers = v.headers;
    std::uint64_t* snapshots = v.snapshots;
    std::uint64_t* live = v.live;
    arch::for_each_index(v.blocks, [=] SHOAL_DEVICE(std::size_t b) {
      headers[b].free_slots = 0;
      snapshots[b] = 0;
      live[b] = 0;
      headers[b].type = detail::no_type;
      headers[b].returning = 0;
    });
    arch::fill_bytes(v.bitmap_words, 0,
                     (1 + 2 * Heap::num_types) * v.layout.total_words * sizeof(std::uint64_t));
    detail::fill(v.free_blocks(), true);
    arch::fill_bytes(v.errors, 0, sizeof(detail::heap_errors));
    auto counters = std::make_unique<detail::heap_counters>();
    counters->free_blocks[0] = static_cast<long long>(v.blocks);
    arch::copy_to_device(v.counters, counters.get(), sizeof(detail::heap_counters));
    arch::copy_to_device(device_view_, &view_, sizeof(view_));
    detail::stock* stocks = v.stocks;
    arch::for_each_index(stocks_.size(), [=] SHOAL_DEVICE(std::size_t i) { detail::reset_stock(stocks[i]); });
    stocks_settled_ = true;
    do_all_count_.zero();
    do_all_parity_ = 0;
    arch::synchronize();
  }

  /// The device view (trivially copyable) for kernels and advanced use.
  const detail::heap_view& view() const { return view_; }
  /// The same view, in device memory (what launches make the current heap).
  const detail::heap_view* device_view() const { return device_view_; }

  /// The size given to the constructor (the heap uses at most this much).
  std::uint64_t heap_bytes() const { return heap_bytes_; }
  /// Blocks in the heap.
  std::uint64_t blocks() const { return view_.blocks; }
  /// Bytes of one block's data, the same for every class.
  std::uint64_t block_bytes() const { return view_.block_bytes; }
  /// Objects of T per block (its slots).
  template <class T>
  std::uint32_t capacity() const {
    return geometry_.capacity[Heap::template type_id<T>];
  }

  /// Times every launch, do-all and parallel_new of this runtime in `timer` (`--timing`) under
  /// its name: a do-all as its method ("Fish::move"), parallel_new as "parallel_new<Fish>", a
  /// launch as "launch". Inside a phase the model times itself they show as its parts.
  /// viz::run_steps sets it for the apps; nullptr (or a disabled timer) stops it.
  void time_with(sim::phase_timer* timer) { timer_ = timer != nullptr && timer->enabled() ? timer : nullptr; }

  /// Runs f(i) for i in [0, n) on the device; f may create and destroy objects. Waits for the
  /// launch and throws out_of_memory / invalid_destroy if the device recorded one.
  template <class F>
  void launch(std::size_t n, F f) {
    launch_async(n, f);
    synchronize();
  }
  /// As launch(), without waiting; errors surface at the next synchronize().
  template <class F>
  void launch_async(std::size_t n, F f) {
    const auto timed = timed_phase("launch");
    arch::for_each_index(n, f, device_view_);
    stocks_settled_ = false;
  }

  /// Runs f(i) for i in [0, *n.value), a count that earlier work on the stream wrote on the
  /// device (device_list.hpp: no copy to the host, the grid sized for n.max). Waits and reports
  /// as launch() does; f may create and destroy objects.
  template <class F>
  void launch(device_count n, F f) {
    launch_async(n, f);
    synchronize();
  }
  /// As launch(device_count, f), without waiting.
  template <class F>
  void launch_async(device_count n, F f) {
    const auto timed = timed_phase("launch");
    arch::for_each_counted(n.value, 1, n.max, f, device_view_);
    stocks_settled_ = false;
  }
  /// Runs f(item) for every item of `list` (pushed by earlier work on the stream), without
  /// knowing their number on the host. Waits and reports as launch() does.
  template <class T, class F>
  void launch(const device_list<T>& list, F f) {
    launch_async(list, f);
    synchronize();
  }
  /// As launch(list, f), without waiting.
  template <class T, class F>
  void launch_async(const device_list<T>& list, F f) {
    const list_view<T> items = list.view();
    launch_async(list.count(), [=] SHOAL_DEVICE(std::size_t i) { f(items[i]); });
  }

  /// Runs `Method` (e.g. `&Fish::update`) on every live object of its class and of the class's
  /// subclasses, passing `args` (trivially copyable). Enqueued without waiting; do-alls run back
  /// to back in order. See do_all.hpp for the semantics.
  template <auto Method, class... Args>
  void parallel_do(Args... args) {
    using T = typename detail::member_function<decltype(Method)>::owner;
    parallel_do<T, Method>(args...);
  }
  /// As above, over class T (a base of Method's class is allowed: `parallel_do<Agent, &Agent::step>`).
  template <class T, auto Method, class... Args>
  void parallel_do(Args... args) {
    // nvcc (13.0) spells a pointer to a const member function as a template argument
    // "&C::m const" in the code it generates, which does not compile; refused on both
    // backends so that code written on the cpu backend builds for the GPU.
    static_assert(!detail::member_function<decltype(Method)>::is_const,
                  "parallel_do of a const member function: nvcc cannot compile it; declare the method "
                  "without const (fields are proxies, so a non-const method reads them the same way)");
    static const std::string name = detail::method_name<Method>();
    const auto timed = timed_phase(name);
    Heap::for_each_type([&]<class U>() {
      if constexpr (!abstract_object<U> && (std::is_same_v<T, U> || std::is_base_of_v<T, U>)) {
        constexpr std::uint32_t t = Heap::template type_id<U>;
        constexpr std::uint32_t capacity = detail::geometry_of<Heap>.capacity[t];
        const counter_pair c = next_do_all_counters();
#if defined(SHOAL_BACKEND_CUDA)
        const detail::block_lister lister(view_, t, do_all_list_.data(), c.current);
        arch::for_each_index_then_listed<capacity>(
            launch_graphs_, static_cast<int>(do_all_parity_), lister.items(), lister, do_all_list_.data(), c.current,
            view_.blocks, detail::slot_visitor<U, T, Method, capacity>(view_, t, args...),
            detail::snapshot_word{view_.snapshots}, device_view_, c.next);
        stocks_settled_ = false;
#else
        detail::list_blocks_in_use(view_, t, do_all_list_.data(), c.current);
        arch::for_each_listed<capacity>(do_all_list_.data(), c.current, view_.blocks,
                                        detail::slot_visitor<U, T, Method, capacity>(view_, t, args...),
                                        detail::snapshot_word{view_.snapshots}, device_view_, c.next);
        stocks_settled_ = false;
#endif
      }
    });
  }

  /// Runs the all-pairs interaction `op` over the live objects of class T (see all_pairs.hpp
  /// for what `op` provides): gathers what every object shows the others in object order,
  /// then sums each object's interactions in shared-memory tiles and applies the result.
  /// Waits once (for the number of objects), then enqueues the rest without waiting.
  template <class T, class Op>
  void all_pairs(const Op& op) {
    all_pairs<T>(op, detail::own_partners{});
  }

  /// As all_pairs(op), with partners beyond this heap's objects (other processes' objects, as
  /// n-body over MPI ranks has): `share(values, n)` is called once, on the host, with the device
  /// array of what this heap's n objects of T show the others (in object order, n may be 0) and
  /// returns a detail::partner_values: a device array of every partner's value, these n among
  /// them at [self_begin, self_begin + n). Each object interacts with every partner but itself.
  template <class T, class Op, class Share>
  void all_pairs(const Op& op, Share share) {
    static_assert(!abstract_object<T>, "all_pairs over an abstract class: name a concrete class");
    constexpr std::uint32_t t = Heap::template type_id<T>;
    constexpr std::uint32_t capacity = detail::geometry_of<Heap>.capacity[t];
    static const std::string name = "all_pairs<" + type_name(t) + ">";
    const auto timed = timed_phase(name);
    detail::all_pairs<T, capacity>(view_, device_view_, t, do_all_list_.data(), all_pairs_scratch_, op, share);
  }

  /// Creates n objects of T, object i constructed as T(i, args...), in the lowest free blocks,
  /// filled in order (no search). Enqueued like a do-all, without waiting: the objects that do
  /// not fit are reported as out_of_memory naming T by the next synchronize() (at once if n
  /// needs more blocks than the whole heap has). T's constructor must not create or destroy
  /// objects: parallel_new runs alone on its heap, opening blocks with plain stores.
  template <class T, class... Args>
  void parallel_new(std::size_t n, Args... args) {
    static_assert(!abstract_object<T>, "parallel_new of an abstract class");
    static const std::string name = "parallel_new<" + type_name(Heap::template type_id<T>) + ">";
    const auto timed = timed_phase(name);
    make_in_order<T, T>(n, detail::make_value_pack(args...));
  }

  /// Makes one object of T per row of `columns`, placed as parallel_new places object i (slot
  /// i % capacity of the (i / capacity)-th lowest free block), with every field as the row
  /// gives it: T's constructors do not run. The pointer of object i goes to `placed[i]` when
  /// given (a device array of columns.size()). Waits; throws out_of_memory naming T for rows that
  /// did not fit, shoal::error (before anything is made) when the columns differ in length.
  template <class T>
  void upload(const agent_columns<T>& columns, T** placed = nullptr) {
    static_assert(!abstract_object<T>, "upload of an abstract class: name the concrete class to make");
    if (const std::string bad = columns.check(); !bad.empty())
      throw error("shoal: upload<" + std::string(detail::type_name<T>()) + ">: " + bad);
    const detail::uploaded_columns<T> staged(columns);
    make_in_order<T, detail::column_loader<T>>(columns.size(), detail::make_value_pack(staged.source(placed)));
    synchronize();
  }
  /// upload(agent_columns<T>(columns...)): one std::vector per field of T, bases' fields first.
  template <class T, class... Columns>
    requires(sizeof...(Columns) > 0 && (detail::is_std_vector<std::remove_cvref_t<Columns>> && ...))
  void upload(Columns&&... columns) {
    upload(agent_columns<T>(std::forward<Columns>(columns)...));
  }

  /// Every live object of T and of its subclasses, field by field (T's fields), in heap order:
  /// by block index, then by slot. objects() holds each row's object. Waits for the device
  /// first (and reports its errors, as synchronize() does).
  template <class T>
  agent_columns<T> download() {
    synchronize();
    agent_columns<T> out;
    detail::columns_access::objects(out) = detail::objects_in_heap_order<Heap, T>(view_, download_headers());
    detail::download_columns(out);
    return out;
  }

  /// Where the rows of T and of its subclasses lie now, for detail::gather_rows (columns on the
  /// device without a list of objects: shoal/runtime/row_gather.hpp). Waits for the device first.
  template <class T>
  detail::row_plan plan_rows() {
    synchronize();  // the stocks settled: live words exact
    arch::device_buffer<std::byte> scratch;
    return detail::plan_rows<Heap, T>(view_, scratch);
  }

  /// The CUDA graphs that run this runtime's do-alls (see arch/launch_graph.hpp; for tests and
  /// diagnostics).
  const arch::launch_graphs& do_all_graphs() const { return launch_graphs_; }

  /// Enqueues the return of what the allocation stocks reserved and no request took, if a launch
  /// or do-all ran since the last time: at every synchronize() (so launch() too; not wait()) and
  /// before the runtime reads block headers (stats, verify, download, checkpoints,
  /// defragmentation), so that free-slot words are exact; code that reads view() itself calls it
  /// too. Between waits stocks keep what they hold from launch to launch,
  /// and whatever enumerates objects on the device reads heap_view::live. (A flush after every
  /// launch and do-all cost a kernel, 4.5-5 µs on the H100: a fifth of Sugarscape's step.)
  /// Const: it changes no object.
  void settle_stocks() const {
    if (stocks_settled_) return;
    detail::flush_stocks_async(view_, stocks_.size());
    stocks_settled_ = true;
  }

  /// Waits for all device work, then reports recorded errors as exceptions. The error record is
  /// copied with the work, so this is one wait (a cudaMemcpy after it cost another round trip).
  void synchronize() {
    settle_stocks();
    wait();
  }

  /// Waits for all device work and reports recorded errors, as synchronize() does, but leaves
  /// what the allocation stocks reserved in place: for a wait inside a model's step (the
  /// distributed layer's exchanges wait every phase), after which the step's births find their
  /// stocks ready instead of preparing again, and no flush kernel runs. Code that then reads the
  /// heap's blocks itself calls synchronize() or settle_stocks(); what the runtime reads (stats,
  /// downloads, checkpoints) settles them first anyway.
  void wait() {
    arch::copy_to_host_enqueued(errors_seen_.get(), view_.errors, sizeof(detail::heap_errors));
    arch::synchronize();
    report_errors(*errors_seen_.get());
  }

  /// Throws for what the device recorded since the last call (then clears the record):
  /// invalid_destroy first, else out_of_memory naming every class that failed.
  void check_errors() {
    detail::heap_errors e;
    arch::copy_to_host(&e, view_.errors, sizeof(e));
    report_errors(e);
  }

  /// The name of the class with type id `t`, or "type t" if none has it.
  static std::string type_name(std::uint32_t t) {
    std::string name = "type " + std::to_string(t);
    Heap::for_each_type([&]<class T>() {
      if (Heap::template type_id<T> == t) name = std::string(detail::type_name<T>());
    });
    return name;
  }

 private:
  /// check_errors() for a record already on the host.
  void report_errors(const detail::heap_errors& e) {
    if (e.bad_destroys != 0) {
      arch::fill_bytes(view_.errors, 0, sizeof(e));
      std::ostringstream os;
      os << "shoal: destroy() of something that is not a live object (" << e.bad_destroys
         << " times; first pointer 0x" << std::hex << e.first_bad_pointer << std::dec << ", "
         << describe_pointer(e.first_bad_pointer) << ")";
      throw invalid_destroy(os.str());
    }
    std::ostringstream failed;
    std::uint32_t first = Heap::num_types;
    for (std::uint32_t t = 0; t < Heap::num_types; ++t) {
      if (e.failed_allocations[t] == 0) continue;
      if (first == Heap::num_types) first = t;
      failed << (t == first ? "" : ", ") << e.failed_allocations[t] << " allocation"
             << (e.failed_allocations[t] == 1 ? "" : "s") << " of " << type_name(t);
    }
    if (first < Heap::num_types) {
      arch::fill_bytes(view_.errors, 0, sizeof(e));
      std::ostringstream os;
      os << "shoal: out of memory: " << failed.str() << " failed; the heap of " << heap_bytes_
         << " bytes (" << view_.blocks << " blocks of " << view_.block_bytes << " bytes) is full";
      throw out_of_memory(os.str(), type_name(first), e.failed_allocations[first]);
    }
  }

 public:

  /// Blocks and live objects per class, counted from the block headers, and the failed
  /// allocations on record (reported here, not thrown or cleared). For a quiescent heap.
  heap_stats stats() const {
    const auto headers = download_headers();
    detail::heap_errors e;
    arch::copy_to_host(&e, view_.errors, sizeof(e));
    heap_stats s;
    s.heap_bytes = heap_bytes_;
    s.block_bytes = view_.block_bytes;
    s.blocks = view_.blocks;
    s.types.resize(Heap::num_types);
    for (std::uint32_t t = 0; t < Heap::num_types; ++t) {
      s.types[t].name = type_name(t);
      s.types[t].capacity = geometry_.capacity[t];
      s.types[t].failed_allocations = e.failed_allocations[t];
    }
    for (const auto& h : headers) {
      if (h.type == detail::no_type) {
        ++s.free_blocks;
        continue;
      }
      if (h.type >= Heap::num_types) continue;  // verify() reports it
      const std::uint32_t cap = geometry_.capacity[h.type];
      const std::uint64_t live = cap - std::popcount(h.free_slots & view_.full_mask(h.type));
      s.types[h.type].blocks += 1;
      s.types[h.type].live += live;
      s.fill_histogram[live == cap ? 10 : std::min<std::uint64_t>(9, live * 10 / cap)] += 1;
    }
    return s;
  }

  // ---- Defragmentation (defragment.hpp) ----

  /// Moves the objects of T's (and its subclasses') blocks filled at most `max_fill` (of their
  /// slots) into as few of those blocks as hold them, returns the emptied blocks, and rewrites
  /// every pointer to a moved object: in the heap-pointer fields of every object and in the
  /// registered arrays (register_pointers). Waits for the work before it; between do-alls.
  /// Any other pointer to a moved object (a copy on the host, an unregistered array) is stale.
  template <class T>
  defrag_stats defragment(double max_fill = 0.5) {
    static_assert(Heap::template contains<std::remove_cv_t<T>>, "defragment<T>: T must be a class of this heap");
    return defragment_types(checkpoint::detail::subclass_mask<Heap, std::remove_cv_t<T>>(), max_fill);
  }
  /// As defragment<T>() for every class of the heap.
  defrag_stats defragment(double max_fill = 0.5) {
    return defragment_types(Heap::num_types >= 32 ? ~0u : (1u << Heap::num_types) - 1u, max_fill);
  }
  /// Registers a device array of `n` pointers to objects of T or its subclasses (nullptr allowed)
  /// held outside the heap, e.g. a grid of `Agent*`, under `name`. One registration serves both
  /// jobs such an array has: defragment() rewrites its pointers to moved objects, and save_heap()
  /// (so save()) writes it as pointer section `name`, which load_heap() relocates back into it.
  /// The array must stay allocated until unregister_pointers(). Registering the same array again
  /// replaces its name and length; giving a second array a name in use throws shoal::error.
  template <class T>
  void register_pointers(std::string name, T** device_array, std::size_t n) {
    static_assert(Heap::template contains<std::remove_cv_t<T>>, "register_pointers: T must be a class of this heap");
    void* key = static_cast<void*>(device_array);
    for (const auto& a : registered_)
      if (a.name == name && a.device_array != key)
        throw error("shoal: register_pointers: the name '" + name + "' is already registered for another array");
    unregister_pointers(device_array);
    registered_.push_back({std::move(name), key, n, checkpoint::detail::subclass_mask<Heap, std::remove_cv_t<T>>()});
  }
  /// Forgets a registered array (no-op if it is not registered).
  template <class T>
  void unregister_pointers(T** device_array) {
    const void* key = static_cast<const void*>(device_array);
    std::erase_if(registered_, [&](const detail::registered_pointers& a) { return a.device_array == key; });
  }

  // ---- Checkpoints (checkpoint/*.hpp): the heap, named blobs, pointer arrays outside it ----

  /// Writes the heap and `user_blob` (section "user") to `path` atomically. Waits for the
  /// device first. Throws checkpoint_error when the file cannot be written.
  void save(const std::string& path, std::span<const std::byte> user_blob = {}) {
    checkpoint::writer w;
    save_heap(w);
    w.blob("user", user_blob);
    w.commit(path);
  }
  /// A runtime holding the heap saved in `path` (by either backend), at least as large as the
  /// saved one and `heap_bytes`; the "user" blob goes to `user_blob` when given. Throws
  /// checkpoint_error for a missing, truncated, corrupt or mismatched file.
  static runtime load(const std::string& path, std::vector<std::byte>* user_blob = nullptr,
                      std::size_t heap_bytes = 0) {
    const checkpoint::reader r(path);
    const auto info = checkpoint::detail::parse_heap<Heap>(r.section(checkpoint::section_kind::heap, "heap"), r.name()).info;
    // The bookkeeping after the blocks differs between backends (counter shards), so the same
    // byte size may give fewer blocks here: grow until every saved block keeps its index.
    std::size_t bytes = std::max<std::size_t>(heap_bytes, info.heap_bytes);
    // The heap size comes from the file: a damaged or foreign file may claim more memory than
    // this machine has, which is the file's problem, so it is reported as a checkpoint error.
    auto make = [&](std::size_t b) {
      const auto refuse = [&](const std::string& why) {
        return checkpoint_error(r.name() + ": needs a heap of " + std::to_string(b) +
                                " bytes, which cannot be allocated here" + why);
      };
      try {
        return runtime(b);
      } catch (const std::bad_alloc&) {
        throw refuse("");
      } catch (const backend_error& e) {
        throw refuse(std::string(" (") + e.what() + ")");
      }
    };
    runtime rt = make(bytes);
    while (rt.blocks() < info.blocks_needed) {
      bytes += (info.blocks_needed - rt.blocks()) * (rt.block_bytes() + block_extra_bytes + 8);
      rt = make(bytes);
    }
    rt.load_heap(r);
    if (user_blob != nullptr) {
      const auto b = r.blob("user");
      user_blob->assign(b.begin(), b.end());
    }
    return rt;
  }

  /// Adds this heap as section "heap" of `w`, and each registered pointer array
  /// (register_pointers) as a pointer section of its name (waits for the device first).
  void save_heap(checkpoint::writer& w) {
    checkpoint::require_savable<Heap>();
    settle_stocks();
    synchronize();
    w.add(checkpoint::section_kind::heap, "heap", checkpoint::detail::capture_heap<Heap>(view_, heap_bytes_));
    for (const auto& a : registered_)
      w.add(checkpoint::section_kind::pointers, a.name,
            checkpoint::detail::capture_pointers<Heap>(view_, a.device_array, a.n, a.types, a.name));
  }
  /// Replaces every object of this heap by those of the checkpoint, relocating heap pointers, and
  /// fills each registered pointer array from the section of its name. Checks the heap section
  /// and those pointer sections before touching anything: on checkpoint_error all is unchanged.
  void load_heap(const checkpoint::reader& r) {
    checkpoint::require_savable<Heap>();
    const auto img = checkpoint::detail::parse_heap<Heap>(r.section(checkpoint::section_kind::heap, "heap"), r.name());
    settle_stocks();
    synchronize();
    std::vector<std::vector<std::uint64_t>> arrays;
    for (const auto& a : registered_)
      arrays.push_back(checkpoint::detail::decode_pointers<Heap>(
          view_, img, r.section(checkpoint::section_kind::pointers, a.name), a.n, a.types,
          r.name() + ": pointers '" + a.name + "'"));
    checkpoint::detail::restore_heap<Heap>(view_, img, r.name());
    for (std::size_t i = 0; i < arrays.size(); ++i)
      if (!arrays[i].empty()) arch::copy_to_device(registered_[i].device_array, arrays[i].data(), arrays[i].size() * 8);
    do_all_count_.zero();
    do_all_parity_ = 0;
    arch::synchronize();
  }
  /// Saves `n` heap pointers that live outside the heap (a device array, e.g. a grid of
  /// `Agent*`) as section `name`; load_pointers relocates them into the loaded heap. For an array
  /// the runtime keeps for good, register_pointers() does both (and defragmentation) once.
  template <class T>
  void save_pointers(checkpoint::writer& w, std::string name, T* const* device_array, std::size_t n) {
    static_assert(Heap::template contains<std::remove_cv_t<T>>, "save_pointers: T must be a class of this heap");
    synchronize();
    w.add(checkpoint::section_kind::pointers, name,
          checkpoint::detail::capture_pointers<Heap>(view_, device_array, n,
                                                     checkpoint::detail::subclass_mask<Heap, std::remove_cv_t<T>>(), name));
  }
  /// Fills the device array with the `n` pointers of section `name`, relocated into this heap
  /// (load the heap from the same checkpoint first). Throws checkpoint_error if the section is missing or holds another count.
  template <class T>
  void load_pointers(const checkpoint::reader& r, std::string_view name, T** device_array, std::size_t n) {
    static_assert(Heap::template contains<std::remove_cv_t<T>>, "load_pointers: T must be a class of this heap");
    synchronize();
    const auto img = checkpoint::detail::parse_heap<Heap>(r.section(checkpoint::section_kind::heap, "heap"), r.name());
    checkpoint::detail::restore_pointers<Heap>(
        view_, img, r.section(checkpoint::section_kind::pointers, name), device_array, n,
        checkpoint::detail::subclass_mask<Heap, std::remove_cv_t<T>>(), r.name() + ": pointers '" + std::string(name) + "'");
  }

  /// Checks the heap after quiescence: every block-state bitmap is consistent across its levels
  /// and with the block headers. Returns "" or the first violation found.
  std::string verify() const {
    const auto& v = view_;
    const auto headers = download_headers();
    std::vector<std::uint64_t> live(v.blocks);
    arch::copy_to_host(live.data(), v.live, live.size() * sizeof(std::uint64_t));
    std::vector<std::vector<std::uint64_t>> maps;
    maps.push_back(detail::download(v.free_blocks()));
    for (std::uint32_t t = 0; t < Heap::num_types; ++t) maps.push_back(detail::download(v.allocated(t)));
    for (std::uint32_t t = 0; t < Heap::num_types; ++t) maps.push_back(detail::download(v.active(t)));
    for (std::size_t i = 0; i < maps.size(); ++i) {
      const std::string bad = detail::check_consistency(maps[i], v.layout);
      if (!bad.empty()) return bitmap_name(i) + ": " + bad;
    }
    auto counters_ptr = std::make_unique<detail::heap_counters>();
    detail::heap_counters& counters = *counters_ptr;
    arch::copy_to_host(&counters, v.counters, sizeof(counters));
    long long free_blocks = 0;
    for (const auto& h : headers) {
      if (h.type == detail::no_type) ++free_blocks;
    }
    for (std::uint32_t t = 0; t < Heap::num_types; ++t)
      for (int s = 0; s < detail::epoch_shards; ++s)
        if ((counters.block_epoch[t][s][0] & 0xFFFFFFFFull) != 0)
          return "a block operation of " + type_name(t) + " is still in flight";
    {
      std::vector<detail::stock> stocks(stocks_.size());
      arch::copy_to_host(stocks.data(), stocks_.data(), stocks.size() * sizeof(detail::stock));
      for (std::size_t i = 0; i < stocks.size(); ++i)
        if (stocks[i].dirty != 0 || stocks[i].next != 0)
          return "allocation stock " + std::to_string(i % v.stocks_per_type) + " of " +
                 type_name(static_cast<std::uint32_t>(i / v.stocks_per_type)) + " still holds reservations";
    }
    if (counters.free_blocks[0] != free_blocks)
      return "free block counter " + std::to_string(counters.free_blocks[0]) + " but " +
             std::to_string(free_blocks) + " free blocks";
    auto bit = [](const std::vector<std::uint64_t>& m, std::uint64_t b) {
      return ((m[b / 64] >> (b % 64)) & 1u) != 0;
    };
    for (std::uint64_t b = 0; b < v.blocks; ++b) {
      const auto& h = headers[b];
      std::ostringstream os;
      os << "block " << b << ": ";
      if (h.returning != 0) return os.str() + "a return of this block is still in flight";
      if (h.type == detail::no_type) {
        if (!bit(maps[0], b)) return os.str() + "free block missing from the free bitmap";
        if (h.free_slots != 0) return os.str() + "free block with free_slots != 0";
        if (live[b] != 0) return os.str() + "free block with live slots";
      } else {
        if (h.type >= Heap::num_types || geometry_.capacity[h.type] == 0)
          return os.str() + "invalid type id " + std::to_string(h.type);
        if (bit(maps[0], b)) return os.str() + "block in use is marked free";
        const std::uint64_t full = v.full_mask(h.type);
        if (h.free_slots & ~full) return os.str() + "free slots beyond the block's capacity";
        if (h.free_slots == full) return os.str() + "empty block was not returned to the free blocks";
        if (live[b] != (~h.free_slots & full)) return os.str() + "live slots disagree with its free slots";
        if (!bit(maps[1 + h.type], b)) return os.str() + "missing from allocated[" + type_name(h.type) + "]";
        if (bit(maps[1 + Heap::num_types + h.type], b) != (h.free_slots != 0))
          return os.str() + "active[" + type_name(h.type) + "] disagrees with its free slots";
      }
      for (std::uint32_t t = 0; t < Heap::num_types; ++t) {
        if (t == h.type) continue;
        if (bit(maps[1 + t], b)) return os.str() + "wrongly in allocated[" + type_name(t) + "]";
        if (bit(maps[1 + Heap::num_types + t], b)) return os.str() + "wrongly in active[" + type_name(t) + "]";
      }
    }
    return {};
  }

 private:
  static constexpr std::uint64_t errors_bytes = (sizeof(detail::heap_errors) + 255) / 256 * 256;
  static constexpr std::uint64_t counters_bytes = (sizeof(detail::heap_counters) + 255) / 256 * 256;
  /// What each block needs besides its data: its header, its do-all snapshot and live words.
  static constexpr std::uint64_t block_extra_bytes = sizeof(detail::block_header) + 2 * sizeof(std::uint64_t);
  static constexpr std::uint64_t tail_bytes =
      errors_bytes + counters_bytes + sizeof(detail::heap_view) + 256;

  /// Device bytes of a heap of m blocks: data, headers, snapshot and live words, bitmaps, the tail.
  static std::uint64_t bytes_for_blocks(std::uint64_t m) {
    constexpr std::uint64_t bitmaps = 1 + 2 * Heap::num_types;
    return m * (detail::geometry_of<Heap>.block_bytes + block_extra_bytes) +
           bitmaps * bitmap_layout::for_bits(m).total_words * sizeof(std::uint64_t) + tail_bytes;
  }

  defrag_stats defragment_types(std::uint32_t types, double max_fill) {
    if (!(max_fill > 0.0 && max_fill < 1.0))
      throw error("shoal: defragment: max_fill must lie strictly between 0 and 1 (a fraction of a block's slots), got " +
                  std::to_string(max_fill));
    const auto timed = timed_phase("defragment");
    settle_stocks();
    synchronize();
    const defrag_stats s = detail::defragment_heap<Heap>(view_, types, max_fill, registered_, defrag_scratch_);
    synchronize();
    return s;
  }

  /// Stocks per class: one per multiprocessor on the GPU; on cpu a few, picked by a hash of the
  /// thread (several threads may share one).
  static std::uint32_t stocks_per_type() {
#if defined(SHOAL_BACKEND_CUDA)
    return static_cast<std::uint32_t>(std::max(1, arch::probe_device().multiprocessors));
#else
    return 16;
#endif
  }

  std::vector<detail::block_header> download_headers() const {
    settle_stocks();
    std::vector<detail::block_header> h(view_.blocks);
    arch::copy_to_host(h.data(), view_.headers, h.size() * sizeof(detail::block_header));
    return h;
  }
  static std::string bitmap_name(std::size_t i) {
    if (i == 0) return "free bitmap";
    if (i <= Heap::num_types) return "allocated[" + type_name(static_cast<std::uint32_t>(i - 1)) + "]";
    return "active[" + type_name(static_cast<std::uint32_t>(i - 1 - Heap::num_types)) + "]";
  }
  std::string describe_pointer(std::uint64_t p) const {
    std::ostringstream os;
    const auto first = reinterpret_cast<std::uintptr_t>(view_.data);
    const std::uintptr_t block = detail::block_address_of(p);
    if (p == 0) return "null";
    if (block < first || block >= first + view_.blocks * view_.block_bytes)
      return "not inside this heap";
    os << "claims type " << (detail::type_of(p) < Heap::num_types ? type_name(detail::type_of(p)) : "invalid")
       << ", block " << (block - first) / view_.block_bytes << ", slot " << detail::slot_of(p);
    return os.str();
  }

  /// parallel_new and upload: n objects of T in the lowest free blocks, object i made as
  /// `Made(i, arguments...)` in its place (Made is T, or upload's column_loader<T>, which writes
  /// the fields from the columns).
  template <class T, class Made, class Pack>
  void make_in_order(std::size_t n, const Pack& arguments) {
    constexpr std::uint32_t t = Heap::template type_id<T>;
    // A compile-time constant: i / capacity is a multiply and a shift, not a 64-bit division
    // (which made the constructing launch 1.7× a plain array initialisation at 10^8 objects).
    constexpr std::uint32_t capacity = detail::geometry_of<Heap>.capacity[t];
    if ((n + capacity - 1) / capacity > do_all_list_.size()) {
      detail::record_oom_on_host(view_, t, n);
      check_errors();
    }
    const detail::parallel_new_scratch scratch{do_all_list_.data(), word_offsets_.data(), chunk_counts_.data(),
                                               static_cast<unsigned>(chunk_counts_.size()), parallel_new_made_.data()};
    detail::parallel_new<Made, capacity>(view_, device_view_, t, n, scratch, arguments);
  }

  /// A do-all's block counter and the one the next do-all will use. Each visit launch resets
  /// the other counter, so no do-all needs a memset (stream order makes this safe: the next
  /// enumeration starts after this visit ends, and the previous visit ended before it began).
  struct counter_pair {
    unsigned long long* current;
    unsigned long long* next;
  };
  counter_pair next_do_all_counters() {
    do_all_parity_ ^= 1u;
    return {do_all_count_.data() + do_all_parity_, do_all_count_.data() + (do_all_parity_ ^ 1u)};
  }

  std::uint64_t heap_bytes_ = 0;
  detail::heap_geometry geometry_{};
  /// Times the scope as `name` in the timer of time_with(), if any.
  sim::phase_timer::scope timed_phase(std::string_view name) {
    static sim::phase_timer untimed(false);  // hands out scopes that time nothing
    return (timer_ != nullptr ? *timer_ : untimed).phase(name);
  }

  sim::phase_timer* timer_ = nullptr;  // time_with()
  arch::device_buffer<std::byte> memory_;
  arch::device_buffer<detail::stock> stocks_;          // allocation stocks [class][processor]
  mutable bool stocks_settled_ = true;                 // no launch since settle_stocks() or clear()
  detail::heap_view view_{};
  detail::heap_view* device_view_ = nullptr;
  arch::device_buffer<std::uint32_t> do_all_list_;         // blocks of the type being visited
  arch::device_buffer<unsigned long long> do_all_count_;  // their number (two: see counter_pair)
  unsigned do_all_parity_ = 0;
  arch::launch_graphs launch_graphs_;  // a do-all's two launches as one (cuda graphs)
  detail::all_pairs_scratch all_pairs_scratch_;
  arch::device_buffer<unsigned long long> word_offsets_;  // parallel_new's scratch: per leaf word
  arch::device_buffer<unsigned long long> chunk_counts_;  // ... per thread block of its planning launch
  arch::device_buffer<unsigned long long> parallel_new_made_;  // ... and the objects it made room for
  arch::pinned_value<detail::heap_errors> errors_seen_;   // synchronize()'s copy of the record
  std::vector<detail::registered_pointers> registered_;  // rewritten by defragment(), saved with the heap
  detail::defrag_scratch defrag_scratch_;                 // defragment()'s device memory, kept
};

}  // namespace shoal
