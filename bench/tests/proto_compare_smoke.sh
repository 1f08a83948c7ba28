#!/usr/bin/env bash
# scripts/proto-compare.sh (bench/proto_compare.py) on a handmade shoal_heap_bench JSON file and a
# prototype log written with proto.cu's printf formats of its RES lines (W1/W2/W4 and W3, a run
# that run.sh saw fail, D0 lines and a second D4 configuration to be told apart), checking the
# table's cells and ratios.
# Usage: proto_compare_smoke.sh [python3]
set -euo pipefail
export PYTHON=${1:-python3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The prototype's RES lines: proto.cu's header printf, then its W1/W2/W4 or its W3 printf, the
# stats and the CHECK (fields after the times abbreviated where the parser reads none of them).
res_head() {  # D W n prime blocks
  printf 'RES D%d W%d n=%llu shape=%s sub=%d f0=%d fmax=%d nbh=%d trig=%d rlx=%d d0ep=%d prime=%d rlxacq=%d poll=%d fd=%d nm=%d occ=%d blocks=%llu' \
    "$1" "$2" "$3" norm 1 2 64 8 1 1 0 "$4" 0 32 0 0 6 "$5"
}
res_tail=' cachehit=0 l1miss=0 fresh=10 holeblk=0 gens=0 refills=1 returned=0 foreign=0 fail=0 timeout=0 anom=0 d0rounds=0 CHECK dup=0 missing=0 extra=0 badtype=0 badhandle=0 incons=0 hier=0 live=1 blocks=1 min=1 ok'
res() {  # D W n objs t_us prime
  local t=$5
  res_head "$1" "$2" "$3" "$6" 33792
  printf ' objs=%llu t_us=%.2f (min %.2f max %.2f) Gps=%.3f floor_us=%.2f floor_same_occ_us=%.2f' \
    "$4" "$t" "$t" "$t" "$(awk "BEGIN { print $4 / $t / 1000 }")" 9.0 9.0
  printf '%s\n' "$res_tail"
}
res3() {  # D alloc_us
  res_head "$1" 3 4194304 0 163840
  printf ' allocs_per_iter=%.0f alloc_us=%.2f (min %.2f max %.2f) Gps=%.3f free_us=%.2f floor_us=%.2f floor_same_occ_us=%.2f start_blocks=%llu start_live=%llu start_min=%llu blocks_unflushed=%llu' \
    25545 "$2" 47.26 65.86 "$(awk "BEGIN { print 25545 / $2 / 1000 }")" 36.62 21.58 23.12 65536 1258108 19658 62396
  printf '%s\n' "$res_tail"
}
{
  echo "NVIDIA H100 80GB HBM3, 580.159.04"
  res 0 1 1048576 32768 150.00 0
  res 4 1 1048576 32768 40.00 0
  res 4 1 1048576 32768 20.00 1   # another configuration: kept out by --where prime=0
  res 4 1 16777216 524288 400.00 0
  res 4 2 1048576 1048576 100.00 0
  echo "RES D4 W=2 logn=24 EXIT=124"
  res 4 4 1048576 131072 70.00 0
  res3 0 157.00
  res3 4 50.00
} >"$work/proto.log"

# shoal_heap_bench's JSON: median aggregates (µs) with the counters the benchmarks report; W2 at
# 2^24 failed; W1 at 2^24 has only its repetitions (no aggregates).
cat >"$work/shoal.json" <<'EOF'
{
  "context": {"shoal_backend": "cuda", "shoal_device": "NVIDIA H100 80GB HBM3 (test)"},
  "benchmarks": [
    {"name": "proto_W1_one_lane/20/repeats:5/manual_time_median", "run_name": "proto_W1_one_lane/20/repeats:5/manual_time",
     "run_type": "aggregate", "aggregate_name": "median", "real_time": 400.0, "time_unit": "us",
     "objects_per_s": 8.192e7, "threads": 1048576},
    {"name": "proto_W1_one_lane/20/repeats:5/manual_time_min", "run_name": "proto_W1_one_lane/20/repeats:5/manual_time",
     "run_type": "aggregate", "aggregate_name": "min", "real_time": 300.0, "time_unit": "us", "threads": 1048576},
    {"name": "proto_W1_one_lane/24/manual_time", "run_name": "proto_W1_one_lane/24/manual_time",
     "run_type": "iteration", "repetition_index": 0, "real_time": 8.0, "time_unit": "ms", "threads": 16777216},
    {"name": "proto_W1_one_lane/24/manual_time", "run_name": "proto_W1_one_lane/24/manual_time",
     "run_type": "iteration", "repetition_index": 1, "real_time": 9.0, "time_unit": "ms", "threads": 16777216},
    {"name": "proto_W1_one_lane/24/manual_time", "run_name": "proto_W1_one_lane/24/manual_time",
     "run_type": "iteration", "repetition_index": 2, "real_time": 7.0, "time_unit": "ms", "threads": 16777216},
    {"name": "proto_W2_every_lane/20/repeats:5/manual_time_median", "run_name": "proto_W2_every_lane/20/repeats:5/manual_time",
     "run_type": "aggregate", "aggregate_name": "median", "real_time": 1000.0, "time_unit": "us", "threads": 1048576},
    {"name": "proto_W2_every_lane/24/repeats:5/manual_time", "run_name": "proto_W2_every_lane/24/repeats:5/manual_time",
     "run_type": "iteration", "error_occurred": true, "error_message": "out of memory"},
    {"name": "proto_W4_two_classes/repeats:5/manual_time_median", "run_name": "proto_W4_two_classes/repeats:5/manual_time",
     "run_type": "aggregate", "aggregate_name": "median", "real_time": 210.0, "time_unit": "us", "threads": 1048576},
    {"name": "proto_W3_births_in_holes/iterations:100/repeats:5/manual_time_median",
     "run_name": "proto_W3_births_in_holes/iterations:100/repeats:5/manual_time",
     "run_type": "aggregate", "aggregate_name": "median", "real_time": 170.0, "time_unit": "us",
     "round_median_us": 150.0, "births_per_round": 25545, "threads": 4194304},
    {"name": "make/bytes:16/threads:1000/repeats:5/manual_time_median", "run_name": "make/bytes:16/threads:1000/repeats:5/manual_time",
     "run_type": "aggregate", "aggregate_name": "median", "real_time": 5.0, "time_unit": "us"}
  ]
}
EOF

status=0
bash "$here/scripts/proto-compare.sh" "$work/shoal.json" "$work/proto.log" --where prime=0 >"$work/table.md" || status=$?
cat "$work/table.md"
# The failed W2 2^24 benchmark makes it exit 1 (after printing the table).
[[ $status -eq 1 ]] || { echo "FAIL: exit status $status, wanted 1 (a benchmark failed)"; exit 1; }

check() {  # a row of the table, as a regex
  grep -qE "$1" "$work/table.md" || { echo "FAIL: no row matching: $1"; exit 1; }
}
# W1 2^20: 32768 objects / 400 µs = 0.0819 G/s against 0.819 G/s in 40 µs: ratio 10.
check '^\| W1 one lane per warp, 2\^20 threads \| 0\.0819 G/s \(400 µs\) \| 0\.819 G/s \(40 µs\) \| 10\.00 \|$'
# W1 2^24 from its repetitions (median 8 ms = 8000 µs) against 400 µs.
check '^\| W1 one lane per warp, 2\^24 threads \| 0\.0655 G/s \(8000 µs\) \| 1\.31 G/s \(400 µs\) \| 20\.00 \|$'
check '^\| W2 every lane, 2\^20 threads \| 1\.05 G/s \(1000 µs\) \| 10\.5 G/s \(100 µs\) \| 10\.00 \|$'
check '^\| W2 every lane, 2\^24 threads \| out of memory \| exit 124 \| – \|$'
check '^\| W4 two classes, 1 lane in 8, 2\^20 threads \| 0\.624 G/s \(210 µs\) \| 1\.87 G/s \(70 µs\) \| 3\.00 \|$'
# W3: the rounds' median (150 µs), not the mean time (170 µs), against D4's alloc_us.
check '^\| W3 births in holes \(birth kernel\), 2\^22 threads \| 150 µs \(0\.17 G/s\) \| 50 µs \(0\.511 G/s\) \| 3\.00 \|$'
check '^Shoal: .*\(NVIDIA H100 80GB HBM3 \(test\)\); prototype D4: .*\(NVIDIA H100 80GB HBM3, 580\.159\.04\)$'

# Without --where, the two D4 W1 2^20 lines give their median (30 µs); --design 0 reads D0.
bash "$here/scripts/proto-compare.sh" "$work/shoal.json" "$work/proto.log" >"$work/all.md" || true
grep -qE '^\| W1 one lane per warp, 2\^20 threads \| .* \| 1\.09 G/s \(30 µs\), median of 2 \| 13\.33 \|$' "$work/all.md" \
  || { cat "$work/all.md"; echo "FAIL: the median of two RES lines"; exit 1; }
bash "$here/scripts/proto-compare.sh" "$work/shoal.json" "$work/proto.log" --design 0 >"$work/d0.md" || true
grep -qE '^\| W3 births in holes \(birth kernel\), 2\^22 threads \| 150 µs .* \| 157 µs .* \| 0\.96 \|$' "$work/d0.md" \
  || { cat "$work/d0.md"; echo "FAIL: --design 0"; exit 1; }
echo "proto-compare: ok"
