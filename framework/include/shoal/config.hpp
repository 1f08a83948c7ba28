#pragma once
/// @file
/// Backend selection macros. Exactly one of SHOAL_BACKEND_CUDA / SHOAL_BACKEND_CPU is defined
/// by the build (see cmake/ShoalBackend.cmake); everything above `arch/` only uses the macros here.

// Linking shoal::shoal asks for C++20; this catches a build that compiles the headers otherwise.
#if __cplusplus < 202002L
#error "Shoal needs C++20"
#endif

#if defined(SHOAL_BACKEND_CUDA) == defined(SHOAL_BACKEND_CPU)
#error "Define exactly one of SHOAL_BACKEND_CUDA or SHOAL_BACKEND_CPU (the build system does this)"
#endif

#if defined(SHOAL_BACKEND_CUDA)
#if !defined(__CUDACC__)
#error "The cuda backend's device code must be compiled by nvcc (LANGUAGE CUDA in CMake)"
#endif
#define SHOAL_HD __host__ __device__
#define SHOAL_DEVICE __device__
#define SHOAL_HOST __host__
#define SHOAL_FORCEINLINE __forceinline__
#define SHOAL_NOINLINE __noinline__
#else
#define SHOAL_HD
#define SHOAL_DEVICE
#define SHOAL_HOST
#define SHOAL_FORCEINLINE inline __attribute__((always_inline))
#define SHOAL_NOINLINE __attribute__((noinline))
#endif

/// True while compiling code that runs on the "device" of the active backend: GPU code on
/// cuda, every function on cpu (there the host is the device).
#if defined(SHOAL_BACKEND_CPU) || defined(__CUDA_ARCH__)
#define SHOAL_IN_DEVICE_CODE 1
#else
#define SHOAL_IN_DEVICE_CODE 0
#endif

namespace shoal {
#if defined(SHOAL_BACKEND_CUDA)
/// Name of the backend this build uses: "cuda" or "cpu".
inline constexpr const char* backend_name = "cuda";
#else
/// cpu: "cpu".
inline constexpr const char* backend_name = "cpu";
#endif
}  // namespace shoal
