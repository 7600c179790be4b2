#!/usr/bin/env bash
# The README's second command (and CI's): build everything and run all tests:
# lit (dialect, passes, frontend), GoogleTest, and a bounded fuzz run of the
# model parser. ctest prints the pass/fail summary.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${EMBC_BUILD_DIR:-$ROOT/build}"
source "$ROOT/tools/scripts/setup.sh"
# The dialect and pass reference is generated from ODS; building it here
# keeps the .td descriptions valid documentation.
ninja -C "$BUILD" mlir-doc >/dev/null
cd "$BUILD"
ctest --output-on-failure -j "$(nproc)"
