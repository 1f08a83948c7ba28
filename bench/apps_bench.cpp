// Apps benchmark: whole runs (a fixed number of steps from the initial state) of each app at
// 2–3 sizes including its defaults, against static baselines written for this suite
// (bench/baselines/: the same model on fixed-size SOA arrays and as an array of structs, no
// dynamic allocation; DynaSOAr's methodology). Only the steps are timed: building the world and
// populating it are not. bench/baselines/tests checks that every baseline computes what its
// app computes, so the time ratios compare equal work.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <type_traits>

#include "barnes_hut/barnes_hut_model.hpp"
#include "baselines/barnes_hut_baseline.hpp"
#include "baselines/collision_baseline.hpp"
#include "baselines/game_of_life_baseline.hpp"
#include "baselines/generation_baseline.hpp"
#include "baselines/nbody_baseline.hpp"
#include "baselines/structure_baseline.hpp"
#include "baselines/sugarscape_baseline.hpp"
#include "baselines/traffic_baseline.hpp"
#include "baselines/wator_baseline.hpp"
#include "common/bench_main.hpp"
#include "common/device_timer.hpp"
#include "common/profile.hpp"
#include "game_of_life/game_of_life_model.hpp"
#include "generation/generation_model.hpp"
#include "generation/generation_resume.hpp"
#include "shoal/sim/census.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "structure/structure_model.hpp"
#include "sugarscape/sugarscape_model.hpp"

namespace shoal::bench {

/// Counters every app benchmark reports: steps per run and steps per second.
void report_steps(benchmark::State& state, std::uint32_t steps) {
  state.counters["steps"] = steps;
  state.counters["steps_per_s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate);
}

/// A heap that holds an agent on every cell of the grid, with room for the partly full blocks of
/// two classes (about the app's default of 512 MiB at its default grid).
std::size_t wator_heap_bytes(std::uint64_t cells) {
  const auto g = shoal::detail::compute_geometry<wator::Ocean>();
  const std::uint64_t fish_slot = g.block_bytes / g.capacity[wator::Ocean::type_id<wator::Fish>] + 1;
  const std::uint64_t shark_slot = g.block_bytes / g.capacity[wator::Ocean::type_id<wator::Shark>] + 1;
  return cells * std::max(fish_slot, shark_slot) * 3 + (std::size_t{8} << 20);
}

void wator_app(benchmark::State& state, std::uint32_t width, std::uint32_t height, std::uint32_t steps) {
  runtime<wator::Ocean> rt(wator_heap_bytes(std::uint64_t{width} * height));
  sim::phase_timer phases(false);
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    wator::ocean ocean(width, height, 1);
    const wator::grid& g = ocean.view();
    wator::populate(rt, g);
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 1; s <= steps; ++s) wator::step(rt, g, s, phases);
    }));
    try {
      rt.check_errors();
    } catch (const error& e) {
      fail(state, e.what());
      break;
    }
  }
  report_steps(state, steps);
}

template <class Cells>
void wator_static(benchmark::State& state, std::uint32_t width, std::uint32_t height, std::uint32_t steps) {
  device_timer timer;
  for (auto _ : state) {
    std::optional<wator_baseline::simulation<Cells>> sim;
    sim.emplace(width, height, 1);
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 1; s <= steps; ++s) sim->step(s);
    }));
  }
  report_steps(state, steps);
}

/// Heap for a car on every cell (as the app's heap_bytes_needed).
std::size_t traffic_heap_bytes(std::uint64_t cells) {
  const auto g = shoal::detail::compute_geometry<traffic::TrafficHeap>();
  const std::uint64_t per_slot = g.block_bytes / g.capacity[traffic::TrafficHeap::type_id<traffic::Car>] + 1;
  return cells * per_slot * 3 / 2 + (std::size_t{1} << 20);
}

traffic::network traffic_network(std::uint32_t intersections) {
  traffic::network_params p;
  p.intersections = intersections;
  return traffic::generate(p);
}

