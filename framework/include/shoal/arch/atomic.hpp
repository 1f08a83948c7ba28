#pragma once
/// @file
/// Device-scope atomics on plain words. Every read inside a retry loop must go through
/// `load_relaxed`: on Hopper a plain load may be served from a stale L1 line forever (the
/// DynaSOAr livelock), while a relaxed device-scope atomic load is always coherent.

#include <cstdint>

#include "shoal/config.hpp"

#if defined(SHOAL_BACKEND_CUDA) || defined(SHOAL_HAS_LIBCUDACXX)
#include <cuda/atomic>
#define SHOAL_ATOMIC_NS cuda
#else
#include <atomic>
#define SHOAL_ATOMIC_NS std
#endif

namespace shoal::arch {

#if defined(SHOAL_BACKEND_CUDA) || defined(SHOAL_HAS_LIBCUDACXX)
/// Device-scope atomic view of a plain word (libcu++ `cuda::atomic_ref`).
template <class T>
using atomic_ref = cuda::atomic_ref<T, cuda::thread_scope_device>;
#else
/// cpu: `std::atomic_ref`; see the cuda `atomic_ref` above.
template <class T>
using atomic_ref = std::atomic_ref<T>;
#endif

/// Relaxed memory order of the backend's atomics (`cuda::` or `std::`).
inline constexpr auto relaxed = SHOAL_ATOMIC_NS::memory_order_relaxed;
/// Acquire-release memory order.
inline constexpr auto acq_rel = SHOAL_ATOMIC_NS::memory_order_acq_rel;
/// Acquire memory order.
inline constexpr auto acquire = SHOAL_ATOMIC_NS::memory_order_acquire;
/// Release memory order.
inline constexpr auto release = SHOAL_ATOMIC_NS::memory_order_release;

/// Coherent relaxed load of `word`; use it for every read inside a retry loop (see the file comment).
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T load_relaxed(const T& word) {
  return atomic_ref<T>(const_cast<T&>(word)).load(relaxed);
}
/// Acquire load of `word`: later accesses see what the matching release store published.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T load_acquire(const T& word) {
  return atomic_ref<T>(const_cast<T&>(word)).load(acquire);
}
/// Relaxed atomic store of `value` into `word`.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE void store_relaxed(T& word, T value) {
  atomic_ref<T>(word).store(value, relaxed);
}
/// Release store of `value` into `word`: publishes every earlier write to an acquiring reader.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE void store_release(T& word, T value) {
  atomic_ref<T>(word).store(value, release);
}
/// Sets `bits` in `word` (acquire-release); returns the value before.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_or(T& word, T bits) {
  return atomic_ref<T>(word).fetch_or(bits, acq_rel);
}
/// ANDs `word` with `bits` (acquire-release), clearing the bits not in `bits`; returns the value before.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_and(T& word, T bits) {
  return atomic_ref<T>(word).fetch_and(bits, acq_rel);
}
/// Flips `bits` in `word` (acquire-release); returns the value before.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_xor(T& word, T bits) {
  return atomic_ref<T>(word).fetch_xor(bits, acq_rel);
}
/// Adds `delta` to `word` (acquire-release); returns the value before.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_add(T& word, T delta) {
  return atomic_ref<T>(word).fetch_add(delta, acq_rel);
}
/// Adds `delta` to `word` with relaxed order; returns the value before.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_add_relaxed(T& word, T delta) {
  return atomic_ref<T>(word).fetch_add(delta, relaxed);
}
/// Subtracts `delta` from `word` (acquire-release); returns the value before.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_sub(T& word, T delta) {
  return atomic_ref<T>(word).fetch_sub(delta, acq_rel);
}
/// Raises `word` to `value` if that is larger; returns the value before. One atomic instruction
/// on the GPU: no compare-and-swap loop that many threads raising one word would keep retrying.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_max_relaxed(T& word, T value) {
#if defined(SHOAL_BACKEND_CUDA) || defined(SHOAL_HAS_LIBCUDACXX)
  return atomic_ref<T>(word).fetch_max(value, relaxed);
#else
  atomic_ref<T> ref(word);
  T seen = ref.load(relaxed);
  while (value > seen && !ref.compare_exchange_weak(seen, value, relaxed)) {
  }
  return seen;
