#!/usr/bin/env bash
# One command for a lent GPU machine (nvcc, CMake, PyTorch; no MLIR, no
# network): build the runtime, run the CUDA tests, run the GPU benchmarks.
#
#   bench/gpu/run.sh [all|build|test|bench]... [--quick]
#
#   build  configure + build the runtime only (-DEMBC_BUILD_COMPILER=OFF: embrun
#          and the runtime tests, no LLVM) in build-gpu-rt/ (EMBC_GPU_BUILD).
#          When the plain configure fails for a missing library, it retries
#          with the prefix bench/gpu/.cache/deps that prepare.sh staged.
#   test   ctest -L cuda (the tests that need the GPU), then the rest.
#   bench  bench/gpu/gpu_bench.py on the plans prepare.sh compiled into
#          bench/gpu/.cache/plans: DLRM samples/s vs PyTorch eager and
#          torch.compile, lookup / fused backward+update / packed update
#          bandwidth as a fraction of a device-to-device copy. Results in
#          $OUT (else bench/gpu/.cache/results).
#   --quick  fewer benchmark steps (a smoke run).
#
# Before: bench/gpu/prepare.sh on the development machine, and carry
# bench/gpu/.cache with the tree. Each stage reports its failure and the
# next one still runs; the exit status is 1 when any failed. A device call
# is limited to 10 minutes: `run.sh build test` and `run.sh bench` as two
# calls fit (the build directory stays on a warm machine).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build="${EMBC_GPU_BUILD:-$root/build-gpu-rt}"
deps="$here/.cache/deps"
plans="$here/.cache/plans"
out="${OUT:-$here/.cache/results}"
jobs=$(nproc 2>/dev/null || echo 8)
quick=()
stages=()
for a in "$@"; do
  case "$a" in
    --quick) quick=(--quick) ;;
    all) stages+=(build test bench) ;;
    build|test|bench) stages+=("$a") ;;
    -h|--help) sed -n 2,25p "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
[[ ${#stages[@]} -eq 0 ]] && stages=(build test bench)
mkdir -p "$out"
failed=()

log() { echo; echo "=== $*"; }
# The carried libraries (OpenBLAS needs its Fortran runtime) when the build
# had to use them.
use_deps_at_run_time() {
  if [[ -f "$build/.embc-uses-deps" ]]; then
    export LD_LIBRARY_PATH="$deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
}

log "machine"
nvidia-smi -L 2>&1 || echo "(no nvidia-smi)"
nvcc --version 2>&1 | tail -1 || echo "(no nvcc)"
cmake --version 2>&1 | head -1

stage_build() {
  local gen=()
  command -v ninja > /dev/null && gen=(-G Ninja)
  local flags=("${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DEMBC_BUILD_COMPILER=OFF)
  log "configure (runtime only) in $build"
  if ! cmake -S "$root" -B "$build" "${flags[@]}" > "$out/configure.log" 2>&1; then
    tail -15 "$out/configure.log"
    if [[ ! -d "$deps" ]]; then
      echo "configure failed and no carried deps ($deps): run bench/gpu/prepare.sh and carry bench/gpu/.cache"
      return 1
    fi
    log "configure again with the carried dependencies ($deps)"
    rm -rf "$build"
    cmake -S "$root" -B "$build" "${flags[@]}" -DCMAKE_PREFIX_PATH="$deps" \
      -DXXHASH_INCLUDE_DIR="$deps/include" -DXXHASH_LIBRARY="$deps/lib/libxxhash.so" \
      > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; return 1; }
    touch "$build/.embc-uses-deps"
  fi
  grep -E "CUDA toolkit" "$out/configure.log"
  log "build (-j$jobs)"
  cmake --build "$build" -j "$jobs" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; return 1; }
  tail -2 "$out/build.log"
  "$build/bin/embrun" --version
}

stage_test() {
  use_deps_at_run_time
  log "ctest -L cuda (needs the GPU)"
  ctest --test-dir "$build" -L cuda --output-on-failure -j 4 2>&1 | tail -40
  local cuda_rc=${PIPESTATUS[0]}
  log "ctest, everything else"
  ctest --test-dir "$build" -LE cuda --output-on-failure -j "$jobs" 2>&1 | tail -25
  local rest_rc=${PIPESTATUS[0]}
  [[ $cuda_rc -eq 0 && $rest_rc -eq 0 ]]
}

stage_bench() {
  use_deps_at_run_time
  if [[ ! -f "$plans/dlrm.plan" ]]; then
    echo "no plans in $plans: run bench/gpu/prepare.sh on the development machine and carry bench/gpu/.cache"
    return 1
  fi
  log "benchmarks (results in $out)"
  PYTHONUNBUFFERED=1 python3 "$here/gpu_bench.py" --embrun "$build/bin/embrun" --plans "$plans" \
    --out "$out" "${quick[@]}"
}

for s in "${stages[@]}"; do
  if ! "stage_$s"; then
    echo "FAILED: stage $s"
    failed+=("$s")
  fi
done
log "done"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "failed stages: ${failed[*]}"
  exit 1
fi
echo "all stages passed"
