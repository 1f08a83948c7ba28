// Adversarial stress of the heap, beyond heap_test.cpp (whose churn keeps at most three objects
// per thread alive in a mostly empty heap, and whose exhaustion test fills and frees in separate,
// single-threaded phases):
//   - hot spot: every thread churns through the 8 free slots of the one block that has any;
//   - 99.9% full: a whole heap of three classes, 0.1% freed, then every thread replaces its
//     object by one of another class, so blocks empty, return and reopen for other classes while
//     most allocations find the heap full (>= 10^7 make/destroy on a GPU, 10^6 on the cpu);
//   - repeated exhaustion and recovery, concurrently: allocate past the end, then free;
//   - do-all while its own methods create and destroy objects.
// Every object stores its owner's id (and its complement) and is checked before it is
// destroyed, so a slot handed to two threads is a violation; after every phase the counts
// must be exact and rt.verify() == "". Compiled for both backends; sizes scaled down on cpu, and
// by SHOAL_TEST_SCALE under the sanitizers (test_support.hpp).
#include <cstdio>

#include "test_support.hpp"

namespace shoal::test::stress {

class Ant;
class Bee;
class Wasp;
using Hive = shoal::heap<Ant, Bee, Wasp>;
using HiveRuntime = runtime<Hive>;

/// Counters of a phase, in device memory.
struct tally {
  unsigned long long made, destroyed, failed, violations, visited, created_in_do_all;
};

/// Ids: bits 0..55 who made the object, bits 56..61 the do-all generation that created it.
inline constexpr int generation_shift = 56;

// Objects of 16, 64 and 256 bytes: an owner id and its complement around some padding.
class Ant : public object<Hive, Ant> {
 public:
  SHOAL_FIELDS(Ant, (unsigned long long, owner), (unsigned long long, check))
  SHOAL_HD explicit Ant(unsigned long long id) { owner = id, check = ~id; }
  SHOAL_HD bool intact(unsigned long long id) const { return owner == id && check == ~id; }
  SHOAL_DEVICE void turnover(tally* t, unsigned long long generation);  // creates and destroys: device only
};
class Bee : public object<Hive, Bee> {
 public:
  SHOAL_FIELDS(Bee, (unsigned long long, owner), (unsigned long long[6], pad), (unsigned long long, check))
  SHOAL_HD explicit Bee(unsigned long long id) { owner = id, check = ~id; }
  SHOAL_HD bool intact(unsigned long long id) const { return owner == id && check == ~id; }
  SHOAL_DEVICE void turnover(tally* t, unsigned long long generation);  // creates and destroys: device only
};
class Wasp : public object<Hive, Wasp> {
 public:
  SHOAL_FIELDS(Wasp, (unsigned long long, owner), (unsigned long long[30], pad), (unsigned long long, check))
  SHOAL_HD explicit Wasp(unsigned long long id) { owner = id, check = ~id; }
  SHOAL_HD bool intact(unsigned long long id) const { return owner == id && check == ~id; }
  SHOAL_DEVICE void turnover(tally* t, unsigned long long generation);  // creates and destroys: device only
};

/// Do-all body of generation g: the object checks itself, and (by a hash of its id and g) one in
/// four destroys itself, one in four creates an Ant of generation g. The do-all must visit every object live at its start
/// once, and none that it created (their generation would be g).
template <class T>
SHOAL_DEVICE void turnover_of(T* self, tally* t, unsigned long long generation) {
  arch::fetch_add(t->visited, 1ull);
  const unsigned long long id = self->owner;
  if (self->check != ~id || (id >> generation_shift) == generation) arch::fetch_add(t->violations, 1ull);
  unsigned long long dice = id ^ (generation * 0x9E3779B97F4A7C15ull);  // SplitMix64's finaliser
  dice = (dice ^ (dice >> 30)) * 0xBF58476D1CE4E5B9ull;
  dice = (dice ^ (dice >> 27)) * 0x94D049BB133111EBull;
  dice = (dice ^ (dice >> 31)) >> 62;
  if (dice == 0) {
    delete self;
    arch::fetch_add(t->destroyed, 1ull);
  } else if (dice == 1) {
    const unsigned long long child = (generation << generation_shift) | (id & ((1ull << generation_shift) - 1));
    if (make<Ant>(child) != nullptr) arch::fetch_add(t->created_in_do_all, 1ull);
    else arch::fetch_add(t->failed, 1ull);
  }
}
SHOAL_DEVICE void Ant::turnover(tally* t, unsigned long long g) { turnover_of(this, t, g); }
SHOAL_DEVICE void Bee::turnover(tally* t, unsigned long long g) { turnover_of(this, t, g); }
SHOAL_DEVICE void Wasp::turnover(tally* t, unsigned long long g) { turnover_of(this, t, g); }

/// An object of class `kind` (0 Ant, 1 Bee, 2 Wasp) as the untyped pointer a thread keeps.
SHOAL_DEVICE inline void* make_kind(int kind, unsigned long long id) {
  if (kind == 0) return make<Ant>(id);
  if (kind == 1) return make<Bee>(id);
  return make<Wasp>(id);
}
/// Checks that the object still holds `id` (else counts a violation) and destroys it.
SHOAL_DEVICE inline void check_and_destroy(void* p, unsigned long long id, tally* t) {
  const std::uint32_t type = detail::type_of(detail::bits_of(p));
  bool ok = false;
  if (type == Hive::type_id<Ant>) ok = static_cast<Ant*>(p)->intact(id), destroy(static_cast<Ant*>(p));
  else if (type == Hive::type_id<Bee>) ok = static_cast<Bee*>(p)->intact(id), destroy(static_cast<Bee*>(p));
  else ok = static_cast<Wasp*>(p)->intact(id), destroy(static_cast<Wasp*>(p));
  if (!ok) arch::fetch_add(t->violations, 1ull);
  arch::fetch_add(t->destroyed, 1ull);
}

/// Waits for a phase that is meant to run out of heap: its out_of_memory is expected (the
/// threads count their failures themselves); anything else, e.g. invalid_destroy, propagates.
void expect_full(HiveRuntime& rt) {
  try {
    rt.synchronize();
  } catch (const out_of_memory&) {
  }
}

struct population {
  arch::device_buffer<void*> object;
  arch::device_buffer<unsigned long long> id;
};

/// One object per thread, of class i % 3, until the heap is full.
void fill(HiveRuntime& rt, population& pop, std::uint64_t n, tally* t) {
  pop.object = arch::device_buffer<void*>(n);
  pop.id = arch::device_buffer<unsigned long long>(n);
  void** obj = pop.object.data();
  unsigned long long* ids = pop.id.data();
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
    obj[i] = make_kind(static_cast<int>(i % 3), i);
    ids[i] = i;
    arch::fetch_add(obj[i] ? t->made : t->failed, 1ull);
  });
  expect_full(rt);
}

