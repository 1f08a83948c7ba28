// sim::app_cli: defaults, the app's own options, --help with defaults, and every kind of bad
// command line giving exit status 2 with one line on stderr naming the problem.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "shoal/sim/cli.hpp"
#include "test_support.hpp"

namespace shoal::test {

namespace fs = std::filesystem;

struct cli_result {
  int rc;
  std::string out, err;
  sim::run_options run;
  std::uint64_t width;
};

/// Parses `args` with an app that has the shared options plus --width (1..4096, default 64);
/// `features`: what the app implements (all, unless a test says otherwise).
cli_result parse(std::vector<std::string> args, sim::app_features features = sim::app_features::all()) {
  sim::app_cli cli("testapp", "A test app.", {.steps = 500, .heap_mb = 64, .features = features});
  std::uint64_t width = 64;
  cli.app().add_option("--width", width, "grid width")->check(sim::whole_number(1, 4096));
  std::vector<const char*> argv{"testapp"};
  for (const auto& a : args) argv.push_back(a.c_str());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int rc = cli.parse(static_cast<int>(argv.size()), argv.data());
  cli_result r{rc, testing::internal::GetCapturedStdout(), testing::internal::GetCapturedStderr(),
               cli.options(), width};
  return r;
}

TEST(SimCli, DefaultsAreTheAppsAndRunGoesOn) {
  const auto r = parse({});
  EXPECT_EQ(r.rc, -1);
  EXPECT_EQ(r.run.steps, 500u);
  EXPECT_EQ(r.run.heap_mb, 64u);
  EXPECT_EQ(r.run.seed, 1u);
  EXPECT_EQ(r.run.csv, "");
  EXPECT_FALSE(r.run.quiet);
  EXPECT_FALSE(r.run.timing);
  EXPECT_EQ(r.width, 64u);
  EXPECT_EQ(r.out + r.err, "");
}

// An app offers only the flags of what it implements: the others are not in --help, and given
// anyway they are one line naming the flag and why (not a run that silently writes nothing).
TEST(SimCli, FlagsOfFeaturesTheAppLacksAreNotOfferedAndRefused) {
  const sim::app_features none{};
  const auto help = parse({"--help"}, none);
  EXPECT_EQ(help.rc, 0);
  for (const char* flag : {"--checkpoint", "--resume", "--frames", "--frame-every", "--window", "--overlay", "--frame-size"})
    EXPECT_EQ(help.out.find(flag), std::string::npos) << flag;
  EXPECT_NE(help.out.find("--csv"), std::string::npos);
  const struct {
    std::vector<std::string> args;
    sim::app_features features;
    std::string message;
  } cases[] = {
      {{"--checkpoint", "ck"}, none, "testapp: error: --checkpoint: testapp writes no checkpoints"},
      {{"--resume=ck"}, none, "testapp: error: --resume: testapp writes no checkpoints"},
      {{"--frames", "f"}, {.window = true}, "testapp: error: --frames: testapp writes no frames"},
      {{"--window"}, {.checkpoints = true, .frames = true}, "testapp: error: --window: testapp has no window"},
      {{"--overlay", "none"}, none, "testapp: error: --overlay: testapp draws no frames"},
  };
  for (const auto& c : cases) {
    const auto r = parse(c.args, c.features);
    EXPECT_EQ(r.rc, 2) << c.message;
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // Offered where the app implements them.
  EXPECT_EQ(parse({"--overlay", "none", "--window"}, {.window = true}).rc, -1);
}

TEST(SimCli, ParsesSharedAndOwnOptions) {
  const auto r = parse({"--steps", "7", "--seed=18446744073709551615", "--heap-mb", "3", "--csv", "x.csv",
                        "--csv-every", "5", "--quiet", "--timing", "--width", "4096"});
  ASSERT_EQ(r.rc, -1) << r.err;
  EXPECT_EQ(r.run.steps, 7u);
  EXPECT_EQ(r.run.seed, 18446744073709551615ull);
  EXPECT_EQ(r.run.heap_mb, 3u);
  EXPECT_EQ(r.run.csv, "x.csv");
  EXPECT_EQ(r.run.csv_every, 5u);
  EXPECT_TRUE(r.run.quiet);
  EXPECT_TRUE(r.run.timing);
  EXPECT_EQ(r.width, 4096u);
}

TEST(SimCli, HelpListsEveryOptionWithItsDefault) {
  const auto r = parse({"--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "");
  for (const char* flag : {"--steps", "--seed", "--heap-mb", "--csv", "--csv-every", "--frames", "--frame-every",
                           "--window", "--quiet", "--timing", "--width", "--help"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  EXPECT_NE(r.out.find("500"), std::string::npos) << "default of --steps";
  EXPECT_NE(r.out.find("64"), std::string::npos) << "default of --width and --heap-mb";
}

/// A bad command line: status 2, exactly one line on stderr that starts "testapp: error:" and
/// contains `mention`, nothing on stdout.
void expect_usage_error(std::vector<std::string> args, const std::string& mention) {
  const auto r = parse(args);
  std::string shown;
  for (const auto& a : args) shown += a + " ";
  EXPECT_EQ(r.rc, 2) << shown;
  EXPECT_EQ(r.out, "") << shown;
  EXPECT_EQ(r.err.rfind("testapp: error: ", 0), 0u) << shown << "-> " << r.err;
  EXPECT_NE(r.err.find(mention), std::string::npos) << shown << "-> " << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(SimCli, BadValuesAreOneLineErrorsWithStatusTwo) {
  expect_usage_error({"--steps", "-5"}, "-5");
  expect_usage_error({"--steps=-5"}, "-5");
  expect_usage_error({"--steps", "0"}, "--steps");
  expect_usage_error({"--steps", "abc"}, "abc");
  expect_usage_error({"--steps", "1e3"}, "1e3");
  expect_usage_error({"--steps", "12x"}, "12x");
  expect_usage_error({"--steps", "99999999999999999999999"}, "--steps");
  expect_usage_error({"--steps", "2000000000"}, "1..1000000000");
  expect_usage_error({"--heap-mb", "0"}, "--heap-mb");
  expect_usage_error({"--csv-every", "0"}, "--csv-every");
  expect_usage_error({"--seed", "-1"}, "--seed");
  expect_usage_error({"--width", "4097"}, "--width");
  expect_usage_error({"--width", ""}, "--width");
}

TEST(SimCli, UnknownFlagsAndMissingValuesAreErrors) {
  expect_usage_error({"--bogus"}, "--bogus");
  expect_usage_error({"--steps"}, "--steps");
  expect_usage_error({"extra"}, "extra");
  expect_usage_error({"--quiet=maybe"}, "--quiet");
}

TEST(SimCli, ViewerOptionsThatDoNotFitAreErrors) {
  expect_usage_error({"--frame-every", "3"}, "--frame-every");  // without --frames
  expect_usage_error({"--window", "--frame-every", "3"}, "--frames");  // the window shows what it can
  expect_usage_error({"--frame-size", "64x64"}, "--frame-size");
  expect_usage_error({"--screenshot-at", "3"}, "--window");
  expect_usage_error({"--frames", "d", "--frame-every", "0"}, "--frame-every");  // a bad value is still a bad value
  expect_usage_error({"--window", "--frame-size", "8x64"}, "16..16384");
  expect_usage_error({"--window", "--frame-size", "64"}, "WIDTHxHEIGHT");
  expect_usage_error({"--window", "--frame-size", "64x-3"}, "--frame-size");
  expect_usage_error({"--overlay", "some"}, "--overlay");
  // A directory that cannot be made: refused before the run, not when the first frame is due.
  expect_usage_error({"--frames", "/proc/shoal-no-such-dir/frames"}, "--frames");
}

TEST(SimCli, FramesDirectoryIsCreatedAndSizesParsed) {
  const std::string dir = testing::TempDir() + "shoal_cli_frames/a/b";
  std::filesystem::remove_all(testing::TempDir() + "shoal_cli_frames");
  const auto r = parse({"--frames", dir, "--frame-every", "7", "--frame-size", "320x200", "--overlay", "stable"});
  ASSERT_EQ(r.rc, -1) << r.err;
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_EQ(r.run.frames, dir);
  EXPECT_EQ(r.run.frame_every, 7u);
  EXPECT_EQ(r.run.frame_width, 320u);
  EXPECT_EQ(r.run.frame_height, 200u);
  EXPECT_EQ(r.run.overlay, "stable");
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "the write probe is removed";
  std::filesystem::remove_all(testing::TempDir() + "shoal_cli_frames");
}

// Output paths are refused before the run when they cannot work at its end: one new file named
// two ways, a file that standard output already writes to (here gtest's capture file), outputs
// inside the frames directory (which a run replaces), and '-' where only --csv takes it.
TEST(SimCli, OutputPathsThatCannotWorkAreRefusedBeforeTheRun) {
  const fs::path dir = fs::temp_directory_path() / ("shoal_cli_paths_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "frames");
  const std::string f = (dir / "new.csv").string();
  const std::string also_f = (dir / "frames" / ".." / "." / "new.csv").string();
  const struct {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--csv", f, "--checkpoint", also_f}, "name the same file"},
      {{"--csv", "shoal_cli_relative.csv", "--checkpoint", (fs::current_path() / "shoal_cli_relative.csv").string()},
       "name the same file"},
      {{"--csv", "/dev/stdout"}, "is the file that standard output writes to"},
      {{"--frames", (dir / "frames").string(), "--csv", (dir / "frames" / "rows.csv").string()},
       "is in the --frames directory"},
      {{"--frames", (dir / "new_frames/").string(), "--checkpoint", (dir / "new_frames").string()},
       "is in the --frames directory"},
      {{"--checkpoint", "-"}, "'-' (standard output) is for --csv only"},
      {{"--checkpoint", (dir / std::string(250, 'c')).string()}, "bytes; this file system takes"},
      {{"--csv", (dir / std::string(300, 'c')).string()}, "bytes; this file system takes"},
      {{"--frames", (dir / std::string(300, 'f')).string()}, "bytes; this file system takes"},
  };
  for (const auto& c : cases) {
    const auto r = parse(c.args);
    EXPECT_EQ(r.rc, 2) << c.message;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // What is fine: standard output for the rows, a file beside the frames directory whose name
  // starts with the directory's.
  EXPECT_EQ(parse({"--csv", "-"}).rc, -1);
  EXPECT_EQ(parse({"--frames", (dir / "frames").string(), "--csv", (dir / "frames.csv").string()}).rc, -1);
  fs::remove_all(dir);
}

TEST(SimCli, FailReportsOneLineAndReturnsTwo) {
  sim::app_cli cli("testapp", "A test app.", {.features = sim::app_features::all()});
  testing::internal::CaptureStderr();
  const int rc = cli.fail("--width 9 needs more than\n--heap-mb 1");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err, "testapp: error: --width 9 needs more than --heap-mb 1 (see testapp --help)\n");
}

}  // namespace shoal::test
