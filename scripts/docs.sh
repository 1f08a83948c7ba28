#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/..
# Builds the API reference of the public headers with Doxygen (Debian's package, installed when
# missing) into build/docs/html, and fails on any Doxygen warning about documented public code
# (docs/Doxyfile: WARN_AS_ERROR), so the reference cannot drift from the headers. scripts/test.sh
# runs it.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib/common.sh
. scripts/lib/ensure_packages.sh

shoal_ensure_packages doxygen
rm -rf build/docs
mkdir -p build
if ! doxygen docs/Doxyfile; then
  echo "docs.sh: Doxygen reported problems in the documented public headers (above)" >&2
  exit 1
fi
echo "docs.sh: API reference in build/docs/html/index.html"
