# shoal_add_resume_test(<name> COMMAND <target> [args...] STEPS <2N> [CSV_EVERY <n>]
#                       [RESUME_PROGRAM <path>] [SAME_BACKEND_ONLY] [LABELS <labels>])
#
# A ctest test that an app's run of 2N steps equals N steps + --checkpoint + --resume + N steps,
# bit for bit (CSV and summary checksum), and that a truncated, altered or missing checkpoint
# given to --resume is exit status 2 with one line. `args` are the model's flags (given to every
# run, so the resumed run also checks that equal flags are accepted); N must be a multiple of
# CSV_EVERY (default 5). The checks live in cmake/ShoalCheckResume.cmake.
#
# Across backends: configure with -DSHOAL_OTHER_BACKEND_BIN=<another build>/bin (e.g. the cuda
# build pointing at build/cpu-release/bin) and every resume test gets a twin, <name>_across_backends,
# whose resumed run is that build's executable of the same app: saved on one backend, resumed
# on the other, and still equal to one run. SAME_BACKEND_ONLY leaves the twin out, for apps whose
# results are reproducible on one backend but not bit-identical across backends (floating point).

set(SHOAL_OTHER_BACKEND_BIN "" CACHE PATH
    "bin directory of another backend's build: resume tests also resume with its executables")

set(shoal_check_resume_script "${CMAKE_CURRENT_LIST_DIR}/ShoalCheckResume.cmake")

function(shoal_add_resume_test name)
  if(NOT SHOAL_BUILD_APP_PROGRAMS)  # no program to run (the sanitizer presets)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 arg "SAME_BACKEND_ONLY" "STEPS;CSV_EVERY;RESUME_PROGRAM" "COMMAND;LABELS")
  if(NOT arg_COMMAND OR NOT arg_STEPS)
    message(FATAL_ERROR "shoal_add_resume_test(${name}): COMMAND and STEPS are required")
  endif()
  if(NOT arg_CSV_EVERY)
    set(arg_CSV_EVERY 5)
  endif()
  list(POP_FRONT arg_COMMAND target)
  if(SHOAL_OTHER_BACKEND_BIN AND NOT arg_RESUME_PROGRAM AND NOT arg_SAME_BACKEND_ONLY)
    shoal_add_resume_test(${name}_across_backends COMMAND ${target} ${arg_COMMAND} STEPS ${arg_STEPS}
                          CSV_EVERY ${arg_CSV_EVERY} RESUME_PROGRAM "${SHOAL_OTHER_BACKEND_BIN}/${target}"
                          LABELS ${arg_LABELS})
  endif()
  list(JOIN arg_COMMAND "|" args)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} "-DPROGRAM=$<TARGET_FILE:${target}>" "-DARGS=${args}" "-DSTEPS=${arg_STEPS}"
      "-DCSV_EVERY=${arg_CSV_EVERY}" "-DTAG=${name}" "-DRESUME_PROGRAM=${arg_RESUME_PROGRAM}"
      -P "${shoal_check_resume_script}"
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
  if(arg_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${arg_LABELS}")
  endif()
endfunction()
