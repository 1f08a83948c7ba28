// Adversarial tests of the allocator's per-(class, processor) stocks of reserved slots: a prepare
// takes all free slots of a few blocks at once (or opens fresh blocks) into its processor's stock,
// stocks keep what they hold from launch to launch, and a flush gives back what was not used
// before the host reads the heap. Black-box where possible, so that they hold for any allocator
// that keeps the runtime's promises:
//   - type reuse while stocks hold reservations: blocks emptied, returned and reopened for
//     another class inside one launch, no slot handed out twice, no block with two classes;
//   - the flush racing frees of the previous launch's objects, in the same blocks;
//   - a do-all right after births, with reservations outstanding: it visits no reserved slot;
//   - out of memory while other processors' stocks hold the last free slots: nullptr, never a
//     hang or a trap, out_of_memory naming the class, and recovery at the next launch;
//   - do-alls whose methods create and destroy objects of the other classes;
//   - a heap of one block, churned by thousands of threads;
//   - no reservation left behind: once settled, the blocks in use are the objects' own
//     (the bound on part-empty blocks checked where the allocator has stocks).
// Every object stores its owner's id and its complement (the destructor spoils the complement),
// and is checked before it is destroyed; a ledger on the side records who holds each slot and
// how many objects of each class each block holds, so a slot handed to two threads, or a block
// holding two classes at once, is seen when it happens. After every launch the counts must be
// exact, rt.verify() == "" and a do-all must visit exactly the live objects. Compiled for both
// backends; sizes scaled down on cpu, and by SHOAL_TEST_SCALE under the sanitizers
// (test_support.hpp).
#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace shoal::test::stocks {

class Fry;
class Roe;
class Kelp;
using Pond = shoal::heap<Fry, Roe, Kelp>;
using PondRuntime = runtime<Pond>;
inline constexpr int classes = 3;

/// Counters of a phase, in device memory.
struct tally {
  unsigned long long made, destroyed, failed, violations, wrong_class, visited, created, victims, skipped;
};

/// Test 4's bookkeeping, one entry per object id (ids are never reused): the object's pointer
/// while it lives (0 once destroyed), its class, and the do-alls (numbered 3 × round + class) that
/// created and destroyed it; `born` is -1 for the objects made before the first do-all and
/// `never` for an id whose make() failed, `died` is `never` while the object lives.
inline constexpr int never = INT_MAX;
struct registry {
  unsigned long long* table;
  int* kind;
  int* born;
  int* died;
  unsigned* visits;
  unsigned long long* next_id;
  unsigned long long ids_at_start;  // ids below this existed when the round began
  unsigned long long max_ids;
  int sequence;                     // of the do-all running
};

// Objects of 16, 64 and 256 bytes (64, 16 and 3 slots in a block of 1 KiB, so blocks of the third
// empty and change class often): an owner id and its complement around some padding. Each class
// has the same methods.
class Fry : public object<Pond, Fry> {
 public:
  SHOAL_FIELDS(Fry, (unsigned long long, owner), (unsigned long long, check))
  SHOAL_HD explicit Fry(unsigned long long id) { owner = id, check = ~id; }
  SHOAL_HD ~Fry() { check = owner.get(); }
  SHOAL_HD bool intact(unsigned long long id) const { return owner == id && check == ~id; }
  SHOAL_DEVICE void count_visit(unsigned* visits, unsigned long long ids, tally* t);
  SHOAL_DEVICE void turnover(registry r, tally* t);
  SHOAL_DEVICE void enter(void** table, unsigned long long ids, tally* t);
  SHOAL_DEVICE void thin(tally* t);
};
class Roe : public object<Pond, Roe> {
 public:
  SHOAL_FIELDS(Roe, (unsigned long long, owner), (unsigned long long[6], pad), (unsigned long long, check))
  SHOAL_HD explicit Roe(unsigned long long id) { owner = id, check = ~id; }
  SHOAL_HD ~Roe() { check = owner.get(); }
  SHOAL_HD bool intact(unsigned long long id) const { return owner == id && check == ~id; }
  SHOAL_DEVICE void count_visit(unsigned* visits, unsigned long long ids, tally* t);
  SHOAL_DEVICE void turnover(registry r, tally* t);
  SHOAL_DEVICE void enter(void** table, unsigned long long ids, tally* t);
  SHOAL_DEVICE void thin(tally* t);
};
class Kelp : public object<Pond, Kelp> {
 public:
  SHOAL_FIELDS(Kelp, (unsigned long long, owner), (unsigned long long[30], pad), (unsigned long long, check))
  SHOAL_HD explicit Kelp(unsigned long long id) { owner = id, check = ~id; }
  SHOAL_HD ~Kelp() { check = owner.get(); }
  SHOAL_HD bool intact(unsigned long long id) const { return owner == id && check == ~id; }
  SHOAL_DEVICE void count_visit(unsigned* visits, unsigned long long ids, tally* t);
  SHOAL_DEVICE void turnover(registry r, tally* t);
  SHOAL_DEVICE void enter(void** table, unsigned long long ids, tally* t);
  SHOAL_DEVICE void thin(tally* t);
};
static_assert(Pond::type_id<Fry> == 0 && Pond::type_id<Roe> == 1 && Pond::type_id<Kelp> == 2);

// ---- Objects by class number (0 Fry, 1 Roe, 2 Kelp), as the untyped pointers threads keep ----

SHOAL_HD inline int kind_of(const void* p) { return static_cast<int>(detail::type_of(detail::bits_of(p))); }

SHOAL_DEVICE inline void* make_kind(int kind, unsigned long long id) {
  if (kind == 0) return make<Fry>(id);
  if (kind == 1) return make<Roe>(id);
  return make<Kelp>(id);
}
SHOAL_DEVICE inline bool intact_kind(const void* p, unsigned long long id) {
  const int kind = kind_of(p);
  if (kind == 0) return static_cast<const Fry*>(p)->intact(id);
  if (kind == 1) return static_cast<const Roe*>(p)->intact(id);
  if (kind == 2) return static_cast<const Kelp*>(p)->intact(id);
  return false;
}
SHOAL_DEVICE inline void destroy_kind(void* p) {
  const int kind = kind_of(p);
  if (kind == 0) destroy(static_cast<Fry*>(p));
  else if (kind == 1) destroy(static_cast<Roe*>(p));
  else destroy(static_cast<Kelp*>(p));
}

