// Parallel do-all, parallel_new and device_do: every live object visited exactly once, objects
// created during a do-all not visited, destroyed ones not visited after their destruction,
// base-class do-alls over every subclass, back-to-back enqueueing. Compiled for both backends.
#include <algorithm>
#include <set>
#include <vector>

#include "test_support.hpp"

namespace shoal::test {

class Mover;
class Walker;
class Runner;
using DoAllHeap = shoal::heap<Mover, Walker, Runner>;

/// Where object `o` lies: its block's address above 8 bits, its slot below.
SHOAL_HD inline unsigned long long place_of(const void* o) {
  const std::uint64_t p = detail::bits_of(o);
  return (detail::block_address_of(p) << 8) | detail::slot_of(p);
}

/// Results of a check do-all, in device memory.
struct tally {
  unsigned long long seen, bad, visits;
};

class Mover : public object<DoAllHeap, Mover> {
 public:
  SHOAL_ABSTRACT(Mover)
  SHOAL_FIELDS(Mover, (unsigned long long, id), (int, visits), (int, moves), (Mover*, partner))
  SHOAL_HD void move() { moves += 1; }
  SHOAL_HD void expect_moves(int n, tally* t) {
    arch::fetch_add(t->seen, 1ull);
    if (moves != n) arch::fetch_add(t->bad, 1ull);
  }
};

class Walker : public object<DoAllHeap, Walker, Mover> {
 public:
  SHOAL_FIELDS(Walker, (float, x))
  SHOAL_HD explicit Walker(unsigned long long i) {
    id = i, visits = 0, moves = 0, partner = nullptr, x = 0.0f;
  }
  SHOAL_HD void visit(int k) { visits += k; }
  /// Visits and creates a child; the child must not be visited by this do-all.
  SHOAL_HD void visit_and_spawn() {
    visits += 1;
    new Walker(id + (1ull << 40));
  }
  SHOAL_HD void enter(Walker** table) { table[id] = this; }
  SHOAL_HD void link(Walker** table) { partner = table[id ^ 1]; }
  /// Even ids destroy their odd partner; every visit is logged by id.
  SHOAL_HD void visit_and_kill(unsigned int* log) {
    arch::fetch_add(log[id], 1u);
    if (id % 2 == 0 && partner) {
      delete partner.get();
      partner = nullptr;
    }
  }
  SHOAL_HD void expect_visits(int n, tally* t) {
    arch::fetch_add(t->seen, 1ull);
    arch::fetch_add(t->visits, static_cast<unsigned long long>(visits.get()));
    const int want = id >= (1ull << 40) ? 0 : n;  // children were created during the do-all
    if (visits != want) arch::fetch_add(t->bad, 1ull);
  }
  SHOAL_HD void record_place(unsigned long long* places) { places[id] = place_of(this); }
};

class Runner : public object<DoAllHeap, Runner, Mover> {
 public:
  SHOAL_FIELDS(Runner, (double, speed), (double, heading), (double, stamina))
  SHOAL_HD explicit Runner(unsigned long long i) { id = i, visits = 0, moves = 0, partner = nullptr; }
  SHOAL_HD void record_place(unsigned long long* places) { places[id] = place_of(this); }
};

using DoAllRuntime = runtime<DoAllHeap>;

template <class T, auto Check, class... Args>
tally check_all(DoAllRuntime& rt, Args... args) {
  arch::device_buffer<tally> t(1);
  t.zero();
  rt.parallel_do<T, Check>(args..., t.data());
  rt.synchronize();
  return t.read(0);
}

void destroy_every_third(DoAllRuntime& rt, Walker** table, std::uint64_t n) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (i % 3 == 0) delete table[i];
  });
}

/// Every object of every third block of `capacity` (in parallel_new order): the blocks empty and return.
void destroy_every_third_block(DoAllRuntime& rt, Walker** table, std::uint64_t n, std::uint64_t capacity) {
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    if ((i / capacity) % 3 == 0) delete table[i];
  });
}

/// The `capacity` walkers of block `block` (in parallel_new order): the block empties and returns.
void destroy_walker_block(DoAllRuntime& rt, Walker** table, std::uint64_t block, std::uint64_t capacity) {
  rt.launch(capacity, [=] SHOAL_DEVICE(std::size_t i) { delete table[block * capacity + i]; });
}

/// Kernels of our own rather than the runtime's (given the heap's device view, as advanced code
/// may do): the runtime does not see what they do. The first tables every walker by id.
void table_walkers_unseen(DoAllRuntime& rt, Walker** table) {
  arch::for_each_index(
      1, [=] SHOAL_DEVICE(std::size_t) { device_do<Walker>([&](Walker* w) { table[w->id] = w; }); }, rt.device_view());
}
void destroy_walker_block_unseen(DoAllRuntime& rt, Walker** table, std::uint64_t block, std::uint64_t capacity) {
  arch::for_each_index(
      capacity, [=] SHOAL_DEVICE(std::size_t i) { delete table[block * capacity + i]; }, rt.device_view());
}

/// One runner made by device code (`new`), with id `id`; its place goes to places[id].
void make_runner_on_device(DoAllRuntime& rt, unsigned long long id, unsigned long long* places) {
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) { (new Runner(id))->record_place(places); });
}

constexpr std::uint64_t objects = 100000 / scale_down;

TEST(DoAll, VisitsEveryLiveObjectExactlyOnce) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{64} << 20);
  rt.parallel_new<Walker>(objects);
  arch::device_buffer<Walker*> table(objects);
  rt.parallel_do<&Walker::enter>(table.data());
  destroy_every_third(rt, table.data(), objects);
  const std::uint64_t live = objects - (objects + 2) / 3;
  ASSERT_EQ(rt.stats().live(), live);
  rt.parallel_do<&Walker::visit>(1);
  const tally t = check_all<Walker, &Walker::expect_visits>(rt, 1);
  EXPECT_EQ(t.seen, live);
  EXPECT_EQ(t.bad, 0u);
  EXPECT_EQ(rt.verify(), "");
}

