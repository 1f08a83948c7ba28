#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/..
# Builds and runs Shoal's main example: on the GPU (cuda-release preset) when nvcc is found and
# a GPU is usable, otherwise on the cpu backend (cpu-release preset). Arguments go to the app:
#
#   scripts/demo.sh                 # defaults
#   scripts/demo.sh --help          # the app's options
set -Eeuo pipefail

# The main example: the executable's name under build/<preset>/bin/.
APP=bitmap_demo

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

shoal_section "run: build/$preset/bin/$APP $*"
exec "build/$preset/bin/$APP" "$@"
