#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/..
# The GPU check, for a machine with an NVIDIA GPU (the reference is an H100/H200, sm_90) that has
# nvcc, cmake, ninja, GoogleTest and Google Benchmark installed. Needs no network.
#
#   1. build     cuda-release preset (Ninja, -j$JOBS), skipped when build/cuda-release already
#                holds a built tests/shoal_gpu_tests (so a build tree made elsewhere can be carried)
#   2. ctest     ctest -L gpu --output-on-failure (a skipped test counts as a failure here:
#                on a GPU machine it means the GPU was not usable)
#   3. memcheck  compute-sanitizer --tool memcheck on build/cuda-release/tests/shoal_gpu_tests, in
#                SANITIZER_SHARDS gtest shards side by side
#   4. racecheck compute-sanitizer --tool racecheck on the same binary, then synccheck
#   2b. python  the Python module on the cuda backend and pytest tests/python (see below)
#   5. bench     the apps at their defaults (--timing) and the bitmap demo once, then every
#                benchmark binary under build/cuda-release/bench/
#                with --benchmark_out=$OUT/<name>.json
#
# Every step runs even when an earlier one failed; the script exits 1 at the end if any failed.
# Logs (at most 8 files in all): $OUT/build.log ctest.log python.log memcheck.log racecheck.log synccheck.log bench.log and
# the benchmark JSON file (packed into $OUT/bench_json.tar when there is more than one).
#
# Environment:
#   OUT               where logs and results go (default: build/gpu-check)
#   SANITIZER_FILTER  gtest filter for the sanitizer runs, e.g. 'Bitmap.Sequential*:BitmapLayout.*'
#   SANITIZER_SHARDS  gtest shards run side by side under each sanitizer tool (default 4)
#   JOBS              build parallelism (default 16)
#   BENCH_MIN_TIME    Google Benchmark's minimum time per repetition in seconds (default 0.05),
#                     passed in the form the installed Google Benchmark accepts
#   BENCH_ARGS        extra arguments for every benchmark binary
#   BENCH_ONLY        run only the benchmark binaries whose name matches this regex (e.g. doall)
#   GPU_CHECK_BUDGET  seconds for the whole script (default 560); each step's time limit is
#                     capped so that the script ends, with its summary, inside this budget
#   SHOAL_TEST_SCALE  divisor of the longest tests' rounds and sizes under the sanitizers (16)
#   BUILD_TIMEOUT (420) CTEST_TIMEOUT (240) SANITIZER_TIMEOUT (150, each tool)
#   BENCH_TIMEOUT (300, each binary)   per-step limits in seconds
#
# On an H100, building takes about a minute with 16 jobs; the sanitizer runs take the whole suite
# at SHOAL_TEST_SCALE; narrow them with SANITIZER_FILTER when the check must fit a short window.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
. scripts/lib/common.sh

OUT=${OUT:-$PWD/build/gpu-check}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)
PRESET=cuda-release
BUILD=build/$PRESET
TEST_BIN=$BUILD/tests/shoal_gpu_tests
JOBS=${JOBS:-16}
DEADLINE=$((SECONDS + ${GPU_CHECK_BUDGET:-560}))

FAILED=()
declare -A RESULT

fail() { FAILED+=("$1"); }

# Time limit for a step: its own limit, but never past the deadline (at least 5 s).
limit_for() {
  local want=$1 left=$((DEADLINE - SECONDS))
  ((want > left)) && want=$left
  ((want < 5)) && want=5
  echo "$want"
}

# run_logged <log> <seconds> <command...>: runs the command under a time limit, appending its
# output to the log and to stdout. Returns the command's status (124 on timeout).
run_logged() {
  local log=$1 secs=$2
  shift 2
  echo "\$ $*  (limit ${secs}s)" | tee -a "$log"
  timeout -k 15 "$secs" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  ((rc == 124 || rc == 137)) && echo "!!! timed out after ${secs}s" | tee -a "$log"
  return "$rc"
}

for f in build ctest python memcheck racecheck synccheck bench; do : >"$OUT/$f.log"; done

# ---------------------------------------------------------------------------------------------
shoal_section "environment"
shoal_find_nvcc || true
{
  echo "host: $(uname -srm), $(nproc) cores"
  nvidia-smi -L 2>&1 || echo "nvidia-smi -L failed"
  [[ -n "${SHOAL_NVCC:-}" ]] && "$SHOAL_NVCC" --version | tail -n2
  cmake --version 2>&1 | head -n1
  echo "ninja $(ninja --version 2>&1)"
} 2>&1 | tee -a "$OUT/build.log"
if ! shoal_gpu_usable; then
  echo "!!! no usable GPU: nvidia-smi -L lists none" | tee -a "$OUT/build.log"
  fail "gpu"
