#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/..
# Builds and tests Shoal: the command CI runs (through .ci/run) and the one to run before a commit.
#
#   1. installs missing Debian packages (apt-get; only when something is missing)
#   2. cpu-release:  configure, build, ctest
#      python:       the Python module (pip install . in build/python-venv) and its tests
#                    (scripts/python-tests.sh; not run, with a note, when PyPI cannot be reached)
#      downstream:   build the libraries only (preset cpu-lib, -B outside the checkout), install
#                    them to a temporary prefix, build examples/downstream against them
#                    (find_package(shoal)) and run it: the package as a user's project sees it
#      api-docs:     scripts/docs.sh, Doxygen over the public headers (a warning fails)
#   3. cpu-tsan:     configure, build, ctest under ThreadSanitizer (keeps the lock-free code honest)
#   4. cpu-asan:     configure, build, ctest under AddressSanitizer + UndefinedBehaviorSanitizer
#                    (checked heap; the checkpoint and command-line fuzz tests run here too)
#   5. cuda-release: when nvcc is found and a GPU is usable: configure and build (benchmarks
#                    too), ctest -L gpu, and build and run examples/downstream against its install.
#      cuda-check:   when nvcc is found but no GPU (CI): every target but the benchmarks compiled
#                    as the cuda backend, so nvcc-only breakage fails here too, and
#                    examples/downstream built against its install, not run. It emits PTX
#                    without SASS and leaves host code unoptimized (the cuda-check preset): ptxas
#                    and g++ -O3 were half of each translation unit's time, and what runs nowhere
#                    need not be optimized. The nine apps' programs are left out (their models,
#                    command lines and checkpoints are in the GPU tests it compiles; their drivers
#                    and views are compiled by every cuda-release build on the GPU machine)
#
# The cpu tests run -j$(nproc): each test is its own process and most use one core for a moment,
# so a second one fills the gaps (under ASan 437 -> 261 s on two cores).
# The sanitizer presets build no programs (SHOAL_BUILD_APP_PROGRAMS off): the test binaries run
# the apps' programs in-process, and compiling ten programs again under each sanitizer was a third
# of CI's time.
#
# Works on a fresh Debian 12 machine without a GPU (as root, or with sudo). Build trees go to
# build/<preset> (see CMakePresets.json); a second run is incremental.
set -Eeuo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib/common.sh
. scripts/lib/ensure_packages.sh

JOBS=$(nproc)
T0=$SECONDS
STEP="setup"
STEP_START=$SECONDS
TIMINGS=()
NOTE=""

