#pragma once
/// @file
/// Errors of the backend layer and the one place that turns CUDA error codes into exceptions
/// that name file and line.

#include <stdexcept>
#include <string>

#include "shoal/config.hpp"

namespace shoal {

/// Base of every error Shoal reports on the host.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The backend failed (a CUDA call returned an error, a launch failed, ...).
class backend_error : public error {
 public:
  using error::error;
};

/// The cuda backend found no usable GPU (no driver, driver too old, no device).
class no_device_error : public backend_error {
 public:
  using backend_error::backend_error;
};

namespace arch {

/// What the backend's device is, probed once. Never throws: a CUDA binary on a machine
/// without a GPU reports `usable == false` and a one-line reason.
struct device_status {
  bool usable = false;      ///< a device is there and can run kernels
  std::string reason;       ///< why not usable (empty when usable)
  std::string description;  ///< e.g. "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, driver 13.0)"
  int multiprocessors = 1;  ///< SMs of the GPU; host threads on the cpu backend
  /// Compute capability ≥ 9.0: a kernel may be launched before the previous one on its stream
  /// has finished, and wait for it on the device (programmatic dependent launch).
  bool dependent_launch = false;
};

/// The device's status, probed on the first call and cached; never throws.
const device_status& probe_device();

/// Throws no_device_error with the one-line reason when the device is not usable.
void require_device();

/// GPUs this process can use: 0 on the cpu backend and where no usable driver is found.
int device_count();
/// Makes GPU `ordinal` (0 to device_count() - 1) the one this process uses, for runs with one
/// process per GPU (dist::use_local_device picks it by the process's rank on its machine). Call
/// it before anything touches the device: probe_device() describes the device that is current
/// at its first call. Throws backend_error for an ordinal out of range (the cpu backend has none).
void use_device(int ordinal);

/// Waits for all device work and rethrows any asynchronous error as backend_error.
void synchronize();

/// Number of host threads the cpu backend uses for launches (cpu only; 1 on cuda).
int cpu_threads();
/// Sets the number of host threads for later launches (cpu only; ignored on cuda).
void set_cpu_threads(int n);

/// Throws backend_error with `what`, the failing expression and its file and line (used by
/// SHOAL_CUDA_CHECK).
[[noreturn]] void throw_backend_error(const std::string& what, const char* expr, const char* file,
                                      int line);

}  // namespace arch
}  // namespace shoal

#if defined(SHOAL_BACKEND_CUDA)
#include <cuda_runtime_api.h>
/// Checks a CUDA runtime call; throws shoal::backend_error naming the call, file and line.
#define SHOAL_CUDA_CHECK(expr)                                                                 \
  do {                                                                                         \
    const cudaError_t shoal_err_ = (expr);                                                     \
    if (shoal_err_ != cudaSuccess)                                                             \
      ::shoal::arch::throw_backend_error(cudaGetErrorString(shoal_err_), #expr, __FILE__,      \
                                         __LINE__);                                            \
  } while (0)
#endif
