#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# DynaSOAr's own Game of Life, the peer of apps/game_of_life in BENCHMARKS.md: its two variants,
# `dynasoar` (every cell an object; Shoal's --variant cells) and `dynasoar_no_cell` (Shoal's
# --variant no-cell), on its datasets.
#
#   bench/peers/dynasoar_game_of_life.sh DYNASOAR_DIR [STEPS] [PGM...]
#
# DYNASOAR_DIR is a checkout of https://github.com/prg-titech/dynasoar (read only; nothing of it
# is in this repository). STEPS: generations per run (default 300, the example's). PGM: the
# patterns to run (default: tm.pgm and utm.pgm, Paul Rendell's Turing machines, taken from the
# checkout's example/game-of-life/dataset/turing_machines.tar.gz). One line per run:
# "dynasoar_game_of_life/<variant> <pattern> <steps> <seconds>".
#
# PEER_DATASETS_OUT=DIR also copies the two default patterns there, for Shoal's side of the same
# run (SHOAL_GOL_DATASETS=DIR shoal_apps_bench --benchmark_filter=game_of_life). The heap holds
# twice the largest pattern's cells (a power of two, at least the example's 64^4): the `dynasoar`
# variant makes an object of every cell. PEER_BIN, PEER_TIMEOUT, PEER_BUILD_ONLY, PEER_DEBUG and
# CUDA_CC are dynasoar_lib.sh's.
set -euo pipefail
# shellcheck source=dynasoar_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/dynasoar_lib.sh"

src=${1:?usage: $0 DYNASOAR_DIR [STEPS] [PGM...]}
steps=${2:-300}
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || { echo "$0: STEPS must be a positive integer, got '$steps'" >&2; exit 2; }
shift $(($# < 2 ? $# : 2))
dynasoar_prepare "$src" example/game-of-life/dynasoar/gol.cu example/game-of-life/dynasoar_no_cell/gol.cu \
  example/game-of-life/dataset/turing_machines.tar.gz
dynasoar_set_constant example/game-of-life/configuration.h kNumIterations "$steps"

patterns=("$@")
if ((${#patterns[@]} == 0)); then
  mkdir -p "$work/patterns"
  tar xzf "$work/example/game-of-life/dataset/turing_machines.tar.gz" -C "$work/patterns" tm.pgm utm.pgm
  patterns=("$work/patterns/tm.pgm" "$work/patterns/utm.pgm")
  if [[ -n "${PEER_DATASETS_OUT:-}" ]]; then mkdir -p "$PEER_DATASETS_OUT" && cp "${patterns[@]}" "$PEER_DATASETS_OUT/"; fi
fi
# The largest pattern's cell count, from its PGM header (P2 or P5: magic, width, height; comments
# start with #).
cells=0
for p in "${patterns[@]}"; do
  [[ -r "$p" ]] || { echo "$0: cannot read pattern $p" >&2; exit 2; }
  n=$(python3 - "$p" <<'PY'
import re, sys
head = open(sys.argv[1], "rb").read(4096).decode("latin-1")
head = re.sub(r"#[^\n]*", " ", head).split()
if len(head) < 3 or head[0] not in ("P2", "P5") or not head[1].isdigit() or not head[2].isdigit():
    sys.exit(f"{sys.argv[1]}: not a P2 or P5 PGM file")
print(int(head[1]) * int(head[2]))
PY
  ) || exit 2
  ((n > cells)) && cells=$n
done
max_obj=${PEER_MAX_OBJ:-$(dynasoar_heap_objects $((2 * cells > 16777216 ? 2 * cells : 16777216)))}

for v in dynasoar dynasoar_no_cell; do
  dynasoar_build "gol_$v" example/game-of-life/dataset_loader.cu "example/game-of-life/$v/gol.cu" -- \
    -DPARAM_MAX_OBJ="$max_obj"
done
[[ "${PEER_BUILD_ONLY:-0}" == 1 ]] && exit 0
for p in "${patterns[@]}"; do
  for v in dynasoar dynasoar_no_cell; do dynasoar_time "dynasoar_game_of_life/$v $(basename "$p") $steps" "gol_$v" "$p"; done
done
