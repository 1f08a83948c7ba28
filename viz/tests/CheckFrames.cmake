# cmake -DPROGRAM=exe -DARGS="a|b" -DDIR=dir -DEXPECT="frame_000000.png|..." -DWIDTH=w -DHEIGHT=h
#       -DTOOL=viz_png_tool [-DWRAPPER="xvfb-run|-a"] [-DSAME="a.png=b.png"] -P CheckFrames.cmake
# Runs PROGRAM ARGS (under WRAPPER) in an emptied DIR and fails unless it exits with 0, DIR holds
# exactly the EXPECT files (and the write probe is gone), each decodes to WIDTH x HEIGHT, and the
# two files named in SAME decode to the same pixels.

string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" wrapper "${WRAPPER}")
string(REPLACE "|" ";" expect "${EXPECT}")
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
execute_process(COMMAND ${wrapper} "${PROGRAM}" ${args} WORKING_DIRECTORY "${DIR}"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${WRAPPER} ${PROGRAM} ${ARGS}\nexit status '${status}'\n--- stdout:\n${out}--- stderr:\n${err}")
endif()
file(GLOB_RECURSE found RELATIVE "${DIR}" "${DIR}/*")
list(SORT found)
list(SORT expect)
if(NOT "${found}" STREQUAL "${expect}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}\nwrote '${found}'\nexpected '${expect}'\n--- stderr:\n${err}")
endif()
foreach(f IN LISTS expect)
  execute_process(COMMAND "${TOOL}" size "${DIR}/${f}" ${WIDTH} ${HEIGHT} RESULT_VARIABLE s ERROR_VARIABLE e)
  if(NOT s EQUAL 0)
    message(FATAL_ERROR "${f}: ${e}")
  endif()
endforeach()
if(SAME)
  string(REPLACE "=" ";" pair "${SAME}")
  list(GET pair 0 a)
  list(GET pair 1 b)
  execute_process(COMMAND "${TOOL}" same "${DIR}/${a}" "${DIR}/${b}" RESULT_VARIABLE s ERROR_VARIABLE e)
  if(NOT s EQUAL 0)
    message(FATAL_ERROR "the window's screenshot is not the headless frame of the same step: ${e}")
  endif()
endif()
