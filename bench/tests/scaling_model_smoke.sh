#!/usr/bin/env bash
# bench/scaling_model.py on a handmade bench/scaling.py result: a strong series whose do-alls
# divide by the GPUs and whose exchanges cost 0.2 ms a step from two GPUs on, and a weak series
# that loses a fifth at four GPUs; checks the measured and projected cells, and that a file that
# is not a scaling result is one line and exit status 2.
# Usage: scaling_model_smoke.sh [python3]
set -euo pipefail
python=${1:-python3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" - "$work/scaling.json" <<'PY'
import json, sys
runs = []
def run(mode, size, ranks, transport, phases):
    runs.append({"app": "wator", "mode": mode, "size": size, "ranks": ranks, "transport": transport,
                 "steps": 100, "seconds": sum(phases.values()) / 1e3, "checksum": "1",
                 "phases_ms": dict(phases, populate=5.0)})
# Strong: 400 ms of do-alls on one GPU, divided by the GPUs, plus 20 ms of exchanges from 2 GPUs on.
run("strong", [4096, 5120], 1, "host", {"Fish::move": 390.0, "halo": 10.0})
for r in (2, 4):
    run("strong", [4096, 5120], r, "host", {"Fish::move": 390.0 / r, "halo": 10.0 / r + 20.0})
# Weak: 100 ms a run on one GPU, 125 on four.
run("weak", [2048, 2560], 1, "host", {"Fish::move": 100.0})
run("weak", [2048, 10240], 4, "host", {"Fish::move": 100.0, "migrate": 25.0})
json.dump(runs, open(sys.argv[1], "w"))
PY

out=$("$python" "$here/bench/scaling_model.py" "$work/scaling.json")
echo "$out"
# T(P') = 400 / P' + 20: 8 GPUs 70 ms (5.71x), 64 GPUs 26.25 (15.24x), 512 GPUs 20.78 (19.25x).
grep -qF '| wator strong 4096x5120 | 1.00 | 1.82 | 3.33 | 5.71 | 15.24 | 19.25 | 0.200 (halo) |' <<<"$out" ||
  { echo "FAIL: strong row" >&2; exit 1; }
grep -qF '| wator weak 2048x2560 per GPU | 1.00 |  | 0.80 | 0.80 | 0.80 | 0.80 | 0.250 (migrate) |' <<<"$out" ||
  { echo "FAIL: weak row" >&2; exit 1; }

echo '{"not": "a list"}' >"$work/bad.json"
status=0
err=$("$python" "$here/bench/scaling_model.py" "$work/bad.json" 2>&1 >/dev/null) || status=$?
[[ $status == 2 && $(wc -l <<<"$err") == 1 && $err == *"bad.json"* ]] ||
  { echo "FAIL: a bad file gave status $status and '$err'" >&2; exit 1; }
echo "scaling_model_smoke: ok"
