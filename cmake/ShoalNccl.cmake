# NCCL, for the distributed layer's device-to-device transport (shoal/dist/neighbour_link.hpp,
# SHOAL_DIST_TRANSPORT=nccl): cuda backend only, and only where found. NCCL_ROOT (a CMake or
# environment variable) may name a folder holding include/nccl.h and lib/libnccl.so or
# lib/libnccl.so.2, such as the nvidia-nccl-cu13 Python package's nvidia/nccl. Defines the
# imported target shoal_nccl (with SHOAL_HAVE_NCCL=1); without it the layer stages through host
# memory only.
if(SHOAL_BACKEND STREQUAL "cuda" AND NOT TARGET shoal_nccl)
  find_path(SHOAL_NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} PATH_SUFFIXES include)
  find_library(SHOAL_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} PATH_SUFFIXES lib lib64)
  if(SHOAL_NCCL_INCLUDE_DIR AND SHOAL_NCCL_LIBRARY)
    add_library(shoal_nccl INTERFACE IMPORTED)
    target_include_directories(shoal_nccl INTERFACE ${SHOAL_NCCL_INCLUDE_DIR})
    target_link_libraries(shoal_nccl INTERFACE ${SHOAL_NCCL_LIBRARY})
    target_compile_definitions(shoal_nccl INTERFACE SHOAL_HAVE_NCCL=1)
    message(STATUS "NCCL: ${SHOAL_NCCL_LIBRARY} (shoal::dist's nccl transport)")
  else()
    message(STATUS "NCCL: not found (shoal::dist stages through host memory; NCCL_ROOT names one)")
  endif()
endif()
