// --checkpoint, --checkpoint-every and --resume in the shared command line: the options'
// rules, and --resume checked at parse time (missing, damaged, another app's file, a seed or
// model flag that contradicts the file, --steps not after the saved step: status 2, one line).
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "shoal/sim/cli.hpp"
#include "test_support.hpp"

namespace shoal::test {
namespace {

struct parsed {
  int rc;
  std::string err;
  sim::run_options run;
  std::uint64_t width;
  std::uint64_t resume_step;
  bool resuming;
};

/// Parses like an app "resumeapp" with --width; when resuming, adopts the saved width (section
/// "width") as apps do.
parsed parse(std::vector<std::string> args) {
  sim::app_cli cli("resumeapp", "A test app.", {.steps = 100, .features = sim::app_features::all()});
  std::uint64_t width = 64;
  cli.app().add_option("--width", width, "grid width")->check(sim::whole_number(1, 4096));
  std::vector<const char*> argv{"resumeapp"};
  for (const auto& a : args) argv.push_back(a.c_str());
  testing::internal::CaptureStderr();
  int rc = cli.parse(static_cast<int>(argv.size()), argv.data());
  if (rc < 0 && cli.resume() != nullptr) rc = cli.adopt("--width", width, cli.resume()->value<std::uint64_t>("width"));
  const std::string err = testing::internal::GetCapturedStderr();
  return {rc, err, cli.options(), width, cli.resume_step(), cli.resume() != nullptr};
}

std::string saved_run(const std::string& app, std::uint64_t step, std::uint64_t seed, std::uint64_t width) {
  const auto path = (std::filesystem::temp_directory_path() /
                     ("shoal_resume_cli_" + app + "_" + std::to_string(step) + "_" + std::to_string(::getpid())))
                        .string();
  sim::write_checkpoint(path, app, step, seed, [&](checkpoint::writer& w) { w.value("width", width); });
  return path;
}

void expect_refused(std::vector<std::string> args, const std::string& mention) {
  const parsed p = parse(args);
  std::string shown;
  for (const auto& a : args) shown += a + " ";
  EXPECT_EQ(p.rc, 2) << shown;
  EXPECT_EQ(p.err.rfind("resumeapp: error: ", 0), 0u) << shown << p.err;
  EXPECT_NE(p.err.find(mention), std::string::npos) << shown << p.err;
  ASSERT_FALSE(p.err.empty());
  EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
}

TEST(SimCliCheckpoint, OptionsAndTheirRules) {
  parsed p = parse({"--checkpoint", "run.ckpt", "--checkpoint-every", "25"});
  ASSERT_EQ(p.rc, -1) << p.err;
  EXPECT_EQ(p.run.checkpoint, "run.ckpt");
  EXPECT_EQ(p.run.checkpoint_every, 25u);
  EXPECT_FALSE(p.resuming);
  EXPECT_TRUE(sim::checkpoint_due(p.run, 25));
  EXPECT_FALSE(sim::checkpoint_due(p.run, 26));
  EXPECT_TRUE(sim::checkpoint_due(p.run, 100));  // the last step
  p = parse({"--checkpoint", "run.ckpt"});
  EXPECT_FALSE(sim::checkpoint_due(p.run, 25));
  EXPECT_TRUE(sim::checkpoint_due(p.run, 100));
  p = parse({});
  EXPECT_FALSE(sim::checkpoint_due(p.run, 100));
  expect_refused({"--checkpoint-every", "5"}, "needs --checkpoint");
  expect_refused({"--checkpoint", "x", "--checkpoint-every", "0"}, "--checkpoint-every");
  expect_refused({"--checkpoint", "x", "--checkpoint-every", "-5"}, "-5");
  expect_refused({"--checkpoint", ""}, "--checkpoint needs a file name");
  expect_refused({"--checkpoint"}, "--checkpoint");
}

TEST(SimCliCheckpoint, ResumeAdoptsTheSavedRun) {
  const std::string file = saved_run("resumeapp", 40, 77, 321);
  parsed p = parse({"--resume", file});
  ASSERT_EQ(p.rc, -1) << p.err;
  EXPECT_TRUE(p.resuming);
  EXPECT_EQ(p.resume_step, 40u);
  EXPECT_EQ(p.run.seed, 77u);
  EXPECT_EQ(p.width, 321u);
  p = parse({"--resume", file, "--seed", "77", "--width", "321"});  // the same values again: fine
  EXPECT_EQ(p.rc, -1) << p.err;
  expect_refused({"--resume", file, "--seed", "78"}, "--seed differs");
  expect_refused({"--resume", file, "--width", "320"}, "--width differs");
  expect_refused({"--resume", file, "--steps", "40"}, "not after step 40");
  std::filesystem::remove(file);
}

TEST(SimCliCheckpoint, ASavedValueMustPassTheFlagsOwnChecks) {
  // adopt() runs --width's validator on the saved value: a file cannot bring in a value the
  // command line refuses (0, or past 4096).
  for (const std::uint64_t width : {std::uint64_t{0}, std::uint64_t{4097}, ~std::uint64_t{0}}) {
    const std::string file = saved_run("resumeapp", 10, 1, width);
    expect_refused({"--resume", file}, "is invalid: its --width needs a whole number in 1..4096");
    std::filesystem::remove(file);
  }
}

TEST(SimCliCheckpoint, BadResumeFilesAreCommandLineErrors) {
  expect_refused({"--resume", "/tmp"}, "is a directory");
  expect_refused({"--resume", ""}, "--resume needs a file name");
  expect_refused({"--resume", "/nonexistent/dir/x.ckpt"}, "does not exist");
  const std::string other = saved_run("otherapp", 10, 1, 5);
  expect_refused({"--resume", other}, "was not written by resumeapp");
  std::filesystem::remove(other);
  const std::string file = saved_run("resumeapp", 10, 1, 5);
  std::filesystem::resize_file(file, std::filesystem::file_size(file) - 3);
  expect_refused({"--resume", file}, "truncated");
  { std::ofstream(file, std::ios::trunc); }
  expect_refused({"--resume", file}, "is empty");
  { std::ofstream(file, std::ios::trunc) << "not a checkpoint at all, just some text of some length........"; }
  expect_refused({"--resume", file}, "not a Shoal checkpoint");
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace shoal::test
