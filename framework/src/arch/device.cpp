// Device discovery and error text for both backends.
#include <sstream>
#include <string>

#include "shoal/arch/error.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <cuda_runtime.h>
#else
#include <thread>
#endif

namespace shoal::arch {

void throw_backend_error(const std::string& what, const char* expr, const char* file, int line) {
  std::ostringstream os;
  os << what << " (in " << expr << " at " << file << ":" << line << ")";
  throw backend_error(os.str());
}

#if defined(SHOAL_BACKEND_CUDA)

namespace {
device_status probe_cuda() {
  device_status s;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // Without any NVIDIA driver the runtime answers "driver version is insufficient":
    // say what that really means.
    s.reason = (err == cudaErrorInsufficientDriver)
                   ? "no usable NVIDIA GPU: the CUDA driver is missing or older than this build "
                     "needs (cudaErrorInsufficientDriver)"
                   : std::string("no usable NVIDIA GPU: ") + cudaGetErrorString(err);
    cudaGetLastError();
    return s;
  }
  if (count == 0) {
    s.reason = "no usable NVIDIA GPU: the driver reports no devices";
    return s;
  }
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    s.reason = "no usable NVIDIA GPU: cannot query device properties";
    cudaGetLastError();
    return s;
  }
  int driver = 0;
  cudaDriverGetVersion(&driver);
  std::ostringstream os;
  os << prop.name << " (sm_" << prop.major << prop.minor << ", " << prop.multiProcessorCount
     << " SMs, CUDA driver " << driver / 1000 << "." << (driver % 1000) / 10 << ")";
  s.usable = true;
  s.description = os.str();
  s.multiprocessors = prop.multiProcessorCount;
  s.dependent_launch = prop.major >= 9;
  return s;
}
}  // namespace

const device_status& probe_device() {
  static const device_status status = probe_cuda();
  return status;
}

void require_device() {
  const auto& s = probe_device();
  if (!s.usable) throw no_device_error(s.reason);
}

void synchronize() {
  SHOAL_CUDA_CHECK(cudaGetLastError());
  SHOAL_CUDA_CHECK(cudaDeviceSynchronize());
}

int cpu_threads() { return 1; }
void set_cpu_threads(int) {}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // not sticky, but later checks read the last error
    return 0;
  }
  return count;
}

void use_device(int ordinal) {
  // Checked first: a failed cudaSetDevice would leave its error for the next check to find.
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count)
    throw backend_error("use_device(" + std::to_string(ordinal) + "): this process sees " + std::to_string(count) +
                        " GPU" + (count == 1 ? "" : "s"));
  SHOAL_CUDA_CHECK(cudaSetDevice(ordinal));
}

#else  // cpu: cpu_threads() and set_cpu_threads() are in cpu_team.cpp

const device_status& probe_device() {
  static const device_status status = [] {
    device_status s;
    s.usable = true;
    std::ostringstream os;
    os << "cpu backend (" << cpu_threads() << " threads on " << std::thread::hardware_concurrency()
       << " cores)";
    s.description = os.str();
    s.multiprocessors = cpu_threads();
    return s;
  }();
  return status;
}

void require_device() {}
void synchronize() {}

int device_count() { return 0; }
void use_device(int ordinal) {
  throw backend_error("use_device(" + std::to_string(ordinal) + "): the cpu backend has no GPU to choose");
}

#endif

}  // namespace shoal::arch
