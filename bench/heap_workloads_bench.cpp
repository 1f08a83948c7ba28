// The four workloads of the reference allocator prototype (alloc-proto/proto.cu, its README's
// table: W1–W4), made through the public API (make<T>/destroy in a runtime.launch_async kernel),
// so that shoal_heap_bench's numbers line up one to one with the prototype's "RES D4 ..." lines
// (scripts/proto-compare.sh prints the table). Part of shoal_heap_bench: heap_bench.cpp calls
// register_proto_workloads().
//
//   proto_W1_one_lane/<log2 n>     n threads, thread i makes one 16-byte object iff i % 32 == 0
//   proto_W2_every_lane/<log2 n>   n threads, every one makes one
//   proto_W4_two_classes           n threads, 1 lane in 8 makes one, two classes in one warp:
//                                  lanes 0 and 16 class B (the prototype's type 1), lanes 9 and
//                                  25 class A (type 0)
//   proto_W3_births_in_holes       n = 4 M objects made (compact, 64 to a block, as the
//                                  prototype prefills), 70% destroyed at random, then one round
//                                  per iteration: thread i of an n-thread kernel makes an object
//                                  where its slot is empty and hash(i, round) says so (86 in
//                                  10000: ≈25k births), timed; then ≈25k frees of live objects
//                                  (208 in 10000 of the live ones), untimed
//
// The lane patterns and hashes are the prototype's (pattern_asks, w3_asks_hash, w3_frees_hash,
// its hash64), so W3 makes exactly the prototype's births round by round: whether thread i asks
// depends only on the hashes, not on where objects land. Heap sizes are the prototype's block
// counts (Shoal gives 16-byte classes 64 slots per block, the prototype's block). W1/W2/W4
// time one kernel on an emptied heap (rt.clear() outside the timed region, as the make
// benchmarks do) and report objects_per_s; W3 times the birth kernel of each round, runs the
// prototype's 100 rounds per repetition (fixed iterations) and reports the rounds' median as the
// counter round_median_us (the prototype's alloc_us), their mean as the time. Like the prototype's,
// W3's stocks keep their reservations from round to round (no wait of the runtime between rounds).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/alloc_objects.hpp"
#include "common/alloc_patterns.hpp"
#include "common/bench_main.hpp"
#include "common/device_timer.hpp"
#include "shoal/shoal.hpp"