/// SplitMix64's finaliser: dice for the do-all methods.
SHOAL_HD inline unsigned long long mix(unsigned long long x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// ---- The ledger: who holds which slot, and which classes each block holds ----

/// Device side of the ledger. Threads take() a slot right after make() returned it and give()
/// it back right before the destroy that frees it, so an allocator that hands a slot to two
/// threads at once, or puts objects of two classes into one block at once, is caught when it
/// happens: a failed compare-and-swap on the slot's word, or a count of another class in the
/// block. (The fences order the ledger's atomics against the allocator's, for the next holder.)
struct ledger_view {
  unsigned long long* holder;        // [block × 64 + slot]: holder's id + 1, 0 when not held
  unsigned long long* per_class;     // [block × classes + class]: objects of the class held there
  unsigned long long* classes_seen;  // [block]: bit c once an object of class c was held there
  std::uintptr_t base;
  std::uint64_t block_bytes;
  std::uint64_t blocks;
  std::uint32_t capacity[classes];

  SHOAL_DEVICE bool take(const void* p, int kind, unsigned long long id, tally* t) const {
    arch::fence();
    const std::uint64_t bits = detail::bits_of(p);
    if (kind_of(p) != kind) arch::fetch_add(t->wrong_class, 1ull);
    const std::uintptr_t block = detail::block_address_of(bits);
    if (block < base || (block - base) % block_bytes != 0 || (block - base) / block_bytes >= blocks ||
        detail::slot_of(bits) >= capacity[kind]) {
      arch::fetch_add(t->violations, 1ull);
      return false;
    }
    const std::uint64_t b = (block - base) / block_bytes;
    unsigned long long idle = 0;
    if (!arch::compare_exchange(holder[b * 64 + detail::slot_of(bits)], idle, id + 1))
      arch::fetch_add(t->violations, 1ull);  // handed out while another thread holds it
    const unsigned long long mine = arch::fetch_add(per_class[b * classes + kind], 1ull) + 1;
    if (mine > capacity[kind]) arch::fetch_add(t->violations, 1ull);
    for (int c = 0; c < classes; ++c)
      if (c != kind && arch::fetch_add(per_class[b * classes + c], 0ull) != 0)
        arch::fetch_add(t->violations, 1ull);  // two classes in one block at once
    arch::fetch_or(classes_seen[b], 1ull << kind);
    return true;
  }
  SHOAL_DEVICE void give(const void* p, int kind, unsigned long long id, tally* t) const {
    const std::uint64_t bits = detail::bits_of(p);
    const std::uint64_t b = (detail::block_address_of(bits) - base) / block_bytes;
    unsigned long long held = id + 1;
    if (!arch::compare_exchange(holder[b * 64 + detail::slot_of(bits)], held, 0ull))
      arch::fetch_add(t->violations, 1ull);
    arch::fetch_add(per_class[b * classes + kind], ~0ull);  // minus one
    arch::fence();
  }
};

/// The ledger's memory, for one runtime.
class ledger {
 public:
  explicit ledger(const PondRuntime& rt)
      : holder_(rt.blocks() * 64), per_class_(rt.blocks() * classes), classes_seen_(rt.blocks()) {
    holder_.zero();
    per_class_.zero();
    classes_seen_.zero();
    view_ = {holder_.data(), per_class_.data(), classes_seen_.data(),
             reinterpret_cast<std::uintptr_t>(rt.view().data), rt.block_bytes(), rt.blocks(),
             {rt.capacity<Fry>(), rt.capacity<Roe>(), rt.capacity<Kelp>()}};
  }
  const ledger_view& view() const { return view_; }
  /// Blocks that held objects of more than one class (one after another) since the start.
  std::uint64_t retyped_blocks() const {
    std::uint64_t n = 0;
    for (unsigned long long seen : classes_seen_.download()) n += std::popcount(seen) > 1;
    return n;
  }
  /// Slots the ledger says are held.
  std::uint64_t held() const {
    std::uint64_t n = 0;
    for (unsigned long long h : holder_.download()) n += h != 0;
    return n;
  }

 private:
  arch::device_buffer<unsigned long long> holder_, per_class_, classes_seen_;
  ledger_view view_{};
};

/// A new object of class `kind` for the calling thread, entered in the ledger; nullptr when
/// the heap is full.
SHOAL_DEVICE inline void* obtain(int kind, unsigned long long id, const ledger_view& l, tally* t) {
  void* p = make_kind(kind, id);
  if (p == nullptr) {
    arch::fetch_add(t->failed, 1ull);
    return nullptr;
  }
  arch::fetch_add(t->made, 1ull);
  l.take(p, kind, id, t);
  return p;
}
/// Checks the thread's object, takes it out of the ledger and destroys it.
SHOAL_DEVICE inline void release(void* p, unsigned long long id, const ledger_view& l, tally* t) {
  if (!intact_kind(p, id)) arch::fetch_add(t->violations, 1ull);
  l.give(p, kind_of(p), id, t);
  destroy_kind(p);
  arch::fetch_add(t->destroyed, 1ull);
}

// ---- Do-all methods ----

/// Counts the visit of the object by its id (ids below `ids`), after checking it.
template <class T>
SHOAL_DEVICE void count_visit_of(T* self, unsigned* visits, unsigned long long ids, tally* t) {
  arch::fetch_add(t->visited, 1ull);
  const unsigned long long id = self->owner;
  if (id >= ids || !self->intact(id)) {
    arch::fetch_add(t->violations, 1ull);  // a slot that holds no live object of this class
    return;
  }
  arch::fetch_add(visits[id], 1u);
}

/// Test 4's method, in do-all number r.sequence: the object checks itself and counts its visit;
/// then, by a hash of its id and the do-all, one in four destroys itself, one in four creates an
/// object of one of the other two classes, one in four destroys an object of another class
/// (picked at random among the ids of the round's start; claimed with a compare-and-swap on its
/// table entry, so no two threads destroy one object), one in four does nothing.
template <class T>
SHOAL_DEVICE void turnover_of(T* self, const registry& r, tally* t) {
  constexpr int mine = static_cast<int>(Pond::type_id<T>);
  arch::fetch_add(t->visited, 1ull);
  const unsigned long long id = self->owner;
  if (id >= r.max_ids || !self->intact(id)) {
    arch::fetch_add(t->violations, 1ull);
    return;
  }
  arch::fetch_add(r.visits[id], 1u);
  const unsigned long long dice = mix(id * 0x9E3779B97F4A7C15ull + static_cast<unsigned long long>(r.sequence) + 1);
  const int what = static_cast<int>(dice >> 62);
  if (what == 0) {
    unsigned long long expected = detail::bits_of(self);
    // Only the object itself destroys an object of the class whose do-all runs: its entry must
    // still be its own.
    if (!arch::compare_exchange(r.table[id], expected, 0ull)) {
      arch::fetch_add(t->violations, 1ull);
      return;
    }
    r.died[id] = r.sequence;
    delete self;
    arch::fetch_add(t->destroyed, 1ull);
  } else if (what == 1) {
    const unsigned long long nid = arch::fetch_add(*r.next_id, 1ull);
    if (nid >= r.max_ids) {
      arch::fetch_add(t->skipped, 1ull);
      return;
    }
    const int kind = (mine + 1 + static_cast<int>((dice >> 20) & 1)) % classes;
    r.kind[nid] = kind;
    void* p = make_kind(kind, nid);
    if (p == nullptr) {
      arch::fetch_add(t->failed, 1ull);
      return;
    }
    r.born[nid] = r.sequence;
    arch::store_relaxed(r.table[nid], static_cast<unsigned long long>(detail::bits_of(p)));
    arch::fetch_add(t->created, 1ull);
  } else if (what == 2 && r.ids_at_start > 0) {
    const unsigned long long victim = (dice & 0xFFFFFFFFull) % r.ids_at_start;
    unsigned long long bits = arch::load_relaxed(r.table[victim]);
    if (bits == 0 || detail::type_of(bits) == static_cast<std::uint32_t>(mine)) return;
    if (!arch::compare_exchange(r.table[victim], bits, 0ull)) return;  // another thread's victim
    void* p = reinterpret_cast<void*>(static_cast<std::uintptr_t>(bits));
    if (!intact_kind(p, victim) || kind_of(p) != r.kind[victim]) arch::fetch_add(t->violations, 1ull);
    r.died[victim] = r.sequence;
    destroy_kind(p);
    arch::fetch_add(t->victims, 1ull);
  }
}

/// Writes the object's pointer into table[id] (ids below `ids`).
template <class T>
SHOAL_DEVICE void enter_of(T* self, void** table, unsigned long long ids, tally* t) {
  const unsigned long long id = self->owner;
  if (id >= ids || !self->intact(id)) arch::fetch_add(t->violations, 1ull);
  else table[id] = self;
}

/// Test 3: destroys the object if it lies in an even group of 64 ids (parallel_new put those in
/// one block), or if its id is a multiple of 4.
template <class T>
SHOAL_DEVICE void thin_of(T* self, tally* t) {
  const unsigned long long id = self->owner;
  if (!self->intact(id)) arch::fetch_add(t->violations, 1ull);
  if ((id / 64) % 2 == 0 || id % 4 == 0) {
    delete self;
    arch::fetch_add(t->destroyed, 1ull);
  }
}

SHOAL_DEVICE void Fry::count_visit(unsigned* v, unsigned long long n, tally* t) { count_visit_of(this, v, n, t); }
SHOAL_DEVICE void Roe::count_visit(unsigned* v, unsigned long long n, tally* t) { count_visit_of(this, v, n, t); }
SHOAL_DEVICE void Kelp::count_visit(unsigned* v, unsigned long long n, tally* t) { count_visit_of(this, v, n, t); }
SHOAL_DEVICE void Fry::turnover(registry r, tally* t) { turnover_of(this, r, t); }
SHOAL_DEVICE void Roe::turnover(registry r, tally* t) { turnover_of(this, r, t); }
SHOAL_DEVICE void Kelp::turnover(registry r, tally* t) { turnover_of(this, r, t); }
SHOAL_DEVICE void Fry::enter(void** table, unsigned long long n, tally* t) { enter_of(this, table, n, t); }
SHOAL_DEVICE void Roe::enter(void** table, unsigned long long n, tally* t) { enter_of(this, table, n, t); }
SHOAL_DEVICE void Kelp::enter(void** table, unsigned long long n, tally* t) { enter_of(this, table, n, t); }
SHOAL_DEVICE void Fry::thin(tally* t) { thin_of(this, t); }
SHOAL_DEVICE void Roe::thin(tally* t) { thin_of(this, t); }
SHOAL_DEVICE void Kelp::thin(tally* t) { thin_of(this, t); }

// ---- Host helpers ----

/// Waits for a phase that is meant to run out of heap: its out_of_memory is expected (the
/// threads count their failures themselves); anything else, e.g. invalid_destroy, propagates.
void expect_full(PondRuntime& rt) {
  try {
    rt.synchronize();
  } catch (const out_of_memory&) {
  }
}

/// Whether the allocator keeps per-(class, processor) stocks (detail::heap_view::stocks). The
/// bound of StocksEmptyOnceSettled on part-empty blocks is theirs: the hint-and-walk
/// allocator lets every warp that finds no room open a block of its own (on the H100 it left
/// 3628 Fry blocks for 3126 blocks' worth), so there the test only reports the count.
template <class View>
concept stock_view = requires(const View& v) { v.stocks; };
inline constexpr bool stock_allocator = stock_view<detail::heap_view>;

/// Processors that may hold a stock each: the GPU's multiprocessors, the cpu backend's threads.
std::uint64_t processors() {
  return static_cast<std::uint64_t>(std::max(arch::probe_device().multiprocessors, arch::cpu_threads()));
}

/// Live objects per class among the pointers.
std::array<std::uint64_t, classes> by_class(const std::vector<void*>& objects) {
  std::array<std::uint64_t, classes> n{};
  for (void* p : objects)
    if (p != nullptr) ++n[kind_of(p)];
  return n;
}

/// The runtime's counts, verify() and the threads' own record of what they hold must agree.
void expect_counts(PondRuntime& rt, const std::array<std::uint64_t, classes>& held, const std::string& phase) {
  const heap_stats s = rt.stats();
  for (int c = 0; c < classes; ++c) EXPECT_EQ(s.types[c].live, held[c]) << phase << ", class " << s.types[c].name;
  EXPECT_EQ(rt.verify(), "") << phase;
}

/// A do-all of each class counting visits by id: every live object (held[id] != nullptr) must be
/// visited exactly once, nothing else (no reserved, unconstructed or destroyed slot).
void count_visits(PondRuntime& rt, unsigned* visits, unsigned long long ids, tally* t) {
  rt.parallel_do<&Fry::count_visit>(visits, ids, t);
  rt.parallel_do<&Roe::count_visit>(visits, ids, t);
  rt.parallel_do<&Kelp::count_visit>(visits, ids, t);
  rt.synchronize();
}
void expect_visited_once(PondRuntime& rt, const std::vector<void*>& held, const std::string& phase) {
  arch::device_buffer<unsigned> visits(std::max<std::size_t>(held.size(), 1));
  visits.zero();
  arch::device_buffer<tally> tb(1);
  tb.zero();
  count_visits(rt, visits.data(), held.size(), tb.data());
  const tally t = tb.read(0);
  const auto v = visits.download();
  std::uint64_t live = 0, wrong = 0;
  for (std::size_t id = 0; id < held.size(); ++id) {
    live += held[id] != nullptr;
    wrong += v[id] != (held[id] != nullptr ? 1u : 0u);
  }
  EXPECT_EQ(t.violations, 0u) << phase << ": the do-all visited slots without a live object";
  EXPECT_EQ(t.visited, live) << phase;
  EXPECT_EQ(wrong, 0u) << phase << ": objects not visited exactly once";
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// ---- Device code of the tests (nvcc: in free functions, not inside TEST bodies) ----

/// Test 1 and 5: thread i's class. The first half of the threads ask by warp (a warp of one
/// class), the second half by lane (every warp asks for all three).
SHOAL_HD inline int class_of_thread(std::size_t i, std::size_t n) {
  return static_cast<int>(i < n / 2 ? (i / 32) % classes : i % classes);
}
inline constexpr int hold = 4;

/// Test 1, in one launch. Fry threads churn: every step a new Fry, then the previous one checked
/// and destroyed, so Fry blocks keep emptying and going back. Roe and Kelp threads allocate in
/// bursts, out of phase: four steps making one object each, four steps destroying them. The
/// heap is small: blocks are returned and reopened for other classes all the while, and
/// allocations often find it full. Every `keep_every`-th thread leaves what it holds at the end
/// in keep[i × hold + s]; the others destroy it.
void churn_three_classes(PondRuntime& rt, std::uint64_t n, int steps, std::uint64_t keep_every, ledger_view l,
                         void** keep, unsigned long long* keep_id, tally* t) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
    const int kind = class_of_thread(i, n);
    void* held[hold] = {nullptr, nullptr, nullptr, nullptr};
    unsigned long long held_id[hold] = {0, 0, 0, 0};
    for (int k = 0; k < steps; ++k) {
      const unsigned long long id = (static_cast<unsigned long long>(i) << 24) | (static_cast<unsigned long long>(k) << 2);
      if (kind == 0) {
        void* p = obtain(kind, id, l, t);
        if (held[0] != nullptr) release(held[0], held_id[0], l, t);
        held[0] = p, held_id[0] = id;
        continue;
      }
      const int phase = static_cast<int>((k + i / classes) % (2 * hold));
      if (phase < hold) {
        if (held[phase] == nullptr) held[phase] = obtain(kind, id | phase, l, t), held_id[phase] = id | phase;
      } else if (held[phase - hold] != nullptr) {
        release(held[phase - hold], held_id[phase - hold], l, t);
        held[phase - hold] = nullptr;
      }
    }
    for (int s = 0; s < hold; ++s) {
      if (i % keep_every != 0 && held[s] != nullptr) release(held[s], held_id[s], l, t), held[s] = nullptr;
      keep[i * hold + s] = held[s], keep_id[i * hold + s] = held_id[s];
    }
  });
}

