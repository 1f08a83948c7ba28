#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# DynaSOAr's own generation benchmark, the peer of apps/generation in BENCHMARKS.md.
#
#   bench/peers/dynasoar_generation.sh DYNASOAR_DIR [SIZE] [STEPS]
#
# DYNASOAR_DIR is a checkout of https://github.com/prg-titech/dynasoar (read only; nothing of it
# is in this repository). The script copies its allocator and example/generation into a temporary
# directory, sets the grid size (SIZE × SIZE, default 2500, as apps/generation) and the number of
# steps (default 1000; DynaSOAr's file says 25000), and builds two programs for the GPU found by
# nvidia-smi (or $CUDA_CC, e.g. 90): without defragmentation, and with OPTION_DEFRAG on, defragmenting Alive and
# Candidate every 50 steps (DynaSOAr's example has that call commented out; this script puts it
# back as the paper ran it). Each program prints DynaSOAr's own line "<total µs>, <enumeration µs>";
# the script prints one line per variant: "dynasoar_generation/<variant> size steps seconds".
#
# PEER_MAX_OBJ=N sizes DynaSOAr's heap (default: 4 objects per cell, a power of two); the other
# settings (PEER_BIN, PEER_TIMEOUT, PEER_BUILD_ONLY, PEER_DEBUG, CUDA_CC) and the patches that let
# DynaSOAr build with today's compilers are dynasoar_lib.sh's.
#
# The example's viewer kernel is compiled only with OPTION_RENDER (it does not build otherwise).
set -euo pipefail
# shellcheck source=dynasoar_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/dynasoar_lib.sh"

src=${1:?usage: $0 DYNASOAR_DIR [SIZE] [STEPS]}
size=${2:-2500}
steps=${3:-1000}
[[ "$size" =~ ^[1-9][0-9]*$ && "$steps" =~ ^[1-9][0-9]*$ ]] ||
  { echo "$0: SIZE and STEPS must be positive integers, got '$size' '$steps'" >&2; exit 2; }
dynasoar_prepare "$src" example/generation/dynasoar/generation.cu
dynasoar_set_constant example/generation/configuration.h kNumIterations "$steps"

# Defragmentation: the call the example left in a comment, every 50 steps, only when
# OPTION_DEFRAG is defined.
python3 - "$work/example/generation/dynasoar/generation.cu" <<'PY'
import re, sys
gen = sys.argv[1]
g = open(gen).read()
g2 = re.sub(r"/\*\s*(void defrag\(\) \{.*?\n\})\s*\*/", r"\1", g, flags=re.S)
g2 = re.sub(r"/\*\s*if \(kOptionDefrag\) \{\s*if \(i % 50 == 0\) \{\s*defrag\(\);\s*\}\s*\}\s*\*/",
            "#ifdef OPTION_DEFRAG\n    if (i % 50 == 0) defrag();\n#endif", g2)
# The example at DynaSOAr's HEAD uses the viewer's array outside OPTION_RENDER: guard that kernel.
g2 = re.sub(r"(__global__ void initialize_render_arrays\(\) \{.*?\n\}\n)", r"#ifdef OPTION_RENDER\n\1#endif\n",
            g2, count=1, flags=re.S)
assert g2.count("defrag();") == 1 and "void defrag() {" in g2 and "/*\nvoid defrag" not in g2, \
    "the defragmentation call of example/generation is not where this script expects it"
open(gen, "w").write(g2)
PY

# The example's default heap holds 48*64^4 objects, more than an 80 GB GPU has room for (the
# program then prints nothing and never ends). A cell holds its Cell and at most one Alive or
# Candidate: room for 4 objects per cell, rounded up to a power of two (its build script's -m).
max_obj=${PEER_MAX_OBJ:-$(dynasoar_heap_objects $((4 * size * size)))}
sources=(example/generation/dataset_loader.cu example/generation/dynasoar/generation.cu)
dynasoar_build plain "${sources[@]}" -- -DPARAM_SIZE="$size" -DPARAM_MAX_OBJ="$max_obj"
dynasoar_build defrag "${sources[@]}" -- -DPARAM_SIZE="$size" -DPARAM_MAX_OBJ="$max_obj" -DOPTION_DEFRAG
[[ "${PEER_BUILD_ONLY:-0}" == 1 ]] && exit 0
for v in plain defrag; do dynasoar_time "dynasoar_generation/$v $size $steps" "$v"; done
