#pragma once
/// @file
/// Writes frames as PNG files on host threads while the simulation runs on. The step loop takes
/// a free staging slot (waiting only when every slot is still being encoded: frames are never
/// dropped), captures the canvas into it (an asynchronous copy on cuda) and hands it over with
/// the frame's step; a worker waits for the copy, draws the overlay, encodes and writes the file,
/// and frees the slot. Errors (disk full) are kept and thrown by the next acquire() or finish().

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shoal/viz/staging.hpp"

namespace shoal::viz {

/// The PNG writer of a run's frames (see the file comment): acquire() a staging slot, capture
/// into it, submit() it with its step; finish() waits for every file. Frames are written in
/// parallel by `threads` workers, so they may complete out of order.
class frame_writer {
 public:
  /// Decorates a captured frame before it is written (the overlay): pixels, values, step, and
  /// the steps per second at submit().
  using decorate_fn = std::function<void(image_view, const unsigned long long*, std::uint64_t, double)>;

  /// Writes frames of width x height pixels, each with `values` device words, as files
  /// `<prefix>_NNNNNN.png` in `dir` (frame_path()); `threads` workers (at least one) start now.
  frame_writer(std::string dir, std::string prefix, std::uint32_t width, std::uint32_t height, std::size_t values,
               decorate_fn decorate, unsigned threads);
  frame_writer(const frame_writer&) = delete;
  frame_writer& operator=(const frame_writer&) = delete;
  ~frame_writer();

  /// A free slot to capture into (waits while all are busy). Throws the first write error.
  staging& acquire();
  /// Queues the captured slot as the frame of `step`, run at `rate` steps per second.
  void submit(staging& slot, std::uint64_t step, double rate);
  /// Waits until every submitted frame is written; throws the first write error.
  void finish();
  /// Frames written so far.
  std::uint64_t written() const;
  /// Staging slots for frames of this size with `threads` workers (see frame_writer.cpp).
  static std::size_t slot_count(std::uint32_t width, std::uint32_t height, unsigned threads);

 private:
  struct job {
    staging* slot;
    std::uint64_t step;
    double rate;
  };
  void work();
  void rethrow_locked();

  std::string dir_, prefix_;
  decorate_fn decorate_;
  std::vector<std::unique_ptr<staging>> slots_;
  std::vector<staging*> free_;
  std::deque<job> queue_;
  std::size_t busy_ = 0;
  std::uint64_t written_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
  mutable std::mutex mutex_;
  std::condition_variable job_ready_;  // for the workers: a job was queued, or stopping
  std::condition_variable job_done_;   // for the step loop: a slot came free, all done, or an error
  std::vector<std::thread> threads_;
};

}  // namespace shoal::viz
