# shoal_add_python_module(<name> <sources>...): a Python module (nanobind) of Shoal models, their
# device code compiled for Shoal's backend, with shoal/python/model.hpp on its include path.
#
#   find_package(shoal REQUIRED)                        # an installed Shoal (or Shoal's own tree)
#   shoal_add_python_module(my_models my_models.cpp)    # import my_models
#
# Finds Python (Interpreter, Development.Module) and nanobind (through `python -m nanobind`,
# so `pip install nanobind` is enough) when first called; set Python_EXECUTABLE to choose the
# Python. The module exports its init function only (ShoalPythonModule.map): with
# Shoal's static libraries, CLI11 and CCCL exported, its first model crashed in a process that
# had PyTorch (H200, the cuda build), whose libraries hold symbols of the same names.

set(shoal_python_support_dir "${CMAKE_CURRENT_LIST_DIR}")

function(shoal_add_python_module name)
  if(NOT TARGET Python::Module)
    find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
  endif()
  if(NOT COMMAND nanobind_add_module)
    if(NOT nanobind_DIR)
      execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                      OUTPUT_VARIABLE nb_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE nb_status)
      if(NOT nb_status EQUAL 0)
        message(FATAL_ERROR "shoal_add_python_module: nanobind not found for ${Python_EXECUTABLE} (pip install nanobind)")
      endif()
      set(nanobind_DIR "${nb_dir}" CACHE PATH "nanobind's CMake package" FORCE)
    endif()
    find_package(nanobind CONFIG REQUIRED)
  endif()
  nanobind_add_module(${name} NB_STATIC ${ARGN})
  get_target_property(backend shoal::shoal SHOAL_BACKEND)
  if(backend STREQUAL "cuda")
    set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTIES LANGUAGE CUDA)
    # One CUDA runtime, the shared one that shoal::shoal links (not CMake's default static one
    # beside it), so that beside PyTorch the process holds one libcudart.
    set_target_properties(${name} PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  endif()
  target_link_options(${name} PRIVATE "LINKER:--version-script=${shoal_python_support_dir}/ShoalPythonModule.map")
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS "${shoal_python_support_dir}/ShoalPythonModule.map")
  target_link_libraries(${name} PRIVATE shoal::viz)
  if(TARGET shoal_python_headers)  # Shoal's own tree (installed, the headers lie with Shoal's)
    target_link_libraries(${name} PRIVATE shoal_python_headers)
  endif()
endfunction()
