#!/usr/bin/env bash
# Run on the development machine (the one with embc, MLIR and network) before
# bench/gpu/run.sh runs on a GPU machine that has none of them.
#
#   bench/gpu/prepare.sh [--embc PATH] [--no-deps] [--cache DIR]
#
# Writes into bench/gpu/.cache/ (git-ignored; carry it to the GPU machine;
# --cache DIR elsewhere, as the CI rehearsal does):
#   plans/dlrm.plan          bench/gpu/dlrm_mlperf_gpu.json, the default plan
#   plans/dlrm_nopack.plan   the same with embc --no-pack (one update per parameter)
#   plans/dlrm_nofuse.plan   the same with embc --no-fuse
#   plans/model.json         the model they were compiled from
#   plans/sequence/          gpt_mini and bert_mini_mlm with their CUDA length
#                            variants and 4 MB of sentences (the Gutenberg text's
#                            where ../shared/data has it, else generated with
#                            its lengths): bench/dynamic_padding.py --device cuda
#   rehearsal/               the same from a small copy of it (run.sh --rehearse)
#   parity/<case>/           every case of test/e2e/cuda_parity.py, compiled
#   deps/                    the runtime's C++ dependencies that a bare CUDA image
#                            may lack (nlohmann_json, CLI11, xxhash, OpenBLAS with
#                            its Fortran runtime, GoogleTest) as a CMake prefix;
#                            run.sh uses it only when a plain configure fails.
#                            About 40 MiB (OpenBLAS); --no-deps skips it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
embc="${EMBC:-}"
deps=1
cache="$here/.cache"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --embc) embc="$2"; shift 2 ;;
    --no-deps) deps=0; shift ;;
    --cache) cache="$2"; shift 2 ;;
    -h|--help) sed -n 2,21p "$0"; exit 0 ;;
    *) echo "prepare.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z "$embc" ]]; then
  embc="$root/build/bin/embc"
fi
[[ -x "$embc" ]] || { echo "prepare.sh: no embc found; pass --embc PATH" >&2; exit 1; }