TEST(DoAll, BackToBackDoAllsRunInOrder) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{64} << 20);
  rt.parallel_new<Walker>(objects);
  for (int k = 1; k <= 3; ++k) rt.parallel_do<&Walker::visit>(k);  // no wait in between
  const tally t = check_all<Walker, &Walker::expect_visits>(rt, 6);
  EXPECT_EQ(t.seen, objects);
  EXPECT_EQ(t.bad, 0u);
}

// On cuda a do-all is a CUDA graph kept per runtime and per counter parity (do-alls alternate
// between the two): a call with the graph's arguments launches it, one with the previous call's
// arguments updates it first, and one with new arguments launches the kernels one by one. The
// sequence below takes every path on both graphs: graph A gets 1 (made), 2 (one by one), 2
// (update), 2 (launch), 1, 5 (one by one); graph B 1 (made), 2 (one by one), 2 (update), 3 (one
// by one), 3 (update), 3 (launch).
TEST(DoAll, EachCallUsesItsOwnArguments) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{64} << 20);
  rt.parallel_new<Walker>(objects);
  int sum = 0;
  for (const int k : {1, 1, 2, 2, 2, 2, 2, 3, 1, 3, 5, 3}) {  // no wait in between
    rt.parallel_do<&Walker::visit>(k);
    sum += k;
  }
  const tally t = check_all<Walker, &Walker::expect_visits>(rt, sum);
  EXPECT_EQ(t.seen, objects);
  EXPECT_EQ(t.bad, 0u);
}

#if defined(SHOAL_BACKEND_CUDA)
// Every do-all of this file's classes is also instantiated in other test files' translation
// units (the enumeration kernel is shared): graphs must be made all the same, not fall back.
TEST(DoAll, RunsAsOneGraphLaunchPerCounter) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{64} << 20);
  rt.parallel_new<Walker>(objects);
  for (int k = 0; k < 4; ++k) rt.parallel_do<&Walker::visit>(1);
  rt.synchronize();
  EXPECT_EQ(rt.do_all_graphs().graphs(), 2u) << "one graph for each of the two block counters";
  EXPECT_EQ(rt.do_all_graphs().fallbacks(), 0u);
}
#endif

TEST(DoAll, RuntimesOfOneHeapTypeKeepTheirOwnDoAlls) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime a(std::size_t{64} << 20), b(std::size_t{32} << 20);
  a.parallel_new<Walker>(objects);
  b.parallel_new<Walker>(objects / 2 + 1);
  for (int round = 0; round < 3; ++round) {
    a.parallel_do<&Walker::visit>(1);
    b.parallel_do<&Walker::visit>(10);
  }
  const tally ta = check_all<Walker, &Walker::expect_visits>(a, 3);
  const tally tb = check_all<Walker, &Walker::expect_visits>(b, 30);
  EXPECT_EQ(ta.seen, objects);
  EXPECT_EQ(ta.bad, 0u);
  EXPECT_EQ(tb.seen, objects / 2 + 1);
  EXPECT_EQ(tb.bad, 0u);
}

TEST(DoAll, AMovedRuntimeKeepsDoingItsDoAlls) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime first(std::size_t{64} << 20);
  first.parallel_new<Walker>(objects);
  first.parallel_do<&Walker::visit>(2);
  DoAllRuntime moved(std::move(first));
  moved.parallel_do<&Walker::visit>(2);
  moved.parallel_do<&Walker::visit>(3);
  const tally t = check_all<Walker, &Walker::expect_visits>(moved, 7);
  EXPECT_EQ(t.seen, objects);
  EXPECT_EQ(t.bad, 0u);
}

TEST(DoAll, ObjectsCreatedDuringADoAllAreNotVisited) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{64} << 20);
  rt.parallel_new<Walker>(objects);
  rt.parallel_do<&Walker::visit_and_spawn>();
  const tally t = check_all<Walker, &Walker::expect_visits>(rt, 1);
  EXPECT_EQ(t.seen, 2 * objects) << "every object spawned one child";
  EXPECT_EQ(t.visits, objects) << "only the objects that existed before were visited";
  EXPECT_EQ(t.bad, 0u);
  EXPECT_EQ(rt.verify(), "");
}

std::vector<unsigned int> kill_partners(DoAllRuntime& rt, std::uint64_t n) {
  rt.parallel_new<Walker>(n);
  arch::device_buffer<Walker*> table(n);
  rt.parallel_do<&Walker::enter>(table.data());
  rt.parallel_do<&Walker::link>(table.data());
  arch::device_buffer<unsigned int> log(n);
  log.zero();
  rt.parallel_do<&Walker::visit_and_kill>(log.data());
  rt.synchronize();
  return log.download();
}

TEST(DoAll, DestroyedObjectsAreNotVisitedAfterTheirDestruction) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{64} << 20);
#if defined(SHOAL_BACKEND_CPU)
  // One thread visits in slot order: an odd object is always destroyed (by its even partner)
  // before its turn, so it must never be visited.
  oversubscribe one(1);
#endif
  const auto log = kill_partners(rt, objects);
  for (std::uint64_t id = 0; id < objects; ++id) {
    if (id % 2 == 0) {
      ASSERT_EQ(log[id], 1u) << "survivor " << id;
    } else {
      ASSERT_LE(log[id], 1u) << "object " << id << " visited twice";
#if defined(SHOAL_BACKEND_CPU)
      ASSERT_EQ(log[id], 0u) << "object " << id << " visited after its destruction";
#endif
    }
  }
  EXPECT_EQ(rt.stats().live(), (objects + 1) / 2);
  EXPECT_EQ(rt.verify(), "");
}

