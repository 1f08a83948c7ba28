#!/usr/bin/env bash
# The result pipeline of bench/run.sh on a small scale: three suites write Google Benchmark JSON,
# one of them cut short as a time limit would leave it, merge_results.py merges them (repairing
# the cut one) and summary.py prints the calibration, do-all and apps tables with numbers in them
# (the do-all row's back-to-back cell divided by its batch: the benchmark times whole batches).
# Usage: pipeline_smoke.sh <build>/bench <python3>
set -euo pipefail
bin=$1
python=${2:-python3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin/shoal_calibrate_bench" --benchmark_filter='empty_launch/batch:100/' --benchmark_min_time=0.01 \
  --benchmark_out="$work/calibrate.json" --benchmark_out_format=json >/dev/null
"$bin/shoal_doall_bench" --benchmark_filter='doall/(compact|back_to_back)/objects:0/' --benchmark_min_time=0.01 \
  --benchmark_out="$work/doall.json" --benchmark_out_format=json >/dev/null
"$bin/shoal_apps_bench" --benchmark_filter='nbody/(shoal|soa)/bodies:256/' --benchmark_min_time=0.01 \
  --benchmark_out="$work/apps.json" --benchmark_out_format=json >/dev/null
# Cut the apps file inside its last benchmark entry, as a killed run leaves it.
head -c "$(($(wc -c <"$work/apps.json") - 400))" "$work/apps.json" >"$work/apps-cut.json"

"$python" "$here/merge_results.py" --out "$work/result.json" calibrate="$work/calibrate.json" doall="$work/doall.json" apps="$work/apps-cut.json" \
  | tee "$work/merge.log"
grep -q 'apps: [0-9]* entries, TRUNCATED' "$work/merge.log"
"$python" "$here/summary.py" "$work/result.json" | tee "$work/summary.md"
# The calibration row and an apps row with a Shoal time, a baseline time and their ratio.
grep -qE '^\| empty launch, µs \(100 back to back\) \| [0-9.e+-]+ \[' "$work/summary.md"
# (The cut removed the baseline's last aggregates, min and max, so its spread may be missing.)
grep -qE '^\| nbody \| 256 \| [0-9]+ \| [0-9.e+-]+ \[.*\] \| [0-9.e+-]+( \[.*\])? \| – \| [0-9.]+ \| – \|$' "$work/summary.md"
# The do-all row at 0 objects: compact time, no plain SOA or scattered run, and per do-all back to
# back = the batch's median time / batch.
grep -qE '^\| 0 \| [0-9.e+-]+ \[.*\] \| – \| – \| – \| [0-9.e+-]+ \[.*\] \|$' "$work/summary.md"
"$python" - "$work/doall.json" "$work/summary.md" <<'PY'
import json, re, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
b = next(b for b in runs if b["name"].startswith("doall/back_to_back/objects:0/batch:100/")
         and b.get("aggregate_name") == "median")
want = b["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]] / 100
row = next(l for l in open(sys.argv[2]) if l.startswith("| 0 |"))
got = float(re.search(r"\| ([0-9.e+-]+) \[[^|]*\] \|$", row).group(1))
assert abs(got - want) <= 0.01 * want, (got, want, row)
PY
echo "pipeline smoke: ok"
