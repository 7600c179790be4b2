#!/usr/bin/env bash
# The runtime under AddressSanitizer and UndefinedBehaviorSanitizer: builds
# embrun and the unit tests of the runtime's readers and executor (the plan,
# checkpoint, data and exec suites and the runtime's own) in build-sanitize
# with -DEMBC_SANITIZE=address,undefined at -O1 (no compiler: MLIR/LLVM are
# not instrumented; no CUDA: nvcc code is not instrumented either), runs
# those tests, then trains every example that fits this machine for a few
# steps with the sanitized embrun (plans from the main build's embc),
# saving, exporting and resuming. Any report fails the run. check.sh calls
# it after the main tests; EMBC_SANITIZE_ALL=1 builds and runs every runtime
# unit test instead (about twice the time).
#
#   tools/scripts/sanitize.sh [EMBC]   (EMBC: an embc binary; default build/bin/embc)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${EMBC_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"
EMBC="${1:-$ROOT/build/bin/embc}"
if [[ ! -x "$EMBC" ]]; then
  echo "sanitize.sh: no embc at $EMBC (build the main tree first)" >&2
  exit 2
fi
SUITES=(PlanTests CheckpointTests DataTests ExecTests RuntimeUnitTests)

echo "== configuring $BUILD (address,undefined)"
cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O1 \
  -DEMBC_BUILD_COMPILER=OFF -DEMBC_ENABLE_CUDA=OFF -DEMBC_SANITIZE=address,undefined >/dev/null
echo "== building"
if [[ "${EMBC_SANITIZE_ALL:-0}" == 1 ]]; then
  ninja -C "$BUILD" >/dev/null
else
  ninja -C "$BUILD" embrun "${SUITES[@]}" >/dev/null
fi

# Leaks are not checked: MPI and the BLAS keep allocations to exit by design.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

echo "== unit tests under the sanitizers"
if [[ "${EMBC_SANITIZE_ALL:-0}" == 1 ]]; then
  (cd "$BUILD" && ctest -R '^unit\.' -j "$(nproc)" --output-on-failure)
else
  for suite in "${SUITES[@]}"; do
    "$BUILD/test/unit/runtime/$suite" --gtest_brief=1 >"$BUILD/$suite.log" 2>&1 || {
      tail -n 60 "$BUILD/$suite.log" >&2
      echo "sanitize.sh: $suite failed (log: $BUILD/$suite.log)" >&2
      exit 1
    }
    echo "  $suite: $(grep -E '^\[  PASSED  \]' "$BUILD/$suite.log")"
  done
fi

echo "== examples under the sanitizers"
work=$(mktemp -d "${TMPDIR:-/tmp}/embc-sanitize.XXXXXX")
trap 'rm -rf "$work"' EXIT
embrun="$BUILD/bin/embrun"
for model in "$ROOT"/examples/*.json; do
  name=$(basename "$model" .json)
  [[ "$name" == dlrm_mlperf ]] && continue # a 97.6 GiB arena
  "$EMBC" "$model" -o "$work/$name.plan" >/dev/null
  "$embrun" "$work/$name.plan" --steps 3 --threads 2 --save "$work/$name.ckpt" \
    --export-embeddings "$work/$name.safetensors" >/dev/null 2>&1
  "$embrun" "$work/$name.plan" --steps 2 --threads 2 --resume "$work/$name.ckpt" \
    >/dev/null 2>&1
  echo "  $name: trained, saved, exported, resumed"
done
echo "== sanitizers: no reports"
