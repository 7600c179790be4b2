#!/usr/bin/env bash
# The README's first command: build embc and embrun, compile the example DLRM
# into a plan, and train it on the built-in synthetic data (a live progress
# line, an evaluation on held-out synthetic data, and a final summary with
# loss, AUC, samples/s and peak memory).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${EMBC_BUILD_DIR:-$ROOT/build}"
source "$ROOT/tools/scripts/setup.sh" embc emb-opt embrun

MODEL="$ROOT/examples/dlrm_small.json"
PLAN="$BUILD/dlrm_small.plan"
echo
echo "== embc $MODEL -o $PLAN"
"$BUILD/bin/embc" "$MODEL" -o "$PLAN"
echo
echo "== embrun $PLAN --steps ${STEPS:-400} (synthetic data)"
"$BUILD/bin/embrun" "$PLAN" --steps "${STEPS:-400}" --log "$BUILD/dlrm_small.jsonl"
echo "(metrics as JSON lines: $BUILD/dlrm_small.jsonl)"