/// Checks every kept object (class, contents, ledger) and destroys it.
void release_kept(PondRuntime& rt, void** keep, const unsigned long long* keep_id, std::uint64_t n,
                  ledger_view l, tally* t) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (keep[i] == nullptr) return;
    release(keep[i], keep_id[i], l, t);
    keep[i] = nullptr;
  });
}

/// Test 2: objects 0 .. n-1, of class i % 3, in obj[i].
void make_population(PondRuntime& rt, std::uint64_t n, void** obj, tally* t) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    obj[i] = make_kind(static_cast<int>(i % classes), i);
    arch::fetch_add(obj[i] != nullptr ? t->made : t->failed, 1ull);
  });
}

/// Test 2, round r ≥ 1, 2p threads: even threads each make an object (ids p·r ..), odd threads
/// each destroy one of the objects of the previous round (ids p·(r-1) ..), in whole runs of 64 ids
/// (whole blocks) and 3 in 4 of the rest, so that blocks empty and return while this launch's
/// allocations reserve slots in them and its last thread block flushes.
void allocate_and_free(PondRuntime& rt, std::uint64_t p, int round, void** obj, tally* t) {
  rt.launch_async(2 * p, [=] SHOAL_DEVICE(std::size_t j) {
    const unsigned long long k = j / 2;
    if (j % 2 == 0) {
      const unsigned long long id = p * static_cast<unsigned long long>(round) + k;
      obj[id] = make_kind(static_cast<int>((k + static_cast<unsigned long long>(round)) % classes), id);
      arch::fetch_add(obj[id] != nullptr ? t->made : t->failed, 1ull);
      return;
    }
    const unsigned long long victim = p * static_cast<unsigned long long>(round - 1) + k;
    if (obj[victim] == nullptr || ((victim / 64) % 2 != 0 && mix(victim) % 4 == 0)) return;
    if (!intact_kind(obj[victim], victim)) arch::fetch_add(t->violations, 1ull);
    destroy_kind(obj[victim]);
    obj[victim] = nullptr;
    arch::fetch_add(t->destroyed, 1ull);
  });
}

