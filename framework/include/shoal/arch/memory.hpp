#pragma once
/// @file
/// Device memory: cudaMalloc on cuda (never managed memory), aligned host memory on cpu.

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "shoal/arch/error.hpp"

namespace shoal::arch {

/// Allocates `bytes` of device memory aligned to at least 256 bytes. Throws backend_error
/// naming the size when the device has no room.
inline void* device_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
#if defined(SHOAL_BACKEND_CUDA)
  require_device();
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw backend_error("cannot allocate " + std::to_string(bytes) +
                        " bytes of GPU memory: " + cudaGetErrorString(err));
  }
  return p;
#else
  constexpr std::size_t align = 256;
  void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
  if (p == nullptr)
    throw backend_error("cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  return p;
#endif
}

/// Frees memory from device_allocate(); nullptr is ignored.
inline void device_free(void* p) noexcept {
  if (p == nullptr) return;
#if defined(SHOAL_BACKEND_CUDA)
  cudaFree(p);
#else
  std::free(p);
#endif
}

/// Copies `bytes` from host `src` to device `dst`; returns when the copy is done.
inline void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
#if defined(SHOAL_BACKEND_CUDA)
  SHOAL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
#else
  std::memcpy(dst, src, bytes);
#endif
}

/// Copies `bytes` from device `src` to host `dst`, after the work before it; returns when done.
inline void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
#if defined(SHOAL_BACKEND_CUDA)
  SHOAL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
#else
  std::memcpy(dst, src, bytes);
#endif
}

/// Enqueues a copy to the host on the default stream after the work before it; the bytes are
/// there once that work is waited for (arch::synchronize). `dst` should be pinned (see
/// pinned_value): pageable memory makes the copy synchronous.
inline void copy_to_host_enqueued(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
#if defined(SHOAL_BACKEND_CUDA)
  SHOAL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, nullptr));
#else
  std::memcpy(dst, src, bytes);
#endif
}

/// Copies `bytes` from device `src` to device `dst`.
inline void copy_on_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
#if defined(SHOAL_BACKEND_CUDA)
  SHOAL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
#else
  std::memcpy(dst, src, bytes);
#endif
}

/// Enqueues a copy of `bytes` from device `src` to device `dst` on the default stream, after the
/// work before it and before the work after it, without waiting (on cpu it is done at once).
inline void copy_on_device_enqueued(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
#if defined(SHOAL_BACKEND_CUDA)
  SHOAL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, nullptr));
#else
  std::memcpy(dst, src, bytes);
#endif
}

/// Enqueues a copy of `bytes` from host `src` to device `dst` on the default stream, without
/// waiting. `src` must stay as it is until that work is waited for, and should be pinned (see
/// pinned_bytes): pageable memory makes the copy synchronous.
inline void copy_to_device_enqueued(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
#if defined(SHOAL_BACKEND_CUDA)
  SHOAL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, nullptr));
#else
  std::memcpy(dst, src, bytes);
#endif
}

/// Sets `bytes` at device address `dst` to `value` (memset).
inline void fill_bytes(void* dst, int value, std::size_t bytes) {
  if (bytes == 0) return;
#if defined(SHOAL_BACKEND_CUDA)
  SHOAL_CUDA_CHECK(cudaMemset(dst, value, bytes));
#else
  std::memset(dst, value, bytes);
#endif
}

/// Enqueues filling `bytes` at `dst` with `value` on the default stream, after the work before it
/// and before the work after it, without waiting (on cpu it is done at once).
inline void fill_bytes_enqueued(void* dst, int value, std::size_t bytes) {
  if (bytes == 0) return;
#if defined(SHOAL_BACKEND_CUDA)
  SHOAL_CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, nullptr));
#else
  std::memset(dst, value, bytes);
#endif
}

