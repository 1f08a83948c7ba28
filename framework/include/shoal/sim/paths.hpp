#pragma once
/// @file
/// Checks of the files and directories on a command line, made before the first step so that a
/// run never fails at its end for a path it could have refused at its start. Each returns ""
/// when the path is fine, else why not (app_cli puts the flag in front).
///
/// An output FILE (--csv, --checkpoint) is written beside itself and renamed over itself
/// (io/temporary_files.hpp), so it needs: a directory that exists and can be written, and a
/// target that is a regular file we may write or does not exist yet. A symbolic link is
/// followed: its target is checked (and later replaced), not the link.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <string>
#include <algorithm>
#include <system_error>
#include <utility>

namespace shoal::sim {

namespace paths_detail {
namespace fs = std::filesystem;

/// `p` in single quotes, as messages show paths.
inline std::string in_quotes(const fs::path& p) { return "'" + p.string() + "'"; }

/// What a path that is not a regular file is, for messages: "a directory", "a FIFO", ...
inline const char* kind_of(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

/// True when no write permission bit is set (root may still write it, but the user who made it
/// read-only meant it to stay).
inline bool read_only(const fs::file_status& s) {
  using fs::perms;
  return (s.permissions() & (perms::owner_write | perms::group_write | perms::others_write)) == perms::none;
}
}  // namespace paths_detail

/// "" when the last name of `path`, `extra` bytes longer (the suffix of the temporary file or
/// directory written beside it), fits the file system's limit on names, and the whole path fits
/// the system's limit on paths; else why not. Checked before the run: otherwise the first
/// checkpoint of a run with a name too long fails after the steps that came before it.
inline std::string check_name_length(const std::string& path, std::size_t extra) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string name = p.filename().string();
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : std::string(".");
  long most = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (most <= 0) most = NAME_MAX;
  const std::string shown = path.size() > 60 ? "'" + path.substr(0, 40) + "...' (" + std::to_string(path.size()) + " bytes)"
                                             : "'" + path + "'";
  if (name.size() + extra > static_cast<std::size_t>(most))
    return shown + " has a name of " + std::to_string(name.size()) + " bytes; this file system takes " +
           std::to_string(most) + (extra > 0 ? " (less " + std::to_string(extra) + " for the temporary name beside it)" : "");
  if (path.size() + extra >= PATH_MAX)
    return shown + " is longer than the " + std::to_string(PATH_MAX) + " bytes a path may have";
  return "";
}

/// Bytes that the temporary file or directory beside an output adds to its name: ".tmp-<pid>"
/// (io/temporary_files.hpp), or "." in front and ".tmp-<pid>" behind for a staging directory.
inline constexpr std::size_t temporary_suffix_bytes = 1 + 5 + 10;

/// "" when a file can be created in `dir` (an existing directory), else why not. Permission bits
/// do not tell (root, read-only mounts, /proc): a probe file is created and removed.
inline std::string writable_directory(const std::string& dir) {
  namespace fs = std::filesystem;
  using paths_detail::in_quotes;
  std::error_code ec;
  const fs::file_status s = fs::status(dir, ec);
  if (!fs::exists(s)) return "directory " + in_quotes(dir) + " does not exist";
  if (!fs::is_directory(s)) return in_quotes(dir) + " is not a directory";
  const std::string probe = (fs::path(dir) / (".shoal-write-test-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int e = errno;
    // ENOENT in an existing directory: a file system that has no files to create (/proc).
    return "directory " + in_quotes(dir) + " is not writable" +
           (e == ENOENT ? std::string() : std::string(" (") + std::strerror(e) + ")");
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

/// "" when `dir` exists or could be created and files can be written there, else why not.
inline std::string prepare_directory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string trimmed = dir;  // "frames/" names the directory "frames"
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  if (const std::string why = check_name_length(trimmed, temporary_suffix_bytes); !why.empty()) return why;
  if (!fs::exists(fs::status(dir, ec))) {
    fs::create_directories(dir, ec);
    // Say what is in the way: a parent that cannot be written is the common case.
    if (ec) {
      const fs::path parent = fs::absolute(dir, ec).parent_path();
      if (const std::string why = writable_directory(parent.string()); !why.empty())
        return "cannot create directory '" + dir + "': " + why;
      return "cannot create directory '" + dir + "': " + ec.message();
    }
  }
  return writable_directory(dir);
}

/// "" when `path` can be written as an output file (see the file comment), else why not.
inline std::string check_output_file(const std::string& path) {
  namespace fs = std::filesystem;
  using paths_detail::in_quotes;
  if (path.empty()) return "needs a file name";
  if (const std::string why = check_name_length(path, temporary_suffix_bytes); !why.empty()) return why;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path, ec);
  const fs::file_status s = fs::status(path, ec);  // follows links
  if (fs::is_symlink(link) && !fs::exists(s)) return in_quotes(path) + " is a symbolic link to a file that does not exist";
  if (fs::exists(s)) {
    if (!fs::is_regular_file(s)) return in_quotes(path) + " is " + paths_detail::kind_of(s.type()) + ", not a file";
    if (paths_detail::read_only(s) || ::access(path.c_str(), W_OK) != 0)
      return in_quotes(path) + " is read-only";
  }
  // The directory the file (a link's target) is in: the temporary file goes there.
  const fs::path target = fs::is_symlink(link) ? fs::weakly_canonical(path, ec) : fs::path(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  return writable_directory(dir.string());
}

/// "" when `path` names a file that exists and can be read, else why not (--resume).
inline std::string check_input_file(const std::string& path) {
  namespace fs = std::filesystem;
  using paths_detail::in_quotes;
  if (path.empty()) return "needs a file name";
  std::error_code ec;
  const fs::file_status s = fs::status(path, ec);
  const std::string cannot = "cannot read " + in_quotes(path) + ": ";
  if (!fs::exists(s)) return cannot + "it does not exist";
  if (!fs::is_regular_file(s)) return cannot + "it is " + paths_detail::kind_of(s.type()) + ", not a file";
  if (::access(path.c_str(), R_OK) != 0) return cannot + std::strerror(errno);
  return "";
}

/// `path` made absolute, its existing part resolved (links, "." and ".."), the rest as written:
/// the same for every spelling of one file (`F`, `./F`, `$PWD/F`), whether or not it exists.
inline std::filesystem::path resolved(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  const fs::path r = fs::weakly_canonical(absolute, ec);
  return (ec ? absolute : r).lexically_normal();
}

/// True when `a` and `b` name the same file: the same inode if both exist (hard and symbolic
/// links included), else the same path once resolved.
inline bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool same = fs::equivalent(a, b, ec);
    if (!ec) return same;
  }
  return resolved(a) == resolved(b);
}

/// "standard output" or "standard error" when `path` is the file that one of them already
/// writes to (e.g. --csv /dev/stdout with standard output redirected to a file: the rename at
/// the end would replace that file and lose everything else written to it), else "".
inline const char* standard_stream_of(const std::string& path) {
  struct stat p {};
  if (::stat(path.c_str(), &p) != 0) return "";
  const std::pair<int, const char*> streams[] = {{STDOUT_FILENO, "standard output"}, {STDERR_FILENO, "standard error"}};
  for (const auto& [fd, name] : streams) {
    struct stat f {};
    if (::fstat(fd, &f) == 0 && f.st_dev == p.st_dev && f.st_ino == p.st_ino) return name;
  }
  return "";
}

/// True when `path` is the directory `dir` or lies inside it (both resolved, whether or not
/// they exist yet).
inline bool inside_directory(const std::string& path, const std::string& dir) {
  const std::filesystem::path p = resolved(path);
  std::filesystem::path d = resolved(dir);
  if (d.filename().empty()) d = d.parent_path();  // "dir/" ends with an empty part
  return std::mismatch(d.begin(), d.end(), p.begin(), p.end()).first == d.end();
}

}  // namespace shoal::sim
