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
