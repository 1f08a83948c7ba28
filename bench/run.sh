#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/..
# The benchmark run: build, calibrate, run the suites, merge everything into one result file.
#
#   bench/run.sh                 # calibrate + alloc + probes + doall + apps (the default set)
#   bench/run.sh alloc doall     # a subset (calibration always runs first)
#   bench/run.sh --list          # the suites and their time budgets
#
# Suites: calibrate (machine facts and ceilings), bitmap (slot search; not in the default set),
# alloc (shoal_heap_bench), probes (the allocator's rounds per request on a nearly full heap),
# doall, apps (apps vs static SOA/AOS baselines). Each suite runs with
# --benchmark_out JSON under a time budget; the results go into bench/results/<gpu>-<date>.json,
# merged with what an earlier run of the same day on the same GPU left there (so subsets run one
# after the other end up in one file), and a summary is printed (bench/summary.py).
#
# Needs no network: cmake, ninja, a compiler (nvcc for the GPU), GoogleTest, Google Benchmark,
# python3. On an H100 the whole default run is one command inside 10 minutes: the build takes
# about 95 s with 16 jobs, and the default suites' budgets add up to 370 s (6 min 10 s), at
# least twice the time estimated for each; a suite cut by its budget is reported loudly at the end
# (and makes the script fail), with the total elapsed time.
#
# Environment:
#   BENCH_BUILD    build tree (default build/cuda-release when nvcc is found, else build/cpu-release);
#                  configured with its preset and built unless it already holds every suite binary
#   JOBS           build parallelism (default 16)
#   BENCH_MIN_TIME Google Benchmark's minimum time per repetition in seconds (default 0.05)
#   BENCH_OUT      result file (default bench/results/<gpu>-<date>.json)
#   SHOAL_BENCH_PROFILE  quick (default) or full: the suites' size sets (bench/common/profile.hpp)
#   BUDGET_<SUITE> seconds for one suite, e.g. BUDGET_ALLOC=300 (defaults in the table below)
#   OUT            if set to a directory, the result file is also copied there
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
. scripts/lib/common.sh

declare -A BINARY=([calibrate]=shoal_calibrate_bench [bitmap]=shoal_bitmap_bench [alloc]=shoal_heap_bench
                   [probes]=shoal_alloc_probe_bench [doall]=shoal_doall_bench [apps]=shoal_apps_bench)
# Seconds per suite on an H100 (quick profile), at least 2× the suite's estimated time:
# the iterations Google Benchmark runs × each iteration's wall time (its cpu_time, set-up in the
# loop included) of the 2026-11-22 H100 results, plus set-up outside the loop and start-up:
# calibrate ~5 s, alloc ~90 s, probes ~10 s, doall ~15 s, apps ~15 s. The default set sums to
# 370 s: with a ~95 s build, under 8 minutes even if every suite used its whole budget.
declare -A BUDGET=([calibrate]=30 [bitmap]=150 [alloc]=180 [probes]=40 [doall]=60 [apps]=60)
ALL_SUITES=(calibrate bitmap alloc probes doall apps)
DEFAULT_SUITES=(calibrate alloc probes doall apps)