/// Every thread replaces its object by one of the next class, `rounds` times, keeping its new
/// object across a round so that two owners of one slot would overlap in time.
void replace_all(HiveRuntime& rt, population& pop, int rounds, tally* t) {
  void** obj = pop.object.data();
  unsigned long long* ids = pop.id.data();
  rt.launch_async(pop.object.size(), [=] SHOAL_DEVICE(std::size_t i) {
    walk_rng rng(i * 0x9E3779B97F4A7C15ull + 3);
    for (int k = 1; k <= rounds; ++k) {
      if (obj[i] != nullptr) check_and_destroy(obj[i], ids[i], t);
      const unsigned long long id = (static_cast<unsigned long long>(i) << 20) | static_cast<unsigned long long>(k);
      obj[i] = make_kind(static_cast<int>(rng.below(3)), id);
      ids[i] = id;
      arch::fetch_add(obj[i] ? t->made : t->failed, 1ull);
    }
  });
  expect_full(rt);
}

/// Destroys the objects of every `stride`-th thread (all with stride 1), checking each.
void release(HiveRuntime& rt, population& pop, std::uint64_t stride, tally* t) {
  void** obj = pop.object.data();
  unsigned long long* ids = pop.id.data();
  rt.launch(pop.object.size(), [=] SHOAL_DEVICE(std::size_t i) {
    if (i % stride == 0 && obj[i] != nullptr) {
      check_and_destroy(obj[i], ids[i], t);
      obj[i] = nullptr;
    }
  });
}

/// Live objects per class, from the threads' pointers.
std::array<std::uint64_t, 3> held(population& pop) {
  std::array<std::uint64_t, 3> n{};
  for (void* p : pop.object.download())
    if (p != nullptr) ++n[detail::type_of(detail::bits_of(p))];
  return n;
}

/// Stats, verify() and the threads' pointers must all agree.
void expect_consistent(HiveRuntime& rt, population& pop, const tally& t, const char* phase) {
  EXPECT_EQ(t.violations, 0u) << phase;
  const heap_stats s = rt.stats();
  const auto n = held(pop);
  for (std::uint32_t c = 0; c < 3; ++c) EXPECT_EQ(s.types[c].live, n[c]) << phase << " class " << c;
  EXPECT_EQ(s.live(), t.made - t.destroyed) << phase;
  EXPECT_EQ(rt.verify(), "") << phase;
}

void print(const char* phase, const tally& t) {
  std::printf("stress %-22s make %llu, destroy %llu, failed (heap full) %llu, violations %llu\n", phase,
              t.made, t.destroyed, t.failed, t.violations);
}