void traffic_app(benchmark::State& state, std::uint32_t intersections, std::uint32_t steps) {
  const traffic::network net = traffic_network(intersections);
  const traffic::model_params params;
  device_timer timer;
  for (auto _ : state) {
    std::optional<traffic::simulation> sim;
    sim.emplace(net, params, traffic_heap_bytes(net.cells()));
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 0; s < steps; ++s) sim->step();
    }));
    try {
      sim->runtime().check_errors();
    } catch (const error& e) {
      fail(state, e.what());
      break;
    }
  }
  state.counters["cells"] = static_cast<double>(net.cells());
  report_steps(state, steps);
}

template <class Cars>
void traffic_static(benchmark::State& state, std::uint32_t intersections, std::uint32_t steps) {
  const traffic::network net = traffic_network(intersections);
  const traffic::model_params params;
  device_timer timer;
  for (auto _ : state) {
    std::optional<traffic_baseline::simulation<Cars>> sim;
    sim.emplace(net, params);
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 0; s < steps; ++s) sim->step();
    }));
  }
  state.counters["cells"] = static_cast<double>(net.cells());
  report_steps(state, steps);
}

void nbody_app(benchmark::State& state, std::uint64_t bodies, std::uint32_t steps) {
  const nbody::parameters params;
  runtime<nbody::Space> rt(bodies * 64 + (std::size_t{16} << 20));
  sim::phase_timer phases(false);
  device_timer timer;
  for (auto _ : state) {
    rt.clear();
    nbody::populate(rt, bodies, 1, params);
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 0; s < steps; ++s) nbody::step(rt, params, phases);
    }));
    try {
      rt.check_errors();
    } catch (const error& e) {
      fail(state, e.what());
      break;
    }
  }
  report_steps(state, steps);
}

template <class Bodies>
void nbody_static(benchmark::State& state, std::uint64_t bodies, std::uint32_t steps) {
  const nbody::parameters params;
  device_timer timer;
  for (auto _ : state) {
    std::optional<nbody_baseline::simulation<Bodies>> sim;
    sim.emplace(bodies, 1, params);
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 0; s < steps; ++s) sim->step();
    }));
  }
  report_steps(state, steps);
}

/// Barnes–Hut: the app's heap (barnes_hut_model.hpp's sizing) and its steps from the initial state;
/// reports the tree's cells after the last step.
void barnes_hut_app(benchmark::State& state, std::uint64_t bodies, std::uint32_t steps) {
  const barnes_hut::parameters params;
  runtime<barnes_hut::Space> rt(barnes_hut::heap_bytes_needed(bodies));
  barnes_hut::quadtree tree(bodies);
  sim::phase_timer phases(false);
  device_timer timer;
  std::uint64_t cells = 0;
  for (auto _ : state) {
    rt.clear();
    barnes_hut::populate(rt, bodies, 1, params);
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 0; s < steps; ++s) barnes_hut::step(rt, tree, params, phases);
    }));
    try {
      rt.check_errors();
    } catch (const error& e) {
      fail(state, e.what());
      break;
    }
    cells = sim::census<barnes_hut::Space>::of<barnes_hut::Cell>(sim::census<barnes_hut::Space>(rt).count());
  }
  state.counters["cells"] = static_cast<double>(cells);
  report_steps(state, steps);
}

void barnes_hut_static(benchmark::State& state, std::uint64_t bodies, std::uint32_t steps) {
  const barnes_hut::parameters params;
  device_timer timer;
  for (auto _ : state) {
    std::optional<barnes_hut_baseline::simulation> sim;
    sim.emplace(bodies, 1, params);
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 0; s < steps; ++s) sim->step();
    }));
    if (const std::string e = sim->error(); !e.empty()) {
      fail(state, e);
      break;
    }
  }
  report_steps(state, steps);
}

/// Collision: twice the heap its bodies need (room for the blocks that merges leave
/// part-full) and its steps from the initial state.
void collision_app(benchmark::State& state, std::uint64_t bodies, std::uint32_t steps) {
  const collision::parameters params;
  runtime<collision::Space> rt(bodies * 128 + (std::size_t{8} << 20));
  sim::phase_timer phases(false);
  device_timer timer;
  std::uint64_t left = 0;
  for (auto _ : state) {
    rt.clear();
    collision::populate(rt, bodies, 1, params);
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 0; s < steps; ++s) collision::step(rt, params, phases);
    }));
    try {
      rt.check_errors();
    } catch (const error& e) {
      fail(state, e.what());
      break;
    }
    left = sim::census<collision::Space>(rt).count()[0];
  }
  state.counters["bodies_left"] = static_cast<double>(left);
  report_steps(state, steps);
}

