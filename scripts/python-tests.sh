#!/usr/bin/env bash
# Builds the Python module on the cpu backend (pip install . into the virtual environment
# build/python-venv, build tree build/python) and examples/python_model against an installed
# Shoal (build/python-prefix), and runs their tests (pytest tests/python) against the programs in
# BIN_DIR (default build/cpu-release/bin: the tests compare with them).
#
#   scripts/python-tests.sh [BIN_DIR]
#
# Exit status: 0 passed, 1 failed, 3 not run because nanobind and scikit-build-core could not be
# installed from PyPI (offline). Needs python3-venv and python3-dev (scripts/test.sh installs them).
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bin_dir=$(cd "${1:-build/cpu-release/bin}" && pwd)
venv=build/python-venv
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -m pip install -q nanobind scikit-build-core numpy pytest pandas matplotlib; then
  echo "python-tests: could not install nanobind, scikit-build-core, numpy, pytest, pandas and matplotlib from PyPI" >&2
  exit 3
fi
# --no-build-isolation: the build uses the environment's nanobind and scikit-build-core, and
# build/python keeps the build tree between runs.
"$venv/bin/python" -m pip install -q --no-build-isolation --config-settings=build-dir=build/python .
# A model of one's own against an installed Shoal (examples/python_model): the libraries
# (preset cpu-lib) installed to build/python-prefix, the module built in build/python-model.
cmake --preset cpu-lib -B build/python-lib >/dev/null
cmake --build build/python-lib
cmake --install build/python-lib --prefix build/python-prefix >/dev/null
cmake -S examples/python_model -B build/python-model -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/python-prefix" \
  -DPython_EXECUTABLE="$PWD/$venv/bin/python" >/dev/null
cmake --build build/python-model
# From another folder: `import shoal` must find the installed package, not python/shoal.
cd build
SHOAL_APPS_BIN="$bin_dir" SHOAL_PYTHON_MODEL_DIR="$PWD/python-model" \
  "../$venv/bin/python" -m pytest -q -p no:cacheprovider ../tests/python
