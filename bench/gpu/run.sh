#!/usr/bin/env bash
# One command for a lent GPU machine (nvcc, CMake, PyTorch; no MLIR, no
# network): build the runtime, run the GPU tests, the CUDA-vs-CPU parity of
# every example, the benchmarks and a profile, all in one call.
#
#   bench/gpu/run.sh [all|build|test|parity|bench|profile]... [--quick]
#
#   build    configure + build the runtime only (-DEMBC_BUILD_COMPILER=OFF:
#            embrun, emb-parity and the runtime tests, no LLVM) in
#            build-gpu-rt/ (EMBC_GPU_BUILD). Libraries the machine lacks come
#            from the prefix bench/gpu/.cache/deps that prepare.sh staged;
#            NCCL from the toolkit, else from PyTorch's nvidia-nccl wheel.
#   test     ctest -R "$EMBC_GPU_TESTS" (default: the tests with a GPU case:
#            NCCL world size 1, the CUDA collectives, the device tests; set
#            it empty for every runtime test).
#   parity   test/e2e/cuda_parity.py --device cuda on the plans prepare.sh
#            compiled into bench/gpu/.cache/parity: every example and variant,
#            kernel by kernel and over whole steps, against the CPU backend.
#   bench    bench/gpu/gpu_bench.py on bench/gpu/.cache/plans: DLRM samples/s
#            vs PyTorch eager and torch.compile, lookup / fused backward+update
#            / packed update bandwidth as a fraction of a device copy.
#   profile  ncu on the three slowest kernels of the benchmark plan.
#   timeline nsys over embrun on the benchmark plan: the GPU's busy fraction
#            in the steady state and its idle gaps by neighbouring operations
#            (gpu_timeline.py; not part of `all`).
#   --quick  fewer benchmark steps (a smoke run).
#   --rehearse  everything but the hardware: the emulated device, the small
#            plans of bench/gpu/.cache/rehearsal, no PyTorch parts, no ncu.
#            EMBC_GPU_PARITY_MODELS=a.json,... limits the parity cases.
#
# Each stage has a time limit (EMBC_GPU_LIMIT_<STAGE> seconds) so that one
# hang cannot eat the call; each reports its failure and the next still
# runs; the exit status is 1 when any failed. $OUT (else
# bench/gpu/.cache/results) receives run_summary.txt (every stage's status
# and key lines), gpu_bench.json and logs.tar.gz (all logs): at most 8 files,
# as the device tool brings back.
#
# Before: bench/gpu/prepare.sh on the development machine, and carry
# bench/gpu/.cache with the tree ($EMBC_GPU_CACHE names another). Rehearsed
# without a GPU by `bench/gpu/run.sh --rehearse` (CI: test/gpu/rehearsal.sh):
# the same stages on the emulated device.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build="${EMBC_GPU_BUILD:-$root/build-gpu-rt}"
cache="${EMBC_GPU_CACHE:-$here/.cache}" # what prepare.sh wrote
deps="$cache/deps"
plans="$cache/plans"
parity_plans="$cache/parity"
out="${OUT:-$here/.cache/results}"
logs="${TMPDIR:-/tmp}/embc-gpu-logs"
jobs=$(nproc 2>/dev/null || echo 8)
device=cuda
quick=()
stages=()
for a in "$@"; do
  case "$a" in
    --quick) quick=(--quick) ;;
    --rehearse) device=emulated; quick=(--steps 10); plans="$cache/rehearsal" ;;
    all) stages+=(build test parity bench profile) ;;
    build|test|parity|bench|profile|timeline) stages+=("$a") ;;
    -h|--help) sed -n 2,40p "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