void collision_static(benchmark::State& state, std::uint64_t bodies, std::uint32_t steps) {
  const collision::parameters params;
  device_timer timer;
  std::uint64_t left = 0;
  for (auto _ : state) {
    std::optional<collision_baseline::simulation> sim;
    sim.emplace(bodies, 1, params);
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 0; s < steps; ++s) sim->step();
    }));
    left = sim->live();
  }
  state.counters["bodies_left"] = static_cast<double>(left);
  report_steps(state, steps);
}

/// Structure: the mesh of seed 1 with DynaSOAr's parameters, made once on the host (not timed),
/// the heap the app asks for; `springs_left` is what is left after the last step.
void structure_app(benchmark::State& state, std::uint64_t nodes, std::uint32_t steps) {
  const structure::parameters params;
  const structure::mesh m = structure::make_mesh(nodes, 1, params);
  const structure::node_counts c = structure::counts_of(nodes, params);
  runtime<structure::Mesh> rt(runtime<structure::Mesh>::bytes_for<structure::Node, structure::Pull, structure::Anchor, structure::Spring>(
      c.free, c.pulls, c.anchors, m.springs()));
  sim::phase_timer phases(false);
  device_timer timer;
  std::uint64_t left = 0;
  for (auto _ : state) {
    rt.clear();
    structure::populate(rt, m, params);
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 0; s < steps; ++s) structure::step(rt, params, phases);
    }));
    try {
      rt.check_errors();
    } catch (const error& e) {
      fail(state, e.what());
      break;
    }
    left = sim::census<structure::Mesh>(rt).count()[structure::Mesh::type_id<structure::Spring>];
  }
  state.counters["springs_left"] = static_cast<double>(left);
  report_steps(state, steps);
}

void structure_static(benchmark::State& state, std::uint64_t nodes, std::uint32_t steps) {
  const structure::parameters params;
  const structure::mesh m = structure::make_mesh(nodes, 1, params);
  device_timer timer;
  std::uint64_t left = 0;
  for (auto _ : state) {
    std::optional<structure_baseline::mesh_arrays> base;
    base.emplace(m, params);
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 0; s < steps; ++s) base->step();
    }));
    sim::sums scratch(5);
    left = base->measure(scratch).springs;
  }
  state.counters["springs_left"] = static_cast<double>(left);
  report_steps(state, steps);
}

struct grid_size {
  std::uint32_t width, height;
};

/// Sugarscape on a width x height grid, DynaSOAr's other defaults. The heap holds an agent on
/// every cell (the app's sizing); the counter `agents` is the population after the last step.
sugarscape::model_flags sugarscape_flags(std::uint32_t width, std::uint32_t height) {
  sugarscape::model_flags f;
  f.width = width, f.height = height;
  return f;
}

void sugarscape_app(benchmark::State& state, std::uint32_t width, std::uint32_t height, std::uint32_t steps) {
  const sugarscape::model_flags f = sugarscape_flags(width, height);
  runtime<sugarscape::Scape> rt(sugarscape::heap_bytes_needed(f.width * f.height));
  sim::phase_timer phases(false);
  sim::sums sums(5);
  device_timer timer;
  std::uint64_t agents = 0;
  for (auto _ : state) {
    rt.clear();
    sugarscape::scape scape(f, 1);
    const sugarscape::world& w = scape.view();
    sugarscape::populate(rt, w, f);
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 1; s <= steps; ++s) sugarscape::step(rt, w, s, phases);
    }));
    try {
      rt.check_errors();
    } catch (const error& e) {
      fail(state, e.what());
      break;
    }
    const sugarscape::totals t = sugarscape::measure(rt, w, sums);
    agents = t.males + t.females;
  }
  state.counters["agents"] = static_cast<double>(agents);
  report_steps(state, steps);
}

