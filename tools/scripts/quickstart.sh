#!/usr/bin/env bash
# The README's first command: build embc and run the main job on the example
# DLRM (compile it and print its summary and the head of its IR).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${EMBC_BUILD_DIR:-$ROOT/build}"
source "$ROOT/tools/scripts/setup.sh" embc emb-opt embrun

MODEL="$ROOT/examples/dlrm_small.json"
echo
echo "== embc $MODEL --emit=summary"
"$BUILD/bin/embc" "$MODEL" --emit=summary
echo
echo "== embc $MODEL --emit=ir (first 40 lines; re-parsed by emb-opt)"
"$BUILD/bin/embc" "$MODEL" --emit=ir | "$BUILD/bin/emb-opt" | head -n 40
