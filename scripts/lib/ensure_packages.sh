# shellcheck shell=bash
# Installs the build's Debian packages that are missing (sourced by scripts/test.sh and
# scripts/demo.sh). Nothing is installed or updated when everything is already there.
#
#   shoal_ensure_packages            # the default set below
#   shoal_ensure_packages pkg...     # exactly these

SHOAL_PACKAGES=(cmake ninja-build g++ libgtest-dev libbenchmark-dev libcli11-dev librandom123-dev python3)
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
      local sudo=()
      if ((EUID != 0)); then
        if command -v sudo >/dev/null 2>&1; then
          sudo=(sudo)
        else
          echo "error: missing packages (${missing[*]}) and not root; run: apt-get install ${missing[*]}" >&2
          return 1
        fi
      fi
      # One `apt-get update` per run, and only because something is missing.
      if [[ -z "${SHOAL_APT_UPDATED:-}" ]]; then
        "${sudo[@]}" apt-get update -q
        export SHOAL_APT_UPDATED=1
      fi
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}"
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
