#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/..
# Builds and runs Shoal's main example, the Wa-Tor simulation: on the GPU (cuda-release preset)
# when nvcc is found and a GPU is usable, otherwise on the cpu backend (cpu-release preset).
# Arguments go to the app:
#
#   scripts/demo.sh                 # defaults (GPU: 2048 x 2560, 500 steps; CPU: CPU_DEMO_ARGS)
#   scripts/demo.sh --help          # the app's options
#   scripts/demo.sh --steps 100 --csv wator.csv
set -Eeuo pipefail

# The main example: the executable's name under build/<preset>/bin/.
APP=wator
# Without arguments on the cpu backend: a grid 1/16 of the default, so that a two-core machine
# finishes in seconds rather than minutes.
CPU_DEMO_ARGS=(--width 512 --height 640)

cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib/common.sh
. scripts/lib/ensure_packages.sh

if shoal_find_nvcc && shoal_gpu_usable; then
  preset=cuda-release
  why="nvcc and a GPU found"
elif [[ -n "${SHOAL_NVCC:-}" ]]; then
  preset=cpu-release
  why="nvcc found but no usable GPU"
else
  preset=cpu-release
  why="no nvcc"
fi

shoal_section "demo: $APP on the ${preset%%-*} backend ($why)"
shoal_ensure_packages "${SHOAL_PACKAGES[@]}"
# Configure with the full preset (the same build tree scripts/test.sh uses), build only the app.
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j"$(nproc)" --target "$APP"

if [[ $preset == cpu-release && $# -eq 0 ]]; then
  echo "cpu backend: running a smaller grid than the default (${CPU_DEMO_ARGS[*]}); pass arguments to choose"
  set -- "${CPU_DEMO_ARGS[@]}"
fi
shoal_section "run: build/$preset/bin/$APP $*"
exec "build/$preset/bin/$APP" "$@"