TEST(DoAll, BaseClassDoAllVisitsEverySubclass) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{64} << 20);
  rt.parallel_new<Walker>(objects);
  rt.parallel_new<Runner>(objects / 2);
  rt.parallel_do<Mover, &Mover::move>();
  rt.parallel_do<&Mover::move>();  // the method's class is Mover too
  const tally t = check_all<Mover, &Mover::expect_moves>(rt, 2);
  EXPECT_EQ(t.seen, objects + objects / 2);
  EXPECT_EQ(t.bad, 0u);
}

TEST(DoAll, ZeroObjectsIsANoOp) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{1} << 20);
  rt.parallel_do<&Walker::visit>(1);
  rt.parallel_do<Mover, &Mover::move>();
  EXPECT_NO_THROW(rt.synchronize());
  EXPECT_EQ(rt.stats().live(), 0u);
}

/// Where parallel_new put objects 0 … places.size() - 1 (place_of): object i in slot i % capacity
/// of the (i / capacity)-th block, blocks in increasing order (the lowest free ones).
void expect_parallel_new_places(const std::vector<unsigned long long>& places, std::uint64_t capacity) {
  for (std::uint64_t i = 0; i < places.size(); ++i) {
    ASSERT_EQ(places[i] & 0xFF, i % capacity) << "object " << i << " is in slot i % capacity";
    ASSERT_EQ(places[i] >> 8, places[i - i % capacity] >> 8) << "objects of one block share it";
    if (i >= capacity && i % capacity == 0)
      ASSERT_GT(places[i] >> 8, places[i - capacity] >> 8) << "blocks in increasing order";
  }
}

TEST(ParallelNew, FillsFreshBlocksInOrderAndReportsOutOfMemory) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{4} << 20);
  const std::uint64_t cap = rt.capacity<Walker>();
  const std::uint64_t n = 10 * cap + 7;
  rt.parallel_new<Walker>(n);
  arch::device_buffer<unsigned long long> places(n);
  rt.parallel_do<&Walker::record_place>(places.data());
  rt.synchronize();
  expect_parallel_new_places(places.download(), cap);
  const std::uint64_t free_slots = (rt.stats().free_blocks) * cap;
  // Enqueued: what did not fit is reported by the next synchronize(), naming the class.
  rt.parallel_new<Walker>(free_slots + 1);
  try {
    rt.synchronize();
    ADD_FAILURE() << "no out_of_memory";
  } catch (const out_of_memory& e) {
    EXPECT_NE(e.type_name().find("Walker"), std::string::npos) << e.type_name();
    EXPECT_EQ(e.failed(), 1u);  // the one object over
  }
  EXPECT_EQ(rt.stats().free_blocks, 0u);
  EXPECT_EQ(rt.verify(), "") << "the heap filled to its last block";
  // More blocks than the whole heap has: thrown at once.
  EXPECT_THROW(rt.parallel_new<Walker>((rt.stats().blocks + 1) * cap), out_of_memory);
}

// parallel_new counts the free blocks of each bitmap word, lists the lowest ones and opens them:
// runners among the blocks that emptied when every third block of walkers died, from many words,
// then more than fit. (On cuda the two sizes give grids of 2 and of 20 to 110 thread blocks,
// each with its own chunk of words.)
void expect_parallel_new_fills_the_lowest_free_blocks(std::size_t heap_bytes, std::uint64_t walker_blocks,
                                                      std::uint64_t runner_blocks) {
  DoAllRuntime rt(heap_bytes);
  const std::uint64_t walker_cap = rt.capacity<Walker>(), runner_cap = rt.capacity<Runner>();
  const std::uint64_t walkers = walker_blocks * walker_cap;
  rt.parallel_new<Walker>(walkers);
  arch::device_buffer<Walker*> table(walkers);
  arch::device_buffer<unsigned long long> walker_places(walkers);
  rt.parallel_do<&Walker::enter>(table.data());
  rt.parallel_do<&Walker::record_place>(walker_places.data());
  destroy_every_third_block(rt, table.data(), walkers, walker_cap);
  rt.synchronize();
  ASSERT_EQ(rt.verify(), "");
  // Block indices from addresses: in the fresh heap the walkers filled blocks 0, 1, 2, ...
  const auto wp = walker_places.download();
  const std::uint64_t block0 = wp[0] >> 8, block_bytes = rt.stats().block_bytes;
  const auto block_of = [&](unsigned long long place) { return ((place >> 8) - block0) / block_bytes; };
  std::set<std::uint64_t> still_used;
  for (std::uint64_t i = 0; i < walkers; ++i) {
    ASSERT_EQ(block_of(wp[i]), i / walker_cap) << "walker " << i << " is in the lowest free block";
    if ((i / walker_cap) % 3 != 0) still_used.insert(i / walker_cap);
  }
  const std::uint64_t n = runner_blocks * runner_cap + 5;
  rt.parallel_new<Runner>(n);
  EXPECT_EQ(rt.verify(), "");
  arch::device_buffer<unsigned long long> places(n);
  places.zero();
  rt.parallel_do<&Runner::record_place>(places.data());
  rt.synchronize();
  const auto rp = places.download();
  expect_parallel_new_places(rp, runner_cap);
  // Exactly the lowest free blocks: the emptied ones among the walkers' first, then fresh ones.
  for (std::uint64_t j = 0, b = 0; j <= runner_blocks; ++j, ++b) {
    while (still_used.count(b)) ++b;
    ASSERT_EQ(block_of(rp[j * runner_cap]), b) << "runner block " << j << " is the lowest free one";
  }
  // More than the free blocks hold: the ones that fit are made, the rest reported.
  const std::uint64_t free_blocks = rt.stats().free_blocks;
  const std::uint64_t live = rt.stats().live(), over = (free_blocks + 70) * runner_cap;
  rt.parallel_new<Runner>(over);
  EXPECT_THROW(rt.synchronize(), out_of_memory);
  EXPECT_EQ(rt.stats().free_blocks, 0u);
  EXPECT_EQ(rt.stats().live(), live + free_blocks * runner_cap);
  EXPECT_EQ(rt.verify(), "");
}

