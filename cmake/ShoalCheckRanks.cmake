# cmake -DSERIAL=exe -DPARALLEL=exe -DMPIEXEC=mpiexec -DRANKS=n -DARGS="a|b|c" -DOUT=prefix
#       [-DRESUME_AT=k -DSTEPS=n -DOTHER_RANKS=m] -P ShoalCheckRanks.cmake
# Runs SERIAL ARGS --csv OUT.serial.csv and MPIEXEC -n RANKS PARALLEL ARGS --csv OUT.ranks.csv and
# fails (FATAL_ERROR) unless both exit 0 with the same CSV file and the same populations and
# checksum on their summary lines: a model split over ranks must give the one-process results.
# With RESUME_AT (ARGS then without --steps): SERIAL runs STEPS steps; PARALLEL runs RESUME_AT
# steps with --checkpoint OUT.ckpt, then resumes it to STEPS, and their summaries must agree; then
# a resume with OTHER_RANKS ranks must exit 2 naming the rank count it was saved by. Without
# SERIAL (a model whose ranks agree with one process only to within rounding, as nbody_mpi), the
# resumed run is compared with PARALLEL's run of STEPS steps on RANKS ranks without a stop.

string(REPLACE "|" ";" args "${ARGS}")

function(run label out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${status}" STREQUAL "0")
    message(FATAL_ERROR "${label}: ${ARGN}\nexit status '${status}'\n--- stdout:\n${out}--- stderr:\n${err}")
  endif()
  # The summary line less its timing fields: "<app>: ... <populations> checksum=N".
  string(REGEX MATCH "[^\n]*checksum=[0-9]+" line "${out}")
  string(REGEX REPLACE "steps=[0-9]+ seconds=[0-9.]+ steps_per_s=[0-9.]+ " "" line "${line}")
  if(line STREQUAL "")
    message(FATAL_ERROR "${label}: no summary line in\n${out}")
  endif()
  set(${out_var} "${line}" PARENT_SCOPE)
endfunction()

if(DEFINED RESUME_AT)
  file(GLOB old "${OUT}.ckpt.rank*")
  if(old)
    file(REMOVE ${old})
  endif()
  if(DEFINED SERIAL)
    run("one process" serial ${SERIAL} ${args} --steps ${STEPS})
  else()
    run("${RANKS} ranks without a stop" serial ${MPIEXEC} -n ${RANKS} ${PARALLEL} ${args} --steps ${STEPS})
  endif()
  execute_process(COMMAND ${MPIEXEC} -n ${RANKS} ${PARALLEL} ${args} --steps ${RESUME_AT} --checkpoint "${OUT}.ckpt"
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${status}" STREQUAL "0")
    message(FATAL_ERROR "${RANKS} ranks, first ${RESUME_AT} steps: exit status '${status}'\n${out}${err}")
  endif()
  run("${RANKS} ranks, resumed" ranks ${MPIEXEC} -n ${RANKS} ${PARALLEL} ${args} --steps ${STEPS} --resume "${OUT}.ckpt")
  if(NOT serial STREQUAL ranks)
    message(FATAL_ERROR "summary over ${RANKS} ranks, resumed at step ${RESUME_AT}:\n  ${ranks}\nreference:\n  ${serial}")
  endif()
  execute_process(COMMAND ${MPIEXEC} -n ${OTHER_RANKS} ${PARALLEL} ${args} --steps ${STEPS} --resume "${OUT}.ckpt"
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if("${status}" STREQUAL "0" OR NOT err MATCHES "saved by ${RANKS} ranks; this run has ${OTHER_RANKS}")
    message(FATAL_ERROR "a resume with ${OTHER_RANKS} ranks of a save by ${RANKS}: exit status '${status}'\n${err}")
  endif()
  message(STATUS "ok: ${RANKS} ranks resumed at step ${RESUME_AT} end as the reference does (${serial}); "
                 "${OTHER_RANKS} ranks refused")
  return()
endif()

file(REMOVE "${OUT}.serial.csv" "${OUT}.ranks.csv")
run("one process" serial ${SERIAL} ${args} --csv "${OUT}.serial.csv")
run("${RANKS} ranks" ranks ${MPIEXEC} -n ${RANKS} ${PARALLEL} ${args} --csv "${OUT}.ranks.csv")
if(NOT serial STREQUAL ranks)
  message(FATAL_ERROR "summary over ${RANKS} ranks:\n  ${ranks}\none process:\n  ${serial}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUT}.serial.csv" "${OUT}.ranks.csv" RESULT_VARIABLE differ)
if(differ)
  message(FATAL_ERROR "${OUT}.ranks.csv (${RANKS} ranks) differs from ${OUT}.serial.csv (one process)")
endif()
file(READ "${OUT}.ranks.csv" content)
message(STATUS "ok: ${RANKS} ranks, same CSV and summary as one process (${serial}):\n${content}")
