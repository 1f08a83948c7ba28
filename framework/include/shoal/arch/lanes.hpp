#pragma once
/// @file
/// Lane operations of a "warp". On cuda a warp is 32 lanes and these map to the warp
/// intrinsics; on cpu a warp is one thread (width 1), so a ballot is the predicate and a
/// shuffle is the identity. Collaborative algorithms written against this header run
/// unchanged on both backends: with width 1 they degenerate to their per-thread versions.

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "shoal/config.hpp"

#if defined(SHOAL_BACKEND_CPU)
#include <thread>
#include <functional>
#endif

namespace shoal::arch {

/// One bit per lane of a warp (bit i = lane i).
using lane_mask = std::uint32_t;

/// SHOAL_SPIN_WATCHDOG builds: whether a wait of `pauses` pauses is reported (every power of two
/// from 4096 on, so that a slow wait and a stuck one look different).
SHOAL_HD constexpr bool report_at(std::uint32_t pauses) { return pauses >= 4096 && (pauses & (pauses - 1)) == 0; }

#if defined(SHOAL_BACKEND_CUDA)
/// Lanes per warp: 32 on cuda.
inline constexpr int warp_width = 32;
#else
/// cpu: a warp is one thread.
inline constexpr int warp_width = 1;
#endif

// Bit helpers: the hardware instructions in GPU code, <bit> everywhere else. Device code must
// use these: nvcc 13 compiles std::popcount and std::countr_zero in a kernel without a word of
// warning into constants (checked in its PTX: the popcount's store vanishes, countr_zero gives 64).
#if defined(__CUDA_ARCH__)
/// Number of set bits.
SHOAL_HD SHOAL_FORCEINLINE int popc(std::uint32_t x) { return __popc(x); }
/// Number of set bits.
SHOAL_HD SHOAL_FORCEINLINE int popc(std::uint64_t x) { return __popcll(x); }
/// Index of the lowest set bit; undefined for 0.
SHOAL_HD SHOAL_FORCEINLINE int lowest_bit(std::uint64_t x) { return __ffsll(static_cast<long long>(x)) - 1; }
/// Index of the lowest set bit; undefined for 0.
SHOAL_HD SHOAL_FORCEINLINE int lowest_bit(std::uint32_t x) { return __ffs(static_cast<int>(x)) - 1; }
/// Number of leading zero bits; 64 for 0.
SHOAL_HD SHOAL_FORCEINLINE int count_leading_zeros(std::uint64_t x) { return __clzll(static_cast<long long>(x)); }
/// `x` rotated right by `r` bits (taken modulo 64).
SHOAL_HD SHOAL_FORCEINLINE std::uint64_t rotate_right(std::uint64_t x, int r) {
  r &= 63;
  return r == 0 ? x : (x >> r) | (x << (64 - r));
}
#else
/// Number of set bits.
SHOAL_HD SHOAL_FORCEINLINE int popc(std::uint32_t x) { return std::popcount(x); }
/// Number of set bits.
SHOAL_HD SHOAL_FORCEINLINE int popc(std::uint64_t x) { return std::popcount(x); }
/// Index of the lowest set bit; undefined for 0.
SHOAL_HD SHOAL_FORCEINLINE int lowest_bit(std::uint64_t x) { return std::countr_zero(x); }
/// Index of the lowest set bit; undefined for 0.
SHOAL_HD SHOAL_FORCEINLINE int lowest_bit(std::uint32_t x) { return std::countr_zero(x); }
/// Number of leading zero bits; 64 for 0.
SHOAL_HD SHOAL_FORCEINLINE int count_leading_zeros(std::uint64_t x) { return std::countl_zero(x); }
/// `x` rotated right by `r` bits (taken modulo 64).
SHOAL_HD SHOAL_FORCEINLINE std::uint64_t rotate_right(std::uint64_t x, int r) { return std::rotr(x, r); }
#endif

/// Position of the k-th (0-based) set bit of `word`, or -1 if it has k or fewer set bits.
/// Binary search with popcounts (the CoRW paper's fks), branch-light in device code.
SHOAL_HD SHOAL_FORCEINLINE int nth_set_bit(std::uint64_t word, int k) {
  if (k >= popc(word)) return -1;
  int pos = 0;
  for (int width = 32; width > 0; width >>= 1) {
    const std::uint64_t low = word & ((std::uint64_t{1} << width) - 1);
    const int n = popc(low);
    if (k >= n) {
      k -= n;
      word >>= width;
      pos += width;
    } else {
      word = low;
    }
  }
  return pos;
}

/// The `k` lowest set bits of `word` (all of them if it has fewer).
SHOAL_HD SHOAL_FORCEINLINE std::uint64_t lowest_set_bits(std::uint64_t word, int k) {
  if (k >= popc(word)) return word;
  if (k <= 0) return 0;
  const int cut = nth_set_bit(word, k);  // first bit NOT taken
  return word & ((std::uint64_t{1} << cut) - 1);
}

/// The `k` set bits of `word` that come first from bit `start` on, cyclically (all of them if it
/// has fewer): lowest_set_bits() of the word rotated to begin at `start`.
SHOAL_HD SHOAL_FORCEINLINE std::uint64_t set_bits_from(std::uint64_t word, int k, int start) {
  start &= 63;
  return rotate_right(lowest_set_bits(rotate_right(word, start), k), (64 - start) & 63);
}

#if defined(SHOAL_BACKEND_CUDA)

/// The caller's lane within its warp (0–31).
__device__ SHOAL_FORCEINLINE int lane_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return static_cast<int>(r);
}
/// Mask of the lanes whose lane id is lower than the caller's.
__device__ SHOAL_FORCEINLINE lane_mask lanes_below() {
  unsigned r;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
  return r;
}
/// The SM the calling warp runs on (spreads allocator hints and walk seeds across processors).
__device__ SHOAL_FORCEINLINE int processor_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return static_cast<int>(r);
}
/// Which of its processor's warp slots this warp occupies (0–63 on sm_90): warps that share a
/// processor's hints start their claims at different slots of a block.
__device__ SHOAL_FORCEINLINE int warp_slot() {
  unsigned r;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(r));
  return static_cast<int>(r);
}
/// Mask of the lanes of the warp that execute this call together (converged).
__device__ SHOAL_FORCEINLINE lane_mask active_lanes() { return __activemask(); }
/// Mask of the lanes of `mask` whose `pred` is true (every lane of `mask` must call it).
__device__ SHOAL_FORCEINLINE lane_mask ballot(lane_mask mask, bool pred) { return __ballot_sync(mask, pred); }
/// Waits until every lane of `mask` has reached this call, and orders their memory accesses.
__device__ SHOAL_FORCEINLINE void sync_lanes(lane_mask mask) { __syncwarp(mask); }
/// Mask of the lanes of `mask` that passed the same `value` as the caller.
__device__ SHOAL_FORCEINLINE lane_mask match_any(lane_mask mask, std::uint64_t value) {
  return __match_any_sync(mask, static_cast<unsigned long long>(value));
}
/// `value` of lane `src_lane`, for every lane of `mask`; words of up to 8 bytes and pointers.
template <class T>
__device__ SHOAL_FORCEINLINE T shuffle(lane_mask mask, T value, int src_lane) {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<T>(
        __shfl_sync(mask, reinterpret_cast<unsigned long long>(value), src_lane));
  } else if constexpr (sizeof(T) == 8) {
    return static_cast<T>(__shfl_sync(mask, static_cast<unsigned long long>(value), src_lane));
  } else {
    static_assert(sizeof(T) <= 4, "shuffle() handles words of up to 8 bytes");
    return static_cast<T>(__shfl_sync(mask, static_cast<unsigned>(value), src_lane));
  }
}
/// Bitwise OR of `value` over the lanes of `mask` (every lane gets the result).
__device__ SHOAL_FORCEINLINE std::uint64_t reduce_or(lane_mask mask, std::uint64_t value) {
  const unsigned lo = __reduce_or_sync(mask, static_cast<unsigned>(value));
  const unsigned hi = __reduce_or_sync(mask, static_cast<unsigned>(value >> 32));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}