TEST(ParallelNew, FewObjectsFillTheLowestFreeBlocksAmongUsedOnes) {
  SHOAL_REQUIRE_DEVICE();
  expect_parallel_new_fills_the_lowest_free_blocks(std::size_t{1} << 20, 300, 250);
}

TEST(ParallelNew, ManyObjectsFillTheLowestFreeBlocksAmongUsedOnes) {
  SHOAL_REQUIRE_DEVICE();
  expect_parallel_new_fills_the_lowest_free_blocks(std::size_t{32} << 20, 3000, 2500);
}

// Tens of millions of objects in a cleared heap: on cuda the planning grid is as large as fits,
// and the listed blocks have no gap, so each object's block is computed, not loaded. (The cpu
// backend makes a tenth as many.)
TEST(ParallelNew, TensOfMillionsFillFreshBlocksInOrder) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t n = 24'000'000 / scale_down + 17;
  // 40 bytes a walker: its 28 bytes of fields, its share of a block header, and room.
  DoAllRuntime rt(n * 40 + (std::size_t{64} << 20));
  const std::uint64_t cap = rt.capacity<Walker>();
  rt.parallel_new<Walker>(n);
  arch::device_buffer<unsigned long long> places(n);
  rt.parallel_do<&Walker::record_place>(places.data());
  rt.synchronize();
  const auto p = places.download();
  expect_parallel_new_places(p, cap);
  EXPECT_EQ(((p[n - 1] >> 8) - (p[0] >> 8)) / rt.stats().block_bytes, (n - 1) / cap) << "fresh blocks, in order";
  EXPECT_EQ(rt.stats().live(), n);
  EXPECT_EQ(rt.verify(), "");
}

// Hundreds of thousands of blocks among used ones: on cuda the planning grid is as large as fits,
// and each object's block is loaded from the list, which has gaps. 450,000 blocks of walkers, every third destroyed; then runners in 300,000 blocks: the 150,000
// emptied ones and 150,000 fresh. (The cpu backend makes a tenth as many.)
TEST(ParallelNew, HundredsOfThousandsOfBlocksAmongUsedOnesFillInOrder) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t walker_blocks = 450'000 / scale_down, runner_blocks = 300'000 / scale_down;
  // The walkers' blocks and the fresh ones the runners take, and room.
  constexpr std::uint64_t block_bytes = shoal::detail::geometry_of<DoAllHeap>.block_bytes;
  expect_parallel_new_fills_the_lowest_free_blocks((walker_blocks + runner_blocks) * block_bytes * 5 / 4,
                                                   walker_blocks, runner_blocks);
}

// Calls enqueued back to back, none waited for: each starts from the bitmaps the one before it
// left, and reuses its scratch (on cuda the per-word offsets and per-chunk counts).
TEST(ParallelNew, BackToBackCallsEachMakeTheirOwnObjectsInTheirOwnBlocks) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{32} << 20);
  const std::uint64_t cap = rt.capacity<Walker>();
  std::vector<std::uint64_t> sizes;
  std::uint64_t objects = 0, blocks = 0;
  for (std::uint64_t call = 0; call < 40; ++call) {
    const std::uint64_t n = (call * 37 % 11) * cap + call * 13 % cap + 1;  // whole blocks and a part
    rt.parallel_new<Walker>(n);
    sizes.push_back(n);
    objects += n;
    blocks += (n + cap - 1) / cap;
  }
  const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  arch::device_buffer<unsigned int> log(largest);
  log.zero();
  rt.parallel_do<&Walker::visit_and_kill>(log.data());  // no partners: logs each id's visits
  rt.synchronize();
  EXPECT_EQ(rt.verify(), "");
  EXPECT_EQ(rt.stats().live(), objects);
  EXPECT_EQ(rt.stats().types[DoAllHeap::type_id<Walker>].blocks, blocks) << "each call its own blocks";
  EXPECT_EQ(rt.stats().free_blocks, rt.stats().blocks - blocks);
  const auto seen = log.download();
  for (std::uint64_t i = 0; i < largest; ++i) {
    const auto calls_with_i = std::count_if(sizes.begin(), sizes.end(), [&](std::uint64_t n) { return n > i; });
    ASSERT_EQ(seen[i], static_cast<unsigned>(calls_with_i)) << "objects with id " << i;
  }
}

