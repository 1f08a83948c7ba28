# Install rules: `cmake --install <build> --prefix <p>` gives <p> a relocatable CMake package,
#
#   include/shoal/...                  the public headers of shoal and shoal::viz
#   include/shoal/third_party/         CLI11 and Random123, which shoal/sim/ includes
#   lib/libshoal.a, lib/libshoal_viz.a
#   lib/cmake/shoal/                   shoalConfig.cmake, its version file, the exported targets,
#                                      shoal_add_executable() (ShoalAddExecutable.cmake),
#                                      shoal_add_python_module() (ShoalPython.cmake)
#   include/shoal/python/              the Python binding's headers (nanobind; docs/python.md)
#
# that a project uses with find_package(shoal REQUIRED) (examples/downstream/). One prefix holds
# one backend: install the cpu and the cuda build to different prefixes.

include(CMakePackageConfigHelpers)
set(shoal_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/shoal")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/framework/include/" "${PROJECT_SOURCE_DIR}/viz/include/"
                  "${PROJECT_SOURCE_DIR}/python/include/"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
# The vendored copies, whichever copy the build used: they are the versions of Debian 12's
# libcli11-dev and librandom123-dev, unchanged (third_party/README.md), and carrying them means a
# consumer needs neither package, nor network (the GPU machine), nor find modules that these
# header-only packages do not ship.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/third_party/cli11/CLI"
                  "${PROJECT_SOURCE_DIR}/third_party/random123/Random123"
        DESTINATION "${SHOAL_INSTALL_THIRD_PARTY_DIR}")
install(FILES "${PROJECT_SOURCE_DIR}/third_party/cli11/copyright"
        DESTINATION "${CMAKE_INSTALL_DOCDIR}" RENAME CLI11.copyright)
install(FILES "${PROJECT_SOURCE_DIR}/third_party/random123/copyright"
        DESTINATION "${CMAKE_INSTALL_DOCDIR}" RENAME Random123.copyright)

# Two export sets, so that the package can leave the viewer out where its dependencies are
# missing and still give shoal::shoal.
install(TARGETS shoal EXPORT shoalTargets ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(TARGETS shoal_viz EXPORT shoalVizTargets ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(EXPORT shoalTargets NAMESPACE shoal:: DESTINATION "${shoal_cmake_dir}")
install(EXPORT shoalVizTargets NAMESPACE shoal:: DESTINATION "${shoal_cmake_dir}")

# What shoalConfig.cmake must find again: read off the target, so that it says what was linked.
get_target_property(shoal_links shoal INTERFACE_LINK_LIBRARIES)
set(SHOAL_NEEDS_CCCL OFF)
if("CCCL::CCCL" IN_LIST shoal_links)
  set(SHOAL_NEEDS_CCCL ON)
endif()
set(SHOAL_VIZ_NEEDS_ZLIB ${SHOAL_VIZ_ZLIB})
set(SHOAL_VIZ_NEEDS_SDL2 ${SHOAL_BUILD_VIZ_WINDOW})

configure_package_config_file(cmake/shoalConfig.cmake.in
  "${PROJECT_BINARY_DIR}/shoalConfig.cmake" INSTALL_DESTINATION "${shoal_cmake_dir}")
# 0.x: a minor version may change the API.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/shoalConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/shoalConfig.cmake" "${PROJECT_BINARY_DIR}/shoalConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/ShoalAddExecutable.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/ShoalCudaStandard.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/ShoalPython.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/ShoalPythonModule.map"
        DESTINATION "${shoal_cmake_dir}")
