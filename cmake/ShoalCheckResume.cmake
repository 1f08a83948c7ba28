# cmake -DPROGRAM=exe -DARGS="a|b" -DSTEPS=2N -DCSV_EVERY=n -DTAG=name [-DRESUME_PROGRAM=exe2]
#       -P ShoalCheckResume.cmake
# Checkpoint and resume, through the executable (see ShoalResumeTests.cmake):
#   1. one run of STEPS steps;
#   2. a run of STEPS/2 steps that writes a checkpoint, then a run that resumes it up to STEPS
#      (RESUME_PROGRAM if given: another backend's build of the app);
#   3. the CSV of 2. (first part + rows after the checkpoint) must equal the CSV of 1. byte for
#      byte, and the summary checksums must be equal;
#   4. the checkpoint truncated, with one byte changed, and missing: --resume must exit with
#      status 2 and one line on stderr.
string(REPLACE "|" ";" args "${ARGS}")
math(EXPR half "${STEPS} / 2")
if(NOT RESUME_PROGRAM)
  set(RESUME_PROGRAM "${PROGRAM}")
endif()
set(common --csv-every ${CSV_EVERY} --quiet)
set(ckpt "${TAG}.ckpt")
file(REMOVE "${TAG}.full.csv" "${TAG}.a.csv" "${TAG}.b.csv" "${ckpt}")

# run(<program> <expected status> <out var> <err var> args...)
function(run program expect out_var err_var)
  execute_process(COMMAND "${program}" ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${status}" STREQUAL "${expect}")
    list(JOIN ARGN " " shown)
    message(FATAL_ERROR "${program} ${shown}\nexit status '${status}', expected ${expect}\n--- stdout:\n${out}--- stderr:\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

function(checksum_of text var)
  if(NOT text MATCHES "checksum=([0-9]+)")
    message(FATAL_ERROR "no checksum in:\n${text}")
  endif()
  set(${var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

run("${PROGRAM}" 0 full_out err ${args} ${common} --steps ${STEPS} --csv "${TAG}.full.csv")
run("${PROGRAM}" 0 a_out err ${args} ${common} --steps ${half} --csv "${TAG}.a.csv" --checkpoint "${ckpt}")
run("${RESUME_PROGRAM}" 0 b_out err ${args} ${common} --steps ${STEPS} --csv "${TAG}.b.csv" --resume "${ckpt}")

checksum_of("${full_out}" full_sum)
checksum_of("${b_out}" resumed_sum)
if(NOT full_sum STREQUAL resumed_sum)
  message(FATAL_ERROR "checksum ${resumed_sum} after resuming, ${full_sum} in one run")
endif()
file(READ "${TAG}.full.csv" full_csv)
file(READ "${TAG}.a.csv" a_csv)
file(STRINGS "${TAG}.b.csv" b_lines)
list(POP_FRONT b_lines)  # its header: the rows after the checkpoint follow the first part's
set(joined "${a_csv}")
foreach(line IN LISTS b_lines)
  string(APPEND joined "${line}\n")
endforeach()
if(NOT joined STREQUAL full_csv)
  message(FATAL_ERROR "CSV of ${half} steps + resume differs from one run of ${STEPS} steps:\n"
                      "--- one run:\n${full_csv}--- checkpoint + resume:\n${joined}")
endif()
list(LENGTH b_lines resumed_rows)
if(resumed_rows LESS 1)
  message(FATAL_ERROR "the resumed run wrote no CSV rows")
endif()

# A damaged checkpoint is a bad command line: status 2, one line naming the problem.
function(expect_refused file mention)
  run("${RESUME_PROGRAM}" 2 out err ${args} ${common} --steps ${STEPS} --resume "${file}")
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL 1 OR NOT err MATCHES "error: --resume: .*${mention}")
    message(FATAL_ERROR "--resume ${file}: expected one line mentioning '${mention}', got:\n${err}")
  endif()
endfunction()

file(SIZE "${ckpt}" size)
math(EXPR cut "${size} / 2")
execute_process(COMMAND head -c ${cut} "${ckpt}" OUTPUT_FILE "${TAG}.truncated.ckpt" RESULT_VARIABLE rc)
expect_refused("${TAG}.truncated.ckpt" "truncated")
# One byte changed in the middle (to a value it does not have).
file(COPY_FILE "${ckpt}" "${TAG}.flipped.ckpt")
file(READ "${ckpt}" byte OFFSET ${cut} LIMIT 1 HEX)
if(byte STREQUAL "ff")
  set(replacement "\\000")
else()
  set(replacement "\\377")
endif()
execute_process(COMMAND sh -c "printf '${replacement}' | dd of='${TAG}.flipped.ckpt' bs=1 seek=${cut} conv=notrunc status=none"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "could not change a byte of the checkpoint")
endif()
expect_refused("${TAG}.flipped.ckpt" "corrupt")
expect_refused("${TAG}.missing.ckpt" "cannot read")
message(STATUS "ok: ${half} steps + checkpoint + resume = ${STEPS} steps (checksum ${full_sum}, CSV identical); "
               "damaged checkpoints refused")
