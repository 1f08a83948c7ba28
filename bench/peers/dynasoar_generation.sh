#!/usr/bin/env bash
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
# PEER_BIN=DIR keeps the two programs in DIR and reuses them when they are there already;
# PEER_TIMEOUT=S gives up on a variant after S seconds; PEER_BUILD_ONLY=1 stops after building
# (to build beside other work and time later); PEER_DEBUG=1 builds without NDEBUG, so that
# DynaSOAr prints each step's number and its allocator's state (to see where a run stops);
# PEER_MAX_OBJ=N sizes DynaSOAr's heap (default: 4 objects per cell, a power of two).
#
# The example's viewer kernel is compiled only with OPTION_RENDER (it does not build otherwise).
# DynaSOAr wants C++11 and its bundled CUB; it builds here with C++17 and the CUB of the CUDA
# toolkit (lib/cub is a submodule that a plain checkout lacks); g++ >= 11 wants -fpermissive and
# template arguments on two pointers to member function templates (bitmap.h), nvcc 13 a "template"
# keyword in allocator_handle.h.
set -euo pipefail

src=${1:?usage: $0 DYNASOAR_DIR [SIZE] [STEPS]}
size=${2:-2500}
steps=${3:-1000}
[[ -f "$src/allocator/soa_allocator.h" && -f "$src/example/generation/dynasoar/generation.cu" ]] ||
  { echo "$0: $src is not a DynaSOAr checkout (allocator/soa_allocator.h, example/generation missing)" >&2; exit 2; }
[[ "$size" =~ ^[1-9][0-9]*$ && "$steps" =~ ^[1-9][0-9]*$ ]] ||
  { echo "$0: SIZE and STEPS must be positive integers, got '$size' '$steps'" >&2; exit 2; }

cc=${CUDA_CC:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${PEER_BIN:-$work/bin}
mkdir -p "$bin"
bin=$(cd "$bin" && pwd)
cp -r "$src/." "$work/"
gen="$work/example/generation/dynasoar/generation.cu"

# Steps: the example's compile-time constant. Defragmentation: the call the example left in a
# comment, every 50 steps, only when OPTION_DEFRAG is defined.
python3 - "$work/example/generation/configuration.h" "$gen" "$steps" "$work/bitmap/bitmap.h" \
  "$work/allocator/allocator_handle.h" <<'EOF'
import re, sys
conf, gen, steps, bitmap, handle = sys.argv[1:6]
# nvcc 13 wants "template" before the member templates the allocator handle calls for defragmentation.
h = open(handle).read()
h2 = h.replace("allocator_->parallel_defrag<", "allocator_->template parallel_defrag<")
assert h2 != h, "allocator_handle.h: parallel_defrag call not found"
# CUDA 13 dropped cudaDeviceProp::memoryClockRate, which the debug build prints.
h2 = h2.replace("prop.memoryClockRate", "0")
open(handle, "w").write(h2)
# g++ >= 11 no longer takes a member function template's address without its arguments.
b = open(bitmap).read()
templates = set(re.findall(r"template<int S = ScanType>\s*(?:__\w+__\s*)*typename std::enable_if<.*?>::type\s+(\w+)\(", b, flags=re.S))
assert templates, "bitmap.h: no member function templates of ScanType found"
for f in templates:
    b = b.replace(f"&ThisClass::{f}>", f"&ThisClass::template {f}<S>>")
open(bitmap, "w").write(b)
c = open(conf).read()
c2 = re.sub(r"static const int kNumIterations = \d+;", f"static const int kNumIterations = {steps};", c)
assert c2 != c, "kNumIterations not found"
open(conf, "w").write(c2)
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
EOF

# The example's default heap holds 48*64^4 objects, more than an 80 GB GPU has room for (the
# program then prints nothing and never ends). A cell holds its Cell and at most one Alive or
# Candidate: room for 4 objects per cell, rounded up to a power of two (its build script's -m).
max_obj=${PEER_MAX_OBJ:-$(python3 -c "print(1 << (4 * $size * $size - 1).bit_length())")}

build() {  # build NAME EXTRA_FLAGS...
  local name=$1; shift
  [[ -x "$bin/$name" ]] && return 0
  local ndebug=-DNDEBUG
  [[ "${PEER_DEBUG:-0}" == 1 ]] && ndebug=
  (cd "$work" && nvcc -Xcudafe "--diag_suppress=1427" -O3 $ndebug -std=c++17 --expt-extended-lambda \
     -gencode "arch=compute_$cc,code=sm_$cc" -maxrregcount=64 -Xcompiler -fpermissive -Iexample/configuration/dynasoar -I. \
     -DPARAM_SIZE="$size" -DPARAM_MAX_OBJ="$max_obj" "$@" example/generation/dataset_loader.cu example/generation/dynasoar/generation.cu \
     -o "$bin/$name")
}
build plain
build defrag -DOPTION_DEFRAG
[[ "${PEER_BUILD_ONLY:-0}" == 1 ]] && exit 0
for v in plain defrag; do
  if [[ "${PEER_DEBUG:-0}" == 1 ]]; then  # its own output, as it comes
    status=0
    timeout "${PEER_TIMEOUT:-0}" stdbuf -oL "$bin/$v" || status=$?
    echo "$0: $v exited with status $status"
    continue
  fi
  status=0
  line=$(timeout "${PEER_TIMEOUT:-0}" "$bin/$v" | tail -1) || status=$?
  [[ $status == 0 ]] || { echo "$0: $v exited with status $status (124: ran past PEER_TIMEOUT=${PEER_TIMEOUT:-0} s)" >&2; continue; }
  us=${line%%,*}
  [[ "$us" =~ ^[0-9]+$ ]] || { echo "$0: $v printed '$line', not '<µs>, <µs>'" >&2; exit 1; }
  echo "dynasoar_generation/$v $size $steps $(python3 -c "print($us / 1e6)")"
done