// Words whose blocks are all in use, below the lowest free blocks: parallel_new passes over them
// and leaves their bitmaps alone. (On cuda it once handed them an empty mask, which marked the
// parent bit of the new type's empty word in its allocated bitmap: verify() reports that.)
TEST(ParallelNew, PassesOverWordsWhoseBlocksAreAllInUse) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{32} << 20);
  const std::uint64_t walker_cap = rt.capacity<Walker>(), runner_cap = rt.capacity<Runner>();
  const std::uint64_t walkers = (3 * 64 + 2) * walker_cap;  // blocks 0 … 193: leaf words 0 to 3
  rt.parallel_new<Walker>(walkers);
  arch::device_buffer<Walker*> table(walkers);
  rt.parallel_do<&Walker::enter>(table.data());
  destroy_walker_block(rt, table.data(), 192, walker_cap);
  const std::uint64_t runners = 10 * runner_cap + 1;
  rt.parallel_new<Runner>(runners);
  arch::device_buffer<unsigned long long> walker_places(walkers), runner_places(runners);
  walker_places.zero();
  rt.parallel_do<&Walker::record_place>(walker_places.data());
  rt.parallel_do<&Runner::record_place>(runner_places.data());
  rt.synchronize();
  EXPECT_EQ(rt.verify(), "");
  const auto rp = runner_places.download();
  expect_parallel_new_places(rp, runner_cap);
  const std::uint64_t block0 = walker_places.download()[0] >> 8, block_bytes = rt.stats().block_bytes;
  const auto block_of = [&](unsigned long long place) { return ((place >> 8) - block0) / block_bytes; };
  EXPECT_EQ(block_of(rp[0]), 192u) << "the runners start at the first free block";
  EXPECT_EQ(block_of(rp[runner_cap]), 194u) << "then go on above the walkers";
  EXPECT_EQ(rt.stats().types[DoAllHeap::type_id<Runner>].blocks, 11u);
}

// A block that device code opened lies anywhere in the heap (the allocator claims a random free
// one). Here it lies among the last free blocks, and a block below them empties: parallel_new
// fills the emptied block first, then the others around the device-made one.
TEST(ParallelNew, TakesOnlyFreeBlocksAfterDeviceCodeOpenedOne) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{1} << 20);
  const std::uint64_t walker_cap = rt.capacity<Walker>(), runner_cap = rt.capacity<Runner>();
  const std::uint64_t blocks = rt.stats().blocks, spare = 8, walker_blocks = blocks - spare;
  const std::uint64_t walkers = walker_blocks * walker_cap;  // whole blocks: no spare slot
  rt.parallel_new<Walker>(walkers);
  const std::uint64_t runners = spare * runner_cap;  // ids 0 … runners - 1, and the lone one
  arch::device_buffer<unsigned long long> places(runners + 1), walker_places(walkers);
  places.zero();
  make_runner_on_device(rt, runners, places.data());
  arch::device_buffer<Walker*> table(walkers);
  rt.parallel_do<&Walker::enter>(table.data());
  rt.parallel_do<&Walker::record_place>(walker_places.data());
  destroy_walker_block(rt, table.data(), 5, walker_cap);
  rt.synchronize();
  ASSERT_EQ(rt.verify(), "");
  const unsigned long long lone_place = places.read(runners);
  rt.parallel_new<Runner>(runners);
  rt.parallel_do<&Runner::record_place>(places.data());
  rt.synchronize();
  EXPECT_EQ(rt.verify(), "");
  EXPECT_EQ(rt.stats().free_blocks, 0u);
  const auto rp = places.download();
  EXPECT_EQ(rp[runners], lone_place) << "the device-made runner keeps its slot";
  const std::uint64_t block0 = walker_places.download()[0] >> 8, block_bytes = rt.stats().block_bytes;
  const auto block_of = [&](unsigned long long place) { return ((place >> 8) - block0) / block_bytes; };
  const std::uint64_t lone = block_of(lone_place);
  ASSERT_GE(lone, walker_blocks) << "the device-made runner opened one of the last free blocks";
  std::vector<unsigned long long> made(rp.begin(), rp.begin() + runners);
  expect_parallel_new_places(made, runner_cap);
  std::vector<std::uint64_t> lowest_free{5};
  for (std::uint64_t b = walker_blocks; b < blocks; ++b)
    if (b != lone) lowest_free.push_back(b);
  for (std::uint64_t j = 0; j < spare; ++j)
    ASSERT_EQ(block_of(made[j * runner_cap]), lowest_free[j]) << "runner block " << j << " is the lowest free one";
}

// n = 0 makes nothing and reports nothing, even into a full heap; n = 1 makes object 0 in slot 0
// of the lowest free block, in a cleared heap and among used blocks, and into a full heap it is
// one failed allocation.
TEST(ParallelNew, ZeroObjectsAndOneObject) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{1} << 20);
  const std::uint64_t walker_cap = rt.capacity<Walker>(), blocks = rt.blocks(), block_bytes = rt.block_bytes();
  const auto data = reinterpret_cast<std::uint64_t>(rt.view().data);
  const auto block_of = [&](unsigned long long place) { return ((place >> 8) - data) / block_bytes; };
  rt.parallel_new<Walker>(0);
  EXPECT_NO_THROW(rt.synchronize());
  EXPECT_EQ(rt.stats().live(), 0u);
  EXPECT_EQ(rt.stats().free_blocks, blocks);
  EXPECT_EQ(rt.verify(), "");
  arch::device_buffer<unsigned long long> places(1);
  rt.parallel_new<Walker>(1);
  rt.parallel_do<&Walker::record_place>(places.data());
  rt.synchronize();
  EXPECT_EQ(block_of(places.read(0)), 0u);
  EXPECT_EQ(places.read(0) & 0xFF, 0u) << "slot 0";
  EXPECT_EQ(rt.stats().live(), 1u);
  EXPECT_EQ(rt.verify(), "");

  rt.clear();
  rt.parallel_new<Walker>(blocks * walker_cap);  // every block full
  rt.parallel_new<Walker>(0);
  EXPECT_NO_THROW(rt.synchronize()) << "no object asked, none failed";
  arch::device_buffer<Walker*> table(blocks * walker_cap);
  rt.parallel_do<&Walker::enter>(table.data());
  destroy_walker_block(rt, table.data(), 5, walker_cap);
  rt.synchronize();
  ASSERT_EQ(rt.stats().free_blocks, 1u);
  rt.parallel_new<Runner>(1);
  rt.parallel_do<&Runner::record_place>(places.data());
  rt.synchronize();
  EXPECT_EQ(block_of(places.read(0)), 5u) << "the one free block";
  EXPECT_EQ(places.read(0) & 0xFF, 0u) << "slot 0";
  EXPECT_EQ(rt.verify(), "");
  rt.parallel_new<Runner>(1);  // the runner's block has room, but parallel_new takes free blocks only
  try {
    rt.synchronize();
    ADD_FAILURE() << "no out_of_memory";
  } catch (const out_of_memory& e) {
    EXPECT_NE(e.type_name().find("Runner"), std::string::npos) << e.type_name();
    EXPECT_EQ(e.failed(), 1u);
  }
  EXPECT_EQ(rt.stats().live(), (blocks - 1) * walker_cap + 1);
  EXPECT_EQ(rt.verify(), "");
}