namespace shoal::bench {

// W4's two classes are MixA and MixB of the mixed-class patterns (alloc_patterns.hpp): 16 bytes,
// 64 slots per block, as the prototype's types 0 and 1; their heap's third class stays empty.

namespace proto {

// The prototype's sizes; the cpu backend runs the same code at the sizes of heap_bench.cpp's
// patterns (its pattern_threads and churn_objects), with fewer W3 rounds.
#if defined(SHOAL_BACKEND_CUDA)
constexpr int w12_log2[] = {20, 24};
constexpr int w4_log2 = 20;
constexpr int w3_log2 = 22;
constexpr std::uint64_t w3_rounds = 100;  // proto.cu's iters
#else
constexpr int w12_log2[] = {10, 14};
constexpr int w4_log2 = 14;
constexpr int w3_log2 = 16;
constexpr std::uint64_t w3_rounds = 20;
#endif

constexpr std::uint64_t lanes = 32;  // the prototype's lane = i & 31, on every backend
constexpr std::uint64_t slots = 64;  // slots per block, the prototype's and Shoal's for 16 bytes
constexpr std::uint64_t spare_blocks = 32768;  // proto.cu's N = ... + 32768
constexpr std::uint32_t births_bp = 86, frees_bp = 208;  // W3's p_bp, q_bp (of 10000)
constexpr std::uint32_t start_free_bp = 7000;            // W3's prefill: 70% freed
constexpr std::uint64_t start_free_round = 1000003;      // with this round's free hash

// proto.cu's hash64 (splitmix64; bench's hash64 lacks the first addition).
SHOAL_HD inline std::uint64_t hash(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
SHOAL_HD inline bool w3_asks(std::uint64_t i, std::uint64_t round, std::uint32_t bp) {
  return hash(i + round * 0x9E3779B97F4A7C15ull) % 10000 < bp;
}
SHOAL_HD inline bool w3_frees(std::uint64_t i, std::uint64_t round, std::uint32_t bp) {
  return hash(i ^ (round * 0xD1B54A32D192ED03ull) ^ 0x5555555555ull) % 10000 < bp;
}
/// W4 (proto.cu pattern_asks, kind 4): whether thread i asks; `first` gets the class, true for
/// the prototype's type 0 (MixA: odd lanes), false for type 1 (MixB: even lanes).
SHOAL_HD inline bool w4_asks(std::uint64_t i, bool& first) {
  const std::uint64_t lane = i & (lanes - 1);
  first = (lane & 1) != 0;
  return (lane & 7) == ((lane >> 3) & 1);
}

/// Bytes of a one-class heap of `blocks` blocks of 64 16-byte slots.
inline std::size_t heap16_bytes(std::uint64_t blocks) {
  return runtime_of<Obj16>::bytes_for<Obj16>(blocks * slots);
}

/// Heap counters shared by the workloads: the blocks in use against the fewest that hold the
/// live objects (the prototype's blocks= and min=).
inline void report_blocks(benchmark::State& state, const heap_stats& st, const std::string& prefix = "") {
  std::uint64_t blocks = 0;
  for (const auto& t : st.types) blocks += t.blocks;
  state.counters[prefix + "blocks"] = static_cast<double>(blocks);
  state.counters[prefix + "live"] = static_cast<double>(st.live());
  state.counters[prefix + "min_blocks"] = static_cast<double>((st.live() + slots - 1) / slots);
}

/// After the last iteration of W1/W2/W4: exactly `objects` live and a consistent heap.
template <class Runtime>
void check_heap(benchmark::State& state, Runtime& rt, std::uint64_t objects) {
  const heap_stats st = rt.stats();
  if (st.live() != objects)
    fail(state, "live objects " + std::to_string(st.live()) + ", wanted " + std::to_string(objects));
  else if (const std::string bad = rt.verify(); !bad.empty())
    fail(state, "heap inconsistent: " + bad);
  report_blocks(state, st);
}

}  // namespace proto

/// W1 (`every_lane` false: thread i makes iff i % 32 == 0) and W2 (every thread makes), n threads.
inline void proto_lanes(benchmark::State& state, std::uint64_t n, bool every_lane) {
  const std::uint64_t objects = every_lane ? n : n / proto::lanes;
  // proto.cu: W1 N = objects / 32 + 32768, W2 N = n / 32 + 32768 blocks.
  const std::uint64_t blocks = (every_lane ? n : objects) / 32 + proto::spare_blocks;
  runtime_of<Obj16> rt(proto::heap16_bytes(blocks));
  arch::device_buffer<Obj16*> ptrs(n);
  Obj16** p = ptrs.data();
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    state.SetIterationTime(timer.seconds([&] {
      if (every_lane) {
        rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) { p[i] = make<Obj16>(i); });
      } else {
        rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
          if (i % proto::lanes == 0) p[i] = make<Obj16>(i);
        });
      }
    }));
    if (failed(state, rt)) break;
  }
  proto::check_heap(state, rt, objects);
  report_rate(state, objects, n);
  state.counters["heap_blocks"] = static_cast<double>(rt.blocks());
}

/// W4: n threads, lanes 0, 9, 16 and 25 of every 32 make an object, of two classes.
inline void proto_two_classes(benchmark::State& state, std::uint64_t n) {
  const std::uint64_t objects = n / 8;
  // proto.cu: N = n * 48 / 1024 + 32768 blocks, here half for each class.
  const std::uint64_t blocks = n * 48 / 1024 + proto::spare_blocks;
  runtime<MixHeap> rt(
      runtime<MixHeap>::bytes_for<MixA, MixB>(blocks / 2 * proto::slots, (blocks - blocks / 2) * proto::slots));
  arch::device_buffer<void*> ptrs(n);
  void** p = ptrs.data();
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    state.SetIterationTime(timer.seconds([&] {
      rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
        bool first = false;
        if (proto::w4_asks(i, first)) {
          if (first)
            p[i] = make<MixA>(i);
          else
            p[i] = make<MixB>(i);
        }
      });
    }));
    if (failed(state, rt)) break;
  }
  proto::check_heap(state, rt, objects);
  report_rate(state, objects, n);
  state.counters["heap_blocks"] = static_cast<double>(rt.blocks());
}

