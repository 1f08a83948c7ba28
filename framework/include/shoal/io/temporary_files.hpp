#pragma once
/// @file
/// Output files that appear whole or not at all. A file is written as `<target>.tmp-<pid>`
/// beside its target and renamed over it only when complete, so a run that fails, is
/// interrupted or crashes leaves the file a user had there as it was.
///
///   shoal::io::temporary_file t(path);   // removes stale TARGET.tmp-PID files of dead processes first
///   ::write(t.fd(), ...);
///   t.commit();                          // fsync, rename over the target, fsync the directory
///                                        // (not committed: the destructor removes it)
///
/// While a temporary file exists its name is registered, and SIGINT and SIGTERM remove every
/// registered file before the process dies of the signal (handlers installed once, on the first
/// temporary file, and only where the signal had its default action). SIGKILL and crashes
/// cannot be caught: the next run for the same target removes the files of processes that no
/// longer exist (remove_stale_temporaries).
///
/// A target that is a symbolic link is followed: the file it points to is replaced, the link
/// stays (resolve_output).

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>

namespace shoal::io {

/// A temporary file could not be created, written or renamed; what() names the target.
class output_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The file a write to `path` should replace: the target of a symbolic link (followed through
/// every link), else `path` itself.
inline std::string resolve_output(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return path;
  const fs::path target = fs::weakly_canonical(path, ec);
  return ec ? path : target.string();
}

namespace detail {

/// The registry the signal handler reads: fixed storage, no allocation, so the handler only
/// loads atomics and calls unlink (both async-signal-safe).
struct temporary_registry {
  static constexpr int slots = 32;
  static constexpr std::size_t path_bytes = 4096;
  std::atomic<int> state[slots] = {};  ///< 0 free, 1 being filled, 2 registered
  char path[slots][path_bytes] = {};
};

inline temporary_registry& registry() {
  static temporary_registry r;
  return r;
}

inline void remove_registered(int sig) {
  temporary_registry& r = registry();
  for (int i = 0; i < temporary_registry::slots; ++i)
    if (r.state[i].load(std::memory_order_acquire) == 2) ::unlink(r.path[i]);
  // Die of the signal as if there had been no handler (the exit status tells the shell).
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

/// Installs remove_registered for SIGINT and SIGTERM, where their action is still the default
/// (an app or library that handles them itself keeps its handler).
inline void install_signal_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : {SIGINT, SIGTERM}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_registered;
      ::sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

/// Registers `path` for removal on SIGINT/SIGTERM; the slot, or -1 when all are taken (the
/// file is then only cleaned up by a later run).
inline int register_temporary(const std::string& path) {
  install_signal_cleanup();
  if (path.size() >= temporary_registry::path_bytes) return -1;
  temporary_registry& r = registry();
  for (int i = 0; i < temporary_registry::slots; ++i) {
    int expected = 0;
    if (r.state[i].compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
      std::memcpy(r.path[i], path.c_str(), path.size() + 1);
      r.state[i].store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

inline void unregister_temporary(int slot) {
  if (slot >= 0) registry().state[slot].store(0, std::memory_order_release);
}

/// True when `name` is `<base>.tmp-<digits>`; the digits in `pid`.
inline bool is_temporary_of(const std::string& name, const std::string& base, long& pid) {
  const std::string prefix = base + ".tmp-";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  pid = std::stol(digits);
  return true;
}

/// True when no process `pid` exists (a live one, or one not ours to signal, counts as there).
inline bool process_is_gone(long pid) {
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace detail

/// Removes `<target>.tmp-<pid>` files beside `target` whose process no longer exists (left by a
/// run that was killed or crashed). Files of live processes, this one's included, stay. Errors
/// are ignored: this is tidying, not a condition of the run.
inline void remove_stale_temporaries(const std::string& target) {
  namespace fs = std::filesystem;
  const fs::path t(target);
  const fs::path dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
  const std::string base = t.filename().string();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    long pid = 0;
    if (!detail::is_temporary_of(it->path().filename().string(), base, pid) || pid <= 0) continue;
    if (pid == static_cast<long>(::getpid())) continue;
    if (!detail::process_is_gone(pid)) continue;
    std::error_code ignored;
    fs::remove(it->path(), ignored);
  }
}

/// The process's standard output, taken for data (`--csv -`): returns a descriptor of it, and
/// from then on what the process itself prints to standard output goes to standard error, so
/// that nothing mixes into the data. Taken once; later calls return the same descriptor.
inline int take_standard_output() {
  static int fd = -1;
  if (fd >= 0) return fd;
  std::fflush(stdout);
  const int data = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (data < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    const std::string why = std::strerror(errno);
    if (data >= 0) ::close(data);
    throw output_error("cannot write to standard output: " + why);
  }
  fd = data;
  return fd;
}

/// Writes all of `bytes` to `fd`; false (errno set) on a short write.
inline bool write_all(int fd, const void* bytes, std::size_t n) {
  const char* p = static_cast<const char*>(bytes);
  while (n > 0) {
    const ssize_t k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

/// A file written beside its target and renamed over it by commit(); removed if never
/// committed. Throws output_error (naming the target) when it cannot be created or committed.
class temporary_file {
 public:
  /// `what` names the kind of file in messages ("the checkpoint", "the CSV file"). `tidy`:
  /// remove stale temporary files of the target first (a directory scan; PNG frames, one file
  /// per step, leave it out).
  explicit temporary_file(const std::string& target, const std::string& what = "the file", bool tidy = true)
      : target_(resolve_output(target)), shown_(what + " '" + target + "'") {
    if (tidy) remove_stale_temporaries(target_);
    path_ = target_ + ".tmp-" + std::to_string(::getpid());
    slot_ = detail::register_temporary(path_);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      const std::string why = std::strerror(errno);
      detail::unregister_temporary(slot_);
      throw output_error("cannot write " + shown_ + ": " + why);
    }
    // A file that replaces another keeps its permissions: a checkpoint kept private (0600) must
    // not become readable by everyone (0644 under the usual umask) when it is rewritten.
    struct stat old {};
    if (::stat(target_.c_str(), &old) == 0 && S_ISREG(old.st_mode) && ::fchmod(fd_, old.st_mode & 07777) != 0)
      fail("chmod");
  }
  temporary_file(const temporary_file&) = delete;
  temporary_file& operator=(const temporary_file&) = delete;
  ~temporary_file() { discard(); }

  /// The open descriptor, for writing with other calls than write(); -1 once committed or discarded.
  int fd() const { return fd_; }
  /// The temporary file's name (for messages and tests).
  const std::string& path() const { return path_; }

  /// Writes all of `bytes`; throws output_error on a short write (disk full).
  void write(const void* bytes, std::size_t n) {
    if (!write_all(fd_, bytes, n)) fail("write");
  }

  /// fsync, close, rename over the target, fsync of the directory: afterwards the target holds
  /// the new bytes, before it the old ones, never a mixture. `durable` false leaves out the
  /// fsyncs: readers still see the old file or the whole new one, but a power cut may lose it.
  void commit(bool durable = true) {
    if (durable && ::fsync(fd_) != 0) fail("fsync");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("close");
    if (::rename(path_.c_str(), target_.c_str()) != 0) fail("rename");
    detail::unregister_temporary(slot_);
    slot_ = -1;
    committed_ = true;
    if (!durable) return;
    const std::filesystem::path t(target_);
    const std::string dir = t.has_parent_path() ? t.parent_path().string() : ".";
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }

  /// Closes and removes the temporary file (the target is untouched).
  void discard() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!committed_) ::unlink(path_.c_str());
    committed_ = true;
    detail::unregister_temporary(slot_);
    slot_ = -1;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    const std::string why = std::strerror(errno);
    discard();
    throw output_error("cannot write " + shown_ + ": " + what + ": " + why);
  }

  std::string target_, shown_, path_;
  int fd_ = -1;
  int slot_ = -1;
  bool committed_ = false;
};

}  // namespace shoal::io