/// Test 3: every thread asks for a Roe; got[i] is what it got.
void request_roe(PondRuntime& rt, std::uint64_t n, unsigned long long first_id, void** got, tally* t) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
    got[i] = make<Roe>(first_id + i);
    arch::fetch_add(got[i] != nullptr ? t->made : t->failed, 1ull);
  });
}
/// Destroys (after checking) every object in got[0 .. n), ids first_id + i.
void destroy_got(PondRuntime& rt, std::uint64_t n, unsigned long long first_id, void** got, tally* t) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (got[i] == nullptr) return;
    if (!intact_kind(got[i], first_id + i)) arch::fetch_add(t->violations, 1ull);
    destroy_kind(got[i]);
    got[i] = nullptr;
    arch::fetch_add(t->destroyed, 1ull);
  });
}
/// NoFalseOutOfMemory: every other object of `got` is destroyed and marked, without waiting.
void destroy_every_other(PondRuntime& rt, std::uint64_t n, unsigned long long first_id, void** got,
                         unsigned* marked, tally* t) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (i % 2 != 0 || got[i] == nullptr) return;
    if (!intact_kind(got[i], first_id + i)) arch::fetch_add(t->violations, 1ull);
    destroy_kind(got[i]);
    got[i] = nullptr;
    marked[i] = 1;
    arch::fetch_add(t->destroyed, 1ull);
  });
}
/// NoFalseOutOfMemory: a Roe for every marked place, without waiting.
void refill_marked(PondRuntime& rt, std::uint64_t n, unsigned long long first_id, void** got, const unsigned* marked,
                   tally* t) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (marked[i] == 0) return;
    got[i] = make<Roe>(first_id + i);
    arch::fetch_add(got[i] != nullptr ? t->made : t->failed, 1ull);
  });
}

/// Test 3: threads below `freeing` destroy Fry table[i × stride] (a few slots in many blocks);
/// then every thread asks for a Fry up to `patience` times. got[i] is what it got.
void free_then_request_fry(PondRuntime& rt, std::uint64_t n, void** table, std::uint64_t stride,
                           std::uint64_t freeing, int patience, unsigned long long first_id, void** got, tally* t) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (i < freeing) {
      void*& victim = table[i * stride];
      if (!intact_kind(victim, i * stride)) arch::fetch_add(t->violations, 1ull);
      destroy_kind(victim);
      victim = nullptr;
      arch::fetch_add(t->destroyed, 1ull);
    }
    got[i] = nullptr;
    for (int k = 0; k < patience && got[i] == nullptr; ++k) {
      got[i] = make<Fry>(first_id + i);
      arch::fetch_add(got[i] != nullptr ? t->made : t->failed, 1ull);
    }
  });
}
/// Test 3: objects first_id .. first_id + n - 1, the first `roe` of them Roe, the rest Fry.
void make_roe_and_fry(PondRuntime& rt, std::uint64_t n, std::uint64_t roe, unsigned long long first_id, void** got,
                      tally* t) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    got[i] = make_kind(i < roe ? 1 : 0, first_id + i);
    arch::fetch_add(got[i] != nullptr ? t->made : t->failed, 1ull);
  });
}

/// Test 4: objects 0 .. n-1 (class by warp for the first half, by lane for the rest), entered
/// in the registry as made before the first do-all.
void seed_registry(PondRuntime& rt, std::uint64_t n, registry r, tally* t) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    const int kind = class_of_thread(i, n);
    void* p = make_kind(kind, i);
    r.kind[i] = kind;
    if (p == nullptr) {
      arch::fetch_add(t->failed, 1ull);
      return;
    }
    r.born[i] = -1;
    r.table[i] = detail::bits_of(p);
    arch::fetch_add(t->made, 1ull);
  });
}