/// W3: births in a heap with holes. One iteration is one round: births (timed), then frees.
inline void proto_births_in_holes(benchmark::State& state, std::uint64_t n) {
  // proto.cu: N = n / 32 + 32768 blocks, 2.5× the n / 64 that the prefill fills.
  runtime_of<Obj16> rt(proto::heap16_bytes(n / 32 + proto::spare_blocks));
  arch::device_buffer<Obj16*> ptrs(n);
  arch::device_buffer<unsigned long long> asks(1);
  Obj16** p = ptrs.data();
  unsigned long long* count = asks.data();
  try {
    // The prototype's prefill: object i in slot i % 64 of block i / 64 (upload places rows as
    // parallel_new does), constructed as make<Obj16>(i) would; the pointers go to ptrs.
    std::vector<unsigned long long> a(n), b(n);
    for (std::uint64_t i = 0; i < n; ++i) a[i] = i, b[i] = ~i;
    rt.upload(agent_columns<Obj16>(std::move(a), std::move(b)), p);
    rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
      if (proto::w3_frees(i, proto::start_free_round, proto::start_free_bp)) {
        destroy(p[i]);
        p[i] = nullptr;
      }
    });
  } catch (const error& e) {
    fail(state, std::string("setting up the heap with holes: ") + e.what());
    return;
  }
  proto::report_blocks(state, rt.stats(), "start_");

  device_timer timer;
  std::vector<double> round_us;
  std::uint64_t round = 0, births = 0;
  double seconds = 0;
  for (auto _ : state) {
    const std::uint64_t r = round++;
    // How many ask this round (untimed, as proto.cu's k_count).
    asks.zero();
    arch::for_each_index(n, [=] SHOAL_DEVICE(std::size_t i) {
      if (p[i] == nullptr && proto::w3_asks(i, r, proto::births_bp)) arch::fetch_add_relaxed(*count, 1ull);
    });
    births += asks.read(0);
    const double s = timer.seconds([&] {
      rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
        if (p[i] == nullptr && proto::w3_asks(i, r, proto::births_bp)) p[i] = make<Obj16>(i);
      });
    });
    state.SetIterationTime(s);
    seconds += s;
    round_us.push_back(s * 1e6);
    rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
      if (p[i] != nullptr && proto::w3_frees(i, r, proto::frees_bp)) {
        destroy(p[i]);
        p[i] = nullptr;
      }
    });
  }
  // Errors are looked at once, after the rounds: a wait of the runtime settles the stocks, and the
  // prototype's W3 keeps its stocks from round to round, as a model's steps do.
  if (failed(state, rt) || round_us.empty()) return;
  std::sort(round_us.begin(), round_us.end());
  const std::size_t m = round_us.size();
  state.counters["round_median_us"] = m % 2 ? round_us[m / 2] : (round_us[m / 2 - 1] + round_us[m / 2]) / 2;
  state.counters["births_per_round"] = static_cast<double>(births) / static_cast<double>(m);
  state.counters["objects_per_s"] = static_cast<double>(births) / seconds;
  state.counters["threads"] = static_cast<double>(n);
  state.counters["heap_blocks"] = static_cast<double>(rt.blocks());
  proto::report_blocks(state, rt.stats());
  if (const std::string bad = rt.verify(); !bad.empty()) fail(state, "heap inconsistent after the rounds: " + bad);
}

/// Registers the four workloads (names as in the file comment), `repetitions` each.
void register_proto_workloads(int repetitions) {
  for (const int log2 : proto::w12_log2) {
    const std::uint64_t n = std::uint64_t{1} << log2;
    add_benchmark("proto_W1_one_lane/" + std::to_string(log2), repetitions, proto_lanes, n, false);
    add_benchmark("proto_W2_every_lane/" + std::to_string(log2), repetitions, proto_lanes, n, true);
  }
  add_benchmark("proto_W4_two_classes", repetitions, proto_two_classes, std::uint64_t{1} << proto::w4_log2);
  add_benchmark("proto_W3_births_in_holes", repetitions, proto_births_in_holes, std::uint64_t{1} << proto::w3_log2)
      ->Iterations(static_cast<benchmark::IterationCount>(proto::w3_rounds));
}

}  // namespace shoal::bench