/// `n` walkers made by device code (the allocator), then every walker of every third block
/// destroyed, and every other walker elsewhere.
void make_and_thin_out_walkers(DoAllRuntime& rt, Walker** table, std::uint64_t n) {
  const auto data = reinterpret_cast<std::uint64_t>(rt.view().data);
  const std::uint64_t block_bytes = rt.block_bytes();
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) { table[i] = new Walker(i); });
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    const std::uint64_t b = (detail::block_address_of(detail::bits_of(table[i])) - data) / block_bytes;
    if (b % 3 == 0 || i % 2 == 0) delete table[i];
  });
}

/// The free blocks in increasing order, from the free bitmap's leaf words.
std::vector<std::uint64_t> free_blocks_in_order(const DoAllRuntime& rt) {
  const auto words = detail::download(rt.view().free_blocks());
  std::vector<std::uint64_t> free;
  for (std::uint64_t b = 0; b < rt.blocks(); ++b)
    if ((words[b / 64] >> (b % 64)) & 1u) free.push_back(b);
  return free;
}

// After allocations by device code (the allocator opens blocks where its walk lands) and destroys
// that empty some blocks and thin out the others, parallel_new fills exactly the lowest free
// blocks in order, the last one part-full, on both cuda paths (one thread block; two launches
// beyond 16,384 objects). Then more than the rest hold: they fill, the others are reported.
TEST(ParallelNew, AfterAllocationsAndDestroysFillsTheLowestFreeBlocks) {
  SHOAL_REQUIRE_DEVICE();
  constexpr std::uint64_t runner_cap = detail::geometry_of<DoAllHeap>.capacity[DoAllHeap::type_id<Runner>];
  for (const std::uint64_t runner_blocks : {std::uint64_t{5}, 16384 / runner_cap + 5}) {
    SCOPED_TRACE(runner_blocks * runner_cap <= 16384 ? "one thread block" : "two launches");
    DoAllRuntime rt(std::size_t{8} << 20);
    const std::uint64_t walkers = rt.blocks() / 3 * rt.capacity<Walker>(), block_bytes = rt.block_bytes();
    const auto data = reinterpret_cast<std::uint64_t>(rt.view().data);
    arch::device_buffer<Walker*> table(walkers);
    make_and_thin_out_walkers(rt, table.data(), walkers);
    ASSERT_EQ(rt.verify(), "");
    const auto free = free_blocks_in_order(rt);
    const std::uint64_t live = rt.stats().live();
    ASSERT_LT(runner_blocks, free.size());
    ASSERT_NE(free.back() - free.front(), free.size() - 1) << "used blocks among the free ones";
    const std::uint64_t n = (runner_blocks - 1) * runner_cap + 1;
    rt.parallel_new<Runner>(n);
    arch::device_buffer<unsigned long long> places(n);
    rt.parallel_do<&Runner::record_place>(places.data());
    rt.synchronize();
    EXPECT_EQ(rt.verify(), "");
    const auto rp = places.download();
    expect_parallel_new_places(rp, runner_cap);
    for (std::uint64_t j = 0; j < runner_blocks; ++j)
      ASSERT_EQ(((rp[j * runner_cap] >> 8) - data) / block_bytes, free[j]) << "runner block " << j;
    EXPECT_EQ(rt.stats().live(), live + n);
    const std::uint64_t rest = free.size() - runner_blocks;
    rt.parallel_new<Runner>(rest * runner_cap + 10);
    try {
      rt.synchronize();
      ADD_FAILURE() << "no out_of_memory";
    } catch (const out_of_memory& e) {
      EXPECT_NE(e.type_name().find("Runner"), std::string::npos) << e.type_name();
      EXPECT_EQ(e.failed(), 10u);
    }
    EXPECT_EQ(rt.stats().free_blocks, 0u);
    EXPECT_EQ(rt.stats().live(), live + n + rest * runner_cap);
    EXPECT_EQ(rt.verify(), "");
  }
}

