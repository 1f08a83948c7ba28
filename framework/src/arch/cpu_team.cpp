// The cpu backend's team of worker threads (see shoal/arch/cpu_team.hpp).
#include "shoal/config.hpp"

#if defined(SHOAL_BACKEND_CPU)

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>

#include "shoal/arch/cpu_team.hpp"
#include "shoal/arch/error.hpp"

namespace shoal::arch {
namespace {

/// One launch: its chunks are handed out by `next`; `done` counts the finished ones. Shared
/// with the workers that took it, so a worker that wakes after the launch has returned still
/// holds a valid job (with no chunk left to take).
struct job {
  std::size_t n = 0, chunk = 1, chunks = 0;
  detail::chunk_body body = nullptr;
  void* f = nullptr;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};

  void work() {
    for (;;) {
      const std::size_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) return;
      const std::size_t begin = c * chunk;
      body(f, begin, std::min(n, begin + chunk));
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) done.notify_all();
    }
  }
};

class team {
 public:
  static team& instance() {
    static team t;
    return t;
  }
  ~team() { stop_workers(); }

  int threads() const { return threads_.load(); }

  void resize(int n) {
    std::lock_guard launch(launch_mutex_);
    stop_workers();
    threads_.store(n);
    start_workers();
  }

  void run(std::size_t n, detail::chunk_body body, void* f) {
    std::unique_lock launch(launch_mutex_, std::try_to_lock);
    if (!launch.owns_lock() || running_.load() == 0) {
      body(f, 0, n);
      return;
    }
    auto j = std::make_shared<job>();
    // A few chunks per thread: a thread that runs late or slow leaves its share to the others.
    const std::size_t pieces = 4 * static_cast<std::size_t>(threads_.load());
    j->n = n;
    j->chunk = std::max<std::size_t>((n + pieces - 1) / pieces, detail::serial_items / 4);
    j->chunks = (n + j->chunk - 1) / j->chunk;
    j->body = body;
    j->f = f;
    {
      std::lock_guard lock(mutex_);
      current_ = j;
      ++generation_;
    }
    wake_.notify_all();
    j->work();
    for (std::size_t d = j->done.load(std::memory_order_acquire); d != j->chunks;
         d = j->done.load(std::memory_order_acquire))
      j->done.wait(d, std::memory_order_acquire);
    std::lock_guard lock(mutex_);
    current_.reset();
  }

 private:
  team() {
    threads_.store(initial_threads());
    start_workers();
    // A fork copies only the forking thread: stop the workers first and start them again in the
    // parent, so that the child is a single-threaded process that never waits for, or joins,
    // threads it does not have (its launches run on its one thread).
    pthread_atfork([] { instance().stop_workers(); }, [] { instance().start_workers(); }, nullptr);
  }

  /// SHOAL_CPU_THREADS, else OMP_NUM_THREADS (what the OpenMP build used to read), else the cores.
  static int initial_threads() {
    for (const char* name : {"SHOAL_CPU_THREADS", "OMP_NUM_THREADS"}) {
      const char* text = std::getenv(name);
      if (text == nullptr) continue;
      char* end = nullptr;
      const long n = std::strtol(text, &end, 10);
      if (end != text && *end == '\0' && n > 0 && n <= 4096) return static_cast<int>(n);
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
  }

  void start_workers() {
    std::uint64_t seen = 0;
    {
      std::lock_guard lock(mutex_);
      stop_ = false;
      seen = generation_;
    }
    for (int i = 1; i < threads_.load(); ++i) workers_.emplace_back([this, seen] { work_loop(seen); });
    running_.store(static_cast<int>(workers_.size()));
  }
  void stop_workers() {
    running_.store(0);
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  void work_loop(std::uint64_t seen) {
    for (;;) {
      std::shared_ptr<job> j;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        j = current_;
      }
      if (j) j->work();
    }
  }

  std::mutex launch_mutex_;  // one launch on the team at a time
  std::mutex mutex_;         // guards current_, generation_, stop_
  std::condition_variable wake_;
  std::shared_ptr<job> current_;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
  std::atomic<int> threads_{1};
  std::atomic<int> running_{0};  // workers started (0 while stopped for a fork)
};

}  // namespace

void detail::run_on_team(std::size_t n, chunk_body body, void* f) { team::instance().run(n, body, f); }

int cpu_threads() { return team::instance().threads(); }

void set_cpu_threads(int n) {
  if (n > 0) team::instance().resize(n);
}

}  // namespace shoal::arch

#endif  // SHOAL_BACKEND_CPU
