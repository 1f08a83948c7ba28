// Outputs that appear whole or not at all (io/temporary_files.hpp, sim::csv_writer, the
// checkpoint writer, the frames' staging directory): a file a user had is never lost to a run that fails or is interrupted,
// links are followed, and temporary files are removed on SIGINT/SIGTERM or by a later run.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "shoal/checkpoint/file.hpp"
#include "shoal/io/staging_directory.hpp"
#include "shoal/io/temporary_files.hpp"
#include "shoal/sim/csv.hpp"
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
      : dir(fs::temp_directory_path() / ("shoal_out_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~scratch_dir() { fs::remove_all(dir); }
  fs::path operator/(const std::string& f) const { return dir / f; }
  /// The names in the directory, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

/// A pid that no process has: a child that has exited and been waited for.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(OutputFiles, CsvAppearsOnlyWhenClosedAndAFailedRunKeepsTheOldFile) {
  const scratch_dir d("csv");
  const fs::path csv = d / "run.csv";
  put(csv, "keep\n");
  {
    sim::csv_writer w(csv.string(), {"a"});
    w.row(0, {1});
    EXPECT_EQ(slurp(csv), "keep\n") << "rows are not visible before close()";
    // Destroyed without close(): the run failed.
  }
  EXPECT_EQ(slurp(csv), "keep\n");
  EXPECT_EQ(d.names(), std::vector<std::string>{"run.csv"}) << "no temporary file left behind";
  {
    sim::csv_writer w(csv.string(), {"a"});
    w.row(0, {1});
    w.close();
  }
  EXPECT_EQ(slurp(csv), "step,a\n0,1\n");
  EXPECT_EQ(d.names(), std::vector<std::string>{"run.csv"});
}

TEST(OutputFiles, ASymbolicLinkIsFollowedAndStaysALink) {
  const scratch_dir d("link");
  put(d / "real.csv", "old\n");
  fs::create_symlink("real.csv", d / "link.csv");
  sim::csv_writer w((d / "link.csv").string(), {"a"});
  w.row(3, {4});
  w.close();
  EXPECT_TRUE(fs::is_symlink(d / "link.csv"));
  EXPECT_EQ(slurp(d / "real.csv"), "step,a\n3,4\n");
  checkpoint::writer c;
  c.value("x", std::uint64_t{5});
  c.commit((d / "link.csv").string());
  EXPECT_TRUE(fs::is_symlink(d / "link.csv"));
  EXPECT_EQ(checkpoint::reader((d / "real.csv").string()).value<std::uint64_t>("x"), 5u);
}

TEST(OutputFiles, StaleTemporariesOfDeadProcessesAreRemovedOthersStay) {
  const scratch_dir d("stale");
  const std::string dead = "ck.tmp-" + std::to_string(dead_pid());
  const std::string alive = "ck.tmp-" + std::to_string(::getppid());
  put(d / dead, "x");
  put(d / alive, "x");
  put(d / "other.tmp-1", "x");    // another target's
  put(d / "ck.tmp-12ab", "x");    // not a pid
  checkpoint::writer c;
  c.value("x", std::uint64_t{1});
  c.commit((d / "ck").string());
  std::vector<std::string> expected{alive, "ck", "ck.tmp-12ab", "other.tmp-1"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(d.names(), expected);
}

TEST(OutputFiles, ARewrittenFileKeepsThePermissionsOfTheFileItReplaces) {
  const scratch_dir d("mode");
  const fs::path kept = d / "run.ckpt";
  put(kept, "old\n");
  ASSERT_EQ(::chmod(kept.c_str(), 0600), 0);
  {
    io::temporary_file t(kept.string(), "the checkpoint");
    t.write("new\n", 4);
    t.commit(false);
  }
  struct stat st {};
  ASSERT_EQ(::stat(kept.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u) << "a private file stays private when it is rewritten";
  EXPECT_EQ(slurp(kept), "new\n");
  // A new file gets the usual mode: 0644 less the umask.
  const fs::path fresh = d / "new.csv";
  {
    io::temporary_file t(fresh.string(), "the CSV file");
    t.commit(false);
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u & ~mask);
}

// `--csv -`: the rows go to standard output as they are written, and what the program itself
// prints to standard output from then on goes to standard error (in a child process, whose
// standard output and error are files here).
TEST(OutputFiles, CsvToStandardOutputMovesTheProgramsOwnLinesToStandardError) {
  const scratch_dir d("csv_stdout");
  std::fflush(stdout);  // nothing of ours in the child's buffer
  const pid_t child = ::fork();
  if (child == 0) {
    const int out = ::open((d / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open((d / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0) ::_exit(3);
    std::printf("before\n");
    sim::csv_writer csv(sim::csv_writer::standard_output, {"n"});
    std::printf("app line\n");
    std::fflush(stdout);
    csv.row(0, {7});
    csv.row(1, {8});
    csv.close();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(slurp(d / "out"), "before\nstep,n\n0,7\n1,8\n");
  EXPECT_EQ(slurp(d / "err"), "app line\n");
  EXPECT_EQ(d.names(), (std::vector<std::string>{"err", "out"}));  // no file named "-"
}

TEST(OutputFiles, SigtermAndSigintRemoveTheTemporaryFile) {
  for (const int sig : {SIGTERM, SIGINT}) {
    const scratch_dir d("signal" + std::to_string(sig));
    put(d / "run.csv", "keep\n");
    const pid_t child = ::fork();
    if (child == 0) {
      sim::csv_writer w((d / "run.csv").string(), {"a"});
      w.row(0, {1});
      ::raise(sig);
      ::_exit(0);  // not reached
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "the process dies of the signal";
    EXPECT_EQ(d.names(), std::vector<std::string>{"run.csv"});
    EXPECT_EQ(slurp(d / "run.csv"), "keep\n");
  }
}

// Frames (io::staging_directory): a run that fails leaves an earlier run's same-numbered frames
// as they were; one that succeeds replaces them and adds its own; staging directories of dead
// processes are removed by the next run, those of live ones stay.
TEST(OutputFiles, FramesOfAFailedRunLeaveTheOldFramesAndASuccessfulRunReplacesThem) {
  const scratch_dir d("frames");
  put(d / "frame_000005.png", "old5");
  put(d / "notes.txt", "mine");
  {
    io::staging_directory failed(d.dir.string(), "wator-frames");
    put(fs::path(failed.path()) / "frame_000000.png", "new0");
    put(fs::path(failed.path()) / "frame_000005.png", "new5");
    // no commit: the run failed
  }
  EXPECT_EQ(d.names(), (std::vector<std::string>{"frame_000005.png", "notes.txt"}));
  EXPECT_EQ(slurp(d / "frame_000005.png"), "old5");

  const std::string dead = ".wator-frames.tmp-" + std::to_string(dead_pid());
  const std::string alive = ".wator-frames.tmp-" + std::to_string(::getppid());
  fs::create_directory(d / dead);
  put(d / dead / "frame_000001.png", "x");
  fs::create_directory(d / alive);
  io::staging_directory ok(d.dir.string(), "wator-frames");
  EXPECT_FALSE(fs::exists(d / dead)) << "a dead process's staging directory is removed";
  put(fs::path(ok.path()) / "frame_000000.png", "new0");
  put(fs::path(ok.path()) / "frame_000005.png", "new5");
  ok.commit();
  std::vector<std::string> expected{alive, "frame_000000.png", "frame_000005.png", "notes.txt"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(d.names(), expected);
  EXPECT_EQ(slurp(d / "frame_000005.png"), "new5");
  EXPECT_EQ(slurp(d / "notes.txt"), "mine");
}

}  // namespace
}  // namespace shoal::test
