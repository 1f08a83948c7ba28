// The path and flag checks every app's command line makes before its first step (sim/paths.hpp,
// app_cli): outputs that cannot be written, special files, directories, the same file twice,
// flags that would do nothing, float values that would be stored as 0. Each is status 2 and
// one line naming the flag and the cause, and changes no file.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "shoal/sim/cli.hpp"
#include "test_support.hpp"

namespace shoal::test {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

/// A fresh directory for one test, removed at its end.
struct scratch_dir {
  fs::path dir;
  explicit scratch_dir(const std::string& name)
      : dir(fs::temp_directory_path() / ("shoal_paths_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~scratch_dir() { fs::remove_all(dir); }
  fs::path operator/(const std::string& f) const { return dir / f; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

struct parsed {
  int rc;
  std::string err;
};

parsed parse(std::vector<std::string> args) {
  sim::app_cli cli("testapp", "A test app.", {.steps = 5, .heap_mb = 4, .features = sim::app_features::all()});
  std::vector<const char*> argv{"testapp"};
  for (const auto& a : args) argv.push_back(a.c_str());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int rc = cli.parse(static_cast<int>(argv.size()), argv.data());
  testing::internal::GetCapturedStdout();
  return {rc, testing::internal::GetCapturedStderr()};
}

/// `args` is refused with status 2 and one line that contains every part of `says`.
void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& says) {
  std::string shown;
  for (const auto& a : args) shown += "'" + a + "' ";
  const parsed r = parse(args);
  EXPECT_EQ(r.rc, 2) << shown << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << shown << r.err;
  for (const auto& s : says) EXPECT_NE(r.err.find(s), std::string::npos) << shown << " should say '" << s << "': " << r.err;
}

TEST(OutputPaths, EveryOutputPathIsCheckedBeforeTheRun) {
  const scratch_dir d("paths");
  const std::string dir = d.dir.string(), file = (d / "f.csv").string();
  put(file, "keep\n");
  ::mkfifo((d / "fifo").c_str(), 0644);
  put(d / "ro.csv", "ro\n");
  fs::permissions(d / "ro.csv", fs::perms::owner_read);
  fs::create_symlink("nowhere", d / "dangling");
  for (const std::string flag : {"--csv", "--checkpoint"}) {
    expect_refused({flag, ""}, {flag, "needs a file name"});
    expect_refused({flag, dir}, {flag, "is a directory"});
    expect_refused({flag, "/dev/null"}, {flag, "character device"});
    expect_refused({flag, (d / "fifo").string()}, {flag, "FIFO"});
    expect_refused({flag, (d / "ro.csv").string()}, {flag, "read-only"});
    expect_refused({flag, (d / "no-dir" / "x").string()}, {flag, "does not exist"});
    expect_refused({flag, (d / "dangling").string()}, {flag, "symbolic link"});
    expect_refused({flag, "/proc/shoal-x"}, {flag, "not writable"});
  }
  expect_refused({"--resume", ""}, {"--resume", "needs a file name"});
  expect_refused({"--resume", dir}, {"--resume", "is a directory"});
  expect_refused({"--resume", (d / "missing").string()}, {"--resume", "does not exist"});
  expect_refused({"--frames", "/proc"}, {"--frames", "not writable"});
  expect_refused({"--frames", file}, {"--frames", "not a directory"});
  // No two files the same, also through a link.
  fs::create_symlink("f.csv", d / "link.csv");
  expect_refused({"--csv", file, "--checkpoint", file}, {"--csv", "--checkpoint", "same file"});
  expect_refused({"--csv", (d / "link.csv").string(), "--checkpoint", file}, {"--csv", "--checkpoint", "same file"});
  expect_refused({"--csv", (d / "new.csv").string(), "--checkpoint", (d / "." / "new.csv").string()},
                 {"same file"});
  // Flags that would do nothing.
  expect_refused({"--csv-every", "2"}, {"--csv-every", "--csv"});
  expect_refused({"--overlay", "none"}, {"--overlay", "--frames"});
  expect_refused({"--frame-every", "2"}, {"--frame-every", "--frames"});
  expect_refused({"--checkpoint-every", "2"}, {"--checkpoint-every", "--checkpoint"});
  // Nothing was changed by any of these.
  EXPECT_EQ(slurp(file), "keep\n");
  EXPECT_EQ(d.names(), (std::vector<std::string>{"dangling", "f.csv", "fifo", "link.csv", "ro.csv"}));
  // A good output path is accepted and not created by the check.
  EXPECT_EQ(parse({"--csv", (d / "new.csv").string(), "--checkpoint", (d / "ck").string()}).rc, -1);
  EXPECT_FALSE(fs::exists(d / "new.csv"));
  EXPECT_EQ(parse({"--csv", (d / "link.csv").string()}).rc, -1);
}

TEST(OutputPaths, AFloatThatWouldBeStoredAsZeroOrIsOutOfRangeIsRefused) {
  auto parse_float = [](const std::string& value) {
    sim::app_cli cli("testapp", "A test app.", {.features = sim::app_features::all()});
    float g = 0.5f;
    cli.app().add_option("--gravity", g, "G")->check(sim::decimal<float>(0.0, 1.0));
    const char* argv[] = {"testapp", "--gravity", value.c_str()};
    testing::internal::CaptureStderr();
    const int rc = cli.parse(3, argv);
    return parsed{rc, testing::internal::GetCapturedStderr()};
  };
  EXPECT_EQ(parse_float("0").rc, -1);
  EXPECT_EQ(parse_float("1e-30").rc, -1);
  for (const char* v : {"1e-50", "1e-45", "1e-400"}) {
    const parsed r = parse_float(v);
    EXPECT_EQ(r.rc, 2) << v;
    EXPECT_NE(r.err.find("--gravity"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("out of range"), std::string::npos) << r.err;
  }
  EXPECT_NE(parse_float("1e400").err.find("too large"), std::string::npos);
}

}  // namespace
}  // namespace shoal::test
