#pragma once
/// @file
/// Many output files that appear together or not at all (an app's PNG frames). They are
/// written into `<dir>/.<name>.tmp-<pid>/` and moved into `<dir>` by commit(), at the end of a
/// run that succeeded; a run that fails removes them with the staging directory, so the files
/// of an earlier run in `<dir>` (same-numbered frames) stay as they were.
///
///   shoal::io::staging_directory frames(dir, "frames");  // removes stale ones of dead processes
///   write(frames.path() + "/frame_000010.png");
///   frames.commit();                                      // renames each file into dir
///
/// SIGINT, SIGTERM and SIGKILL leave the staging directory (a signal handler cannot walk a
/// directory); the next run that stages into the same `<dir>` removes the staging directories
/// of processes that no longer exist, as temporary_file does for its files.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "shoal/io/temporary_files.hpp"

namespace shoal::io {

/// A directory beside `<dir>` whose files move into `<dir>` together at commit(), or are
/// removed with it by discard() or the destructor (see the file comment). Not copyable.
class staging_directory {
 public:
  /// Creates `<dir>/.<name>.tmp-<pid>` (`dir` must exist). Throws output_error naming `what`.
  staging_directory(const std::string& dir, const std::string& name, const std::string& what = "the frames")
      : dir_(dir), what_(what) {
    namespace fs = std::filesystem;
    const std::string base = (fs::path(dir) / ("." + name)).string();
    remove_stale(base);
    path_ = base + ".tmp-" + std::to_string(::getpid());
    std::error_code ec;
    fs::remove_all(path_, ec);  // this process's own leftover from an earlier viewer
    if (!fs::create_directory(path_, ec) || ec)
      throw output_error("cannot write " + what_ + " in '" + dir + "': " + (ec ? ec.message() : "exists"));
  }
  staging_directory(const staging_directory&) = delete;
  staging_directory& operator=(const staging_directory&) = delete;
  ~staging_directory() { discard(); }

  /// Where to write the files.
  const std::string& path() const { return path_; }

  /// Moves every file into the target directory (replacing files of the same name there) and
  /// removes the staging directory. Throws output_error if a file cannot be moved; those not
  /// moved yet are removed with the staging directory.
  void commit() {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (fs::directory_iterator it(path_, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path target = fs::path(resolve_output((fs::path(dir_) / it->path().filename()).string()));
      std::error_code move;
      fs::rename(it->path(), target, move);
      if (move) {
        const std::string why = move.message();
        discard();
        throw output_error("cannot move " + what_ + " into '" + dir_ + "': " + why);
      }
    }
    if (ec) {
      const std::string why = ec.message();
      discard();
      throw output_error("cannot list " + what_ + " in '" + path_ + "': " + why);
    }
    discard();
  }

  /// Removes the staging directory and whatever is still in it.
  void discard() noexcept {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    path_.clear();
  }

 private:
  /// Removes `<base>.tmp-<pid>` directories of processes that no longer exist.
  static void remove_stale(const std::string& base) {
    namespace fs = std::filesystem;
    const fs::path b(base);
    std::error_code ec;
    for (fs::directory_iterator it(b.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
      long pid = 0;
      if (!detail::is_temporary_of(it->path().filename().string(), b.filename().string(), pid) || pid <= 0) continue;
      if (pid == static_cast<long>(::getpid()) || !detail::process_is_gone(pid)) continue;
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }

  std::string dir_, what_, path_;
};

}  // namespace shoal::io
