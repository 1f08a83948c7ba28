# scripts/plot_run.py on a real run (cmake -P, with -DAPP=<wator> -DPYTHON=<python3> -DSCRIPT=<plot_run.py>):
# a short Wa-Tor run writes a CSV, plot_run.py draws it, and the PNG must exist and be a PNG.
# Without matplotlib the test is skipped (it prints "SKIPPED:", which the test's
# SKIP_REGULAR_EXPRESSION matches), as the charts are an optional package.
execute_process(COMMAND "${PYTHON}" -c "import matplotlib" RESULT_VARIABLE has_matplotlib OUTPUT_QUIET ERROR_QUIET)
if(NOT has_matplotlib EQUAL 0)
  message("SKIPPED: matplotlib is not installed")
  return()
endif()
file(REMOVE plot_run.csv plot_run.png)
execute_process(COMMAND "${APP}" --width 40 --height 30 --steps 30 --heap-mb 16 --csv plot_run.csv --csv-every 5 --quiet
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${APP} failed (${rc})")
endif()
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" plot_run.csv --title "test" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "plot_run.py failed (${rc}): ${err}")
endif()
file(READ plot_run.png magic LIMIT 8 HEX)
if(NOT magic STREQUAL "89504e470d0a1a0a")
  message(FATAL_ERROR "plot_run.png is not a PNG (starts ${magic})")
endif()
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" plot_run.csv --columns no_such RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "an unknown --columns must exit 2, got ${rc}")
endif()
