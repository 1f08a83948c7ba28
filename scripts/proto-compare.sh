#!/usr/bin/env bash
# Shoal against the reference allocator prototype (alloc-proto) on its four workloads: a markdown
# table, workload | Shoal G/s (µs for W3) | prototype D4 | Shoal time / D4 time.
#
#   scripts/proto-compare.sh SHOAL.json PROTO.log [--design N] [--where KEY=VALUE]...
#
# SHOAL.json: shoal_heap_bench's --benchmark_out JSON with the proto_W* benchmarks
#   (build/cuda-release/bench/shoal_heap_bench --benchmark_filter=proto_W --benchmark_out=SHOAL.json),
#   or a merged result file of bench/run.sh.
# PROTO.log: the stdout of the prototype's run.sh (its "RES D4 ..." lines), from the same machine.
# --design N compares with the prototype's design N instead of D4 (0: the port of today's design);
# --where KEY=VALUE keeps only RES lines with that field (e.g. prime=0). The parsing is
# bench/proto_compare.py (python3, standard library; $PYTHON names another interpreter); exits 1
# if a benchmark reported an error.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ $# -lt 2 || "$1" == "-h" || "$1" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  [[ $# -ge 2 ]] && exit 0 || exit 2
fi
exec "${PYTHON:-python3}" "$here/bench/proto_compare.py" "$@"
