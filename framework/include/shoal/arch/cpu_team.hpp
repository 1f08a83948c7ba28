#pragma once
/// @file
/// The cpu backend's team of worker threads (cpu builds only): a launch is cut into chunks that
/// the calling thread and the workers take from a shared counter, so a launch ends as soon as its
/// chunks are done, whether or not every worker got a core in time. On a busy machine a worker
/// that wakes late finds nothing left and is not waited for (an OpenMP team's closing barrier
/// waits for every thread: two threads ran 2× slower than one on a loaded 2-core machine, and a
/// do-all over a few objects cost milliseconds). Idle workers sleep (no spinning).

#include <cstddef>

namespace shoal::arch::detail {

/// Launches of at most this many items run on the calling thread alone: waking the team costs
/// more than such work (a do-all over a few objects is one block's slots).
inline constexpr std::size_t serial_items = 256;

/// What a chunk runs: items [begin, end) of the launch whose function is `f`.
using chunk_body = void (*)(void* f, std::size_t begin, std::size_t end);

/// Runs body(f, begin, end) over [0, n) in chunks on the calling thread and the team; returns
/// when every chunk is done. A launch made while another one is in progress (from another host
/// thread) runs on its calling thread alone.
void run_on_team(std::size_t n, chunk_body body, void* f);

}  // namespace shoal::arch::detail