[[ ${#stages[@]} -eq 0 ]] && stages=(build test parity bench profile)
mkdir -p "$out" "$logs"
summary="$out/run_summary.txt"
: > "$summary"
failed=()

log() { echo; echo "=== $*"; }
note() { echo "$*" | tee -a "$summary"; }
# The carried libraries (OpenBLAS needs its Fortran runtime) when the build
# had to use them; NCCL from the wheel when that is the one found.
use_deps_at_run_time() {
  if [[ -f "$build/.embc-uses-deps" ]]; then
    export LD_LIBRARY_PATH="$deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  if [[ -f "$build/.embc-nccl-dir" ]]; then
    export LD_LIBRARY_PATH="$(cat "$build/.embc-nccl-dir")/lib:${LD_LIBRARY_PATH:-}"
  fi
}
limit_of() { # stage default
  local v="EMBC_GPU_LIMIT_${1^^}"
  echo "${!v:-$2}"
}

log "machine"
{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader \
    2>&1 || echo "(no nvidia-smi)"
  nvcc --version 2>&1 | tail -1 || echo "(no nvcc)"
  cmake --version 2>&1 | head -1
  # The device's copy of the tree may carry older git metadata: the commit
  # prepare.sh recorded is the one the tree and the plans are from.
  echo "cores: $jobs; device: $device; prepared at commit: $(cat "$cache/commit" 2>/dev/null || echo '?')"
} | tee -a "$summary"

# NCCL: the toolkit's, else the one PyTorch's wheel ships (include/ and lib/).
nccl_flags() {
  local tk
  tk=$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")
  if ls "$tk"/lib*/libnccl.so* "$tk"/targets/*/lib/libnccl.so* > /dev/null 2>&1; then
    return
  fi
  local d
  d=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null \
      || python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null) || return
  local lib
  lib=$(ls "$d"/lib/libnccl.so* 2>/dev/null | head -1)
  [[ -n "$lib" && -f "$d/include/nccl.h" ]] || return
  echo "-DNCCL_LIBRARY=$lib -DNCCL_INCLUDE_DIR=$d/include"
  echo "$d" > "$logs/nccl-dir"
}

stage_build() {
  local gen=()
  command -v ninja > /dev/null && gen=(-G Ninja)
  local flags=("${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DEMBC_BUILD_COMPILER=OFF)
  rm -f "$logs/nccl-dir"
  # shellcheck disable=SC2207
  flags+=($(nccl_flags))
  log "configure (runtime only) in $build"
  if ! cmake -S "$root" -B "$build" "${flags[@]}" > "$logs/configure.log" 2>&1; then
    tail -15 "$logs/configure.log"
    if [[ ! -d "$deps" ]]; then
      echo "configure failed and no carried deps ($deps): run bench/gpu/prepare.sh and carry bench/gpu/.cache"
      return 1
    fi
    log "configure again with the carried dependencies ($deps)"
    rm -rf "$build"
    cmake -S "$root" -B "$build" "${flags[@]}" -DCMAKE_PREFIX_PATH="$deps" \
      -DXXHASH_INCLUDE_DIR="$deps/include" -DXXHASH_LIBRARY="$deps/lib/libxxhash.so" \
      >> "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; return 1; }
    touch "$build/.embc-uses-deps"
  fi
  [[ -f "$logs/nccl-dir" ]] && cp "$logs/nccl-dir" "$build/.embc-nccl-dir"
  grep -E "CUDA toolkit|NCCL|MPI:|CPU GEMMs" "$logs/configure.log" | sort -u | tee -a "$summary"
  log "build (-j$jobs)"
  cmake --build "$build" -j "$jobs" > "$logs/build.log" 2>&1 || { tail -40 "$logs/build.log"; return 1; }
  tail -2 "$logs/build.log"
  "$build/bin/embrun" --version
}

stage_test() {
  use_deps_at_run_time
  # The tests with a GPU case (the CPU's run in CI); EMBC_GPU_TESTS="" runs all.
  local regex="${EMBC_GPU_TESTS-Nccl|Cuda|OneRank|Emulated}"
  log "ctest ${regex:+-R '$regex'} (GPU cases run on the GPU)"
  ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 120 ${regex:+-R "$regex"} \
    > "$logs/ctest.log" 2>&1
  local rc=$?
  grep -E "tests passed|tests failed|\*\*\*Failed|\*\*\*Timeout|Exception|SEGFAULT" "$logs/ctest.log" \
    | head -30 | tee -a "$summary"
  # The GPU cases that ran or skipped, by name.
  grep -E "Nccl|OneRank|Cuda" "$logs/ctest.log" | grep -E "Passed|Failed|Skipped|Not Run" \
    | head -20 | tee -a "$summary"
  [[ $rc -eq 0 ]]
}

stage_parity() {
  use_deps_at_run_time
  if [[ ! -d "$parity_plans" ]]; then
    echo "no parity plans in $parity_plans: run bench/gpu/prepare.sh and carry bench/gpu/.cache"
    return 1
  fi
  log "CUDA ($device) vs CPU parity on every example and variant"
  PYTHONUNBUFFERED=1 python3 "$root/test/e2e/cuda_parity.py" --device "$device" \
    --plans "$parity_plans" --embrun "$build/bin/embrun" --parity "$build/bin/emb-parity" \
    --examples "$root/examples" --work "$logs/parity" --jobs "$(( jobs > 8 ? 8 : jobs ))" \
    ${EMBC_GPU_PARITY_MODELS:+--models "$EMBC_GPU_PARITY_MODELS"} \
    > "$logs/parity.log" 2>&1
  local rc=$?
  tee -a "$summary" < "$logs/parity.log" | tail -60
  [[ $rc -eq 0 ]]
}

stage_bench() {
  use_deps_at_run_time
  if [[ ! -f "$plans/dlrm.plan" ]]; then
    echo "no plans in $plans: run bench/gpu/prepare.sh on the development machine and carry bench/gpu/.cache"
    return 1
  fi
  log "benchmarks (results in $out)"
  PYTHONUNBUFFERED=1 python3 "$here/gpu_bench.py" --embrun "$build/bin/embrun" --plans "$plans" \
    --device "$device" --out "$out" --logs "$logs/bench" "${quick[@]}"
  local rc=$?
  [[ -f "$out/gpu_bench_summary.txt" ]] && cat "$out/gpu_bench_summary.txt" >> "$summary"
  return $rc
}

stage_profile() {
  use_deps_at_run_time
  if [[ $device != cuda ]]; then
    echo "profile: ncu needs a GPU (skipped on the $device device)" | tee -a "$summary"
    return 0
  fi
  command -v ncu > /dev/null || { echo "profile: no ncu on this machine" | tee -a "$summary"; return 0; }
  log "ncu on the three slowest kernels"
  PYTHONUNBUFFERED=1 python3 "$here/gpu_profile.py" --embrun "$build/bin/embrun" \
    --plan "$plans/dlrm.plan" --work "$logs/ncu" \
    > "$logs/profile.log" 2>&1
  local rc=$?
  tee -a "$summary" < "$logs/profile.log" | tail -40
  return $rc
}

stage_timeline() {
  use_deps_at_run_time
  if [[ $device != cuda ]]; then
    echo "timeline: nsys needs a GPU (skipped on the $device device)" | tee -a "$summary"
    return 0
  fi
  log "nsys timeline of embrun"
  PYTHONUNBUFFERED=1 python3 "$here/gpu_timeline.py" --embrun "$build/bin/embrun" \
    --plan "$plans/dlrm.plan" --work "$logs/timeline" > "$logs/timeline.log" 2>&1
  local rc=$?
  tee -a "$summary" < "$logs/timeline.log" | tail -30
  return $rc
}

for s in "${stages[@]}"; do
  case "$s" in
    build) d=240 ;; test) d=150 ;; parity) d=180 ;; bench) d=300 ;; profile) d=90 ;;
    timeline) d=150 ;;
  esac
  lim=$(limit_of "$s" "$d")
  start=$SECONDS
  # A subshell under timeout: a hung stage ends at its limit.
  ( export -f log note use_deps_at_run_time nccl_flags "stage_$s"
    export root here build deps plans parity_plans out logs jobs device summary
    export quick_flag="${quick[*]:-}"
    timeout --kill-after=10 "$lim" bash -c "quick=(\$quick_flag); stage_$s" )
  rc=$?
  took=$((SECONDS - start))
  if [[ $rc -eq 0 ]]; then
    note "stage $s: ok (${took} s)"
  else
    [[ $rc -eq 124 || $rc -eq 137 ]] && why="timed out at ${lim} s" || why="exit $rc"
    note "stage $s: FAILED ($why, ${took} s)"
    failed+=("$s")
  fi
done
tar -czf "$out/logs.tar.gz" -C "$(dirname "$logs")" "$(basename "$logs")" 2>/dev/null
log "done"
if [[ ${#failed[@]} -gt 0 ]]; then
  note "failed stages: ${failed[*]}"
  exit 1
fi
note "all stages passed"