/// Test 5: `n` threads on a heap of one block, each `steps` times: an object (a Roe for every
/// fourth thread, else a Fry; id i × steps + k) made, entered in the ledger (which checks that
/// the block never holds more than its capacity, nor two classes), checked twice, destroyed.
/// Every 16th thread keeps its last one in keep[i].
void churn_one_block(PondRuntime& rt, std::uint64_t n, int steps, ledger_view l, void** keep,
                     unsigned long long* keep_id, tally* t) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
    const int kind = i % 4 == 3 ? 1 : 0;
    keep[i] = nullptr;
    for (int k = 0; k < steps; ++k) {
      const unsigned long long id = static_cast<unsigned long long>(i) * static_cast<unsigned long long>(steps) +
                                    static_cast<unsigned long long>(k);
      void* p = obtain(kind, id, l, t);
      if (p == nullptr) continue;
      if (!intact_kind(p, id)) arch::fetch_add(t->violations, 1ull);
      if (i % 16 == 0 && k == steps - 1) {
        keep[i] = p, keep_id[i] = id;
        break;
      }
      release(p, id, l, t);
    }
  });
}

/// n objects of class `kind`, ids first_id .., into obj[id], launched without a wait: made by
/// every thread of the launch (full warps) or by lane 0 of each warp of a launch 32 times as large.
void make_async(PondRuntime& rt, int kind, bool one_lane_per_warp, std::uint64_t n, unsigned long long first_id,
                void** obj, tally* t) {
  rt.launch_async(one_lane_per_warp ? 32 * n : n, [=] SHOAL_DEVICE(std::size_t i) {
    if (one_lane_per_warp && i % 32 != 0) return;
    const unsigned long long id = first_id + (one_lane_per_warp ? i / 32 : i);
    obj[id] = make_kind(kind, id);
    arch::fetch_add(obj[id] != nullptr ? t->made : t->failed, 1ull);
  });
}

/// Test 6: make_async, then a wait.
void make_pattern(PondRuntime& rt, int kind, bool one_lane_per_warp, std::uint64_t n, unsigned long long first_id,
                  void** obj, tally* t) {
  make_async(rt, kind, one_lane_per_warp, n, first_id, obj, t);
  rt.synchronize();
}

// ---- The tests ----

TEST(Stock, TypeReuseWhileStocksHoldReservations) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  // Small for the threads: fewer slots than the threads hold at their peak, so blocks change
  // class all the time and allocations of every class also find the heap full.
  // (On cpu the threads of a launch run a few at a time, one after another: few may keep objects
  // past their end, or the heap fills up with them.)
  // Under the sanitizers (scale_down > 1) still ten times the threads of the heap's slots.
  const std::uint64_t n = scale_down > 1 ? 4000 : contended(1 << 16, 2048);
  const std::uint64_t blocks = scale_down > 1 ? 6 : n / 8;
  const int steps = static_cast<int>(scale_down > 1 ? 16 : scaled(64, 8));
  const std::uint64_t keep_every = scale_down > 1 ? 400 : 16;
  PondRuntime rt(PondRuntime::bytes_for<Fry>(blocks * 64));
  ASSERT_EQ(rt.blocks(), blocks);
  const ledger book(rt);
  arch::device_buffer<tally> tb(1);
  tb.zero();
  arch::device_buffer<void*> keep(n * hold);
  arch::device_buffer<unsigned long long> keep_id(n * hold);
  const auto start = std::chrono::steady_clock::now();
  churn_three_classes(rt, n, steps, keep_every, book.view(), keep.data(), keep_id.data(), tb.data());
  expect_full(rt);
  const double ms = milliseconds_since(start);
  const tally t = tb.read(0);
  EXPECT_EQ(t.violations, 0u) << "a slot handed to two threads, or a block holding two classes at once";
  EXPECT_EQ(t.wrong_class, 0u) << "an object of another class than asked for";
  const auto kept = keep.download();
  const auto held = by_class(kept);
  expect_counts(rt, held, "after the churn");
  EXPECT_EQ(rt.stats().live(), t.made - t.destroyed);
  EXPECT_EQ(book.held(), held[0] + held[1] + held[2]);
  // Objects never change class: the kept objects of each block are of one class.
  std::vector<int> block_class(rt.blocks(), -1);
  std::uint64_t mixed = 0;
  const auto base = reinterpret_cast<std::uintptr_t>(rt.view().data);
  for (void* p : kept) {
    if (p == nullptr) continue;
    const std::uint64_t b = (detail::block_address_of(detail::bits_of(p)) - base) / rt.block_bytes();
    if (block_class[b] == -1) block_class[b] = kind_of(p);
    mixed += block_class[b] != kind_of(p);
  }
  EXPECT_EQ(mixed, 0u);
  const std::uint64_t retyped = book.retyped_blocks();
  // On cpu a launch's threads run a few at a time and lanes that find no room take holes from the
  // heap directly (allocate_direct), so a block rarely empties while the others wait: reopening is
  // a premise checked on the GPU, where thousands of threads churn at once.
  if (detail::gpu_backend) EXPECT_GT(retyped, 0u) << "no block was reopened for another class: the test lost its point";
  EXPECT_GT(t.made, 4 * blocks) << "too little churn";
  std::printf("stock type reuse: %llu threads, %llu blocks: make %llu, destroy %llu, failed (full) %llu, "
              "%llu of the blocks held more than one class in turn; %.1f ms\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(blocks), t.made, t.destroyed,
              t.failed, static_cast<unsigned long long>(retyped), ms);
  release_kept(rt, keep.data(), keep_id.data(), n * hold, book.view(), tb.data());
  EXPECT_EQ(tb.read(0).violations, 0u);
  expect_counts(rt, {0, 0, 0}, "all released");
  EXPECT_EQ(rt.stats().free_blocks, rt.blocks());
  EXPECT_EQ(book.held(), 0u);
}

TEST(Stock, FlushRacingFrees) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  const std::uint64_t p = scale_down > 1 ? 50000 : scaled(1 << 17, 4096);
  const int rounds = static_cast<int>(scaled(4, 2));
  // Room for two rounds of objects of every class and the survivors: nobody finds it full.
  PondRuntime rt(PondRuntime::bytes_for<Fry, Roe, Kelp>(2 * p, 2 * p, 2 * p));
  arch::device_buffer<void*> obj(p * (rounds + 1));
  obj.zero();  // rounds' makes fill it as they go: a slot not yet made must read nullptr
  arch::device_buffer<tally> tb(1);
  tb.zero();
  make_population(rt, p, obj.data(), tb.data());
  ASSERT_EQ(tb.read(0).made, p);
  expect_visited_once(rt, obj.download(), "population");
  for (int round = 1; round <= rounds; ++round) {
    const std::string phase = "round " + std::to_string(round);
    allocate_and_free(rt, p, round, obj.data(), tb.data());
    ASSERT_NO_THROW(rt.synchronize()) << phase;
    const tally t = tb.read(0);
    EXPECT_EQ(t.violations, 0u) << phase;
    EXPECT_EQ(t.failed, 0u) << phase;
    const auto held = obj.download();
    expect_counts(rt, by_class(held), phase);
    EXPECT_EQ(rt.stats().live(), t.made - t.destroyed) << phase;
    expect_visited_once(rt, held, phase);
    if (round == rounds)
      std::printf("stock flush racing frees: %d rounds of %llu makes and frees: make %llu, destroy %llu, "
                  "%llu blocks in use, %llu free\n",
                  rounds, static_cast<unsigned long long>(p), t.made, t.destroyed,
                  static_cast<unsigned long long>(rt.blocks() - rt.stats().free_blocks),
                  static_cast<unsigned long long>(rt.stats().free_blocks));
  }
}

