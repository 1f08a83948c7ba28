# Teaches CMake < 3.26 that nvcc (12 and later) compiles C++20, so that the cuda_std_20 compile
# feature, which shoal::shoal asks of every target that links it, turns into -std=c++20 for CUDA
# sources (and not the c++17 that CMake 3.25 would settle for). Include it after CUDA is enabled:
# the variables belong to the directory scope, so Shoal's root includes it and so does the
# installed shoalConfig.cmake, in the consumer's scope. Newer CMake knows the flag: nothing then.
if(CMAKE_CUDA_COMPILER_LOADED AND NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION
   AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA" AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
endif()
