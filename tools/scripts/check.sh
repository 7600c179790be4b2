#!/usr/bin/env bash
# The README's second command (and CI's): build everything and run all tests:
# lit (dialect, passes, frontend), GoogleTest, end-to-end training, bounded
# fuzz runs of every reader of untrusted input (ctest prints the summary),
# then the runtime under ASan and UBSan (tools/scripts/sanitize.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${EMBC_BUILD_DIR:-$ROOT/build}"
source "$ROOT/tools/scripts/setup.sh"
# The dialect and pass reference is generated from ODS; building it here
# keeps the .td descriptions valid documentation.
ninja -C "$BUILD" mlir-doc >/dev/null
(cd "$BUILD" && ctest --output-on-failure -j "$(nproc)")
bash "$ROOT/tools/scripts/sanitize.sh" "$BUILD/bin/embc"