/// Sum of `value` modulo 2^64 over the lanes of `mask` (every lane gets the result): four sums of
/// 16-bit pieces, each of which fits 32 bits for 32 lanes (the hardware reduction's width).
__device__ SHOAL_FORCEINLINE std::uint64_t reduce_add(lane_mask mask, std::uint64_t value) {
  std::uint64_t sum = 0;
#pragma unroll
  for (int piece = 0; piece < 4; ++piece)
    sum += static_cast<std::uint64_t>(__reduce_add_sync(mask, static_cast<unsigned>((value >> (16 * piece)) & 0xFFFFu)))
           << (16 * piece);
  return sum;
}
/// A cheap, per-call-varying value for seeding random walks.
__device__ SHOAL_FORCEINLINE std::uint64_t cycle_counter() { return clock64(); }
#if defined(SHOAL_SPIN_WATCHDOG)
/// Pauses so far per thread (global thread id modulo 2^20), for spin_pause's reports.
static __device__ unsigned spin_pause_counts[1u << 20];
/// Back off inside a retry loop so the thread we wait for can make progress. SHOAL_SPIN_WATCHDOG
/// builds also count this thread's pauses and name the call site at every report_at() count: a
/// thread stuck in a retry loop names the loop.
__device__ SHOAL_FORCEINLINE void spin_pause(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  __nanosleep(32);
  const unsigned n = ++spin_pause_counts[(blockIdx.x * blockDim.x + threadIdx.x) & ((1u << 20) - 1)];
  if (report_at(n)) printf("shoal: pause %u at %s:%d (block %u thread %u)\n", n, file, line, blockIdx.x, threadIdx.x);
}
#else
/// Back off inside a retry loop so the thread we wait for can make progress.
__device__ SHOAL_FORCEINLINE void spin_pause() { __nanosleep(32); }
#endif
/// The pause of a wait that has lasted `pauses` pauses: 32 ns, doubling every 16 pauses up to
/// 4 µs. The lanes waited for may be diverged lanes of the waiting warp itself, and waiters that
/// slept 32 ns at a time kept such a lane (a stock's preparer) from running for minutes under
/// compute-sanitizer racecheck. A wait that ends within ~0.5 µs, the common one, is unchanged.
__device__ SHOAL_FORCEINLINE void backoff_pause(std::uint32_t pauses) {
  const std::uint32_t doublings = pauses / 16;
  __nanosleep(32u << (doublings < 7 ? doublings : 7u));
}