#endif
}
/// Relaxed OR and AND of a 64-bit word whose old value nobody needs: on the GPU a reduction
/// (RED), which the issuing thread does not wait for, as it would for an atomic's result.
SHOAL_HD SHOAL_FORCEINLINE void or_relaxed(std::uint64_t& word, std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
  atomicOr(reinterpret_cast<unsigned long long*>(&word), static_cast<unsigned long long>(bits));
#else
  atomic_ref<std::uint64_t>(word).fetch_or(bits, relaxed);
#endif
}
/// Relaxed AND of `word` with `bits`, old value discarded (a RED on the GPU, like `or_relaxed`).
SHOAL_HD SHOAL_FORCEINLINE void and_relaxed(std::uint64_t& word, std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
  atomicAnd(reinterpret_cast<unsigned long long*>(&word), static_cast<unsigned long long>(bits));
#else
  atomic_ref<std::uint64_t>(word).fetch_and(bits, relaxed);
#endif
}
/// Relaxed add to a 64-bit word whose old value nobody needs: on the GPU a reduction
/// (RED) too. atomic_ref's fetch_add on a generic address is an ATOM that also reports whether
/// the address was global (else it retries in shared memory), and the thread waits for that
/// report, an L2 round trip (about 600 cycles on the H100), even when it ignores the value.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE void add_relaxed(T& word, T delta) {
  static_assert(sizeof(T) == 8, "64-bit words");
#if defined(__CUDA_ARCH__)
  atomicAdd(reinterpret_cast<unsigned long long*>(&word), static_cast<unsigned long long>(delta));  // modulo 2^64
#else
  atomic_ref<T>(word).fetch_add(delta, relaxed);
#endif
}
/// Weaker forms for the allocator's hot paths, where a full acquire-release (a memory barrier
/// before the atomic on the GPU) is more than the protocol needs: an acquire RMW takes
/// something published by a release and publishes nothing itself; a release RMW publishes.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_and_acquire(T& word, T bits) {
  return atomic_ref<T>(word).fetch_and(bits, acquire);
}
/// Relaxed AND of `word` with `bits`; returns the value before.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_and_relaxed(T& word, T bits) {
  return atomic_ref<T>(word).fetch_and(bits, relaxed);
}
/// Relaxed OR of `bits` into `word`; returns the value before.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_or_relaxed(T& word, T bits) {
  return atomic_ref<T>(word).fetch_or(bits, relaxed);
}
/// Release OR of `bits` into `word`, publishing earlier writes; returns the value before.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_or_release(T& word, T bits) {
  return atomic_ref<T>(word).fetch_or(bits, release);
}
/// `p`, as a value the compiler must believe computed from `after`: a load through it cannot be
/// issued before `after` (e.g. an atomic's result) is known. The hardware then performs it after
/// that atomic, at the L2 where both are served (relaxed device-scope loads bypass the L1), as
/// an acquire would order it, without the acquire's invalidation of the processor's L1, which
/// costs every warp on the processor its cached lines.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T* ordered_after(T* p, std::uint64_t after) {
#if defined(__CUDA_ARCH__)
  asm volatile("" : "+l"(p) : "l"(after));
  return p;
#else
  (void)after;  // the cpu backend's claims are acquire RMWs (ThreadSanitizer models those)
  return p;
#endif
}
/// Release add of `delta` to `word`, publishing earlier writes; returns the value before.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T fetch_add_release(T& word, T delta) {
  return atomic_ref<T>(word).fetch_add(delta, release);
}
/// Like `compare_exchange`, but acquire on success (relaxed on failure) and publishing nothing.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE bool compare_exchange_acquire(T& word, T& expected, T desired) {
  return atomic_ref<T>(word).compare_exchange_strong(expected, desired, acquire, relaxed);
}

/// Stores `value` and returns what the word held (acquire-release).
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T exchange(T& word, T value) {
  return atomic_ref<T>(word).exchange(value, acq_rel);
}

/// Returns true when `word` held `expected` and now holds `desired`; otherwise `expected`
/// receives the current value.
template <class T>
SHOAL_HD SHOAL_FORCEINLINE bool compare_exchange(T& word, T& expected, T desired) {
  return atomic_ref<T>(word).compare_exchange_strong(expected, desired, acq_rel, relaxed);
}

/// Stores `value` and returns what the word held, with no ordering of its own (pair with fences).
template <class T>
SHOAL_HD SHOAL_FORCEINLINE T exchange_relaxed(T& word, T value) {
  return atomic_ref<T>(word).exchange(value, relaxed);
}
/// A device-wide fence of memory order `order` (libcu++'s at device scope, or std's).
SHOAL_HD SHOAL_FORCEINLINE void thread_fence(decltype(relaxed) order) {
#if defined(SHOAL_BACKEND_CUDA) || defined(SHOAL_HAS_LIBCUDACXX)
  cuda::atomic_thread_fence(order, cuda::thread_scope_device);
#else
  std::atomic_thread_fence(order);
#endif
}
/// An acquire-release fence, device-wide: with relaxed atomics before it, they acquire; with
/// relaxed stores and atomics after it, they release.
SHOAL_HD SHOAL_FORCEINLINE void fence_acq_rel() { thread_fence(acq_rel); }
/// Orders every memory access before it against every one after it, device-wide.
SHOAL_HD SHOAL_FORCEINLINE void fence() { thread_fence(SHOAL_ATOMIC_NS::memory_order_seq_cst); }

}  // namespace shoal::arch

#undef SHOAL_ATOMIC_NS