template <class Cells>
void sugarscape_static(benchmark::State& state, std::uint32_t width, std::uint32_t height, std::uint32_t steps) {
  const sugarscape::model_flags f = sugarscape_flags(width, height);
  device_timer timer;
  std::uint64_t agents = 0;
  for (auto _ : state) {
    std::optional<sugarscape_baseline::simulation<Cells>> sim;
    sim.emplace(f, 1);
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 1; s <= steps; ++s) sim->step(s);
    }));
    const sugarscape::totals t = sim->measure();
    agents = t.males + t.females;
  }
  state.counters["agents"] = static_cast<double>(agents);
  report_steps(state, steps);
}

/// Generations from DynaSOAr's start (bursts of arm 100) and the app's rule; with a
/// defragmentation of every class after every `defrag_every` steps (0: none), as --defrag-every.
void generation_app(benchmark::State& state, std::uint32_t width, std::uint32_t height, std::uint32_t steps,
                    std::uint32_t defrag_every) {
  const std::uint64_t cells = std::uint64_t{width} * height;
  runtime<generation::Board> rt(runtime<generation::Board>::bytes_for<generation::Alive>(cells) * 3 / 2);
  sim::phase_timer phases(false);
  device_timer timer;
  std::uint64_t live = 0;
  for (auto _ : state) {
    rt.clear();
    generation::board b(width, height, generation::dynasoar_rule);
    generation::register_cells(rt, b.view());
    generation::populate(rt, b.view(), generation::start{generation::bursts(width, height, 100), sim::probability(0.0), 1});
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 1; s <= steps; ++s) {
        generation::step(rt, b.view(), phases);
        if (defrag_every != 0 && s % defrag_every == 0) rt.defragment();
      }
    }));
    sim::sums sums(4);
    live = generation::measure(rt, b.view(), sums).live;
    rt.unregister_pointers(b.view().cells);
  }
  state.counters["live"] = static_cast<double>(live);
  report_steps(state, steps);
}

void generation_static(benchmark::State& state, std::uint32_t width, std::uint32_t height, std::uint32_t steps) {
  device_timer timer;
  std::uint64_t live = 0;
  for (auto _ : state) {
    generation_baseline::automaton a(width, height, generation::dynasoar_rule);
    a.populate({generation::bursts(width, height, 100), sim::probability(0.0), 1});
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 1; s <= steps; ++s) a.step();
    }));
    sim::sums sums(4);
    live = a.measure(sums).live;
  }
  state.counters["live"] = static_cast<double>(live);
  report_steps(state, steps);
}

/// A Game of Life start for the benchmark: the app's default soup (density 0.3), or at DynaSOAr's
/// dataset sizes its dataset when SHOAL_GOL_DATASETS names a folder holding it (tm.pgm,
/// utm.pgm: DynaSOAr's example/game-of-life/dataset), else as many gliders as the dataset has
/// live cells / 5 (a sparse start that, like the Turing machines, keeps moving).
struct life_start {
  std::uint32_t width, height;
  const char* dataset;     ///< file name in SHOAL_GOL_DATASETS (nullptr: none)
  std::uint64_t gliders;   ///< without the dataset (0 and no dataset: the soup)
};

/// The start's flags; the pattern's path is filled when the dataset is there.
game_of_life::model_flags life_flags(const life_start& l) {
  game_of_life::model_flags f;
  f.width = l.width, f.height = l.height;
  if (l.dataset == nullptr && l.gliders == 0) return f;
  f.density = 0;
  f.gliders = l.gliders;
  if (l.dataset == nullptr) return f;
  const char* dir = std::getenv("SHOAL_GOL_DATASETS");
  const std::string path = dir != nullptr ? std::string(dir) + "/" + l.dataset : "";
  if (!path.empty() && std::filesystem::exists(path) && path.size() < sizeof f.pattern)
    std::snprintf(f.pattern, sizeof f.pattern, "%s", path.c_str()), f.gliders = 0;
  return f;
}