#else  // cpu: width-1 warps

inline int lane_id() { return 0; }
inline lane_mask lanes_below() { return 0; }
namespace detail {
inline thread_local const int thread_salt = static_cast<int>(
    std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0x3fffffff);
}
/// Distinguishes concurrent cpu threads (for seeding walks only).
inline int processor_id() { return detail::thread_salt; }
inline int warp_slot() { return detail::thread_salt; }
inline lane_mask active_lanes() { return 1u; }
inline lane_mask ballot(lane_mask, bool pred) { return pred ? 1u : 0u; }
inline void sync_lanes(lane_mask) {}
inline lane_mask match_any(lane_mask, std::uint64_t) { return 1u; }
template <class T>
inline T shuffle(lane_mask, T value, int) { return value; }
inline std::uint64_t reduce_or(lane_mask, std::uint64_t value) { return value; }
inline std::uint64_t reduce_add(lane_mask, std::uint64_t value) { return value; }
inline std::uint64_t cycle_counter() {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return static_cast<std::uint64_t>(std::hash<std::thread::id>{}(std::this_thread::get_id()));
#endif
}
/// Threads may outnumber cores on the cpu backend: yield so a preempted peer can finish.
inline void spin_pause() { std::this_thread::yield(); }
inline void backoff_pause(std::uint32_t) { spin_pause(); }

#endif

/// A loop that waits for another thread: spin_wait(watch, "where") pauses (backoff_pause), and
/// in SHOAL_SPIN_WATCHDOG builds reports the place at every power of two from 4096 pauses on (so a
/// slow wait and a stuck one look different) and traps after 2^SHOAL_SPIN_WATCHDOG_LOG2 pauses
/// (default 2^22, seconds), so a protocol bug shows up as lines naming the loop instead of a hang.
#if defined(SHOAL_SPIN_WATCHDOG) && !defined(SHOAL_SPIN_WATCHDOG_LOG2)
#define SHOAL_SPIN_WATCHDOG_LOG2 22
#endif
struct spin_watch {
  std::uint32_t pauses = 0;  ///< pauses so far
};
/// One pause of a waiting loop (see spin_watch); `where` names the loop in the watchdog's report.
SHOAL_DEVICE SHOAL_FORCEINLINE void spin_wait(spin_watch& watch, const char* where) {
  backoff_pause(watch.pauses);
  ++watch.pauses;
#if defined(SHOAL_SPIN_WATCHDOG)
  if (report_at(watch.pauses) && watch.pauses < (1u << SHOAL_SPIN_WATCHDOG_LOG2))
    printf("shoal: spin watch: %u pauses in %s\n", watch.pauses, where);
  if (watch.pauses == (1u << SHOAL_SPIN_WATCHDOG_LOG2)) {
    printf("shoal: spin watchdog: no progress in %s\n", where);
#if defined(__CUDA_ARCH__)
    __trap();
#else
    std::abort();
#endif
  }
#else
  (void)watch, (void)where;
#endif
}

/// Lanes of `mask` with a lower lane id than the caller.
SHOAL_DEVICE SHOAL_FORCEINLINE int rank_in(lane_mask mask) { return popc(mask & lanes_below()); }

}  // namespace shoal::arch
