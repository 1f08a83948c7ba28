// Property test of every app's command line, run in-process through the apps' own parsers
// (sim::parse_model_command_line on apps/*/<app>_app.hpp): thousands of generated argument lists
// (the app's flags and the shared ones, unknown flags, values that are negative, huge, not
// numbers, empty, unicode, invalid UTF-8, checkpoint files that are valid, foreign, damaged or
// missing). Every list must end in "run" (-1), --help (0) or a usage error (2) with exactly one
// line "<app>: error: ..." on stderr; nothing may throw or crash (the test also runs under
// ASan/UBSan and TSan).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/stat.h>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>  // the option table behind sim::command_line, read by type

#include "collision/collision_app.hpp"
#include "game_of_life/game_of_life_app.hpp"
#include "barnes_hut/barnes_hut_app.hpp"
#include "nbody/nbody_app.hpp"
#include "structure/structure_app.hpp"
#include "sugarscape/sugarscape_app.hpp"
#include "test_support.hpp"
#include "traffic/traffic_app.hpp"
#include "wator/wator_app.hpp"

namespace shoal::test {
namespace {

namespace fs = std::filesystem;

/// One app's parser: makes a fresh app_cli and parses argv with the app's own function. `into`,
/// when given, keeps the app_cli for the caller to read its option table afterwards.
struct app_parser {
  std::string name;
  std::vector<std::string> flags;  ///< the app's own flags
  std::function<int(int, const char* const*, std::unique_ptr<sim::app_cli>* into)> parse_keeping;
  int parse(int argc, const char* const* argv) const { return parse_keeping(argc, argv, nullptr); }
};

/// The parser of App's program: an app_cli made as sim::run_model makes it, and
/// sim::parse_model_command_line.
template <class App>
app_parser parser_of(std::vector<std::string> flags) {
  return {App::name, std::move(flags), [](int argc, const char* const* argv, std::unique_ptr<sim::app_cli>* into) {
            auto cli = std::make_unique<sim::app_cli>(App::name, App::description, sim::model_defaults<App>());
            typename App::flags f;
            const int rc = sim::parse_model_command_line<App>(*cli, f, argc, argv);
            if (into != nullptr) *into = std::move(cli);
            return rc;
          }};
}

std::vector<app_parser> apps() {
  return {
      parser_of<barnes_hut::app>({"--bodies", "--dt", "--gravity", "--damping", "--max-mass", "--theta"}),
      parser_of<wator::app>({"--width", "--height"}),
      parser_of<traffic::app>({"--intersections", "--cell-length", "--producer-ratio", "--target-ratio",
                               "--car-probability", "--slow-probability", "--light-period", "--max-speed"}),
      parser_of<nbody::app>({"--bodies", "--dt", "--softening", "--gravity", "--max-mass", "--max-speed"}),
      parser_of<collision::app>(
          {"--bodies", "--dt", "--merge-radius", "--damping", "--gravity", "--max-mass", "--max-speed"}),
      parser_of<sugarscape::app>({"--width", "--height", "--male-probability", "--female-probability",
                                  "--max-vision", "--max-age", "--max-endowment", "--max-metabolism",
                                  "--sugar-capacity", "--max-grow-rate", "--max-diffusion", "--min-mating-age",
                                  "--max-children"}),
      parser_of<game_of_life::app>({"--width", "--height", "--variant", "--density", "--gliders", "--pattern"}),
      parser_of<structure::app>({"--nodes", "--iterations", "--dt", "--damping", "--max-force", "--spring-min",
                                 "--spring-max", "--mass", "--pull-speed", "--margin", "--pull-share",
                                 "--anchor-share", "--spring-fill"}),
  };
}

const std::vector<std::string> shared_flags = {"--steps", "--seed", "--heap-mb", "--csv", "--csv-every",
                                               "--frames", "--frame-every", "--frame-size", "--overlay", "--window",
                                               "--screenshot-at", "--quiet", "--timing",
                                               "--checkpoint", "--checkpoint-every", "--resume", "--help", "-h"};
const std::vector<std::string> odd_flags = {"--bogus", "-x", "--", "-", "---steps", "--STEPS", "--steps=",
                                            "positional", "--width=--height", "--help-all"};

/// Values that have broken parsers before: signs, overflow, exponents, hex, whitespace, empty,
/// unicode and invalid UTF-8, and very long strings.
std::vector<std::string> odd_values() {
  return {"0", "1", "2", "3", "7", "40", "100", "1000", "65536", "65537", "1048576", "16777216", "-1", "-5", "-0",
          "+5", "18446744073709551615", "18446744073709551616", "99999999999999999999999999", "9223372036854775808",
          "4294967296", "1e3", "1e-3", "1e400", "-1e400", "0x10", "010", "0.5", "0.02", "1.0", "1.5", "-0.1", ".5",
          "5.", "nan", "NaN", "inf", "-inf", "", " ", " 5", "5 ", "5\t", "abc", "12abc", "1,5", "1_000",
          "\xc3\xbc\xc3\xb1\xc3\xaf\xc3\xa7\xc3\xb8\xd0\xb4\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xff\xfe\xfd",
          "\xf0\x9f\x90\x9f", std::string(1000, '9'), std::string(300, 'a'), "true", "false", "yes"};
}

struct fixture_files {
  fs::path dir;
  std::vector<std::string> resume_files;  ///< this app's valid, foreign, damaged and missing
  std::vector<std::string> pattern_files;  ///< PGM images: valid, all white, damaged, missing
};

/// Small valid checkpoints of each app's run section (no heap: parse only reads those), one
/// damaged, one missing path.
fixture_files make_files(const std::vector<app_parser>& list) {
  fixture_files f;
  f.dir = fs::temp_directory_path() / ("shoal_cli_fuzz_" + std::to_string(::getpid()));
  fs::create_directories(f.dir);
  for (const auto& a : list) {
    const std::string path = (f.dir / (a.name + ".ckpt")).string();
    sim::write_checkpoint(path, a.name, 10, 1, [&](checkpoint::writer& w) {
      if (a.name == "barnes_hut") w.value("barnes_hut.model", barnes_hut::model_flags{300, {}, 0});
      if (a.name == "wator") w.value("wator.grid", wator::grid_size{40, 30});
      if (a.name == "traffic") w.value("traffic.model", traffic::saved_model{60, 5, 10, 0.005, 0.02, 0.003, 0.02, 0.2});
      if (a.name == "nbody") w.value("nbody.model", nbody::model_flags{300, {}, 0});
      if (a.name == "sugarscape") {
        sugarscape::model_flags m;
        m.width = 40, m.height = 30;
        w.value("sugarscape.model", m);
      }
      if (a.name == "collision") w.value("collision.model", collision::model_flags{300, {}});
      if (a.name == "structure") w.value("structure.model", structure::model_flags{300, {}});
      if (a.name == "game_of_life") {
        game_of_life::model_flags m;
        m.width = 40, m.height = 30;
        w.value("game_of_life.model", m);
      }
    });
    f.resume_files.push_back(path);
  }
  const std::string damaged = (f.dir / "damaged.ckpt").string();
  fs::copy_file(f.resume_files[0], damaged);
  fs::resize_file(damaged, fs::file_size(damaged) - 5);
  f.resume_files.push_back(damaged);
  f.resume_files.push_back((f.dir / "missing.ckpt").string());
  f.resume_files.push_back(f.dir.string());  // a directory
  const std::pair<const char*, const char*> images[] = {
      {"glider.pgm", "P2\n# a glider\n5 5\n255\n255 0 255 255 255\n255 255 0 255 255\n0 0 0 255 255\n"
                     "255 255 255 255 255\n255 255 255 255 255\n"},
      {"white.pgm", "P2\n2 2\n255\n255 255 255 255\n"},
      {"short.pgm", "P2\n5 5\n255\n0 0 0\n"},
      {"huge.pgm", "P2\n99999 99999\n255\n0\n"},
      {"not_pgm.pgm", "P6\n1 1 255\n\x01\x02\x03"}};
  for (const auto& [name, bytes] : images) {
    const std::string path = (f.dir / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    f.pattern_files.push_back(path);
  }
  f.pattern_files.push_back((f.dir / "missing.pgm").string());
  return f;
}

/// A random argument list for `app`.
std::vector<std::string> generate(std::mt19937_64& rng, const app_parser& app, const fixture_files& files) {
  static const std::vector<std::string> values = odd_values();
  auto pick = [&](const auto& v) -> const std::string& { return v[rng() % v.size()]; };
  std::vector<std::string> args;
  const int n = static_cast<int>(rng() % 7);
  for (int i = 0; i < n; ++i) {
    const int kind = static_cast<int>(rng() % 10);
    const std::string flag = kind < 4 ? pick(app.flags) : kind < 8 ? pick(shared_flags) : pick(odd_flags);
    std::string value;
    if (flag == "--resume") value = pick(files.resume_files);
    else if (flag == "--pattern") value = pick(files.pattern_files);
    else if (flag == "--csv" || flag == "--checkpoint" || flag == "--frames") value = (files.dir / "out").string();
    if (rng() % 3 == 0 || value.empty()) value = pick(values);
    switch (rng() % 4) {
      case 0: args.push_back(flag); break;  // no value (a flag, or a missing value)
      case 1: args.push_back(flag + "=" + value); break;
      default: args.push_back(flag); args.push_back(value); break;
    }
  }
  return args;
}

TEST(CliFuzz, EveryAppsParserEndsInRunHelpOrOneErrorLine) {
  const auto list = apps();
  const fixture_files files = make_files(list);
  // A parse that succeeds creates the --frames directory, whatever token ended up its value:
  // run in the fixture's directory, which the test removes, not wherever ctest started it.
  struct in_directory {
    fs::path previous = fs::current_path();
    explicit in_directory(const fs::path& d) { fs::current_path(d); }
    ~in_directory() { fs::current_path(previous); }
  } const cwd(files.dir);
  std::mt19937_64 rng(20261122);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  constexpr int per_app = 500;  // each parse (and its captured output) is many times slower there
#else
  constexpr int per_app = 1500;
#endif
  std::uint64_t runs = 0, helps = 0, errors = 0;
  for (const auto& app : list) {
    for (int i = 0; i < per_app; ++i) {
      const std::vector<std::string> args = generate(rng, app, files);
      std::vector<const char*> argv{app.name.c_str()};
      for (const auto& a : args) argv.push_back(a.c_str());
      std::string shown;
      for (const auto& a : args) shown += "'" + a + "' ";
      testing::internal::CaptureStdout();
      testing::internal::CaptureStderr();
      int rc = -3;
      try {
        rc = app.parse(static_cast<int>(argv.size()), argv.data());
      } catch (const std::exception& e) {
        rc = -4;
        shown += std::string("threw: ") + e.what();
      }
      const std::string out = testing::internal::GetCapturedStdout();
      const std::string err = testing::internal::GetCapturedStderr();
      ASSERT_TRUE(rc == -1 || rc == 0 || rc == 2) << app.name << " " << shown << " -> " << rc;
      if (rc == 2) {
        ++errors;
        ASSERT_EQ(err.rfind(app.name + ": error: ", 0), 0u) << shown << err;
        ASSERT_EQ(err.find('\n'), err.size() - 1) << "one line: " << shown << err;
        ASSERT_EQ(out, "") << shown;
      } else {
        ASSERT_EQ(err, "") << shown;
        if (rc == 0) {
          ++helps;
          ASSERT_NE(out.find("--steps"), std::string::npos) << shown;
        } else {
          ++runs;
        }
      }
    }
  }
  // The generator must reach all three outcomes, or it tests less than it claims.
  EXPECT_GT(runs, 50u);
  EXPECT_GT(helps, 10u);
  EXPECT_GT(errors, 1000u);
  RecordProperty("argument_lists", static_cast<int>(runs + helps + errors));
  std::printf("cli fuzz: %llu argument lists: %llu run, %llu help, %llu usage errors\n",
              static_cast<unsigned long long>(runs + helps + errors), static_cast<unsigned long long>(runs),
              static_cast<unsigned long long>(helps), static_cast<unsigned long long>(errors));
  fs::current_path(cwd.previous);
  fs::remove_all(files.dir);
}

/// Values every option of its kind must refuse, by what its CLI11 type says (UINT, FLOAT, TEXT
/// with a list of choices, or the FILE / DIR / WxH names app_cli gives); "" when the kind is
/// unknown: a new kind of flag must be given its bad values here.
std::vector<std::string> bad_values_for(const CLI::Option& opt, const fs::path& dir) {
  const std::string type = opt.get_type_name();
  const std::string d = dir.string();
  auto starts = [&](const char* prefix) { return type.rfind(prefix, 0) == 0; };
  if (opt.get_name() == "--resume")
    return {"", d, d + "/missing.ckpt", d + "/damaged.ckpt", d + "/fifo", "/dev/null"};
  if (starts("FILE"))
    return {"", d, "/dev/null", d + "/fifo", d + "/read-only", d + "/no-dir/x", "/proc/shoal-x", d + "/dangling"};
  if (starts("DIR")) return {"", d + "/read-only", "/proc", "/proc/shoal-x", "/dev/null"};
  if (starts("WxH")) return {"", "abc", "0x0", "16x", "x16", "99999x16", "16x16x16", "-16x16"};
  if (starts("TEXT:{")) return {"", "abc", "\xff\xfe", "FULL"};
  if (starts("UINT") || starts("INT") || starts("FLOAT"))
    return {"", "-1", "abc", "1e400", "-1e400", "99999999999999999999999", "nan", "inf", "0x10", " 5", "5 ", "\xff", "1,5"};
  return {};
}

/// What a directory holds: names, kinds and contents (to see that nothing changed).
std::string listing(const fs::path& dir) {
  std::vector<std::string> lines;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string line = e.path().string() + " " + std::to_string(static_cast<int>(e.symlink_status().type()));
    if (e.is_regular_file() && !e.is_symlink()) {
      std::ifstream f(e.path(), std::ios::binary);
      std::stringstream text;
      text << f.rdbuf();
      line += " " + text.str();
    }
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

TEST(CliFuzz, EveryFlagOfEveryAppRefusesItsBadValuesNamingTheFlag) {
  const auto list = apps();
  fixture_files files = make_files(list);
  // Files in the way of outputs, all inside the test's directory (plus /dev/null and /proc).
  ::mkfifo((files.dir / "fifo").c_str(), 0644);
  std::ofstream(files.dir / "read-only") << "keep\n";
  fs::permissions(files.dir / "read-only", fs::perms::owner_read);
  fs::create_symlink("nowhere", files.dir / "dangling");
  struct in_directory {
    fs::path previous = fs::current_path();
    explicit in_directory(const fs::path& d) { fs::current_path(d); }
    ~in_directory() { fs::current_path(previous); }
  } const cwd(files.dir);
  const std::string before = listing(files.dir);
  int cases = 0;
  for (const auto& app : list) {
    // The app's flag table: every option its parser registers, the shared ones included.
    std::unique_ptr<sim::app_cli> table;
    const char* help[] = {app.name.c_str(), "--help"};
    testing::internal::CaptureStdout();
    ASSERT_EQ(app.parse_keeping(2, help, &table), 0);
    testing::internal::GetCapturedStdout();
    for (const CLI::Option* opt : table->app().cli11().get_options()) {
      // --help, --window, --quiet, --timing: flags without a value (CLI11 gives them no type).
      if (opt->get_type_size_max() == 0 || opt->get_type_name().empty()) continue;
      const std::string flag = opt->get_name();
      const std::vector<std::string> bad = bad_values_for(*opt, files.dir);
      ASSERT_FALSE(bad.empty()) << app.name << " " << flag << " is of a kind without bad values here: " << opt->get_type_name();
      for (const std::string& value : bad) {
        const char* argv[] = {app.name.c_str(), flag.c_str(), value.c_str()};
        testing::internal::CaptureStdout();
        testing::internal::CaptureStderr();
        int rc = -3;
        try {
          rc = app.parse(3, argv);
        } catch (const std::exception& e) {
          ADD_FAILURE() << app.name << " " << flag << " '" << value << "' threw " << e.what();
        }
        const std::string out = testing::internal::GetCapturedStdout();
        const std::string err = testing::internal::GetCapturedStderr();
        ++cases;
        EXPECT_EQ(rc, 2) << app.name << " " << flag << " '" << value << "': " << err;
        EXPECT_EQ(err.rfind(app.name + ": error: ", 0), 0u) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one line: " << err;
        EXPECT_NE(err.find(flag), std::string::npos) << app.name << " " << flag << " '" << value << "': the message must name the flag: " << err;
        EXPECT_EQ(out, "");
      }
    }
  }
  EXPECT_EQ(listing(files.dir), before) << "a refused command line changed a file";
  struct stat null_status {};
  ASSERT_EQ(::stat("/dev/null", &null_status), 0);
  EXPECT_TRUE(S_ISCHR(null_status.st_mode)) << "/dev/null is no longer a character device";
  std::printf("cli flag table fuzz: %d bad values over every flag of %zu apps, each refused naming its flag\n", cases,
              list.size());
  fs::current_path(cwd.previous);
  fs::remove_all(files.dir);
}

}  // namespace
}  // namespace shoal::test