TEST(Stock, OutOfMemoryWithReservationsOutstanding) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  PondRuntime rt(scale_down > 1 ? std::size_t{256} << 10 : std::size_t{8} << 20 >> scale_shift());
  // Full of Fry but `spare` blocks, in block order (parallel_new): Fry i lies in block i / 64.
  const std::uint64_t spare = 4;
  const std::uint64_t fry = (rt.blocks() - spare) * rt.capacity<Fry>();
  rt.parallel_new<Fry>(fry);
  ASSERT_NO_THROW(rt.synchronize());
  ASSERT_EQ(rt.stats().free_blocks, spare);
  arch::device_buffer<tally> tb(1);
  tb.zero();
  tally* t = tb.data();
  arch::device_buffer<void*> table(fry);  // the Fry by id
  rt.parallel_do<&Fry::enter>(table.data(), static_cast<unsigned long long>(fry), t);
  rt.synchronize();
  ASSERT_EQ(tb.read(0).violations, 0u);

  // Far more Roe than fit, asked from every processor at once, twice (the second timed, with
  // its kernel loaded). Extra requests get nullptr; the launch ends.
  const std::uint64_t fit = spare * rt.capacity<Roe>();
  const std::uint64_t requests = scale_down > 1 ? 20000 : contended(1 << 20, 8192);
  const unsigned long long roe_ids = fry;  // Roe ids follow the Fry's
  arch::device_buffer<void*> got(requests);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string phase = "overflow " + std::to_string(attempt);
    tb.zero();
    const auto start = std::chrono::steady_clock::now();
    request_roe(rt, requests, roe_ids, got.data(), t);
    bool reported = false;
    try {
      // The first through wait(), which keeps the stocks' reservations: the report is the same.
      if (attempt == 0) rt.wait();
      else rt.synchronize();
    } catch (const out_of_memory& e) {
      reported = true;
      const tally r = tb.read(0);
      EXPECT_NE(std::string(e.what()).find("Roe"), std::string::npos) << e.what();
      EXPECT_NE(e.type_name().find("Roe"), std::string::npos) << e.type_name();
      EXPECT_EQ(e.failed(), r.failed) << phase;
    }
    const double ms = milliseconds_since(start);
    EXPECT_TRUE(reported) << phase << ": no out_of_memory";
    const tally r = tb.read(0);
    EXPECT_EQ(r.made + r.failed, requests) << phase;
    EXPECT_LE(r.made, fit) << phase;
    EXPECT_GT(r.made, 0u) << phase << ": the spare blocks were not used";
    std::vector<void*> held = table.download();
    const auto roe = got.download();
    held.resize(fry + requests);
    std::copy(roe.begin(), roe.end(), held.begin() + static_cast<std::ptrdiff_t>(fry));
    expect_counts(rt, by_class(held), phase);
    expect_visited_once(rt, held, phase);
    std::printf("stock overflow: %llu Roe asked, %llu fit, %llu made, %llu nullptr: %.2f ms\n",
                static_cast<unsigned long long>(requests), static_cast<unsigned long long>(fit), r.made, r.failed, ms);
#if defined(SHOAL_BACKEND_CUDA)
    if (attempt == 1 && test_scale() == 1) EXPECT_LT(ms, 50.0) << "the failing launch took too long";
#endif
    destroy_got(rt, requests, roe_ids, got.data(), t);
    EXPECT_EQ(tb.read(0).violations, 0u);
    expect_counts(rt, {fry, 0, 0}, phase + ", Roe destroyed");
    EXPECT_EQ(rt.stats().free_blocks, spare) << phase;
  }

  // Frees and requests in one launch: a few threads each free one Fry (spread over the heap),
  // every thread asks for a Fry up to `patience` times. The heap is full but for the freed slots
  // and the spare blocks: the launch must end, with at most those taken.
  const std::uint64_t freeing = std::min<std::uint64_t>(fry / 8, 256);
  const std::uint64_t stride = fry / freeing;  // >= 8: Fry 1 is not among them
  const int patience = 16;
  tb.zero();
  free_then_request_fry(rt, requests, table.data(), stride, freeing, patience, roe_ids, got.data(), t);
  expect_full(rt);
  {
    const tally r = tb.read(0);
    EXPECT_EQ(r.violations, 0u);
    EXPECT_LE(r.made, freeing + spare * rt.capacity<Fry>());
    EXPECT_GT(r.made, 0u);
    std::vector<void*> held = table.download();
    const auto fresh = got.download();
    held.resize(fry + requests);
    std::copy(fresh.begin(), fresh.end(), held.begin() + static_cast<std::ptrdiff_t>(fry));
    expect_counts(rt, by_class(held), "freed and requested in one launch");
    expect_visited_once(rt, held, "freed and requested in one launch");
    std::printf("stock revival: %llu Fry freed while %llu threads asked up to %d times: %llu made, %llu nullptr\n",
                static_cast<unsigned long long>(freeing), static_cast<unsigned long long>(requests), patience,
                r.made, r.failed);
  }
  // Whatever the stocks found then, they serve at the next launch: one more Fry freed, one asked.
  arch::device_buffer<void*> one(1);
  destroy_got(rt, 1, 1, table.data() + 1, t);
  tb.zero();
  EXPECT_NO_THROW(make_roe_and_fry(rt, 1, 0, fry + requests, one.data(), t)) << "the next launch found no room";
  EXPECT_EQ(tb.read(0).made, 1u);
  destroy_got(rt, 1, fry + requests, one.data(), t);
  destroy_got(rt, requests, roe_ids, got.data(), t);
  EXPECT_EQ(tb.read(0).violations, 0u);

  // Free whole blocks and parts of others: many requests of both classes, all served at once.
  tb.zero();
  rt.parallel_do<&Fry::thin>(t);
  rt.synchronize();
  const std::uint64_t free_blocks = rt.stats().free_blocks;
  const std::uint64_t fry_left = rt.stats().types[0].live;
  ASSERT_GT(free_blocks, spare);
  const std::uint64_t roe_wanted = free_blocks * rt.capacity<Roe>() / 8;
  const std::uint64_t fry_wanted = (rt.stats().types[0].blocks * rt.capacity<Fry>() - fry_left) / 8;
  arch::device_buffer<void*> more(roe_wanted + fry_wanted);
  tb.zero();
  EXPECT_NO_THROW(make_roe_and_fry(rt, roe_wanted + fry_wanted, roe_wanted, roe_ids, more.data(), t))
      << "after frees the heap must serve again";
  {
    const tally r = tb.read(0);
    EXPECT_EQ(r.made, roe_wanted + fry_wanted);
    EXPECT_EQ(r.violations, 0u);
    expect_counts(rt, {fry_left + fry_wanted, roe_wanted, 0}, "recovered");
  }
}

