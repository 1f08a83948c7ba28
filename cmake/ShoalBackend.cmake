# Backend plumbing shared by every target that holds device code: the backend's dependencies,
# and the functions that compile device code for it (ShoalAddExecutable.cmake).

if(SHOAL_BACKEND STREQUAL "cuda")
  find_package(CUDAToolkit REQUIRED)
  find_package(CCCL CONFIG REQUIRED HINTS "${CUDAToolkit_LIBRARY_DIR}/cmake")
else()
  # libcu++ gives the cpu backend the same cuda::atomic_ref as the GPU; without a CUDA toolkit
  # the cpu backend falls back to std::atomic_ref (C++20), which has the same semantics.
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    find_package(CCCL CONFIG QUIET HINTS "${CUDAToolkit_LIBRARY_DIR}/cmake")
  endif()
endif()

# shoal_backend_sources() and shoal_add_executable(), also installed with the package.
include(${CMAKE_CURRENT_LIST_DIR}/ShoalAddExecutable.cmake)
