#!/usr/bin/env bash
# The lent GPU machine's one call, rehearsed without a GPU (ctest
# gpu.rehearsal): bench/gpu/prepare.sh compiles the plans with this build's
# embc, then bench/gpu/run.sh --rehearse runs the parity, benchmark and
# profile stages on the emulated device with the small rehearsal plans, and
# every stage must pass. What a GPU run needs beyond the hardware (plans,
# scripts, their arguments, the summary file) is checked here, so the
# minutes of a lent GPU are not spent finding a broken script.
#
#   rehearsal.sh BUILD_DIR WORK_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "$1" && pwd)
work="$2"
rm -rf "$work"
mkdir -p "$work"
bash "$root/bench/gpu/prepare.sh" --embc "$build/bin/embc" --no-deps --cache "$work/cache" \
  > "$work/prepare.log" 2>&1 || { tail -20 "$work/prepare.log"; exit 1; }
# One parity model (the full list is e2e.cuda_parity_emulated's); the build
# and test stages are this build and ctest itself.
export EMBC_GPU_CACHE="$work/cache" EMBC_GPU_BUILD="$build" EMBC_GPU_PARITY_MODELS=two_tower.json
export OUT="$work/out" TMPDIR="$work"
status=0
bash "$root/bench/gpu/run.sh" --rehearse parity bench profile > "$work/run.log" 2>&1 || status=$?
cat "$OUT/run_summary.txt"
for stage in parity bench profile; do
  grep -q "^stage $stage: ok" "$OUT/run_summary.txt" || { echo "FAIL: stage $stage"; status=1; }
done
for f in gpu_bench.json logs.tar.gz; do
  [[ -s "$OUT/$f" ]] || { echo "FAIL: no $f in \$OUT"; status=1; }
done
if ! python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r.get("embrun_samples_per_s") and r.get("lookup", {}).get("ms_per_step") and r.get("padding") else 1)' "$OUT/gpu_bench.json"; then
  echo "FAIL: gpu_bench.json lacks embrun's samples/s, the lookup's profile or the dynamic padding figures"
  status=1
fi
[[ $status -eq 0 ]] && echo "PASS: the GPU run's stages rehearsed on the emulated device" || tail -30 "$work/run.log"
exit $status
