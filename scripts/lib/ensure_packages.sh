# shellcheck shell=bash
# Installs the build's Debian packages that are missing (sourced by scripts/test.sh and
# scripts/demo.sh). Nothing is installed or updated when everything is already there.
#
#   shoal_ensure_packages            # the default set below
#   shoal_ensure_packages pkg...     # exactly these

# libsdl2-dev: the viewer's window (optional at build time); libstb-dev: PNG frames (vendored too);
# zlib1g-dev: PNG frames encoded several times faster (without it, stb_image_write encodes them);
# xvfb, xauth: the window's test runs under a virtual X server (xvfb-run). The build works without
# these, so a machine that cannot install them (offline) only gets a warning.
# python3-matplotlib: bench/plot.py's charts (the benchmarks and their tables do without).
# libopenmpi-dev, openmpi-bin: the distributed layer's tests (shoal/dist/, ctest label mpi, run
# with mpiexec -n 1..4); without MPI they are not built.
SHOAL_OPTIONAL_PACKAGES=(libsdl2-dev libstb-dev zlib1g-dev xvfb xauth python3-matplotlib)
# Only the tests want MPI (scripts/test.sh installs these too; the demo does not).
SHOAL_MPI_PACKAGES=(libopenmpi-dev openmpi-bin)
# The Python module's tests (scripts/python-tests.sh: a virtual environment, Python's headers);
# nanobind and scikit-build-core come from PyPI into that environment (Debian 12 has neither).
SHOAL_PYTHON_PACKAGES=(python3-venv python3-dev python3-pip)
SHOAL_PACKAGES=(cmake ninja-build g++ libgtest-dev libbenchmark-dev libcli11-dev librandom123-dev python3
                "${SHOAL_OPTIONAL_PACKAGES[@]}")
SHOAL_MIN_CMAKE=3.25

# True when dpkg knows the package as installed ("install ok installed").
shoal_package_installed() {
  dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'
}

shoal_ensure_packages() {
  local wanted=("$@")
  ((${#wanted[@]})) || wanted=("${SHOAL_PACKAGES[@]}")

  if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "packages: no dpkg/apt-get on this system; assuming ${wanted[*]} (or equivalents) are installed"
  else
    local missing=() p
    for p in "${wanted[@]}"; do
      shoal_package_installed "$p" || missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
      echo "packages: all present (${wanted[*]})"
    else
      echo "packages: installing ${missing[*]}"
      local required=() optional=()
      for p in "${missing[@]}"; do
        if [[ " ${SHOAL_OPTIONAL_PACKAGES[*]} ${SHOAL_MPI_PACKAGES[*]} ${SHOAL_PYTHON_PACKAGES[*]} " == *" $p "* ]]; then
          optional+=("$p")
        else
          required+=("$p")
        fi
      done
      local sudo=()
      if ((EUID != 0)); then
        if command -v sudo >/dev/null 2>&1; then
          sudo=(sudo)
        elif ((${#required[@]})); then
          echo "error: missing packages (${missing[*]}) and not root; run: apt-get install ${missing[*]}" >&2
          return 1
        else
          echo "packages: warning: not root; the viewer builds without ${optional[*]}" >&2
          optional=()
        fi
      fi
      # One `apt-get update` per run, and only because something is missing (offline, it may fail:
      # fatal only when a required package is missing).
      if [[ -z "${SHOAL_APT_UPDATED:-}" ]] && ((${#required[@]} + ${#optional[@]})); then
        if "${sudo[@]}" apt-get update -q; then
          export SHOAL_APT_UPDATED=1
        elif ((${#required[@]})); then
          return 1
        fi
      fi
      if ((${#required[@]})); then
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
          apt-get install -y -q --no-install-recommends "${required[@]}"
      fi
      if ((${#optional[@]})) && ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
          apt-get install -y -q --no-install-recommends "${optional[@]}"; then
        echo "packages: warning: could not install ${optional[*]}; the viewer builds without them" \
             "(no --window, vendored stb, PNG frames through stb, the Xvfb test skipped)" >&2
      fi
    fi
  fi

  # Presets (CMakePresets.json version 6) need CMake 3.25, which Debian 12 ships.
  local version
  version=$(cmake --version 2>/dev/null | sed -n '1s/^cmake version \([0-9][0-9.]*\).*/\1/p')
  if [[ -z "$version" ]]; then
    echo "error: cmake is not on the PATH" >&2
    return 1
  fi
  if [[ "$(printf '%s\n%s\n' "$SHOAL_MIN_CMAKE" "$version" | sort -V | head -n1)" != "$SHOAL_MIN_CMAKE" ]]; then
    echo "error: CMake $version is too old; Shoal needs CMake >= $SHOAL_MIN_CMAKE" >&2
    return 1
  fi
}
