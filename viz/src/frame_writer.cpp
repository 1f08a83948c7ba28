// The PNG writer threads (see frame_writer.hpp).

#include "shoal/viz/frame_writer.hpp"

#include <algorithm>

#include "shoal/viz/png.hpp"

namespace shoal::viz {

std::size_t frame_writer::slot_count(std::uint32_t width, std::uint32_t height, unsigned threads) {
  // A slot is busy from its capture until its file is written: the copy runs when the GPU gets
  // there, which on cuda can be many steps behind the step loop (launches are asynchronous), and
  // only then is it encoded. So a slot lives longer than its encoding, and one per worker plus two
  // could leave the step loop waiting for slots while workers wait for copies. As many slots as
  // 256 MiB of frames hold, at least a worker's plus two, at most 64. (On the H100, traffic's
  // frames cost the same with either count: there the census of a million cars per frame was
  // the cost, BENCHMARKS.md.)
  const std::size_t frame_bytes = std::size_t{width} * height * sizeof(pixel) + 1;
  const std::size_t by_memory = (std::size_t{256} << 20) / frame_bytes;
  return std::clamp<std::size_t>(by_memory, std::size_t{threads} + 2, 64);
}

frame_writer::frame_writer(std::string dir, std::string prefix, std::uint32_t width, std::uint32_t height,
                           std::size_t values, decorate_fn decorate, unsigned threads)
    : dir_(std::move(dir)), prefix_(std::move(prefix)), decorate_(std::move(decorate)) {
  threads = std::max(1u, threads);
  for (std::size_t k = 0, n = slot_count(width, height, threads); k < n; ++k) {
    slots_.push_back(std::make_unique<staging>(width, height, values));
    free_.push_back(slots_.back().get());
  }
  for (unsigned k = 0; k < threads; ++k) threads_.emplace_back([this] { work(); });
}

frame_writer::~frame_writer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  job_ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void frame_writer::rethrow_locked() {
  if (error_) std::rethrow_exception(error_);
}

staging& frame_writer::acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  job_done_.wait(lock, [&] { return !free_.empty() || error_; });
  rethrow_locked();
  staging* s = free_.back();
  free_.pop_back();
  return *s;
}

void frame_writer::submit(staging& slot, std::uint64_t step, double rate) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back({&slot, step, rate});
  }
  // One worker is enough: waking all of them for every frame has the others find nothing to do,
  // and the step loop's thread pays for the wake-ups (n-body waits for its GPU every step, so
  // its host time is step time).
  job_ready_.notify_one();
}

void frame_writer::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  job_done_.wait(lock, [&] { return (queue_.empty() && busy_ == 0) || error_; });
  rethrow_locked();
}

std::uint64_t frame_writer::written() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return written_;
}

void frame_writer::work() {
  for (;;) {
    job j{};
    {
      std::unique_lock<std::mutex> lock(mutex_);
      job_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      j = queue_.front();
      queue_.pop_front();
      ++busy_;
    }
    std::exception_ptr failed;
    try {
      j.slot->wait();
      if (decorate_) decorate_(j.slot->pixels(), j.slot->values(), j.step, j.rate);
      write_png(frame_path(dir_, prefix_, j.step), j.slot->pixels());
    } catch (...) {
      failed = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_;
      free_.push_back(j.slot);
      if (failed && !error_) error_ = failed;
      if (!failed) ++written_;
    }
    job_done_.notify_all();
  }
}

}  // namespace shoal::viz
