// Checkpoints are untrusted input: for each app (Wa-Tor, traffic, n-body, collision, ...), thousands of
// copies of a valid checkpoint with random byte edits in one of its sections (every section,
// headers included), the two checksums recomputed so that the edit reaches the parsers and checks
// behind them, resumed in-process through the app's own code: its command-line parser with --resume
// (apps/<app>/<app>_app.hpp, whose check() adopts the saved flags through the flags' own
// checks) and its resume function (the one main.cpp calls). Each case must end in a clear refusal (status 2 and one
// line, or one checkpoint_error line) or in a resumed run that then steps with a consistent heap;
// never a crash, hang or sanitizer report (the test runs under ASan/UBSan and TSan too).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "collision/collision_app.hpp"
#include "collision/collision_resume.hpp"
#include "game_of_life/game_of_life_app.hpp"
#include "barnes_hut/barnes_hut_app.hpp"
#include "barnes_hut/barnes_hut_resume.hpp"
#include "nbody/nbody_app.hpp"
#include "structure/structure_app.hpp"
#include "nbody/nbody_resume.hpp"
#include "shoal/checkpoint/crc32c.hpp"
#include "shoal/sim/sim.hpp"
#include "sugarscape/sugarscape_app.hpp"
#include "sugarscape/sugarscape_resume.hpp"
#include "test_support.hpp"
#include "traffic/traffic_app.hpp"
#include "traffic/traffic_model.hpp"
#include "wator/wator_app.hpp"
#include "wator/wator_resume.hpp"