if [[ "${1:-}" == "--list" || "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"
  total=0
  echo
  echo "Suites, binaries and time budgets (BUDGET_<SUITE> applied):"
  for s in "${ALL_SUITES[@]}"; do
    var="BUDGET_${s^^}"
    printf '  %-10s %-24s budget %ss%s\n' "$s" "${BINARY[$s]}" "${!var:-${BUDGET[$s]}}" \
      "$([[ " ${DEFAULT_SUITES[*]} " == *" $s "* ]] || echo '  (not in the default set)')"
  done
  for s in "${DEFAULT_SUITES[@]}"; do var="BUDGET_${s^^}"; total=$((total + ${!var:-${BUDGET[$s]}})); done
  echo "  default set: ${total}s of budgets in all"
  exit 0
fi
T0=$SECONDS

suites=("$@")
((${#suites[@]})) || suites=("${DEFAULT_SUITES[@]}")
for s in "${suites[@]}"; do
  [[ -n "${BINARY[$s]:-}" ]] || { echo "bench/run.sh: unknown suite '$s' (known: ${ALL_SUITES[*]})" >&2; exit 2; }
done
# Calibration goes with every result, and first, before the GPU warms up under the suites.
run_list=(calibrate)
for s in "${suites[@]}"; do [[ $s == calibrate ]] || run_list+=("$s"); done

if [[ -z "${BENCH_BUILD:-}" ]]; then
  if shoal_find_nvcc >/dev/null 2>&1; then BENCH_BUILD=build/cuda-release; else BENCH_BUILD=build/cpu-release; fi
fi
preset=$(basename "$BENCH_BUILD")
JOBS=${JOBS:-16}
MIN_TIME=${BENCH_MIN_TIME:-0.05}

# ---------------------------------------------------------------------------------------------
shoal_section "build ($BENCH_BUILD)"
missing=()
for s in "${run_list[@]}"; do [[ -x "$BENCH_BUILD/bench/${BINARY[$s]}" ]] || missing+=("${BINARY[$s]}"); done
if ((${#missing[@]} == 0)); then
  echo "build: skipped, $BENCH_BUILD/bench already holds every suite binary"
else
  start=$SECONDS
  if [[ ! -f "$BENCH_BUILD/build.ninja" ]]; then
    cmake --preset "$preset" || { echo "bench/run.sh: cmake --preset $preset failed" >&2; exit 1; }
  fi
  cmake --build "$BENCH_BUILD" -j"$JOBS" --target "${missing[@]}" ||
    { echo "bench/run.sh: build failed" >&2; exit 1; }
  echo "build: $(shoal_duration $((SECONDS - start)))"
fi

min_time_flag=$(shoal_min_time_flag "$BENCH_BUILD/bench/${BINARY[calibrate]}" "$MIN_TIME")

# ---------------------------------------------------------------------------------------------
# The GPU's name and clocks as nvidia-smi reports them (the calibration suite adds what the CUDA
# runtime says); on a machine without nvidia-smi the file says so.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,pstate \
    --format=csv 2>&1 | tee "$work/nvidia-smi.csv"
else
  echo "no nvidia-smi" >"$work/nvidia-smi.csv"
fi
gpu_name=$(sed -n '2p' "$work/nvidia-smi.csv" | cut -d, -f1 | sed 's/^ *//; s/ *$//')
if [[ -z "$gpu_name" || "$gpu_name" == "no nvidia-smi" ]]; then
  tag="cpu"
else
  tag=$(echo "$gpu_name" | tr 'A-Z' 'a-z' | sed 's/nvidia //; s/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
fi
OUT_FILE=${BENCH_OUT:-bench/results/$tag-$(date -u +%F).json}

# ---------------------------------------------------------------------------------------------
failed=()
cut=()
declare -A STATUS
suites_start=$SECONDS
for s in "${run_list[@]}"; do
  var="BUDGET_${s^^}"
  budget=${!var:-${BUDGET[$s]}}
  shoal_section "suite $s (${BINARY[$s]}, budget ${budget}s)"
  start=$SECONDS
  timeout -k 10 "$budget" "$BENCH_BUILD/bench/${BINARY[$s]}" "$min_time_flag" \
    --benchmark_out="$work/$s.json" --benchmark_out_format=json
  rc=$?
  secs=$((SECONDS - start))
  took=$(shoal_duration "$secs")
  case $rc in
    0)
      STATUS[$s]="ok ($took of ${budget}s)"
      # Close to the budget: the next machine or commit may cut it.
      ((secs * 4 > budget * 3)) && STATUS[$s]+="  -- note: over 3/4 of its budget"
      ;;
    124 | 137) STATUS[$s]="CUT BY ITS BUDGET after ${budget}s (the finished benchmarks are kept)"; failed+=("$s"); cut+=("$s") ;;
    *) STATUS[$s]="FAILED, status $rc ($took)"; failed+=("$s") ;;
  esac
done
suites_took=$((SECONDS - suites_start))

# ---------------------------------------------------------------------------------------------
shoal_section "merge into $OUT_FILE"
args=()
for s in "${run_list[@]}"; do [[ -f "$work/$s.json" ]] && args+=("$s=$work/$s.json"); done
python3 bench/merge_results.py --out "$OUT_FILE" --nvidia-smi "$work/nvidia-smi.csv" \
  --profile "${SHOAL_BENCH_PROFILE:-quick}" "${args[@]}" || failed+=("merge")
python3 bench/summary.py "$OUT_FILE" || failed+=("summary")
# On a lent GPU machine only what lands in $OUT comes back: a copy of the result file goes there.
if [[ -n "${OUT:-}" && -d "$OUT" && -f "$OUT_FILE" ]]; then
  cp "$OUT_FILE" "$OUT/" && echo "copied to $OUT/$(basename "$OUT_FILE")"
fi

shoal_section "bench/run.sh results"
for s in "${run_list[@]}"; do printf '%-10s %s\n' "$s:" "${STATUS[$s]}"; done
echo "result file: $OUT_FILE  (charts: python3 bench/plot.py $OUT_FILE)"
echo "total time: $(shoal_duration $((SECONDS - T0))) (suites $(shoal_duration "$suites_took"))"
if ((${#cut[@]})); then
  # Loud: a cut suite still leaves a result file and tables, which are easy to mistake for complete.
  echo
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  for s in "${cut[@]}"; do
    var="BUDGET_${s^^}"
    echo "!!! WARNING: suite '$s' was CUT by its time budget (${!var:-${BUDGET[$s]}}s): the benchmarks after"
    echo "!!!   the last one it finished are missing (the result file marks the suite \"truncated\")."
  done
  echo "!!! Raise BUDGET_<SUITE> or trim the suite (bench/common/profile.hpp) and run it again."
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
fi
if ((${#failed[@]})); then
  echo "bench/run.sh: FAILED (${failed[*]})"
  exit 1
fi
echo "bench/run.sh: ok"
