# shoal_add_app_test(<name> COMMAND <target> [args...] [STATUS <n>] [STDOUT <regex>]
#                    [STDERR <regex>] [STDERR_LINES <n>] [SAME_FILE_TWICE <file>] [LABELS <labels>])
#
# A ctest test that runs an app's executable and checks how it ends: the exit status is exactly
# STATUS (default 0), stdout / stderr match the regular expressions, stderr has exactly
# STDERR_LINES lines. With SAME_FILE_TWICE the command runs twice and <file> (which the command
# writes, e.g. its --csv) must be byte-identical both times. The checks live in
# cmake/ShoalCheckRun.cmake (run with cmake -P), so a test fails on the wrong status even when the
# program printed the right message.

# For callers that build their own command (viz/tests); the function itself finds the script
# from its own file, so it works from any directory (a variable set here is directory-scoped).
set(shoal_check_run_script "${CMAKE_CURRENT_LIST_DIR}/ShoalCheckRun.cmake")

function(shoal_add_app_test name)
  if(NOT SHOAL_BUILD_APP_PROGRAMS)  # no program to run (the sanitizer presets)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "STATUS;STDOUT;STDERR;STDERR_LINES;SAME_FILE_TWICE" "COMMAND;LABELS")
  if(NOT arg_COMMAND)
    message(FATAL_ERROR "shoal_add_app_test(${name}): COMMAND is required")
  endif()
  if(NOT DEFINED arg_STATUS)
    set(arg_STATUS 0)
  endif()
  list(POP_FRONT arg_COMMAND target)
  # '|' joins the arguments: a ';' would split the -D value when ctest runs the command.
  list(JOIN arg_COMMAND "|" args)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND}
      "-DPROGRAM=$<TARGET_FILE:${target}>" "-DARGS=${args}" "-DSTATUS=${arg_STATUS}"
      "-DSTDOUT_REGEX=${arg_STDOUT}" "-DSTDERR_REGEX=${arg_STDERR}" "-DSTDERR_LINES=${arg_STDERR_LINES}"
      "-DSAME_FILE_TWICE=${arg_SAME_FILE_TWICE}"
      -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ShoalCheckRun.cmake"
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
  if(arg_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${arg_LABELS}")
  endif()
endfunction()

# shoal_add_app_golden(<app> GOLDEN <file> ARGS <args>... [LABELS <labels>])
#
# <app>_golden: the app's CSV for ARGS must be <file> byte for byte (cmake/ShoalCheckGolden.cmake
# names the first line that differs). The files were written by the apps before they moved to
# sim::run_model, so a change to the driver or the models that alters a result shows here. cpu
# builds only: the golden files are the cpu backend's, and a GPU run is compared with its own
# earlier output by hand (the closing notes of the issues).
function(shoal_add_app_golden app)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "GOLDEN;LABELS" "ARGS")
  if(NOT SHOAL_BACKEND STREQUAL "cpu" OR NOT SHOAL_BUILD_APP_PROGRAMS)
    return()
  endif()
  list(JOIN arg_ARGS "|" args)
  add_test(NAME ${app}_golden
    COMMAND ${CMAKE_COMMAND} "-DPROGRAM=$<TARGET_FILE:${app}>" "-DARGS=${args}" "-DGOLDEN=${arg_GOLDEN}"
      "-DOUT=${CMAKE_CURRENT_BINARY_DIR}/${app}_golden.csv" -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ShoalCheckGolden.cmake")
  set_tests_properties(${app}_golden PROPERTIES TIMEOUT 300 LABELS "${arg_LABELS}")
endfunction()

# gtest_discover_tests(), for shoal_add_app_gtests: a directory that includes this file has it.
include(GoogleTest)

# shoal_add_app_gtests(<app> <sources>... [INCLUDE_DIRS <dirs>...] [LIBRARIES <libs>...])
#
# An app's gtest binary (apps/<app>/tests): <app>_gpu_tests in a cuda build, <app>_cpu_tests
# otherwise, built from <sources> with the app's directory and tests/ on the include path
# (INCLUDE_DIRS replaces those two) and linked to LIBRARIES and GTest::gtest_main. It lands next
# to its CMake files, not in <build>/bin with the apps. Its tests are listed when ctest runs
# (DISCOVERY_MODE PRE_TEST: configuring needs no built binary) and labelled the way
# tests/CMakeLists.txt labels the framework's, "gpu;cuda" or "cpu", with TIMEOUT 600. Sets
# <app>_tests (the target) and <app>_labels in the caller's scope, for the app's other tests.
function(shoal_add_app_gtests app)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "INCLUDE_DIRS;LIBRARIES")
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "shoal_add_app_gtests(${app}): no sources")
  endif()
  if(NOT arg_INCLUDE_DIRS)
    set(arg_INCLUDE_DIRS ${CMAKE_CURRENT_SOURCE_DIR}/.. ${PROJECT_SOURCE_DIR}/tests)
  endif()
  if(SHOAL_BACKEND STREQUAL "cuda")
    set(tests ${app}_gpu_tests)
    set(labels "gpu;cuda")
  else()
    set(tests ${app}_cpu_tests)
    set(labels "cpu")
  endif()
  find_package(GTest REQUIRED)
  shoal_add_executable(${tests} ${arg_UNPARSED_ARGUMENTS})
  target_include_directories(${tests} PRIVATE ${arg_INCLUDE_DIRS})
  target_link_libraries(${tests} PRIVATE ${arg_LIBRARIES} GTest::gtest_main)
  set_target_properties(${tests} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  gtest_discover_tests(${tests}
    DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS "${labels}" TIMEOUT 600)
  set(${app}_tests ${tests} PARENT_SCOPE)
  set(${app}_labels "${labels}" PARENT_SCOPE)
endfunction()

# shoal_add_app_bad_flags(<app> LABELS <labels> CASES "<what>|<arg>[|<arg>...]|<mention>"...)
#
# An app's bad command lines, a test per case: <app>_cli_<what> runs the app's executable with
# the case's arguments and passes when it ends with exit status 2 and exactly one line on stderr,
# "<app>: error: ..." matching <mention> (a regular expression: the flag or value at fault). An
# app that reports the mistake and then runs anyway, or fails some other way, fails the test.
# Every app also gets the cases of the shared command line (shoal_shared_bad_flags), so CASES
# lists only the app's own flags and checks.
set(shoal_shared_bad_flags
    "unknown_flag|--bogus|--bogus"
    "zero_steps|--steps=0|--steps"
    "steps_not_a_number|--steps=ten|ten"
    "csv_unwritable|--csv=/nonexistent-dir/x.csv|--csv"
    "frames_unwritable|--frames=/proc/shoal-frames|--frames")
function(shoal_add_app_bad_flags app)
  # LABELS is one value: "gpu;cuda" goes on to shoal_add_app_test as one argument, as it did before.
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LABELS" "CASES")
  foreach(bad IN LISTS shoal_shared_bad_flags arg_CASES)
    string(REPLACE "|" ";" parts "${bad}")
    list(POP_FRONT parts what)
    list(POP_BACK parts mention)
    shoal_add_app_test(${app}_cli_${what} COMMAND ${app} ${parts} STATUS 2
                       STDERR "^${app}: error: .*${mention}" STDERR_LINES 1 LABELS "${arg_LABELS}")
  endforeach()
endfunction()

# shoal_add_app_small_run(<app> <args>... STDOUT <regex> [CSV_EVERY <n>] LABELS <labels>)
#
# An app's small run: <app>_small_run runs its executable with <args> and matches the summary it
# prints against STDOUT; <app>_csv_same_twice runs it twice more with --csv <app>_twice.csv
# --csv-every <n> (default 5) --quiet and passes when both runs wrote the same bytes.
function(shoal_add_app_small_run app)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "STDOUT;CSV_EVERY;LABELS" "")
  if(NOT arg_CSV_EVERY)
    set(arg_CSV_EVERY 5)
  endif()
  shoal_add_app_test(${app}_small_run COMMAND ${app} ${arg_UNPARSED_ARGUMENTS}
                     STDOUT "${arg_STDOUT}" LABELS "${arg_LABELS}")
  shoal_add_app_test(${app}_csv_same_twice
                     COMMAND ${app} ${arg_UNPARSED_ARGUMENTS} --csv ${app}_twice.csv --csv-every ${arg_CSV_EVERY} --quiet
                     SAME_FILE_TWICE ${app}_twice.csv LABELS "${arg_LABELS}")
endfunction()
