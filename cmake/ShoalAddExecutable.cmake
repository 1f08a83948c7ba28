# shoal_backend_sources(<target> <files>...): add device-code sources to a target.
# shoal_add_executable(<name> <files>...): an executable whose sources hold device code, linked
# to shoal::shoal.
#
# Device code lives in ordinary .cpp files and is written once: a cuda build compiles them with
# nvcc (LANGUAGE CUDA), a cpu build with the host compiler. The backend is the one shoal::shoal
# was built for (its SHOAL_BACKEND property), so these work the same inside Shoal's tree, from a
# parent project that adds Shoal with add_subdirectory(), and from an installed package
# (shoalConfig.cmake includes this file).

function(shoal_backend_sources target)
  target_sources(${target} PRIVATE ${ARGN})
  get_target_property(backend shoal::shoal SHOAL_BACKEND)
  if(backend STREQUAL "cuda")
    # enable_language() only counts in the directory that called it and below: a parent project
    # of Shoal must enable CUDA itself for its own device code.
    if(NOT CMAKE_CUDA_COMPILER_LOADED)
      message(FATAL_ERROR "${target}: Shoal's cuda backend compiles device code with nvcc; enable CUDA "
                          "in this directory or above (project(... LANGUAGES CXX CUDA))")
    endif()
    set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                                PROPERTIES LANGUAGE CUDA)
  endif()
endfunction()

function(shoal_add_executable name)
  add_executable(${name})
  shoal_backend_sources(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE shoal::shoal)
endfunction()