// Device code of the tests below, in free functions (nvcc: not inside TEST bodies).

/// Ant i in obj[i] (ids[i] = i), counted as made.
void make_ants(HiveRuntime& rt, void** obj, unsigned long long* ids, std::uint64_t n, tally* t) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    obj[i] = make<Ant>(i);
    ids[i] = i;
    arch::fetch_add(t->made, 1ull);
  });
}
/// Checks and destroys the objects in every eighth slot of block `hot`.
void free_every_eighth_of(HiveRuntime& rt, void** obj, const unsigned long long* ids, std::uint64_t n,
                          std::uintptr_t hot, tally* t) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    const std::uint64_t p = detail::bits_of(obj[i]);
    if (detail::block_address_of(p) == hot && detail::slot_of(p) % 8 == 0) {
      check_and_destroy(obj[i], ids[i], t);
      obj[i] = nullptr;
    }
  });
}
/// Every thread, `rounds` times: a new Ant kept for one round, then checked and destroyed.
void churn_ants(HiveRuntime& rt, std::uint64_t churners, int rounds, tally* t) {
  rt.launch_async(churners, [=] SHOAL_DEVICE(std::size_t i) {
    Ant* mine = nullptr;
    unsigned long long mine_id = 0;
    for (int k = 0; k < rounds; ++k) {
      const unsigned long long id = (1ull << 40) | (static_cast<unsigned long long>(i) << 16) | k;
      Ant* a = make<Ant>(id);
      arch::fetch_add(a ? t->made : t->failed, 1ull);
      if (mine != nullptr) check_and_destroy(mine, mine_id, t);
      mine = a, mine_id = id;
    }
    if (mine != nullptr) check_and_destroy(mine, mine_id, t);
  });
}
/// n objects, class i % 3, counted as made when they fit.
void make_mixed(HiveRuntime& rt, std::uint64_t n, tally* t) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (make_kind(static_cast<int>(i % 3), i) != nullptr) arch::fetch_add(t->made, 1ull);
  });
}

TEST(Stress, NearlyFullHeapOfThreeClassesUnderReplacement) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  // Under the sanitizers the heap shrinks by 1.5x the scale's shift, as in the exhaustion test
  // below: at scale_shift() alone racecheck ran past 220 s on the H100 (SHOAL_TEST_SCALE=16).
  const int shrink = scale_shift() * 3 / 2;
  HiveRuntime rt(std::size_t{96} << 20 >> (scale_down > 1 ? 4 : 3) >> shrink);
  arch::device_buffer<tally> tb(1);
  tb.zero();
  population pop;
  // More threads than the heap holds objects: the fill ends with the heap full.
  const std::uint64_t n = rt.blocks() * rt.capacity<Ant>() / 2;
  fill(rt, pop, n, tb.data());
  tally t = tb.read(0);
  ASSERT_GT(t.failed, 0u) << "the fill did not reach a full heap";
  expect_consistent(rt, pop, t, "fill");
  release(rt, pop, 1000, tb.data());  // 0.1% free, spread over the heap
  expect_consistent(rt, pop, tb.read(0), "99.9% full");
  const int rounds = static_cast<int>(scaled(scale_down > 1 ? 16 : 48, 2));  // >= 10^7 make/destroy on a GPU
  replace_all(rt, pop, rounds, tb.data());
  t = tb.read(0);
  expect_consistent(rt, pop, t, "replacement");
  print("99.9%-full replacement", t);
  // The volume shrinks with the rounds and the heap; scaled down, the bound is only a floor
  // against a stalled run, with a margin of 2 (the rounds' floor and the block size vary).
  const std::uint64_t volume = (scale_down > 1 ? 1'000'000ull : 10'000'000ull) / test_scale() >> shrink;
  EXPECT_GE(t.made + t.destroyed, shrink > 0 ? volume / 2 : volume);
  EXPECT_GT(t.failed, t.made / 100) << "the heap was not kept near full";
  release(rt, pop, 1, tb.data());
  expect_consistent(rt, pop, tb.read(0), "emptied");
  EXPECT_EQ(rt.stats().free_blocks, rt.blocks());
}