begin_step() {
  STEP=$1
  STEP_START=$SECONDS
}
end_step() {
  TIMINGS+=("$STEP $(shoal_duration $((SECONDS - STEP_START)))")
}
finish() {
  local rc=$?
  local times
  times=$(IFS=','; echo "${TIMINGS[*]:-}")
  times=${times//,/, }
  echo
  if ((rc == 0)); then
    echo "test.sh: PASSED in $(shoal_duration $((SECONDS - T0))) (${times})${NOTE:+; $NOTE}"
  else
    echo "test.sh: FAILED in step '$STEP' (status $rc) after $(shoal_duration $((SECONDS - T0)))${times:+; passed before it: $times}"
  fi
}
trap finish EXIT

# configure + build (+ test) one preset. Each command is a separate step so that errexit holds.
configure_and_build() {
  local preset=$1
  shift
  shoal_section "$preset: configure"
  shoal_timed cmake --preset "$preset" "$@"
  shoal_section "$preset: build (-j$JOBS)"
  shoal_timed cmake --build --preset "$preset" -j"$JOBS"
}

# build_downstream <preset> run|no-run: installs build/<preset> to a temporary prefix, configures
# and builds examples/downstream against it in a temporary build directory, and (run) runs it:
# it must print its summary line and exit 0. A library-only preset (*-lib) is first configured
# and built outside the checkout (-B), as README's install lines do. The temporary directories go
# when it passes; when it fails they stay for a look (their paths are printed).
build_downstream() {
  local preset=$1 mode=$2 tmp out from
  tmp=$(mktemp -d -t "shoal-downstream-$preset.XXXXXX")
  echo "downstream: prefix $tmp/prefix, build $tmp/build"
  from="build/$preset"
  if [[ "$preset" == *-lib ]]; then
    from="$tmp/lib"
    shoal_timed cmake --preset "$preset" -B "$from" >/dev/null
    shoal_timed cmake --build "$from" -j"$JOBS"
  fi
  # Without its line per file (the failures go to stderr and the status stays: pipefail).
  shoal_timed cmake --install "$from" --prefix "$tmp/prefix" | sed '/^-- \(Installing\|Up-to-date\): /d'
  shoal_timed cmake -S examples/downstream -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$tmp/prefix"
  shoal_timed cmake --build "$tmp/build"
  if [[ "$mode" == run ]]; then
    out=$("$tmp/build/walkers")
    echo "$out"
    if [[ "$out" != "downstream: backend="*" heap=ok" ]]; then
      echo "error: examples/downstream printed no summary line" >&2
      return 1
    fi
  fi
  rm -rf "$tmp"
}

# ---------------------------------------------------------------------------------------------
begin_step packages
shoal_section "packages"
shoal_ensure_packages "${SHOAL_PACKAGES[@]}" "${SHOAL_MPI_PACKAGES[@]}" "${SHOAL_PYTHON_PACKAGES[@]}"
echo "cmake $(cmake --version | sed -n '1s/cmake version //p'), ninja $(ninja --version)," \
  "$(g++ --version | head -n1), $(nproc) cores${CI:+, CI=$CI}"
end_step

# ---------------------------------------------------------------------------------------------
begin_step cpu-release
configure_and_build cpu-release
shoal_section "cpu-release: test"
shoal_timed ctest --preset cpu-release -j"$JOBS"
end_step

# ---------------------------------------------------------------------------------------------
begin_step python
shoal_section "python: pip install . (cpu backend) in a virtual environment, pytest tests/python"
python_rc=0
scripts/python-tests.sh build/cpu-release/bin || python_rc=$?
if ((python_rc == 3)); then
  NOTE="${NOTE:+$NOTE; }Python tests not run (nanobind could not be installed from PyPI)"
elif ((python_rc != 0)); then
  exit "$python_rc"
fi
end_step

# ---------------------------------------------------------------------------------------------
begin_step downstream
shoal_section "downstream: build the libraries only (cpu-lib, outside the checkout), install, build and run examples/downstream against them"
build_downstream cpu-lib run
end_step

# ---------------------------------------------------------------------------------------------
begin_step api-docs
shoal_section "api-docs: Doxygen over the public headers, warnings fail (scripts/docs.sh)"
scripts/docs.sh
end_step

# ---------------------------------------------------------------------------------------------
begin_step cpu-tsan
configure_and_build cpu-tsan
shoal_section "cpu-tsan: test (ThreadSanitizer)"
export TSAN_OPTIONS="halt_on_error=1 allocator_may_return_null=1${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
# GCC 12's ThreadSanitizer cannot map its shadow memory when the kernel randomizes mmap with
# more than 28 bits ("FATAL: ThreadSanitizer: unexpected memory mapping"); run the tests with
# address-space randomization off then, where the kernel lets us.
tsan_prefix=()
rnd_bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)
if ((rnd_bits > 28)) && setarch "$(uname -m)" -R true 2>/dev/null; then
  echo "vm.mmap_rnd_bits=$rnd_bits: running the tests with ASLR off (setarch -R)"
  tsan_prefix=(setarch "$(uname -m)" -R)
fi
shoal_timed "${tsan_prefix[@]}" ctest --preset cpu-tsan -j"$JOBS"
end_step

# ---------------------------------------------------------------------------------------------
begin_step cpu-asan
configure_and_build cpu-asan
shoal_section "cpu-asan: test (AddressSanitizer + UndefinedBehaviorSanitizer)"
# halt_on_error makes a UBSan report fail the test instead of scrolling past (the test preset
# sets the same; these also hold when ctest runs without the preset). allocator_may_return_null:
# a request the allocator cannot serve returns null as without the sanitizer, so the tests of
# clean errors for impossible sizes (a checkpoint that claims 1 EiB of heap) test the real path.
export ASAN_OPTIONS="halt_on_error=1 detect_leaks=1 allocator_may_return_null=1${ASAN_OPTIONS:+ $ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1${UBSAN_OPTIONS:+ $UBSAN_OPTIONS}"
shoal_timed ctest --preset cpu-asan -j"$JOBS"
end_step

# ---------------------------------------------------------------------------------------------
begin_step cuda-release
if shoal_find_nvcc; then
  echo "nvcc: $SHOAL_NVCC ($("$SHOAL_NVCC" --version | sed -n 's/^Cuda compilation tools, //p'))"
  if shoal_gpu_usable; then
    configure_and_build cuda-release -DSHOAL_BUILD_BENCH=ON
    shoal_section "cuda-release: test (label gpu)"
    shoal_timed ctest --preset cuda-release
    shoal_section "cuda-release: install, build and run examples/downstream against it"
    build_downstream cuda-release run
    NOTE="GPU tests ran"
  else
    STEP=cuda-check
    configure_and_build cuda-check
    shoal_section "cuda-check: install, build examples/downstream against it (no GPU: not run)"
    build_downstream cuda-check no-run
    echo "cuda-check: GPU tests compiled but not run (no usable GPU: nvidia-smi -L lists none)"
    NOTE="cuda built, GPU tests not run (no GPU)"
  fi
else
  echo "cuda-release: skipped (nvcc is neither on the PATH nor in /usr/local/cuda/bin)"
  NOTE="cuda skipped (no nvcc)"
fi
end_step
STEP="done"