// A few objects more than fit, in fresh blocks and among used ones (on cuda, up to 16,384
// objects are one launch of one thread block, which finds the blocks itself): the blocks that are
// free are filled, the rest is reported as out_of_memory naming the class, and the heap stays
// consistent.
TEST(ParallelNew, FewObjectsMoreThanFitFillWhatIsFreeAndReportTheRest) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{1} << 20);
  const std::uint64_t walker_cap = rt.capacity<Walker>(), runner_cap = rt.capacity<Runner>();
  const std::uint64_t blocks = rt.stats().blocks, walker_blocks = blocks - 3;
  const std::uint64_t walkers = walker_blocks * walker_cap;
  const std::uint64_t runner_type = DoAllHeap::type_id<Runner>;
  for (const bool among_used : {false, true}) {
    SCOPED_TRACE(among_used ? "among used blocks" : "fresh blocks");
    rt.clear();
    rt.parallel_new<Walker>(walkers);
    arch::device_buffer<Walker*> table(walkers);
    rt.parallel_do<&Walker::enter>(table.data());
    if (among_used) destroy_walker_block(rt, table.data(), 7, walker_cap);
    rt.synchronize();
    const std::uint64_t free_blocks = rt.stats().free_blocks;
    ASSERT_EQ(free_blocks, among_used ? 4u : 3u);
    const std::uint64_t n = (free_blocks + 2) * runner_cap - 1;  // a block and a bit over
    ASSERT_LE(n, 16384u);
    rt.parallel_new<Runner>(n);
    try {
      rt.synchronize();
      ADD_FAILURE() << "no out_of_memory";
    } catch (const out_of_memory& e) {
      EXPECT_NE(e.type_name().find("Runner"), std::string::npos) << e.type_name();
      EXPECT_EQ(e.failed(), n - free_blocks * runner_cap);
    }
    EXPECT_EQ(rt.stats().free_blocks, 0u);
    EXPECT_EQ(rt.stats().types[runner_type].blocks, free_blocks);
    EXPECT_EQ(rt.stats().live(), walkers - (among_used ? walker_cap : 0) + free_blocks * runner_cap);
    EXPECT_EQ(rt.verify(), "");
    // Nothing is free now: the next call makes nothing and reports all.
    rt.parallel_new<Runner>(5);
    EXPECT_THROW(rt.synchronize(), out_of_memory);
    EXPECT_EQ(rt.verify(), "");
  }
}

// parallel_new reads the heap's state on the device, so blocks freed by kernels the runtime did
// not launch (given rt.device_view()) are filled like any others, on both cuda paths (one thread
// block up to 16,384 objects, two launches beyond). First, a cleared heap filled past its end:
// more than fit, the rest is reported.
TEST(ParallelNew, BlocksFreedByKernelsOfOurOwnAreFilledFirst) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{4} << 20);
  const std::uint64_t walker_cap = rt.capacity<Walker>(), runner_cap = rt.capacity<Runner>();
  const std::uint64_t blocks = rt.stats().blocks, block_bytes = rt.stats().block_bytes;
  rt.parallel_new<Walker>(2 * walker_cap);
  const std::uint64_t over = blocks * walker_cap;  // two blocks more than are free
  ASSERT_GT(over, 16384u) << "more than one thread block's objects";
  rt.parallel_new<Walker>(over);
  try {
    rt.synchronize();
    ADD_FAILURE() << "no out_of_memory";
  } catch (const out_of_memory& e) {
    EXPECT_EQ(e.failed(), 2 * walker_cap);
  }
  EXPECT_EQ(rt.stats().free_blocks, 0u);
  EXPECT_EQ(rt.stats().live(), blocks * walker_cap);
  EXPECT_EQ(rt.verify(), "");

  const std::uint64_t walker_blocks = blocks / 4, walkers = walker_blocks * walker_cap;
  for (const std::uint64_t n : {3 * runner_cap + 1, (16384 / runner_cap + 3) * runner_cap + 1}) {
    SCOPED_TRACE(n <= 16384 ? "one thread block" : "two launches");
    rt.clear();
    rt.parallel_new<Walker>(walkers);
    // Blocks 3 and 40 emptied by kernels of our own, which the runtime does not see.
    arch::device_buffer<Walker*> table(walkers);
    table_walkers_unseen(rt, table.data());
    destroy_walker_block_unseen(rt, table.data(), 3, walker_cap);
    destroy_walker_block_unseen(rt, table.data(), 40, walker_cap);
    arch::synchronize();
    ASSERT_EQ(rt.verify(), "");
    ASSERT_LE((n + runner_cap - 1) / runner_cap, rt.stats().free_blocks);
    rt.parallel_new<Runner>(n);
    arch::device_buffer<unsigned long long> places(n);
    rt.parallel_do<&Runner::record_place>(places.data());
    rt.synchronize();
    EXPECT_EQ(rt.verify(), "");
    const auto rp = places.download();
    expect_parallel_new_places(rp, runner_cap);
    const auto data = reinterpret_cast<std::uint64_t>(rt.view().data);
    const auto block_of = [&](unsigned long long place) { return ((place >> 8) - data) / block_bytes; };
    EXPECT_EQ(block_of(rp[0]), 3u) << "the lowest free block first";
    EXPECT_EQ(block_of(rp[runner_cap]), 40u);
    for (std::uint64_t j = 2; j * runner_cap < n; ++j)
      ASSERT_EQ(block_of(rp[j * runner_cap]), walker_blocks + j - 2) << "runner block " << j;
    EXPECT_EQ(rt.stats().live(), walkers - 2 * walker_cap + n);
  }
}

/// The walkers of block 3 and of blocks [from, to) (in parallel_new order), in a launch of the
/// runtime's when `seen`, else in a kernel of our own.
void destroy_block_3_and_walker_blocks(DoAllRuntime& rt, Walker** table, std::uint64_t from, std::uint64_t to,
                                       std::uint64_t capacity, bool seen) {
  const auto destroy = [=] SHOAL_DEVICE(std::size_t i) {
    const std::uint64_t b = i / capacity, block = b == 0 ? 3 : from + b - 1;
    delete table[block * capacity + i % capacity];
  };
  const std::uint64_t n = (1 + to - from) * capacity;
  if (seen)
    rt.launch(n, destroy);
  else
    arch::for_each_index(n, destroy, rt.device_view());
}