TEST(Stress, HotSpotChurnInOneBlock) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  HiveRuntime rt(std::size_t{4} << 20 >> (scale_down > 1 ? 2 : 0));
  arch::device_buffer<tally> tb(1);
  tb.zero();
  // Fill the heap with Ants exactly, then free 8 slots of one block: the only free slots.
  const std::uint64_t slots = rt.blocks() * rt.capacity<Ant>();
  population pop;
  pop.object = arch::device_buffer<void*>(slots);
  pop.id = arch::device_buffer<unsigned long long>(slots);
  void** obj = pop.object.data();
  unsigned long long* ids = pop.id.data();
  tally* t = tb.data();
  make_ants(rt, obj, ids, slots, t);
  const std::uintptr_t hot = detail::block_address_of(detail::bits_of(pop.object.read(slots / 2)));
  free_every_eighth_of(rt, obj, ids, slots, hot, t);
  expect_consistent(rt, pop, tb.read(0), "hot block prepared");
  ASSERT_EQ(rt.stats().types[Hive::type_id<Ant>].live, slots - 8);
  // Every thread churns: a new Ant (if one of the 8 slots is free) kept for a round, then
  // checked and destroyed. Everything contends for one block's free_slots word.
  const std::uint64_t churners = 4096 / (scale_down > 1 ? 4 : 1);
  const int rounds = static_cast<int>(scaled(scale_down > 1 ? 200 : 2000, 10));
  churn_ants(rt, churners, rounds, t);
  expect_full(rt);
  const tally r = tb.read(0);
  expect_consistent(rt, pop, r, "hot-spot churn");
  print("hot-spot churn", r);
  EXPECT_GT(r.made, slots + 8) << "no churn got a slot";
  EXPECT_EQ(rt.stats().types[Hive::type_id<Ant>].blocks, rt.blocks());
}

TEST(Stress, RepeatedExhaustionAndRecovery) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  // A heap kept exhausted is contended everywhere: under the sanitizers it shrinks faster than
  // the others (contended(): at scale_shift() alone racecheck ran past 200 s on the H100).
  HiveRuntime rt(std::size_t{16} << 20 >> (scale_down > 1 ? 3 : 0) >> (scale_shift() * 3 / 2));
  arch::device_buffer<tally> tb(1);
  tb.zero();
  population pop;
  const std::uint64_t n = rt.blocks() * rt.capacity<Ant>();  // far more than fit: 1/3 are Wasps
  const int rounds = static_cast<int>(scaled(6, 2));
  for (int round = 0; round < rounds; ++round) {
    fill(rt, pop, n, tb.data());
    tally t = tb.read(0);
    ASSERT_GT(t.failed, 0u) << "round " << round;
    expect_consistent(rt, pop, t, "exhausted");
    // Recover: free half, refill (exhausting again), then free everything.
    release(rt, pop, 2, tb.data());
    expect_consistent(rt, pop, tb.read(0), "half freed");
    replace_all(rt, pop, 1, tb.data());
    expect_consistent(rt, pop, tb.read(0), "refilled");
    release(rt, pop, 1, tb.data());
    t = tb.read(0);
    expect_consistent(rt, pop, t, "recovered");
    ASSERT_EQ(rt.stats().free_blocks, rt.blocks()) << "round " << round;
  }
  print("exhaustion x6", tb.read(0));
}

TEST(Stress, DoAllWhileItsMethodsCreateAndDestroy) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  HiveRuntime rt(std::size_t{64} << 20 >> (scale_down > 1 ? 3 : 0) >> (scale_shift() * 3 / 2));
  arch::device_buffer<tally> tb(1);
  tb.zero();
  tally* t = tb.data();
  const std::uint64_t n = rt.blocks() * rt.capacity<Wasp>() / 2;  // leaves room for the newborn
  make_mixed(rt, n, t);
  ASSERT_EQ(tb.read(0).made, n);
  std::uint64_t live = n;
  const unsigned long long generations = scaled(6, 2);
  for (unsigned long long generation = 1; generation <= generations; ++generation) {
    tb.zero();
    // Three do-alls back to back; the Ants created by the Bees' and Wasps' do-alls are not
    // visited by them, those created by the Ants' do-all not by it.
    rt.parallel_do<&Ant::turnover>(t, generation);
    rt.parallel_do<&Bee::turnover>(t, generation);
    rt.parallel_do<&Wasp::turnover>(t, generation);
    rt.synchronize();
    const tally r = tb.read(0);
    EXPECT_EQ(r.violations, 0u) << "generation " << generation;
    EXPECT_EQ(r.failed, 0u) << "generation " << generation;
    // The Ants that the Bee and Wasp do-alls create appear after the Ant do-all has ended: the
    // three visit exactly the objects live at the start.
    EXPECT_EQ(r.visited, live) << "generation " << generation << ": every object live at the start, once";
    live = live - r.destroyed + r.created_in_do_all;
    EXPECT_EQ(rt.stats().live(), live) << "generation " << generation;
    EXPECT_EQ(rt.verify(), "") << "generation " << generation;
    std::printf("stress do-all turnover     generation %llu: visited %llu, destroyed %llu, created %llu, violations %llu\n",
                generation, r.visited, r.destroyed, r.created_in_do_all, r.violations);
  }
}

}  // namespace shoal::test::stress