/// An owning array of T in device memory (RAII, movable, not copyable). T must be trivially
/// copyable: its bytes move between host and device with memcpy.
template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  /// Allocates `n` elements, uninitialized.
  explicit device_buffer(std::size_t n) : data_(static_cast<T*>(device_allocate(n * sizeof(T)))), size_(n) {}
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  /// Takes over `o`'s array, leaving `o` empty.
  device_buffer(device_buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  /// Frees this array and takes over `o`'s, leaving `o` empty.
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      device_free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~device_buffer() { device_free(data_); }

  /// Device address of the first element (nullptr when empty).
  T* data() const { return data_; }
  /// Number of elements.
  std::size_t size() const { return size_; }
  /// Size in bytes.
  std::size_t bytes() const { return size_ * sizeof(T); }

  /// Sets every byte to 0.
  void zero() { fill_bytes(data_, 0, bytes()); }
  /// Copies `host` to the device; throws shoal::error unless it has exactly size() elements.
  void upload(const std::vector<T>& host) {
    if (host.size() != size_) throw error("device_buffer::upload: size mismatch");
    copy_to_device(data_, host.data(), bytes());
  }
  /// The whole array, copied to the host (a blocking copy).
  std::vector<T> download() const {
    std::vector<T> host(size_);
    copy_to_host(host.data(), data_, bytes());
    return host;
  }
  /// Element `i`, copied to the host (a blocking copy).
  T read(std::size_t i) const {
    T v;
    copy_to_host(&v, data_ + i, sizeof(T));
    return v;
  }
  /// Copies `v` into element `i`.
  void write(std::size_t i, const T& v) { copy_to_device(data_ + i, &v, sizeof(T)); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// One T in page-locked host memory (plain host memory on cpu), for copy_to_host_enqueued: a
/// copy of a few bytes then rides along with the wait for the work before it, instead of a
/// blocking cudaMemcpy through a staging buffer after it. T must be trivially copyable.
template <class T>
class pinned_value {
 public:
  pinned_value() {
#if defined(SHOAL_BACKEND_CUDA)
    require_device();
    SHOAL_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&value_), sizeof(T)));
#else
    value_ = static_cast<T*>(::operator new(sizeof(T)));
#endif
    std::memset(static_cast<void*>(value_), 0, sizeof(T));
  }
  pinned_value(const pinned_value&) = delete;
  pinned_value& operator=(const pinned_value&) = delete;
  /// Takes over `o`'s memory, leaving `o` empty.
  pinned_value(pinned_value&& o) noexcept : value_(std::exchange(o.value_, nullptr)) {}
  /// Frees this value's memory and takes over `o`'s, leaving `o` empty.
  pinned_value& operator=(pinned_value&& o) noexcept {
    if (this != &o) {
      release();
      value_ = std::exchange(o.value_, nullptr);
    }
    return *this;
  }
  ~pinned_value() { release(); }

  /// Host address of the value (zeroed at construction); nullptr once moved from.
  T* get() const { return value_; }

 private:
  void release() noexcept {
    if (value_ == nullptr) return;
#if defined(SHOAL_BACKEND_CUDA)
    cudaFreeHost(value_);
#else
    ::operator delete(value_);
#endif
    value_ = nullptr;
  }
  T* value_ = nullptr;
};

/// `bytes` of page-locked host memory (plain host memory on cpu), for the enqueued copies: a
/// buffer that stages transfers between the device and another process. Movable, not copyable.
class pinned_bytes {
 public:
  pinned_bytes() = default;
  /// Allocates `bytes`, uninitialized.
  explicit pinned_bytes(std::size_t bytes) : size_(bytes) {
    if (bytes == 0) return;
#if defined(SHOAL_BACKEND_CUDA)
    require_device();
    SHOAL_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), bytes));
#else
    data_ = static_cast<std::byte*>(::operator new(bytes));
#endif
  }
  pinned_bytes(const pinned_bytes&) = delete;
  pinned_bytes& operator=(const pinned_bytes&) = delete;
  /// Takes over `o`'s memory, leaving `o` empty.
  pinned_bytes(pinned_bytes&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  /// Frees this buffer's memory and takes over `o`'s, leaving `o` empty.
  pinned_bytes& operator=(pinned_bytes&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~pinned_bytes() { release(); }

  /// Host address of the first byte (nullptr when empty).
  std::byte* data() const { return data_; }
  /// Size in bytes.
  std::size_t size() const { return size_; }
  /// data(), after growing to at least `bytes` (half as much again) if it is smaller; growing
  /// first waits for the device, whose enqueued copies may still read the old buffer.
  std::byte* at_least(std::size_t bytes) {
    if (size_ < bytes) {
      synchronize();
      *this = pinned_bytes(bytes + bytes / 2);
    }
    return data_;
  }

 private:
  void release() noexcept {
    if (data_ == nullptr) return;
#if defined(SHOAL_BACKEND_CUDA)
    cudaFreeHost(data_);
#else
    ::operator delete(data_);
#endif
    data_ = nullptr;
  }
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace shoal::arch