mkdir -p "$cache/plans"
# What run.sh reports as the tree's commit (a lent machine's copy of the
# tree may carry older git metadata).
{ git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'; } | tr -d '\n' > "$cache/commit"
git -C "$root" diff --quiet HEAD 2>/dev/null || echo -n "+uncommitted changes" >> "$cache/commit"
model="$here/dlrm_mlperf_gpu.json"
echo "== plans (embc: $embc)"
# --cuda: the plans carry their CUDA program (embrun --device cuda needs it).
"$embc" "$model" --cuda -o "$cache/plans/dlrm.plan" > "$cache/plans/dlrm.report.txt"
"$embc" "$model" --cuda --no-pack -o "$cache/plans/dlrm_nopack.plan" > /dev/null
"$embc" "$model" --cuda --no-fuse -o "$cache/plans/dlrm_nofuse.plan" > /dev/null
cp "$model" "$cache/plans/model.json"
ls -la "$cache/plans"

# The same three plans from a small copy of the model (the same layers,
# storage and optimizers; 1000-row tables of 16, narrow MLPs, batch 256):
# `run.sh --rehearse` runs the stages on the emulated device in seconds.
echo "== rehearsal plans"
mkdir -p "$cache/rehearsal"
python3 - "$model" "$cache/rehearsal/model.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["name"] += "_rehearsal"
m["training"]["batch_size"] = 256
for t in m["embeddings"]:
    t["rows"] = min(t["rows"], 1000)
    t["dim"] = 16
for layer in m["layers"]:
    if layer["name"] == "bottom":
        layer["sizes"] = [32, 16]
    if layer["name"] == "top":
        layer["sizes"] = [32, 16, 1]
for f in m["features"]:
    if "vocab" in f:
        f["vocab"] = min(f["vocab"], 1000)
json.dump(m, open(sys.argv[2], "w"), indent=1)
PY
small="$cache/rehearsal/model.json"
"$embc" "$small" --cuda -o "$cache/rehearsal/dlrm.plan" > /dev/null
"$embc" "$small" --cuda --no-pack -o "$cache/rehearsal/dlrm_nopack.plan" > /dev/null
"$embc" "$small" --cuda --no-fuse -o "$cache/rehearsal/dlrm_nofuse.plan" > /dev/null

# The token models for dynamic padding on the GPU (gpu_bench.py part d):
# as written, and at batch 4 for the rehearsal.
echo "== sequence plans"
sentences() { # DIR MB
  mkdir -p "$1"
  local text="$root/../shared/data/text-gutenberg"
  if [[ -d "$text" ]]; then
    python3 "$root/tools/scripts/text_passages.py" --sentences --data "$text" \
      --out "$1/all" > /dev/null
    head -c "$(( $2 * 1000000 ))" "$1/all/train_text.txt" | head -n -1 > "$1/train_text.txt"
    rm -rf "$1/all"
  else # lengths as the Gutenberg sentences' (median 13 words, 97th percentile ~65)
    python3 - "$1/train_text.txt" "$2" <<'PY'
import math, random, sys
r = random.Random(7)
words = [f"w{i}" for i in range(6000)]
weights = [1.0 / (i + 1) for i in range(6000)]
with open(sys.argv[1], "w") as f:
    size = 0
    while size < int(sys.argv[2]) * 1000000:
        n = max(1, min(300, int(math.exp(r.gauss(math.log(13), 0.9)))))
        line = " ".join(r.choices(words, weights, k=n)) + "\n"
        f.write(line)
        size += len(line)
PY
  fi
}
sentences "$cache/plans/sequence" 4
sentences "$cache/rehearsal/sequence" 1
for m in gpt_mini bert_mini_mlm; do
  "$embc" "$root/examples/$m.json" --cuda -o "$cache/plans/sequence/$m.plan" > /dev/null
  python3 -c "import json, sys; m = json.load(open(sys.argv[1])); m['training']['batch_size'] = 4; json.dump(m, open(sys.argv[2], 'w'))" \
    "$root/examples/$m.json" "$cache/rehearsal/sequence/$m.json"
  "$embc" "$cache/rehearsal/sequence/$m.json" --cuda -o "$cache/rehearsal/sequence/$m.plan" > /dev/null
done

# Every case of the CUDA parity test, compiled: the GPU machine has no embc.
echo "== parity plans"
python3 "$root/test/e2e/cuda_parity.py" --compile-only --embc "$embc" \
  --examples "$root/examples" --plans "$cache/parity" | tail -1

if [[ $deps == 1 ]]; then
  echo "== deps"
  d="$cache/deps"
  rm -rf "$d"
  mkdir -p "$d/include" "$d/lib/x86_64-linux-gnu/cmake" "$d/share/cmake"
  arch=/usr/lib/x86_64-linux-gnu
  cp -r /usr/include/nlohmann /usr/include/CLI "$d/include/"
  cp -r /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 "$d/share/cmake/"
  cp /usr/include/xxhash.h /usr/include/xxh3.h "$d/include/"
  cp -L "$arch/libxxhash.so.0" "$d/lib/libxxhash.so.0"
  ln -sf libxxhash.so.0 "$d/lib/libxxhash.so"
  cp -L /usr/include/x86_64-linux-gnu/openblas-pthread/{cblas.h,openblas_config.h} "$d/include/"
  cp -L "$arch/libopenblas.so.0" "$d/lib/libopenblas.so.0"
  ln -sf libopenblas.so.0 "$d/lib/libopenblas.so"
  cp -L "$arch/libgfortran.so.5" "$arch/libquadmath.so.0" "$d/lib/"
  # GTest's CMake package also declares the gmock targets and checks their files.
  cp -r /usr/include/gtest /usr/include/gmock "$d/include/"
  cp "$arch"/lib{gtest,gtest_main,gmock,gmock_main}.a "$d/lib/x86_64-linux-gnu/"
  cp -r "$arch/cmake/GTest" "$d/lib/x86_64-linux-gnu/cmake/"
  du -sh "$d"
fi
echo "== carried size: $(du -sh "$cache" | cut -f1) (the device tool carries at most 64 MiB with the tree)"
echo "next, on the GPU machine: bench/gpu/run.sh   (carry bench/gpu/.cache)"