fi

# ---------------------------------------------------------------------------------------------
shoal_section "build ($PRESET)"
if [[ -x "$TEST_BIN" ]]; then
  echo "build: skipped, $TEST_BIN is already built" | tee -a "$OUT/build.log"
  RESULT[build]="skipped ($TEST_BIN already built)"
else
  start=$SECONDS
  if run_logged "$OUT/build.log" "$(limit_for "${BUILD_TIMEOUT:-420}")" cmake --preset "$PRESET" &&
     run_logged "$OUT/build.log" "$(limit_for "${BUILD_TIMEOUT:-420}")" \
       cmake --build --preset "$PRESET" -j"$JOBS"; then
    RESULT[build]="ok ($(shoal_duration $((SECONDS - start))))"
  else
    RESULT[build]="FAILED (see build.log)"
    fail build
  fi
fi

# A build tree made on another machine records that machine's paths and CMake: ctest cannot use
# it here unless both match, so otherwise the test binary is run directly instead.
foreign=0
cache_dir=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
cmake_cmd=$(sed -n 's/^CMAKE_COMMAND:INTERNAL=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
if [[ -z "$cache_dir" || "$(cd "$cache_dir" 2>/dev/null && pwd -P)" != "$(cd "$BUILD" 2>/dev/null && pwd -P)" ]]; then
  foreign=1
elif [[ ! -x "$cmake_cmd" ]]; then
  foreign=1  # ctest's test discovery would call the CMake that configured the tree
fi

# ---------------------------------------------------------------------------------------------
shoal_section "ctest -L gpu"
if [[ ! -x "$TEST_BIN" ]]; then
  RESULT[ctest]="not run: $TEST_BIN missing"
  fail ctest
else
  if ((foreign == 0)); then
    run_logged "$OUT/ctest.log" "$(limit_for "${CTEST_TIMEOUT:-240}")" \
      ctest --test-dir "$BUILD" -L gpu --output-on-failure --no-tests=error
    rc=$?
    summary=$(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -n1)
  else
    echo "build tree made elsewhere ($cache_dir, $cmake_cmd): running $TEST_BIN directly instead of ctest" |
      tee -a "$OUT/ctest.log"
    run_logged "$OUT/ctest.log" "$(limit_for "${CTEST_TIMEOUT:-240}")" "$TEST_BIN"
    rc=$?
    summary=$(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' "$OUT/ctest.log" | tr '\n' ' ')
  fi
  # ctest marks a skipped test "***Skipped"; gtest lists each one twice ("[  SKIPPED ] Name").
  skipped=$({ grep -E '\*\*\*Skipped' "$OUT/ctest.log"; grep -oE '^\[  SKIPPED \] [^ ]+' "$OUT/ctest.log"; } | sort -u | wc -l)
  RESULT[ctest]="${summary:-no summary line (status $rc)}"
  if ((rc != 0)); then
    fail ctest
  elif ((skipped > 0)); then
    RESULT[ctest]+=" -- but $skipped test(s) SKIPPED (no usable GPU?)"
    fail ctest
  fi
fi

# ---------------------------------------------------------------------------------------------
shoal_section "python (tests/python on the cuda backend)"
# The module is built in a tree of its own (build/cuda-python: the cuda-release preset with
# SHOAL_BUILD_PYTHON) and imported from there; the tests compare with the programs of $BUILD/bin.
# nanobind and pytest come from PY_WHEELS (a folder of wheels, for a machine without PyPI) or
# must be importable already; numpy must be. Without them the step says so and is not run.
log="$OUT/python.log"
PY=${PYTHON:-python3}
pydeps=$PWD/build/python-deps
if [[ -n "${PY_WHEELS:-}" ]]; then
  "$PY" -m pip install -q --no-index --find-links "$PY_WHEELS" --target "$pydeps" nanobind pytest >>"$log" 2>&1 ||
    echo "pip install from $PY_WHEELS failed" | tee -a "$log"
fi
export PYTHONPATH="$pydeps${PYTHONPATH:+:$PYTHONPATH}"
if ! "$PY" -c "import nanobind, pytest, numpy" >>"$log" 2>&1; then
  RESULT[python]="not run: nanobind, pytest or numpy is missing for $PY (PY_WHEELS=<folder of wheels> installs the first two)"
elif [[ ! -d "$BUILD/bin" ]]; then
  RESULT[python]="not run: $BUILD/bin missing (the programs the tests compare with)"
  fail python
else
  pybuild=build/cuda-python
  if run_logged "$log" "$(limit_for "${BUILD_TIMEOUT:-420}")" cmake --preset "$PRESET" -B "$pybuild" \
       -DSHOAL_BUILD_PYTHON=ON -DSHOAL_BUILD_TESTS=OFF -DSHOAL_BUILD_APPS=OFF -DSHOAL_BUILD_BENCH=OFF \
       -DPython_EXECUTABLE="$(command -v "$PY")" -Dnanobind_DIR="$("$PY" -m nanobind --cmake_dir)" &&
     run_logged "$log" "$(limit_for "${BUILD_TIMEOUT:-420}")" cmake --build "$pybuild" --target _shoal -j"$JOBS"; then
    (cd build && export PYTHONPATH="$PWD/../$pybuild/python:$PYTHONPATH" SHOAL_APPS_BIN="$PWD/../$BUILD/bin" &&
       run_logged "$log" "$(limit_for "${CTEST_TIMEOUT:-240}")" "$PY" -X faulthandler -m pytest -q -p no:cacheprovider ../tests/python)
    rc=$?
    RESULT[python]=$(grep -E '[0-9]+ (passed|failed)' "$log" | tail -n1)
    [[ -z "${RESULT[python]}" ]] && RESULT[python]="no pytest summary (status $rc)"
    ((rc != 0)) && fail python
  else
    RESULT[python]="build FAILED (see python.log)"
    fail python
  fi
fi

# ---------------------------------------------------------------------------------------------
SANITIZER=""
for s in compute-sanitizer /usr/local/cuda/bin/compute-sanitizer \
         /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  if command -v "$s" >/dev/null 2>&1; then SANITIZER=$(command -v "$s"); break; fi
done
filter_args=()
[[ -n "${SANITIZER_FILTER:-}" ]] && filter_args=("--gtest_filter=$SANITIZER_FILTER")

for tool in memcheck racecheck synccheck; do
  shoal_section "compute-sanitizer --tool $tool${SANITIZER_FILTER:+ (filter $SANITIZER_FILTER)}"
  log="$OUT/$tool.log"
  if [[ -z "$SANITIZER" ]]; then
    echo "compute-sanitizer not found" | tee -a "$log"
    RESULT[$tool]="not run: compute-sanitizer not found"
    fail "$tool"
    continue
  fi
  if [[ ! -x "$TEST_BIN" ]]; then
    RESULT[$tool]="not run: $TEST_BIN missing"
    fail "$tool"
    continue
  fi
  extra=()
  # API errors are not memory errors: the tests provoke some on purpose (a cudaMalloc of a heap
  # too large for the GPU must become a clean error), and the code handles them.
  [[ $tool == memcheck ]] && extra=(--leak-check full --report-api-errors no)
  # A distinct exit code tells the sanitizer's findings apart from failing tests.
  # The longest tests repeat their contention fewer times under the sanitizers (test_support.hpp),
  # and the suite runs as SANITIZER_SHARDS gtest shards side by side: an instrumented test keeps
  # the GPU far from busy, and racecheck over the whole suite took 4 x 39 s one shard at a time
  # (H200, 2026-11-28). Each shard's log follows the others in $log.
  shards=${SANITIZER_SHARDS:-4}
  limit=$(limit_for "${SANITIZER_TIMEOUT:-150}")
  echo "\$ $SANITIZER --tool $tool ${extra[*]} --error-exitcode 86 $TEST_BIN ${filter_args[*]}  ($shards shards, limit ${limit}s)" | tee -a "$log"
  pids=()
  for ((i = 0; i < shards; ++i)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i SHOAL_TEST_SCALE="${SHOAL_TEST_SCALE:-16}" \
      timeout -k 15 "$limit" "$SANITIZER" --tool "$tool" "${extra[@]}" --error-exitcode 86 "$TEST_BIN" \
      "${filter_args[@]}" >"$log.shard$i" 2>&1 &
    pids+=($!)
  done
  rc=0
  for ((i = 0; i < shards; ++i)); do
    wait "${pids[$i]}"
    r=$?
    ((r == 124 || r == 137)) && echo "!!! shard $i timed out after ${limit}s" >>"$log.shard$i"
    ((rc == 0)) && rc=$r
    { echo "--- shard $i of $shards (status $r)"; cat "$log.shard$i"; } >>"$log"
    rm -f "$log.shard$i"
  done
  grep -E '(ERROR|RACECHECK) SUMMARY|^\[  (PASSED|FAILED)  \]|timed out' "$log"
  # One line per shard: all of them must be there.
  lines=$(grep -cE '(ERROR|RACECHECK) SUMMARY' "$log")
  line=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$log" | sed 's/^=* *//' | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')
  ((lines == shards)) || line=""
  case $rc in
    0) why="" ;;
    86) why="the sanitizer reported errors" ;;
    124 | 137) why="timed out (raise SANITIZER_TIMEOUT or narrow SANITIZER_FILTER)" ;;
    *) why="tests failed under the sanitizer (status $rc)" ;;
  esac
  RESULT[$tool]="${line:-no summary line}${why:+ -- $why}"
  if ((rc != 0)) || [[ -z "$line" ]]; then fail "$tool"; fi