namespace shoal::test {
namespace {

namespace fs = std::filesystem;
using bytes = std::vector<std::byte>;

/// Where each part of a checkpoint file lies: the header, each section (its own header, name
/// and payload), the trailer.
std::vector<std::pair<std::size_t, std::size_t>> parts_of(const bytes& f) {
  std::vector<std::pair<std::size_t, std::size_t>> parts{{0, checkpoint::header_bytes}};
  std::uint32_t sections = 0;
  std::memcpy(&sections, f.data() + 24, 4);
  std::size_t at = checkpoint::header_bytes;
  for (std::uint32_t i = 0; i < sections; ++i) {
    std::uint64_t payload = 0;
    std::uint32_t name = 0;
    std::memcpy(&payload, f.data() + at + 8, 8);
    std::memcpy(&name, f.data() + at + 16, 4);
    auto pad = [](std::size_t n) { return (n + 7) / 8 * 8; };
    const std::size_t end = pad(pad(at + 20 + name) + payload);
    parts.emplace_back(at, end - at);
    at = end;
  }
  parts.emplace_back(at, checkpoint::trailer_bytes);
  return parts;
}

void reseal(bytes& f) {
  const std::uint32_t head = checkpoint::crc32c(std::span(f).first(28));
  std::memcpy(f.data() + 28, &head, 4);
  const std::uint32_t all = checkpoint::crc32c(std::span(f).first(f.size() - 8));
  std::memcpy(f.data() + f.size() - 8, &all, 4);
}

/// 1 to 4 edits inside one part: random bytes, bit flips, or an interesting integer at an
/// aligned offset (counts, indices, pointers, float bit patterns).
void mutate(std::mt19937_64& rng, bytes& f, const std::vector<std::pair<std::size_t, std::size_t>>& parts) {
  const auto [from, size] = parts[rng() % parts.size()];
  auto at = [&, from = from, size = size] { return from + rng() % size; };
  for (int e = 1 + static_cast<int>(rng() % 4); e > 0; --e) {
    switch (rng() % 4) {
      case 0: f[at()] = std::byte{static_cast<unsigned char>(rng())}; break;
      case 1: f[at()] ^= std::byte{static_cast<unsigned char>(1u << (rng() % 8))}; break;
      default: {
        static constexpr std::uint64_t values[] = {0, 1, 2, 3, 63, 64, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
                                                   0x7FC00000 /* NaN */, 0x7F800000 /* inf */, 0x100000000, ~0ull,
                                                   1ull << 40, 0x7FF8000000000000ull};
        const std::uint64_t v = values[rng() % std::size(values)];
        const std::size_t width = rng() % 2 ? 4 : 8;
        const std::size_t p = at() / width * width;
        if (p >= from && p + width <= f.size()) std::memcpy(f.data() + p, &v, width);
      }
    }
  }
}

bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}
void write_file(const fs::path& p, const bytes& b) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

/// How one case ended.
struct outcome {
  bool resumed = false;
  std::string message;  ///< the refusal's text (must be one line)
};

/// One app: writes a valid checkpoint after `saved_step` steps of a small run, and resumes a
/// file through the app's own parser and resume code, then takes the remaining steps.
struct app_harness {
  std::string name;
  std::function<void(const std::string& path)> write_good;
  std::function<outcome(const std::string& path)> resume_and_step;
};

constexpr std::uint64_t saved_step = 4, final_step = 6;

/// Runs the app's parser on `args`; nullopt to go on, else the refusal.
template <class Parse>
std::optional<outcome> parse_or_refuse(const std::string& app, std::vector<std::string> args, Parse&& parse) {
  std::vector<const char*> argv{app.c_str()};
  for (const auto& a : args) argv.push_back(a.c_str());
  testing::internal::CaptureStderr();
  const int rc = parse(static_cast<int>(argv.size()), argv.data());
  const std::string err = testing::internal::GetCapturedStderr();
  if (rc < 0) {
    EXPECT_EQ(err, "");
    return std::nullopt;
  }
  EXPECT_EQ(rc, 2) << err;
  EXPECT_EQ(err.rfind(app + ": error: ", 0), 0u) << err;
  return outcome{false, err.substr(0, err.size() - 1)};
}

std::vector<std::string> run_args(const std::string& path, const std::string& heap_mb) {
  return {"--resume", path, "--steps", std::to_string(final_step), "--heap-mb", heap_mb, "--quiet"};
}

app_harness wator_harness() {
  struct state {
    std::optional<runtime<wator::Ocean>> rt;
    sim::phase_timer timer{false};
  };
  auto s = std::make_shared<state>();
  s->rt.emplace(std::size_t{2} << 20);
  app_harness h;
  h.name = "wator";
  h.write_good = [s](const std::string& path) {
    wator::grid_size size{16, 12};
    wator::ocean sea(16, 12, 7);
    auto& rt = *s->rt;
    rt.clear();
    wator::populate(rt, sea.view());
    for (std::uint32_t step = 1; step <= saved_step; ++step) wator::step(rt, sea.view(), step, s->timer);
    sim::write_checkpoint(path, "wator", saved_step, 7,
                          [&](checkpoint::writer& w) { wator::save_state(w, rt, sea.view(), size); });
  };
  h.resume_and_step = [s](const std::string& path) -> outcome {
    sim::app_cli cli(wator::app::name, wator::app::description, sim::model_defaults<wator::app>());
    wator::grid_size size;
    if (auto r = parse_or_refuse("wator", run_args(path, "2"),
                                 [&](int argc, const char* const* argv) { return sim::parse_model_command_line<wator::app>(cli, size, argc, argv); }))
      return *r;
    auto& rt = *s->rt;
    wator::ocean sea(static_cast<std::uint32_t>(size.width), static_cast<std::uint32_t>(size.height), cli.options().seed);
    try {
      wator::resume(rt, sea.view(), size, *cli.resume());
    } catch (const checkpoint_error& e) {
      return {false, e.what()};
    }
    for (std::uint64_t step = cli.resume_step() + 1; step <= final_step; ++step)
      wator::step(rt, sea.view(), static_cast<std::uint32_t>(step), s->timer);
    rt.synchronize();
    EXPECT_EQ(rt.verify(), "");
    EXPECT_EQ(wator::check_consistency(rt, sea.view()).misplaced, 0u);
    return {true, ""};
  };
  return h;
}

app_harness traffic_harness() {
  // The saved flags' simulation is built once; a case whose edited flags still pass gets a
  // network and simulation of its own, built for it (as the app would) and dropped after it.
  struct network_and_simulation {
    traffic::network net;
    std::optional<traffic::simulation> sim;
    traffic::saved_model flags{};
  };
  struct state {
    std::optional<network_and_simulation> good, other;
  };
  auto s = std::make_shared<state>();
  auto simulation_for = [s](const traffic::options& o, std::uint64_t heap_mb) -> network_and_simulation& {
    const traffic::saved_model m = traffic::saved_model_of(o);
    std::optional<network_and_simulation>& slot =
        !s->good || std::memcmp(&m, &s->good->flags, sizeof m) == 0 ? s->good : s->other;
    if (!slot || std::memcmp(&m, &slot->flags, sizeof m) != 0) {
      slot.reset();
      slot.emplace();
      slot->net = traffic::generate(o.network);
      slot->sim.emplace(slot->net, o.model, heap_mb << 20);
      slot->flags = m;
    }
    return *slot;
  };
  app_harness h;
  h.name = "traffic";
  h.write_good = [=](const std::string& path) {
    sim::app_cli cli(traffic::app::name, traffic::app::description, sim::model_defaults<traffic::app>());
    traffic::options o;
    const char* argv[] = {"traffic", "--intersections", "40", "--car-probability", "0.5"};
    ASSERT_EQ(sim::parse_model_command_line<traffic::app>(cli, o, 5, argv), -1);
    traffic::simulation& model = *simulation_for(o, 4).sim;
    for (std::uint64_t step = 1; step <= saved_step; ++step) {
      model.produce();
      model.plan();
      model.move();
      model.finish_step();
    }
    sim::write_checkpoint(path, "traffic", saved_step, cli.options().seed, [&](checkpoint::writer& w) {
      w.value("traffic.model", traffic::saved_model_of(o));
      model.save(w);
    });
    s->good.reset();  // the fuzz cases start from a fresh simulation
  };
  h.resume_and_step = [=](const std::string& path) -> outcome {
    sim::app_cli cli(traffic::app::name, traffic::app::description, sim::model_defaults<traffic::app>());
    traffic::options o;
    if (auto r = parse_or_refuse("traffic", run_args(path, "4"),
                                 [&](int argc, const char* const* argv) { return sim::parse_model_command_line<traffic::app>(cli, o, argc, argv); }))
      return *r;
    network_and_simulation* built = nullptr;
    try {
      built = &simulation_for(o, 4);
    } catch (const std::invalid_argument& e) {  // the program: the network cannot be built (status 2)
      return {false, e.what()};
    }
    traffic::simulation* model = &*built->sim;
    const std::uint64_t need = traffic::heap_bytes_needed(built->net.cells());
    if ((std::uint64_t{4} << 20) < need) return {false, "--heap-mb too small for the saved network"};
    try {
      model->load(*cli.resume());
    } catch (const checkpoint_error& e) {
      return {false, e.what()};
    }
    for (std::uint64_t step = cli.resume_step() + 1; step <= final_step; ++step) {
      model->produce();
      model->plan();
      model->move();
      model->finish_step();
    }
    (void)model->census();
    EXPECT_EQ(model->runtime().verify(), "");
    return {true, ""};
  };
  return h;
}

app_harness nbody_harness() {
  struct state {
    std::optional<runtime<nbody::Space>> rt;
    sim::phase_timer timer{false};
  };
  auto s = std::make_shared<state>();
  s->rt.emplace(std::size_t{2} << 20);
  app_harness h;
  h.name = "nbody";
  h.write_good = [s](const std::string& path) {
    nbody::model_flags m;
    m.bodies = 100;
    auto& rt = *s->rt;
    rt.clear();
    nbody::populate(rt, m.bodies, 3, m.p);
    for (std::uint64_t step = 1; step <= saved_step; ++step) nbody::step(rt, m.p, s->timer);
    sim::write_checkpoint(path, "nbody", saved_step, 3, [&](checkpoint::writer& w) { nbody::save_state(w, rt, m); });
  };
  h.resume_and_step = [s](const std::string& path) -> outcome {
    sim::app_cli cli(nbody::app::name, nbody::app::description, sim::model_defaults<nbody::app>());
    nbody::model_flags m;
    if (auto r = parse_or_refuse("nbody", run_args(path, "2"),
                                 [&](int argc, const char* const* argv) { return sim::parse_model_command_line<nbody::app>(cli, m, argc, argv); }))
      return *r;
    auto& rt = *s->rt;
    try {
      nbody::resume(rt, m, *cli.resume(), m.bodies);
    } catch (const checkpoint_error& e) {
      return {false, e.what()};
    }
    for (std::uint64_t step = cli.resume_step() + 1; step <= final_step; ++step) nbody::step(rt, m.p, s->timer);
    rt.synchronize();
    EXPECT_EQ(rt.verify(), "");
    return {true, ""};
  };
  return h;
}

app_harness collision_harness() {
  struct state {
    std::optional<runtime<collision::Space>> rt;
    sim::phase_timer timer{false};
  };
  auto s = std::make_shared<state>();
  s->rt.emplace(std::size_t{2} << 20);
  app_harness h;
  h.name = "collision";
  h.write_good = [s](const std::string& path) {
    collision::model_flags m;
    m.bodies = 100;
    m.p.merge_radius = 0.1f;  // merges before the checkpoint
    auto& rt = *s->rt;
    rt.clear();
    collision::populate(rt, m.bodies, 3, m.p);
    for (std::uint64_t step = 1; step <= saved_step; ++step) collision::step(rt, m.p, s->timer);
    sim::write_checkpoint(path, "collision", saved_step, 3,
                          [&](checkpoint::writer& w) { collision::save_state(w, rt, m); });
  };
  h.resume_and_step = [s](const std::string& path) -> outcome {
    sim::app_cli cli(collision::app::name, collision::app::description, sim::model_defaults<collision::app>());
    collision::model_flags m;
    if (auto r = parse_or_refuse("collision", run_args(path, "2"), [&](int argc, const char* const* argv) {
          return sim::parse_model_command_line<collision::app>(cli, m, argc, argv);
        }))
      return *r;
    auto& rt = *s->rt;
    try {
      collision::resume(rt, m, *cli.resume());
    } catch (const checkpoint_error& e) {
      return {false, e.what()};
    }
    for (std::uint64_t step = cli.resume_step() + 1; step <= final_step; ++step) collision::step(rt, m.p, s->timer);
    rt.synchronize();
    EXPECT_EQ(rt.verify(), "");
    return {true, ""};
  };
  return h;
}

app_harness barnes_hut_harness() {
  struct state {
    std::optional<runtime<barnes_hut::Space>> rt;
    sim::phase_timer timer{false};
  };
  auto s = std::make_shared<state>();
  s->rt.emplace(std::size_t{2} << 20);
  app_harness h;
  h.name = "barnes_hut";
  h.write_good = [s](const std::string& path) {
    barnes_hut::model_flags m;
    m.bodies = 100;
    m.p.gravity = 1e-6f;  // the bodies move before the checkpoint
    auto& rt = *s->rt;
    rt.clear();
    barnes_hut::quadtree tree(m.bodies);
    barnes_hut::populate(rt, m.bodies, 3, m.p);
    for (std::uint64_t step = 1; step <= saved_step; ++step) barnes_hut::step(rt, tree, m.p, s->timer);
    sim::write_checkpoint(path, "barnes_hut", saved_step, 3,
                          [&](checkpoint::writer& w) { barnes_hut::save_state(w, rt, tree, m); });
  };
  h.resume_and_step = [s](const std::string& path) -> outcome {
    sim::app_cli cli(barnes_hut::app::name, barnes_hut::app::description, sim::model_defaults<barnes_hut::app>());
    barnes_hut::model_flags m;
    if (auto r = parse_or_refuse("barnes_hut", run_args(path, "2"), [&](int argc, const char* const* argv) {
          return sim::parse_model_command_line<barnes_hut::app>(cli, m, argc, argv);
        }))
      return *r;
    auto& rt = *s->rt;
    try {
      barnes_hut::resume(rt, m, *cli.resume());
    } catch (const checkpoint_error& e) {
      return {false, e.what()};
    }
    barnes_hut::quadtree tree(m.bodies);
    for (std::uint64_t step = cli.resume_step() + 1; step <= final_step; ++step) barnes_hut::step(rt, tree, m.p, s->timer);
    rt.synchronize();
    EXPECT_EQ(rt.verify(), "");
    return {true, ""};
  };
  return h;
}

app_harness sugarscape_harness() {
  struct state {
    std::optional<runtime<sugarscape::Scape>> rt;
    sim::phase_timer timer{false};
  };
  auto s = std::make_shared<state>();
  s->rt.emplace(std::size_t{2} << 20);
  app_harness h;
  h.name = "sugarscape";
  h.write_good = [s](const std::string& path) {
    sugarscape::model_flags f;
    f.width = 16, f.height = 12;
    sugarscape::scape scape(f, 7);
    auto& rt = *s->rt;
    rt.clear();
    sugarscape::populate(rt, scape.view(), f);
    for (std::uint32_t step = 1; step <= saved_step; ++step) sugarscape::step(rt, scape.view(), step, s->timer);
    sim::write_checkpoint(path, "sugarscape", saved_step, 7,
                          [&](checkpoint::writer& w) { sugarscape::save_state(w, rt, scape.view(), f); });
  };
  h.resume_and_step = [s](const std::string& path) -> outcome {
    sim::app_cli cli(sugarscape::app::name, sugarscape::app::description, sim::model_defaults<sugarscape::app>());
    sugarscape::model_flags f;
    if (auto r = parse_or_refuse("sugarscape", run_args(path, "2"), [&](int argc, const char* const* argv) {
          return sim::parse_model_command_line<sugarscape::app>(cli, f, argc, argv);
        }))
      return *r;
    auto& rt = *s->rt;
    sugarscape::scape scape(f, cli.options().seed);
    try {
      sugarscape::resume(rt, scape.view(), f, *cli.resume());
    } catch (const checkpoint_error& e) {
      return {false, e.what()};
    }
    for (std::uint64_t step = cli.resume_step() + 1; step <= final_step; ++step)
      sugarscape::step(rt, scape.view(), static_cast<std::uint32_t>(step), s->timer);
    rt.synchronize();
    EXPECT_EQ(rt.verify(), "");
    const sugarscape::consistency c = sugarscape::check_consistency(rt, scape.view());
    EXPECT_EQ(c.misplaced, 0u);
    EXPECT_EQ(c.courting, 0u);
    return {true, ""};
  };
  return h;
}

/// A good checkpoint of an app, through the app class itself: its populate, steps and save (seed 7).
template <class App>
void write_app_checkpoint(const std::string& path, const typename App::flags& f) {
  sim::run_options o = App::defaults;
  o.heap_mb = 2, o.seed = 7;
  App a(f, o);
  sim::phase_timer timer(false);
  a.populate();
  for (std::uint32_t step = 1; step <= saved_step; ++step) a.step(step, timer);
  a.runtime().synchronize();
  sim::write_checkpoint(path, App::name, saved_step, 7, [&](checkpoint::writer& w) { a.save(w); });
}

/// An edited checkpoint through the app class itself: its command line with --resume, its
/// resume, its steps; then the heap's invariants and `check(app)`.
template <class App, class Check>
outcome resume_app_and_step(const std::string& path, Check&& check) {
  sim::app_cli cli(App::name, App::description, sim::model_defaults<App>());
  typename App::flags f;
  if (auto r = parse_or_refuse(App::name, run_args(path, "2"), [&](int argc, const char* const* argv) {
        return sim::parse_model_command_line<App>(cli, f, argc, argv);
      }))
    return *r;
  App a(f, cli.options());
  try {
    a.resume(*cli.resume());
  } catch (const checkpoint_error& e) {
    return {false, e.what()};
  }
  sim::phase_timer timer(false);
  for (std::uint64_t step = cli.resume_step() + 1; step <= final_step; ++step) a.step(step, timer);
  a.runtime().synchronize();
  EXPECT_EQ(a.runtime().verify(), "");
  check(a);
  return {true, ""};
}

/// The Game of Life of one variant, through the app class itself (its save, resume and step).
app_harness game_of_life_harness(game_of_life::variant v) {
  app_harness h;
  h.name = "game_of_life";
  h.write_good = [v](const std::string& path) {
    game_of_life::model_flags f;
    f.width = 16, f.height = 12, f.gliders = 1, f.variant = static_cast<std::uint64_t>(v);
    write_app_checkpoint<game_of_life::app>(path, f);
  };
  h.resume_and_step = [](const std::string& path) {
    return resume_app_and_step<game_of_life::app>(path, [](game_of_life::app& a) {
      a.with_world([&](const auto& g) {
        const generation::consistency c = generation::check_consistency(a.runtime(), g);
        EXPECT_EQ(c.misplaced, 0u);
        EXPECT_EQ(c.unwatched, 0u);
        EXPECT_EQ(c.fresh, 0u);
      });
    });
  };
  return h;
}

/// Structure, through the app class itself: a mesh that lost springs and nodes before the
/// checkpoint, so that edits meet the slots of deleted objects and pointers between survivors.
app_harness structure_harness() {
  app_harness h;
  h.name = "structure";
  h.write_good = [](const std::string& path) {
    structure::model_flags f;
    f.nodes = 60, f.p.iterations = 4, f.p.pull_speed = 0.5f;  // springs break before step 4
    write_app_checkpoint<structure::app>(path, f);
  };
  h.resume_and_step = [](const std::string& path) {
    return resume_app_and_step<structure::app>(path, [](structure::app&) {});
  };
  return h;
}

/// Cases per app: 10^4 (3 to 5 s of CPU per app on the release build, 10 to 70 s under
/// ASan/UBSan on the two-core machine); under TSan, which serialises far more, 2000 with the same
/// mix of edits.
#if defined(__SANITIZE_THREAD__)
constexpr int cases_per_app = 2000;
#else
constexpr int cases_per_app = 10000;
#endif

void fuzz(const app_harness& app, std::uint64_t seed) {
  SHOAL_REQUIRE_DEVICE();
  // One worker thread: each case launches a few small do-alls, and waking a pool for each on a
  // loaded two-core machine cost more than the cases themselves (the cases test the checks and
  // the loader, not concurrency; the apps' own tests and the stress tests do that).
  const oversubscribe one_thread(1);
  const fs::path dir = fs::temp_directory_path() / ("shoal_ckpt_fuzz_" + app.name + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string good_path = (dir / "good.ckpt").string(), path = (dir / "case.ckpt").string();
  app.write_good(good_path);
  const bytes good = read_file(good_path);
  const auto parts = parts_of(good);
  // The untouched file resumes.
  write_file(path, good);
  const outcome first = app.resume_and_step(path);
  ASSERT_TRUE(first.resumed) << first.message;

  std::mt19937_64 rng(seed);
  // Divided by SHOAL_TEST_SCALE twice under the sanitizers: each case steps the app, and at
  // 625 cases racecheck took 7.5 to 21.6 s per app (H100, SHOAL_TEST_SCALE=16); the checks run
  // the same code for every case.
  const int cases = static_cast<int>(scaled(scaled(cases_per_app), 200));
  int resumed = 0, refused = 0;
  for (int i = 0; i < cases; ++i) {
    bytes f = good;
    mutate(rng, f, parts);
    reseal(f);
    write_file(path, f);
    const outcome o = app.resume_and_step(path);
    if (o.resumed) {
      ++resumed;
    } else {
      ++refused;
      ASSERT_FALSE(o.message.empty()) << "case " << i;
      ASSERT_EQ(o.message.find('\n'), std::string::npos) << "case " << i << ": " << o.message;
    }
    if (testing::Test::HasFailure()) {
      write_file(dir.parent_path() / ("shoal_failed_" + app.name + ".ckpt"), f);
      FAIL() << app.name << " case " << i << " failed; its file: " << (dir.parent_path() / ("shoal_failed_" + app.name + ".ckpt"));
    }
  }
  std::printf("%s checkpoint fuzz: %d edited files: %d resumed and stepped, %d refused with one line\n",
              app.name.c_str(), cases, resumed, refused);
  EXPECT_GT(refused, cases / 10) << "the edits must reach the checks";
  EXPECT_GT(resumed, 0) << "some edits (free slots, padding-free values in range) must still resume";
  fs::remove_all(dir);
}

TEST(AppCheckpointFuzz, WatorResumesOrRefusesEveryEditedCheckpoint) { fuzz(wator_harness(), 25); }
TEST(AppCheckpointFuzz, TrafficResumesOrRefusesEveryEditedCheckpoint) { fuzz(traffic_harness(), 26); }
TEST(AppCheckpointFuzz, NbodyResumesOrRefusesEveryEditedCheckpoint) { fuzz(nbody_harness(), 27); }
TEST(AppCheckpointFuzz, CollisionResumesOrRefusesEveryEditedCheckpoint) { fuzz(collision_harness(), 28); }

TEST(AppCheckpointFuzz, BarnesHutResumesOrRefusesEveryEditedCheckpoint) { fuzz(barnes_hut_harness(), 31); }
TEST(AppCheckpointFuzz, SugarscapeResumesOrRefusesEveryEditedCheckpoint) { fuzz(sugarscape_harness(), 32); }
TEST(AppCheckpointFuzz, GameOfLifeCellsResumesOrRefusesEveryEditedCheckpoint) {
  fuzz(game_of_life_harness(game_of_life::variant::cells), 33);
}
TEST(AppCheckpointFuzz, GameOfLifeNoCellResumesOrRefusesEveryEditedCheckpoint) {
  fuzz(game_of_life_harness(game_of_life::variant::no_cell), 34);
}
TEST(AppCheckpointFuzz, StructureResumesOrRefusesEveryEditedCheckpoint) { fuzz(structure_harness(), 35); }

}  // namespace
}  // namespace shoal::test
