#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# DynaSOAr's own structure benchmark, the peer of apps/structure in BENCHMARKS.md.
#
#   bench/peers/dynasoar_structure.sh DYNASOAR_DIR [NODES] [STEPS]
#
# DYNASOAR_DIR is a checkout of https://github.com/prg-titech/dynasoar (read only; nothing of it
# is in this repository). NODES: the mesh's nodes (default 1,500,000, the example's and
# apps/structure's), made by the example's own random generator (dataset.cc); STEPS: steps of 40
# force-and-move rounds each (default 500, the example's). Prints
# "dynasoar_structure/dynasoar <nodes> <steps> <seconds>".
#
# DynaSOAr's step also runs a breadth-first search from the anchors after the rounds and deletes
# what lost its way to them, which apps/structure does not do (docs/apps.md). PEER_BIN,
# PEER_TIMEOUT, PEER_BUILD_ONLY, PEER_DEBUG and CUDA_CC are dynasoar_lib.sh's.
set -euo pipefail
# shellcheck source=dynasoar_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/dynasoar_lib.sh"

src=${1:?usage: $0 DYNASOAR_DIR [NODES] [STEPS]}
nodes=${2:-1500000}
steps=${3:-500}
[[ "$nodes" =~ ^[1-9][0-9]*$ && "$steps" =~ ^[1-9][0-9]*$ ]] ||
  { echo "$0: NODES and STEPS must be positive integers, got '$nodes' '$steps'" >&2; exit 2; }
dynasoar_prepare "$src" example/structure/dynasoar/structure.cu example/structure/dataset.cc
dynasoar_set_constant example/structure/configuration.h kNumSteps "$steps"
# The heap: the example's 2 × 64^4 objects of the smallest class, or more for a larger mesh.
max_obj=${PEER_MAX_OBJ:-$(dynasoar_heap_objects $((8 * nodes > 33554432 ? 8 * nodes : 33554432)))}
dynasoar_build structure example/structure/dataset.cc example/structure/dynasoar/structure.cu -- \
  -DPARAM_SIZE="$nodes" -DPARAM_MAX_OBJ="$max_obj"
[[ "${PEER_BUILD_ONLY:-0}" == 1 ]] && exit 0
dynasoar_time "dynasoar_structure/dynasoar $nodes $steps" structure