/// The Game of Life app, one variant (Slot: generation::Cell for cells, Agent for no-cell).
template <class Slot>
void game_of_life_app(benchmark::State& state, life_start l, std::uint32_t steps) {
  const game_of_life::model_flags f = life_flags(l);
  const std::uint64_t cells = std::uint64_t{l.width} * l.height;
  const auto v = std::is_same_v<Slot, generation::Cell> ? game_of_life::variant::cells : game_of_life::variant::no_cell;
  runtime<generation::Board> rt(game_of_life::heap_bytes_needed(cells, v));
  sim::phase_timer phases(false);
  device_timer timer;
  std::uint64_t live = 0;
  for (auto _ : state) {
    rt.clear();
    generation::basic_board<Slot> b(l.width, l.height, game_of_life::life);
    generation::register_cells(rt, b.view());
    arch::device_buffer<std::uint64_t> bits;
    generation::populate(rt, b.view(), game_of_life::start_of(f, 1, bits));
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 1; s <= steps; ++s) generation::step(rt, b.view(), phases);
    }));
    sim::sums sums(4);
    live = generation::measure(rt, b.view(), sums).live;
    rt.unregister_pointers(b.view().cells);
  }
  state.counters["live"] = static_cast<double>(live);
  report_steps(state, steps);
}

void game_of_life_static(benchmark::State& state, life_start l, std::uint32_t steps) {
  const game_of_life::model_flags f = life_flags(l);
  device_timer timer;
  std::uint64_t live = 0;
  for (auto _ : state) {
    game_of_life_baseline::automaton a(l.width, l.height);
    arch::device_buffer<std::uint64_t> bits;
    a.populate(game_of_life::start_of(f, 1, bits));
    arch::synchronize();
    state.SetIterationTime(timer.seconds([&] {
      for (std::uint32_t s = 1; s <= steps; ++s) a.step();
    }));
    sim::sums sums(4);
    live = a.measure(sums).live;
  }
  state.counters["live"] = static_cast<double>(live);
  report_steps(state, steps);
}

/// "/size:WxH" and what it starts from.
std::string life_name(const life_start& l) {
  const game_of_life::model_flags f = life_flags(l);
  std::string s = "/size:" + std::to_string(l.width) + "x" + std::to_string(l.height);
  if (f.pattern[0] != '\0') return s + "/pattern:" + l.dataset;
  if (f.gliders != 0) return s + "/gliders:" + std::to_string(f.gliders);
  return s + "/density:0.3";
}

#if defined(SHOAL_BACKEND_CUDA)
// The last size of each list is the app's default.
constexpr grid_size wator_sizes[] = {{512, 640}, {1024, 1280}, {2048, 2560}};
constexpr std::uint32_t wator_steps = 100;
constexpr std::uint32_t traffic_sizes[] = {1750, 17500};
constexpr std::uint32_t traffic_steps = 1000;
constexpr std::uint64_t nbody_sizes[] = {2000, 20000};
constexpr std::uint32_t nbody_steps = 50;
constexpr std::uint64_t collision_sizes[] = {4000, 40000};
constexpr std::uint32_t collision_steps = 100;
constexpr grid_size sugarscape_sizes[] = {{425, 425}, {850, 850}, {1700, 1700}};
constexpr std::uint32_t sugarscape_steps = 100;
constexpr std::uint64_t barnes_hut_sizes[] = {30000, 100000, 300000};
constexpr std::uint32_t barnes_hut_steps = 20;
constexpr grid_size generation_sizes[] = {{625, 625}, {1250, 1250}, {2500, 2500}};
constexpr std::uint32_t generation_steps = 300, generation_defrag_every = 50;
// The app's default (a 2500 x 2500 soup), then DynaSOAr's datasets' sizes: tm.pgm (36,549 live
// cells) and utm.pgm (252,192); 300 steps, DynaSOAr's.
constexpr life_start life_starts[] = {{2500, 2500, nullptr, 0}, {1714, 1647, "tm.pgm", 7310}, {12699, 12652, "utm.pgm", 50438}};
constexpr std::uint32_t life_steps = 60;
// A tenth of DynaSOAr's mesh, then its own (kMaxNodes 1,500,000, the app's default); 40 rounds a step.
constexpr std::uint64_t structure_sizes[] = {150000, 1500000};
constexpr std::uint32_t structure_steps = 50;
constexpr int repetitions = 5;
#else
// Two cpu cores: sizes that keep the whole suite at a few seconds.
constexpr grid_size wator_sizes[] = {{64, 64}, {128, 128}};
constexpr std::uint32_t wator_steps = 10;
constexpr std::uint32_t traffic_sizes[] = {100, 300};
constexpr std::uint32_t traffic_steps = 50;
constexpr std::uint64_t nbody_sizes[] = {256, 1000};
constexpr std::uint32_t nbody_steps = 5;
constexpr std::uint64_t collision_sizes[] = {256, 1000};
constexpr std::uint32_t collision_steps = 5;
constexpr grid_size sugarscape_sizes[] = {{64, 64}, {128, 128}};
constexpr std::uint32_t sugarscape_steps = 10;
constexpr std::uint64_t barnes_hut_sizes[] = {256, 2000};
constexpr std::uint32_t barnes_hut_steps = 3;
constexpr grid_size generation_sizes[] = {{250, 250}, {500, 500}};
constexpr std::uint32_t generation_steps = 20, generation_defrag_every = 5;
// A soup, and gliders as tm.pgm's stand-in at a fifth of its sides (its file is too large here).
constexpr life_start life_starts[] = {{250, 250, nullptr, 0}, {343, 330, nullptr, 292}};
constexpr std::uint32_t life_steps = 20;
constexpr std::uint64_t structure_sizes[] = {500, 2000};
constexpr std::uint32_t structure_steps = 3;
constexpr int repetitions = 5;
#endif

