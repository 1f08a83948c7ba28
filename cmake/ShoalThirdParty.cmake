# Header-only libraries of the simulation toolkit (framework/include/shoal/sim/): CLI11 for the
# command line, Random123 for the counter-based Philox generator. Debian ships both
# (libcli11-dev, librandom123-dev); the system copy wins when it is installed. Machines without
# them and without network (the GPU machine) use the copies vendored under third_party/, taken
# unchanged from the same Debian packages (third_party/README.md).
#
# Defines the interface targets shoal_cli11 and shoal_random123.

option(SHOAL_VENDORED_HEADERS "Use the vendored CLI11 and Random123 even when the system has them" OFF)
set(shoal_third_party "${PROJECT_SOURCE_DIR}/third_party")

# shoal_header_library(<target> <cache variable> <probe header> <vendored dir> <what>)
function(shoal_header_library target var probe vendored what)
  if(NOT SHOAL_VENDORED_HEADERS)
    find_path(${var} ${probe} DOC "Directory holding ${probe} (${what}); not found: the vendored copy")
  endif()
  if(NOT SHOAL_VENDORED_HEADERS AND ${var})
    set(dir "${${var}}")
    set(origin "system")
  else()
    set(dir "${vendored}")
    set(origin "vendored")
  endif()
  add_library(${target} INTERFACE)
  # SYSTEM: their headers are not ours to keep free of -Wall -Wextra warnings.
  target_include_directories(${target} SYSTEM INTERFACE "${dir}")
  message(STATUS "${what}: ${origin} copy (${dir})")
endfunction()

shoal_header_library(shoal_cli11 SHOAL_CLI11_INCLUDE_DIR CLI/CLI.hpp "${shoal_third_party}/cli11" "CLI11")
shoal_header_library(shoal_random123 SHOAL_RANDOM123_INCLUDE_DIR Random123/philox.h
                     "${shoal_third_party}/random123" "Random123")

# stb_image_write / stb_image (libstb-dev) for the viewer's PNG frames: like the two above, the
# system copy when installed, else the vendored one, so the headless path always builds.
shoal_header_library(shoal_stb SHOAL_STB_INCLUDE_DIR stb/stb_image_write.h "${shoal_third_party}/stb" "stb")