// A launch that finds the heap full, one that frees objects and one that makes as many again,
// back to back without a wait: stocks that found the heap full in the first launch (a full
// generation) must not outlive it, and the third must get every freed slot, not nullptr.
TEST(Stock, NoFalseOutOfMemoryAfterFreesBetweenLaunches) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  PondRuntime rt(std::size_t{2} << 20 >> scale_shift());
  const std::uint64_t fit = rt.blocks() * rt.capacity<Roe>();
  const std::uint64_t requests = fit + fit / 4;
  arch::device_buffer<void*> got(requests);
  arch::device_buffer<unsigned> marked(requests);
  marked.zero();
  arch::device_buffer<tally> first(1), again(1);
  first.zero();
  again.zero();
  for (int rounds = 0; rounds < 2; ++rounds) {
    const std::string phase = "round " + std::to_string(rounds);
    request_roe(rt, requests, 0, got.data(), first.data());
    destroy_every_other(rt, requests, 0, got.data(), marked.data(), first.data());
    refill_marked(rt, requests, 0, got.data(), marked.data(), again.data());
    expect_full(rt);  // the first launch's nullptrs
    const tally f = first.read(0), a = again.read(0);
    EXPECT_GT(f.failed, 0u) << phase << ": the heap never filled";
    EXPECT_EQ(f.violations, 0u) << phase;
    EXPECT_EQ(a.failed, 0u) << phase << ": nullptr for slots that had been freed";
    EXPECT_EQ(a.made, f.destroyed) << phase;
    std::vector<void*> held = got.download();
    expect_counts(rt, by_class(held), phase);
    expect_visited_once(rt, held, phase);
    destroy_got(rt, requests, 0, got.data(), first.data());
    EXPECT_EQ(rt.stats().live(), 0u) << phase;
    EXPECT_EQ(rt.verify(), "") << phase;
    marked.zero();
    first.zero();
    again.zero();
  }
}

TEST(Stock, ChurnOfThreeClassesDoAll) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  const std::uint64_t n = scale_down > 1 ? 15000 : scaled(1 << 18, 4096);
  const int rounds = static_cast<int>(scaled(4, 2));
  const std::uint64_t max_ids = 3 * n;
  PondRuntime rt(PondRuntime::bytes_for<Fry, Roe, Kelp>(n, n, n));
  arch::device_buffer<unsigned long long> table(max_ids), next_id(1);
  arch::device_buffer<int> kind(max_ids), born(max_ids), died(max_ids);
  arch::device_buffer<unsigned> visits(max_ids);
  table.zero();
  kind.zero();
  born.upload(std::vector<int>(max_ids, never));
  died.upload(std::vector<int>(max_ids, never));
  next_id.write(0, n);
  registry r{table.data(), kind.data(), born.data(), died.data(), visits.data(), next_id.data(), n, max_ids, 0};
  arch::device_buffer<tally> tb(1);
  tb.zero();
  seed_registry(rt, n, r, tb.data());
  ASSERT_EQ(tb.read(0).made, n);
  for (int round = 0; round < rounds; ++round) {
    const std::string phase = "round " + std::to_string(round);
    tb.zero();
    visits.zero();
    r.ids_at_start = std::min<unsigned long long>(next_id.read(0), max_ids);
    // Three do-alls back to back: Fry, Roe, Kelp; each creates and destroys objects of the
    // other two classes (an object made by the Fry do-all is visited by the Roe or Kelp do-all
    // of the same round, one destroyed by it is not).
    r.sequence = 3 * round + 0;
    rt.parallel_do<&Fry::turnover>(r, tb.data());
    r.sequence = 3 * round + 1;
    rt.parallel_do<&Roe::turnover>(r, tb.data());
    r.sequence = 3 * round + 2;
    rt.parallel_do<&Kelp::turnover>(r, tb.data());
    ASSERT_NO_THROW(rt.synchronize()) << phase;
    const tally t = tb.read(0);
    EXPECT_EQ(t.violations, 0u) << phase;
    EXPECT_EQ(t.failed, 0u) << phase;
    // Each do-all visits exactly the objects of its class that lived when it started: made
    // before it (before the round, or by an earlier do-all of the round) and not destroyed
    // before it (an object destroying itself during its visit was visited).
    const std::uint64_t ids = std::min<unsigned long long>(next_id.read(0), max_ids);
    const auto tab = table.download();
    const auto k = kind.download();
    const auto b = born.download();
    const auto d = died.download();
    const auto v = visits.download();
    std::array<std::uint64_t, classes> live{}, live_at_start{}, visited{};
    std::uint64_t wrong = 0, inconsistent = 0;
    for (std::uint64_t id = 0; id < ids; ++id) {
      if (b[id] == never) {
        wrong += v[id] != 0;
        continue;
      }
      const int c = k[id];
      const int s = 3 * round + c;
      const unsigned want = b[id] < s && d[id] >= s ? 1u : 0u;
      wrong += v[id] != want;
      live_at_start[c] += want;
      visited[c] += v[id];
      live[c] += tab[id] != 0;
      inconsistent += (tab[id] != 0) != (d[id] == never);
      if (tab[id] != 0) inconsistent += kind_of(reinterpret_cast<void*>(static_cast<std::uintptr_t>(tab[id]))) != c;
    }
    EXPECT_EQ(wrong, 0u) << phase << ": objects not visited exactly as often as they should";
    EXPECT_EQ(inconsistent, 0u) << phase;
    for (int c = 0; c < classes; ++c) EXPECT_EQ(visited[c], live_at_start[c]) << phase << ", class " << c;
    EXPECT_EQ(t.visited, live_at_start[0] + live_at_start[1] + live_at_start[2]) << phase;
    expect_counts(rt, live, phase);
    std::printf("stock do-all churn %s: visited %llu, self-destroyed %llu, destroyed others %llu, created %llu\n",
                phase.c_str(), t.visited, t.destroyed, t.victims, t.created);
    EXPECT_GT(t.victims, 0u) << phase;
    EXPECT_GT(t.created, 0u) << phase;
  }
}

