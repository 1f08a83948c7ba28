# cmake -DPROGRAM=exe -DARGS="a|b|c" -DSTATUS=n [-DSTDOUT_REGEX=re] [-DSTDERR_REGEX=re]
#       [-DSTDERR_LINES=n] [-DSAME_FILE_TWICE=file] -P ShoalCheckRun.cmake
# Runs PROGRAM with ARGS ('|'-separated) and fails (FATAL_ERROR, so ctest reports the test as
# failed) unless it exits with exactly STATUS and its output matches. See ShoalAppTests.cmake.

string(REPLACE "|" ";" args "${ARGS}")

function(run_once out_var err_var)
  execute_process(COMMAND "${PROGRAM}" ${args}
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${status}" STREQUAL "${STATUS}")
    message(FATAL_ERROR "${PROGRAM} ${ARGS}\nexit status '${status}', expected ${STATUS}\n"
                        "--- stdout:\n${out}--- stderr:\n${err}")
  endif()
  if(NOT "${STDOUT_REGEX}" STREQUAL "" AND NOT out MATCHES "${STDOUT_REGEX}")
    message(FATAL_ERROR "${PROGRAM} ${ARGS}\nstdout does not match '${STDOUT_REGEX}':\n${out}")
  endif()
  if(NOT "${STDERR_REGEX}" STREQUAL "" AND NOT err MATCHES "${STDERR_REGEX}")
    message(FATAL_ERROR "${PROGRAM} ${ARGS}\nstderr does not match '${STDERR_REGEX}':\n${err}")
  endif()
  if(NOT "${STDERR_LINES}" STREQUAL "")
    string(REGEX MATCHALL "\n" newlines "${err}")
    list(LENGTH newlines lines)
    if(NOT lines EQUAL STDERR_LINES)
      message(FATAL_ERROR "${PROGRAM} ${ARGS}\nstderr has ${lines} lines, expected ${STDERR_LINES}:\n${err}")
    endif()
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

if("${SAME_FILE_TWICE}" STREQUAL "")
  run_once(out err)
  message(STATUS "ok: exit status ${STATUS}\n${out}${err}")
else()
  file(REMOVE "${SAME_FILE_TWICE}" "${SAME_FILE_TWICE}.first")
  run_once(out err)
  file(RENAME "${SAME_FILE_TWICE}" "${SAME_FILE_TWICE}.first")
  run_once(out err)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${SAME_FILE_TWICE}.first" "${SAME_FILE_TWICE}"
                  RESULT_VARIABLE differ)
  if(differ)
    message(FATAL_ERROR "${SAME_FILE_TWICE} differs between two runs of ${PROGRAM} ${ARGS}")
  endif()
  file(READ "${SAME_FILE_TWICE}" content)
  message(STATUS "ok: ${SAME_FILE_TWICE} identical in two runs:\n${content}")
endif()