// Taking the last free blocks of a leaf word whose other blocks are in use empties the word, so
// its bit in the level above must be cleared too, although blocks past the taken ones are not
// free. Blocks are freed in a full heap so that the taken blocks end inside a leaf word followed
// by used blocks only, on both cuda paths (one thread block; two launches beyond 16,384 objects),
// freed by a launch of the runtime's or by a kernel of our own.
TEST(ParallelNew, TakingTheLastFreeBlocksOfAWordEmptiesItsParentBit) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{4} << 20);
  const std::uint64_t walker_cap = rt.capacity<Walker>(), runner_cap = rt.capacity<Runner>();
  const std::uint64_t blocks = rt.stats().blocks, block_bytes = rt.stats().block_bytes;
  const std::uint64_t tiles_blocks = 16384 / runner_cap + 3;  // more than one thread block's objects
  // A run of tiles_blocks - 1 free blocks that ends 7 blocks into a leaf word.
  const std::uint64_t run_end = (tiles_blocks + 6 + 63) / 64 * 64 + 7, run_start = run_end - (tiles_blocks - 1);
  ASSERT_LT(run_end, blocks);
  struct scenario {
    const char* name;
    bool seen;           // freed by a launch of the runtime's, else by a kernel of our own
    std::uint64_t from;  // freed: block 3 and blocks [from, to)
    std::uint64_t to;
  };
  for (const scenario& c : {scenario{"one thread block, seen", true, 5, 6},
                            scenario{"one thread block, unseen", false, 5, 6},
                            scenario{"two launches", true, run_start, run_end}}) {
    SCOPED_TRACE(c.name);
    rt.clear();
    rt.parallel_new<Walker>(blocks * walker_cap);  // every block full
    arch::device_buffer<Walker*> table(blocks * walker_cap);
    table_walkers_unseen(rt, table.data());
    const std::uint64_t freed_blocks = 1 + c.to - c.from;
    destroy_block_3_and_walker_blocks(rt, table.data(), c.from, c.to, walker_cap, c.seen);
    arch::synchronize();
    ASSERT_EQ(rt.verify(), "");
    ASSERT_EQ(rt.stats().free_blocks, freed_blocks);
    const std::uint64_t n = freed_blocks * runner_cap;
    rt.parallel_new<Runner>(n);
    rt.synchronize();
    EXPECT_EQ(rt.verify(), "") << "the free bitmap after taking blocks 3 and [" << c.from << ", " << c.to << ")";
    EXPECT_EQ(rt.stats().free_blocks, 0u);
    arch::device_buffer<unsigned long long> places(n);
    rt.parallel_do<&Runner::record_place>(places.data());
    rt.synchronize();
    const auto rp = places.download();
    expect_parallel_new_places(rp, runner_cap);
    const auto data = reinterpret_cast<std::uint64_t>(rt.view().data);
    const auto block_of = [&](unsigned long long place) { return ((place >> 8) - data) / block_bytes; };
    EXPECT_EQ(block_of(rp[0]), 3u);
    EXPECT_EQ(block_of(rp[n - 1]), c.to - 1);
  }
}

// Calls one after another into a cleared heap, across types, on both cuda paths, and past the end
// of the heap: each fills the lowest free blocks in order, the one after the blocks of the one
// before.
TEST(ParallelNew, CallsOneAfterAnotherFillInOrderToTheEnd) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{4} << 20);
  const std::uint64_t walker_cap = rt.capacity<Walker>(), runner_cap = rt.capacity<Runner>();
  const std::uint64_t blocks = rt.stats().blocks;
  for (const std::uint64_t n : {3 * walker_cap + 5, (16384 / walker_cap + 3) * walker_cap + 11}) {
    SCOPED_TRACE(n <= 16384 ? "one thread block" : "two launches");
    rt.clear();
    const std::uint64_t walker_blocks = (n + walker_cap - 1) / walker_cap;
    ASSERT_GT(blocks, walker_blocks + 4);
    rt.parallel_new<Walker>(n);
    const std::uint64_t runners = 2 * runner_cap + 1;  // after the walkers' last block
    rt.parallel_new<Runner>(runners);
    const std::uint64_t free_blocks = blocks - walker_blocks - 3;
    rt.parallel_new<Walker>(free_blocks * walker_cap + 1);  // one object more than fits
    try {
      rt.synchronize();
      ADD_FAILURE() << "no out_of_memory";
    } catch (const out_of_memory& e) {
      EXPECT_EQ(e.failed(), 1u);
    }
    rt.parallel_new<Runner>(1);  // into a full heap
    EXPECT_THROW(rt.synchronize(), out_of_memory);
    EXPECT_EQ(rt.verify(), "");
    EXPECT_EQ(rt.stats().free_blocks, 0u);
    EXPECT_EQ(rt.stats().live(), n + runners + free_blocks * walker_cap);
    arch::device_buffer<unsigned long long> places(runners);
    rt.parallel_do<&Runner::record_place>(places.data());
    rt.synchronize();
    const auto rp = places.download();
    expect_parallel_new_places(rp, runner_cap);
    const auto data = reinterpret_cast<std::uint64_t>(rt.view().data);
    const std::uint64_t block_bytes = rt.stats().block_bytes;
    EXPECT_EQ(((rp[0] >> 8) - data) / block_bytes, walker_blocks) << "the runners follow the walkers";
  }
}

std::uint64_t count_with_device_do(DoAllRuntime& rt) {
  arch::device_buffer<unsigned long long> out(2);
  out.zero();
  unsigned long long* o = out.data();
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    device_do<Walker>([&](Walker* w) { o[0] += 1 + 0 * w->id; });
    device_do<Mover>([&](Mover*) { o[1] += 1; });
  });
  return out.read(0) * 1000000 + out.read(1);
}

TEST(DeviceDo, IteratesEveryObjectOfAClass) {
  SHOAL_REQUIRE_DEVICE();
  DoAllRuntime rt(std::size_t{16} << 20);
  rt.parallel_new<Walker>(1234);
  rt.parallel_new<Runner>(567);
  EXPECT_EQ(count_with_device_do(rt), 1234u * 1000000 + 1234 + 567);
}

}  // namespace shoal::test
