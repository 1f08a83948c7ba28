# shellcheck shell=bash
# What the dynasoar_<model>.sh scripts share: a patched copy of a DynaSOAr checkout, building one
# of its examples for this GPU, and timing a program by the line DynaSOAr's examples print last,
# "<total µs>, <enumeration µs>". Sourced, not run.
#
# Why patches: DynaSOAr wants C++11 and its bundled CUB; it builds here with C++17 and the CUB of
# the CUDA toolkit (lib/cub is a submodule that a plain checkout lacks). g++ >= 11 wants
# -fpermissive and template arguments on pointers to member function templates (bitmap.h), nvcc 13
# a "template" keyword in allocator_handle.h, and CUDA 13 dropped a device property that its debug
# build prints.
#
# Environment (every script): CUDA_CC (e.g. 90; default: nvidia-smi's first GPU), PEER_BIN=DIR
# keeps the programs there and reuses them, PEER_TIMEOUT=S gives up on a program after S seconds,
# PEER_BUILD_ONLY=1 stops after building, PEER_DEBUG=1 builds without NDEBUG (DynaSOAr then prints
# each step and its allocator's state) and runs the programs with their output as it comes.

# dynasoar_prepare SRC FILE...: checks that SRC is a DynaSOAr checkout holding FILE..., copies it
# into a temporary directory ($work, removed on exit) with the toolchain patches applied, and sets
# $cc (the GPU's compute capability) and $bin (where programs go).
dynasoar_prepare() {
  local src=$1 f
  shift
  for f in allocator/soa_allocator.h "$@"; do
    [[ -f "$src/$f" ]] || { echo "$0: $src is not a DynaSOAr checkout with $f" >&2; exit 2; }
  done
  cc=${CUDA_CC:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)}
  [[ "$cc" =~ ^[0-9]+$ ]] || { echo "$0: no GPU found and no CUDA_CC given (e.g. CUDA_CC=90)" >&2; exit 2; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  bin=${PEER_BIN:-$work/bin}
  mkdir -p "$bin"
  bin=$(cd "$bin" && pwd)
  cp -r "$src/." "$work/"
  python3 - "$work/bitmap/bitmap.h" "$work/allocator/allocator_handle.h" <<'EOF'
import re, sys
bitmap, handle = sys.argv[1:3]
h = open(handle).read()
h2 = h.replace("allocator_->parallel_defrag<", "allocator_->template parallel_defrag<")
assert h2 != h, "allocator_handle.h: parallel_defrag call not found"
h2 = h2.replace("prop.memoryClockRate", "0")
open(handle, "w").write(h2)
b = open(bitmap).read()
templates = set(re.findall(r"template<int S = ScanType>\s*(?:__\w+__\s*)*typename std::enable_if<.*?>::type\s+(\w+)\(", b, flags=re.S))
assert templates, "bitmap.h: no member function templates of ScanType found"
for f in templates:
    b = b.replace(f"&ThisClass::{f}>", f"&ThisClass::template {f}<S>>")
open(bitmap, "w").write(b)
EOF
}

# dynasoar_set_constant FILE NAME VALUE: sets `static const int NAME = ...;` in FILE of the copy.
dynasoar_set_constant() {
  python3 - "$work/$1" "$2" "$3" <<'EOF'
import re, sys
path, name, value = sys.argv[1:4]
text = open(path).read()
new, found = re.subn(rf"static const int {name} = [^;]+;", f"static const int {name} = {value};", text)
assert found == 1, f"{path}: {name} not found"
open(path, "w").write(new)
EOF
}

# dynasoar_build NAME SOURCE... [-- NVCC_FLAGS...]: builds $bin/NAME from the copy's sources (paths
# relative to the checkout), unless it is there already. DynaSOAr's own flags: -O3, at most 64
# registers, its example's configuration folder on the include path.
dynasoar_build() {
  local name=$1 sources=() ndebug=-DNDEBUG
  shift
  while (($#)) && [[ $1 != -- ]]; do sources+=("$1"); shift; done
  (($#)) && shift
  [[ -x "$bin/$name" ]] && return 0
  [[ "${PEER_DEBUG:-0}" == 1 ]] && ndebug=
  (cd "$work" && nvcc -Xcudafe "--diag_suppress=1427" -O3 $ndebug -std=c++17 --expt-extended-lambda \
     -gencode "arch=compute_$cc,code=sm_$cc" -maxrregcount=64 -Xcompiler -fpermissive \
     -Iexample/configuration/dynasoar -I. "$@" "${sources[@]}" -o "$bin/$name")
}

# dynasoar_time LABEL PROGRAM [ARGS...]: runs $bin/PROGRAM and prints "LABEL <seconds>" from its last
# line; a failure or a timeout is one line on stderr (the other programs still run).
dynasoar_time() {
  local label=$1 program=$2 status=0 line us
  shift 2
  if [[ "${PEER_DEBUG:-0}" == 1 ]]; then
    timeout "${PEER_TIMEOUT:-0}" stdbuf -oL "$bin/$program" "$@" || status=$?
    echo "$0: $program exited with status $status"
    return 0
  fi
  line=$(timeout "${PEER_TIMEOUT:-0}" "$bin/$program" "$@" | tail -1) || status=$?
  [[ $status == 0 ]] ||
    { echo "$0: $program exited with status $status (124: ran past PEER_TIMEOUT=${PEER_TIMEOUT:-0} s)" >&2; return 0; }
  us=${line%%,*}
  [[ "$us" =~ ^[0-9]+$ ]] || { echo "$0: $program printed '$line', not '<µs>, <µs>'" >&2; exit 1; }
  echo "$label $(python3 -c "print($us / 1e6)")"
}

# dynasoar_heap_objects N: N rounded up to a power of two (DynaSOAr's heap sizes).
dynasoar_heap_objects() {
  python3 -c "print(1 << ($1 - 1).bit_length())"
}