template <class F, class... Args>
void add(const std::string& name, F f, Args... args) {
  add_benchmark(name, repetitions, f, args...);
}

void register_apps_benchmarks() {
  // The full profile runs the defaults' whole number of steps where the quick one samples.
  const std::uint32_t scale = full_profile() ? 5 : 1;
  for (const grid_size g : wator_sizes) {
    const std::string s = "/size:" + std::to_string(g.width) + "x" + std::to_string(g.height);
    const std::uint32_t steps = wator_steps * scale;
    add("wator/shoal" + s, wator_app, g.width, g.height, steps);
    add("wator/soa" + s, wator_static<wator_baseline::soa_cells>, g.width, g.height, steps);
    add("wator/aos" + s, wator_static<wator_baseline::aos_cells>, g.width, g.height, steps);
  }
  for (const std::uint32_t n : traffic_sizes) {
    const std::string s = "/intersections:" + std::to_string(n);
    const std::uint32_t steps = traffic_steps * scale;
    add("traffic/shoal" + s, traffic_app, n, steps);
    add("traffic/soa" + s, traffic_static<traffic_baseline::soa_cars>, n, steps);
    add("traffic/aos" + s, traffic_static<traffic_baseline::aos_cars>, n, steps);
  }
#if defined(SHOAL_BACKEND_CUDA)
  // Whole default runs (500 and 12,000 steps), and Wa-Tor at 4× the cells (how the cost grows
  // with the work): fewer repetitions, each run takes seconds.
  for (const grid_size g : {grid_size{2048, 2560}, grid_size{4096, 5120}}) {
    const std::string s = "/size:" + std::to_string(g.width) + "x" + std::to_string(g.height) + "/steps:500";
    const int reps = g.width == 2048 ? 3 : 1;
    add_benchmark("wator/shoal" + s, reps, wator_app, g.width, g.height, 500u);
    add_benchmark("wator/soa" + s, reps, wator_static<wator_baseline::soa_cells>, g.width, g.height, 500u);
  }
  add_benchmark("traffic/shoal/intersections:17500/steps:12000", 1, traffic_app, 17500u, 12000u);
  add_benchmark("traffic/soa/intersections:17500/steps:12000", 1, traffic_static<traffic_baseline::soa_cars>, 17500u, 12000u);
#endif
  for (const std::uint64_t n : nbody_sizes) {
    const std::string s = "/bodies:" + std::to_string(n);
    const std::uint32_t steps = nbody_steps * scale;
    add("nbody/shoal" + s, nbody_app, n, steps);
    add("nbody/soa" + s, nbody_static<nbody_baseline::soa_bodies>, n, steps);
    add("nbody/aos" + s, nbody_static<nbody_baseline::aos_bodies>, n, steps);
  }
  for (const std::uint64_t n : collision_sizes) {
    const std::string s = "/bodies:" + std::to_string(n);
    const std::uint32_t steps = collision_steps * scale;
    add("collision/shoal" + s, collision_app, n, steps);
    add("collision/soa" + s, collision_static, n, steps);
  }
  for (const grid_size g : sugarscape_sizes) {
    const std::string s = "/size:" + std::to_string(g.width) + "x" + std::to_string(g.height);
    const std::uint32_t steps = sugarscape_steps * scale;
    add("sugarscape/shoal" + s, sugarscape_app, g.width, g.height, steps);
    add("sugarscape/soa" + s, sugarscape_static<sugarscape_baseline::soa_cells>, g.width, g.height, steps);
    add("sugarscape/aos" + s, sugarscape_static<sugarscape_baseline::aos_cells>, g.width, g.height, steps);
  }
  for (const std::uint64_t n : barnes_hut_sizes) {
    const std::string s = "/bodies:" + std::to_string(n);
    const std::uint32_t steps = barnes_hut_steps * scale;
    add("barnes_hut/shoal" + s, barnes_hut_app, n, steps);
    add("barnes_hut/soa" + s, barnes_hut_static, n, steps);
  }
  for (const grid_size g : generation_sizes) {
    const std::string s = "/size:" + std::to_string(g.width) + "x" + std::to_string(g.height);
    const std::uint32_t steps = generation_steps * scale;
    add("generation/shoal" + s, generation_app, g.width, g.height, steps, 0u);
    add("generation/shoal_defrag" + s + "/every:" + std::to_string(generation_defrag_every), generation_app, g.width,
        g.height, steps, generation_defrag_every);
    add("generation/soa" + s, generation_static, g.width, g.height, steps);
  }
  for (const life_start& l : life_starts) {
    const std::string s = life_name(l);
    const std::uint32_t steps = life_steps * scale;
    add("game_of_life/shoal_cells" + s, game_of_life_app<generation::Cell>, l, steps);
    add("game_of_life/shoal_no_cell" + s, game_of_life_app<generation::Agent>, l, steps);
    add("game_of_life/bits" + s, game_of_life_static, l, steps);
  }
  for (const std::uint64_t n : structure_sizes) {
    const std::string s = "/nodes:" + std::to_string(n);
    const std::uint32_t steps = structure_steps * scale;
    add("structure/shoal" + s, structure_app, n, steps);
    add("structure/soa" + s, structure_static, n, steps);
  }
  // Shoal's all-pairs n-body at Barnes–Hut's default body count (the last size): the tree is
  // meant to beat it (issue 24's goal). Fewer repetitions: a step is O(n^2).
  {
    const std::uint64_t n = std::end(barnes_hut_sizes)[-1];
    add_benchmark("nbody/shoal/bodies:" + std::to_string(n), 3, nbody_app, n, barnes_hut_steps * scale);
  }
#if defined(SHOAL_BACKEND_CUDA)
  // Sugarscape's whole default run (1,000 steps: the first generation's die-off, then births
  // and deaths in balance).
  add_benchmark("sugarscape/shoal/size:1700x1700/steps:1000", 3, sugarscape_app, 1700u, 1700u, 1000u);
  add_benchmark("sugarscape/soa/size:1700x1700/steps:1000", 3, sugarscape_static<sugarscape_baseline::soa_cells>, 1700u,
                1700u, 1000u);
  // Collision's whole default run (2,000 steps; the bodies get fewer as they merge).
  add_benchmark("collision/shoal/bodies:40000/steps:2000", 1, collision_app, std::uint64_t{40000}, 2000u);
  add_benchmark("collision/soa/bodies:40000/steps:2000", 1, collision_static, std::uint64_t{40000}, 2000u);
  // Barnes–Hut's whole default run (200 steps).
  add_benchmark("barnes_hut/shoal/bodies:300000/steps:200", 3, barnes_hut_app, std::uint64_t{300000}, 200u);
  add_benchmark("barnes_hut/soa/bodies:300000/steps:200", 3, barnes_hut_static, std::uint64_t{300000}, 200u);
  // Structure's whole default run, DynaSOAr's (1,500,000 nodes, 500 steps).
  add_benchmark("structure/shoal/nodes:1500000/steps:500", 1, structure_app, std::uint64_t{1500000}, 500u);
  add_benchmark("structure/soa/nodes:1500000/steps:500", 1, structure_static, std::uint64_t{1500000}, 500u);
#endif
}

}  // namespace shoal::bench

int main(int argc, char** argv) {
  using namespace shoal::bench;
  return run_benchmarks(argc, argv, default_flags{}, register_apps_benchmarks);
}
