# Backend plumbing shared by every target that holds device code.
#
# Device code lives in ordinary .cpp files and is written once. In a cuda build those files are
# compiled by nvcc (LANGUAGE CUDA); in a cpu build by the host compiler with OpenMP.

if(SHOAL_BACKEND STREQUAL "cuda")
  find_package(CUDAToolkit REQUIRED)
  find_package(CCCL CONFIG REQUIRED HINTS "${CUDAToolkit_LIBRARY_DIR}/cmake")
else()
  find_package(OpenMP)
  # libcu++ gives the cpu backend the same cuda::atomic_ref as the GPU; without a CUDA toolkit
  # the cpu backend falls back to std::atomic_ref (C++20), which has the same semantics.
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    find_package(CCCL CONFIG QUIET HINTS "${CUDAToolkit_LIBRARY_DIR}/cmake")
  endif()
endif()

# shoal_backend_sources(<target> <files>...): add device-code sources to a target.
function(shoal_backend_sources target)
  target_sources(${target} PRIVATE ${ARGN})
  if(SHOAL_BACKEND STREQUAL "cuda")
    set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                                PROPERTIES LANGUAGE CUDA)
  endif()
endfunction()

# shoal_add_executable(<name> <files>...): an executable whose sources hold device code.
function(shoal_add_executable name)
  add_executable(${name})
  shoal_backend_sources(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE shoal::shoal)
endfunction()