done

# ---------------------------------------------------------------------------------------------
shoal_section "benchmarks"
log="$OUT/bench.log"
bench_failed=0
bench_ran=0
# The apps at their default sizes (the issue's timing goals), with the time per phase.
for app in wator traffic nbody barnes_hut collision sugarscape; do
  [[ -x "$BUILD/bin/$app" ]] || continue
  run_logged "$log" "$(limit_for 60)" "$BUILD/bin/$app" --quiet --timing ||
    { bench_failed=1; echo "!!! $app failed" | tee -a "$log"; }
done
demo="$BUILD/bin/bitmap_demo"
if [[ -x "$demo" ]]; then
  run_logged "$log" "$(limit_for 60)" "$demo" || { bench_failed=1; echo "!!! bitmap_demo failed" | tee -a "$log"; }
fi
json_dir=$(mktemp -d)
mapfile -t benches < <(find "$BUILD/bench" -type f -perm -u+x -not -path '*/CMakeFiles/*' 2>/dev/null | sort)
read -r -a bench_args <<<"${BENCH_ARGS:-}"
for b in "${benches[@]}"; do
  name=$(basename "$b")
  [[ -n "${BENCH_ONLY:-}" && ! $name =~ ${BENCH_ONLY} ]] && continue
  # Written beside its final name and moved there only when the binary finished: a run cut by
  # its time limit leaves no half-written JSON file behind.
  run_logged "$log" "$(limit_for "${BENCH_TIMEOUT:-300}")" "$b" "$(shoal_min_time_flag "$b" "${BENCH_MIN_TIME:-0.05}")" \
    --benchmark_out="$json_dir/$name.json.part" --benchmark_out_format=json "${bench_args[@]}"
  rc=$?
  if ((rc == 0)); then
    mv "$json_dir/$name.json.part" "$json_dir/$name.json"
  else
    rm -f "$json_dir/$name.json.part"
    bench_failed=1
    why="status $rc"
    ((rc == 124 || rc == 137)) && why="timed out"
    echo "!!! $name failed ($why); its JSON file was not kept" | tee -a "$log"
  fi
  bench_ran=$((bench_ran + 1))
done
mapfile -t jsons < <(find "$json_dir" -name '*.json' | sort)
if ((${#jsons[@]} > 1)); then  # 7 logs + 1 file = the 8 files that come back
  tar -C "$json_dir" -cf "$OUT/bench_json.tar" .
  echo "benchmark JSON files packed into bench_json.tar" | tee -a "$log"
elif ((${#jsons[@]} > 0)); then
  cp "${jsons[@]}" "$OUT/"
fi
rm -rf "$json_dir"
if ((bench_ran == 0)); then
  RESULT[bench]="no benchmark binaries under $BUILD/bench"
else
  RESULT[bench]="$bench_ran binaries, ${#jsons[@]} JSON files"
fi
if ((bench_failed)); then
  RESULT[bench]+=" -- FAILURES (see bench.log)"
  fail bench
fi

# ---------------------------------------------------------------------------------------------
shoal_section "gpu-check results"
for step in build ctest python memcheck racecheck synccheck bench; do
  printf '%-10s %s\n' "$step:" "${RESULT[$step]:-not run}"
done
if ((${#FAILED[@]})); then
  echo "gpu-check: FAILED (${FAILED[*]}); logs in $OUT"
  exit 1
fi
echo "gpu-check: PASSED; logs in $OUT"
