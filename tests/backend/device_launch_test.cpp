// Launches sized on the device: over a counter that device code wrote (exactly that many items,
// in stream order, whatever the grid was sized for), and over a device_list filled by pushes
// from device code (every stored item once, refused pushes past the capacity counted, objects
// created in the launch, out of memory reported). Compiled for both backends; device code lives
// in free functions.
#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "shoal/sim/grid.hpp"
#include "test_support.hpp"

namespace shoal::test {

class Sprout;
using SproutHeap = shoal::heap<Sprout>;
class Sprout : public object<SproutHeap, Sprout> {
 public:
  SHOAL_FIELDS(Sprout, (std::uint32_t, cell), (std::uint32_t, generation))
  SHOAL_HD Sprout(std::uint32_t c, std::uint32_t g) { cell = c, generation = g; }
};
using SproutRuntime = runtime<SproutHeap>;

namespace {

/// Sets the counter to `n` on the device (a launch, so the value exists only there).
void write_count(SproutRuntime& rt, unsigned long long* counter, unsigned long long n) {
  rt.launch_async(1, [=] SHOAL_DEVICE(std::size_t) { *counter = n; });
}
/// hits[i] += 1 for every item of a launch over the counter (enqueued).
void count_hits(SproutRuntime& rt, device_count n, unsigned* hits) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) { arch::fetch_add(hits[i], 1u); });
}

/// Pushes every i < n with i % every == 0; pushed[i] = 1 when the push was accepted.
void push_multiples(SproutRuntime& rt, list_view<std::uint32_t> list, std::size_t n, std::uint32_t every,
                    unsigned* pushed) {
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (i % every == 0) pushed[i] = list.push(static_cast<std::uint32_t>(i)) ? 1u : 0u;
  });
}
/// seen[item] += 1 for every item of the list (enqueued).
void mark_items(SproutRuntime& rt, const device_list<std::uint32_t>& list, unsigned* seen) {
  rt.launch_async(list, [=] SHOAL_DEVICE(std::uint32_t item) { arch::fetch_add(seen[item], 1u); });
}
/// A sprout on every listed cell, remembered in cells[] (waits: launch()).
void sprout_on_listed(SproutRuntime& rt, const device_list<std::uint32_t>& list, Sprout** cells, std::uint32_t generation) {
  rt.launch(list, [=] SHOAL_DEVICE(std::uint32_t c) { cells[c] = new Sprout(c, generation); });
}

// ---- A Game of Life whose births run over a device-built candidate list ----

using life_grid = sim::grid<Sprout, sim::edges::torus>;

/// Counts live neighbours; dead cells with 3 become birth candidates, live cells without 2 or 3
/// are marked to die. Then deaths over the grid and births over the list only.
void generation(SproutRuntime& rt, life_grid g, device_list<std::uint32_t>& births, std::uint8_t* dies,
                std::uint32_t step) {
  const list_view<std::uint32_t> b = births.view();
  births.clear();
  rt.launch_async(g.size(), [=] SHOAL_DEVICE(std::size_t i) {
    const auto c = static_cast<std::uint32_t>(i);
    std::uint32_t live = 0;
    g.for_each_moore(c, [&](std::uint32_t n) { live += g.cells[n] != nullptr; });
    const bool alive = g.cells[c] != nullptr;
    dies[c] = alive && live != 2 && live != 3;
    if (!alive && live == 3) b.push(c);
  });
  rt.launch_async(g.size(), [=] SHOAL_DEVICE(std::size_t c) {
    if (dies[c]) {
      delete g.cells[c];
      g.cells[c] = nullptr;
    }
  });
  rt.launch_async(births, [=] SHOAL_DEVICE(std::uint32_t c) { g.cells[c] = new Sprout(c, step); });
}
void plant(SproutRuntime& rt, life_grid g, std::vector<std::uint32_t> cells) {
  arch::device_buffer<std::uint32_t> in(cells.size());
  in.upload(cells);
  const std::uint32_t* c = in.data();
  rt.launch(cells.size(), [=] SHOAL_DEVICE(std::size_t i) { g.cells[c[i]] = new Sprout(c[i], 0); });
}
std::set<std::uint32_t> live_cells(const life_grid& g) {
  std::vector<Sprout*> cells(g.size());
  arch::copy_to_host(cells.data(), g.cells, cells.size() * sizeof(Sprout*));
  std::set<std::uint32_t> live;
  for (std::uint32_t c = 0; c < cells.size(); ++c)
    if (cells[c] != nullptr) live.insert(c);
  return live;
}

}  // namespace

TEST(DeviceSizedLaunch, RunsExactlyTheCountThatDeviceCodeWroteInStreamOrder) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads(8);
  SproutRuntime rt(std::size_t{1} << 20);
  device_counter counter;
  const std::size_t room = 6000;
  arch::device_buffer<unsigned> first(room), second(room), third(room);
  first.zero(), second.zero(), third.zero();
  // All enqueued, no wait in between: each launch must read the count the work before it left.
  write_count(rt, counter.data(), 37);
  count_hits(rt, counter.count(1000), first.data());
  write_count(rt, counter.data(), 5000);
  count_hits(rt, counter.count(10), second.data());  // more than max: every item still runs
  counter.clear();
  count_hits(rt, counter.count(1000), third.data());
  rt.synchronize();
  const auto a = first.download(), b = second.download(), c = third.download();
  for (std::size_t i = 0; i < room; ++i) {
    ASSERT_EQ(a[i], i < 37 ? 1u : 0u) << i;
    ASSERT_EQ(b[i], i < 5000 ? 1u : 0u) << i;
    ASSERT_EQ(c[i], 0u) << "cleared: no item, " << i;
  }
  EXPECT_EQ(counter.read(), 0u);
}