TEST(Stock, HeapOfOneBlock) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  const std::size_t bytes = PondRuntime::bytes_for<Fry>(1);
  EXPECT_THROW(PondRuntime(bytes - 1), shoal::error) << "bytes_for<Fry>(1) is the smallest heap";
  PondRuntime rt(bytes);
  ASSERT_EQ(rt.blocks(), 1u);
  const ledger book(rt);
  const std::uint64_t n = scale_down > 1 ? 320 : contended(2048, 128);
  const int steps = static_cast<int>(scale_down > 1 ? 24 : scaled(200, 10));
  arch::device_buffer<tally> tb(1);
  tb.zero();
  arch::device_buffer<void*> keep(n);
  arch::device_buffer<unsigned long long> keep_id(n);
  const auto start = std::chrono::steady_clock::now();
  churn_one_block(rt, n, steps, book.view(), keep.data(), keep_id.data(), tb.data());
  expect_full(rt);
  const double ms = milliseconds_since(start);
  const tally t = tb.read(0);
  EXPECT_EQ(t.violations, 0u) << "over capacity, two classes, or a slot held twice";
  EXPECT_EQ(t.wrong_class, 0u);
  EXPECT_GT(t.made, rt.capacity<Fry>()) << "slots were not reused";
  const auto kept = keep.download();
  expect_counts(rt, by_class(kept), "one block churned");
  EXPECT_EQ(rt.stats().live(), t.made - t.destroyed);
  std::vector<void*> held(n * static_cast<std::uint64_t>(steps));
  const auto kept_id = keep_id.download();
  for (std::uint64_t i = 0; i < n; ++i)
    if (kept[i] != nullptr) held[kept_id[i]] = kept[i];
  expect_visited_once(rt, held, "one block churned");
  std::printf("stock one block: %llu threads x %d: make %llu, destroy %llu, failed (full) %llu, "
              "block held both classes in turn: %s; %.1f ms\n",
              static_cast<unsigned long long>(n), steps, t.made, t.destroyed, t.failed,
              book.retyped_blocks() > 0 ? "yes" : "no", ms);
  release_kept(rt, keep.data(), keep_id.data(), n, book.view(), tb.data());
  EXPECT_EQ(tb.read(0).violations, 0u);
  expect_counts(rt, {0, 0, 0}, "released");
  EXPECT_EQ(rt.stats().free_blocks, 1u);
}

TEST(Stock, StocksEmptyOnceSettled) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  const std::uint64_t n = scale_down > 1 ? 10007 : scaled(100003, 4099);
  const std::uint64_t sms = processors();
  // Twice n of every class, plus room for many part-empty blocks: an allocator that leaves more
  // than the bound below fails the bound, not for want of room.
  PondRuntime rt(PondRuntime::bytes_for<Fry, Roe, Kelp>(3 * n, 3 * n, 3 * n));
  const std::array<std::uint32_t, classes> capacity{rt.capacity<Fry>(), rt.capacity<Roe>(), rt.capacity<Kelp>()};
  arch::device_buffer<void*> obj(2 * classes * n);
  obj.zero();
  arch::device_buffer<tally> tb(1);
  tb.zero();
  std::array<std::uint64_t, classes> made{};
  for (int pattern = 0; pattern < 2; ++pattern) {
    for (int c = 0; c < classes; ++c) {
      const std::string phase = std::string(pattern == 0 ? "full warps" : "one lane per warp") + ", class " +
                                rt.stats().types[c].name;
      const unsigned long long first_id = static_cast<unsigned long long>(pattern * classes + c) * n;
      ASSERT_NO_THROW(make_pattern(rt, c, pattern == 1, n, first_id, obj.data(), tb.data())) << phase;
      made[c] += n;
      ASSERT_EQ(tb.read(0).made, made[0] + made[1] + made[2]) << phase;
      const heap_stats s = rt.stats();
      for (int k = 0; k < classes; ++k) EXPECT_EQ(s.types[k].live, made[k]) << phase << ": live of class " << k;
      // No reservation left in a block: at most one part-empty block per processor and class.
      const std::uint64_t needed = (made[c] + capacity[c] - 1) / capacity[c];
      if (stock_allocator)
        EXPECT_LE(s.types[c].blocks, made[c] / capacity[c] + sms + 1)
            << phase << ": " << s.types[c].blocks << " blocks for " << needed << " blocks' worth";
      EXPECT_EQ(s.free_blocks + s.types[0].blocks + s.types[1].blocks + s.types[2].blocks, s.blocks) << phase;
      EXPECT_EQ(rt.verify(), "") << phase;
      expect_visited_once(rt, obj.download(), phase);
      std::printf("stock leftovers %-40s %llu blocks for %llu blocks' worth (%llu processors)%s\n", phase.c_str(),
                  static_cast<unsigned long long>(s.types[c].blocks), static_cast<unsigned long long>(needed),
                  static_cast<unsigned long long>(sms), stock_allocator ? "" : " (no stocks: bound not checked)");
    }
  }
}


// Stocks keep what they reserved from launch to launch until rt.synchronize() or a read of the
// heap (rt.wait() keeps them too): two launches of births back to back without a wait (the second
// served partly from what the first left in the stocks), then do-alls right after them. The do-alls must visit exactly the
// objects, never a slot that a stock holds in reserve (neither free nor live), and such slots
// must really be there when they run, or the test proves nothing.
TEST(Stock, DoAllRightAfterBirthsSkipsReservedSlots) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  const std::uint64_t n = scale_down > 1 ? 3001 : scaled(30011, 1499);
  // Room to spare: after each wait every processor's stock may leave a part-full block of each
  // class, which the other classes cannot use (an exact fit ran out of room on the H100).
  const std::uint64_t room = 8 * n + 2 * 64 * processors();
  PondRuntime rt(PondRuntime::bytes_for<Fry, Roe, Kelp>(room, room, room));
  arch::device_buffer<void*> obj(4 * classes * n);
  obj.zero();
  arch::device_buffer<tally> tb(1);
  tb.zero();
  std::uint64_t reserved_seen = 0;
  for (int round = 0; round < 4; ++round) {
    for (int c = 0; c < classes; ++c) {
      const std::string phase = "round " + std::to_string(round) + ", class " + std::to_string(c);
      // Odd sizes, and one lane per warp every other round: stocks are left holding part of a
      // generation after each launch.
      const std::uint64_t half = (n - static_cast<std::uint64_t>(round)) / 2;
      const unsigned long long first_id = static_cast<unsigned long long>(round * classes + c) * n;
      make_async(rt, c, round % 2 == 1, half, first_id, obj.data(), tb.data());
      make_async(rt, c, round % 2 == 0, half, first_id + half, obj.data(), tb.data());
      rt.wait();  // not rt.synchronize(): that settles the stocks, and wait() must not
      // Read the heap behind the runtime's back: slots that are neither free nor live.
      const detail::heap_view v = rt.view();
      std::vector<detail::block_header> headers(v.blocks);
      std::vector<std::uint64_t> live(v.blocks);
      arch::copy_to_host(headers.data(), v.headers, headers.size() * sizeof(detail::block_header));
      arch::copy_to_host(live.data(), v.live, live.size() * sizeof(std::uint64_t));
      for (std::uint64_t b = 0; b < v.blocks; ++b) {
        if (headers[b].type == detail::no_type) continue;
        const std::uint64_t held = ~headers[b].free_slots & v.full_mask(headers[b].type);
        EXPECT_EQ(live[b] & ~held, 0u) << phase << ": block " << b << " has live slots that are free";
        reserved_seen += static_cast<std::uint64_t>(std::popcount(held & ~live[b]));
      }
      expect_visited_once(rt, obj.download(), phase);  // its do-alls run before its wait
      EXPECT_EQ(tb.read(0).failed, 0u) << phase;
    }
  }
  if (stock_allocator) EXPECT_GT(reserved_seen, 0u) << "no reservation outlived a launch and rt.wait(): the do-alls saw settled heaps";
  std::printf("stock reservations seen between launches: %llu slots\n", static_cast<unsigned long long>(reserved_seen));
  EXPECT_EQ(rt.verify(), "");
}

}  // namespace shoal::test::stocks