TEST(DeviceList, PushesFromDeviceCodeAndALaunchOverEveryStoredItem) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads(8);
  SproutRuntime rt(std::size_t{1} << 20);
  const std::size_t n = 100000;
  device_list<std::uint32_t> list(n);
  arch::device_buffer<unsigned> pushed(n), seen(n);
  for (std::uint32_t every : {3u, 7u}) {
    pushed.zero(), seen.zero();
    list.clear();
    push_multiples(rt, list.view(), n, every, pushed.data());
    mark_items(rt, list, seen.data());
    rt.synchronize();
    const std::size_t want = (n + every - 1) / every;
    ASSERT_EQ(list.size(), want);
    EXPECT_EQ(list.refused(), 0u);
    auto items = list.download();
    std::sort(items.begin(), items.end());
    std::vector<std::uint32_t> multiples(want);
    for (std::size_t k = 0; k < want; ++k) multiples[k] = static_cast<std::uint32_t>(k * every);
    EXPECT_EQ(items, multiples) << "every push stored once, every " << every;
    const auto s = seen.download();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(s[i], i % every == 0 ? 1u : 0u) << i;
  }
}

TEST(DeviceList, APushPastTheCapacityIsRefusedAndCounted) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads(8);
  SproutRuntime rt(std::size_t{1} << 20);
  const std::size_t n = 50000, capacity = 1000;
  device_list<std::uint32_t> list(capacity);
  arch::device_buffer<unsigned> pushed(n), seen(n);
  pushed.zero(), seen.zero();
  list.clear();
  push_multiples(rt, list.view(), n, 1, pushed.data());
  mark_items(rt, list, seen.data());
  rt.synchronize();
  EXPECT_EQ(list.size(), capacity);
  EXPECT_EQ(list.refused(), n - capacity);
  const auto p = pushed.download(), s = seen.download();
  EXPECT_EQ(std::accumulate(p.begin(), p.end(), 0ull), capacity) << "push() said true for the stored ones only";
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(s[i], p[i]) << "the launch ran over exactly the accepted items, " << i;
  list.clear();
  EXPECT_EQ(list.size(), 0u);
  EXPECT_EQ(list.refused(), 0u);
  EXPECT_THROW(device_list<int>(0), error);
}

TEST(DeviceList, ALaunchOverAListCreatesObjectsAndReportsOutOfMemory) {
  SHOAL_REQUIRE_DEVICE();
  SproutRuntime rt(SproutRuntime::bytes_for<Sprout>(64));  // one block: 64 sprouts
  const std::size_t n = 1000;
  device_list<std::uint32_t> list(n);
  arch::device_buffer<unsigned> pushed(n);
  arch::device_buffer<Sprout*> cells(n);
  cells.zero();
  push_multiples(rt, list.view(), 64 * 5, 5, pushed.data());  // 64 items
  sprout_on_listed(rt, list, cells.data(), 1);
  EXPECT_EQ(rt.stats().live(), 64u);
  EXPECT_EQ(rt.verify(), "");
  list.clear();
  push_multiples(rt, list.view(), 100, 1, pushed.data());
  EXPECT_THROW(sprout_on_listed(rt, list, cells.data(), 2), out_of_memory);
}

TEST(DeviceList, AGameOfLifeWithBirthsOverACandidateList) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint32_t w = 10, h = 8;
  SproutRuntime rt(std::size_t{1} << 20);
  sim::device_grid<Sprout> space(w, h, sim::grid_claims::without);
  const life_grid g = space.view();
  device_list<std::uint32_t> births(g.size());
  arch::device_buffer<std::uint8_t> dies(g.size());
  auto at = [&](std::uint32_t x, std::uint32_t y) { return (y % h) * w + (x % w); };
  // A blinker (period 2) far from a glider (moves by (1, 1) every 4 generations).
  const std::vector<std::uint32_t> blinker{at(5, 1), at(6, 1), at(7, 1)};
  const std::vector<std::uint32_t> glider{at(1, 3), at(2, 4), at(0, 5), at(1, 5), at(2, 5)};
  std::vector<std::uint32_t> start = blinker;
  start.insert(start.end(), glider.begin(), glider.end());
  plant(rt, g, start);
  for (std::uint32_t s = 1; s <= 4; ++s) generation(rt, g, births, dies.data(), s);
  rt.synchronize();
  std::set<std::uint32_t> want(blinker.begin(), blinker.end());
  for (std::uint32_t c : glider) want.insert(at(c % w + 1, c / w + 1));
  EXPECT_EQ(live_cells(g), want);
  EXPECT_EQ(rt.stats().live(), 8u);
  EXPECT_EQ(rt.verify(), "");
}

// Choosing a GPU (one process per GPU in a distributed run): the count, and an ordinal out of
// range refused without leaving an error behind for the next check.
TEST(DeviceChoice, CountsTheGpusAndRefusesAnOrdinalOutOfRange) {
  const int gpus = arch::device_count();
#if defined(SHOAL_BACKEND_CUDA)
  SHOAL_REQUIRE_DEVICE();
  ASSERT_GE(gpus, 1);
  EXPECT_THROW(arch::use_device(gpus), backend_error);
  EXPECT_THROW(arch::use_device(-1), backend_error);
  EXPECT_NO_THROW(arch::use_device(0));
  EXPECT_NO_THROW(arch::synchronize()) << "a refused choice left an error behind";
#else
  EXPECT_EQ(gpus, 0);
  EXPECT_THROW(arch::use_device(0), backend_error);
#endif
}

}  // namespace shoal::test
