#!/usr/bin/env bash
#===- run-fuzz.sh - fuzz a reader of untrusted input with libFuzzer ---------===#
#
# Usage: test/fuzz/run-fuzz.sh [REPO_ROOT] [SECONDS] [TARGET]
#
# TARGET (default model) is one of
#   model       the model parser (frontend/lib), seeds examples/*.json
#   plan        the plan reader and validator (runtime/lib/plan), seeds
#               docs/plan-format.md's example and, with EMBC_BIN set, the plan
#               JSON of every example
#   checkpoint  the safetensors reader (runtime/lib/checkpoint)
#   data        the criteo, movielens and text readers (runtime/lib/data)
# (seeds of the last three: test/fuzz/seeds.py)
# Builds test/fuzz/<Target>Fuzz.cpp with the target's sources (no CMake, no
# MLIR) using clang's libFuzzer + ASan + UBSan and fuzzes for SECONDS
# (default 60). Everything is written to a temporary directory, never inside
# the repository. Exits 0 when nothing was found; otherwise non-zero, keeping
# the temporary directory with the reproducer (crash-*, leak-*, timeout-*,
# oom-*) and the log.
#
# Environment: CXX_FUZZ (default clang++), FUZZ_TIMEOUT (seconds per input,
# default 10), FUZZ_WORKDIR (use this directory instead of a fresh mktemp;
# it must lie outside the repository), FUZZ_ARGS (extra libFuzzer flags),
# EMBC_BIN (an embc binary: more plan seeds).
#
# libFuzzer ships in Debian's libclang-rt-<N>-dev (libclang-rt-14-dev for
# clang 14), a Recommends of clang: install it explicitly with
# --no-install-recommends.
#
#===------------------------------------------------------------------------===#
set -euo pipefail

root=${1:-"$(dirname "$0")/../.."}
root=$(cd "$root" && pwd)
seconds=${2:-60}
target=${3:-model}
cxx=${CXX_FUZZ:-clang++}
per_input_timeout=${FUZZ_TIMEOUT:-10}

if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "run-fuzz.sh: SECONDS must be a positive integer, got '$seconds'" >&2
  exit 2
fi
# Each target: its sources (relative to the root), include directories,
# libraries, libFuzzer dictionary (or none) and seed directories.
dict=""
libs=()
case "$target" in
  model)
    sources=(frontend/lib/JsonNode.cpp frontend/lib/ModelOverrides.cpp frontend/lib/ModelParser.cpp
             runtime/lib/data/Schema.cpp test/fuzz/ModelFuzz.cpp)
    includes=(frontend/include frontend/lib runtime/include)
    dict=test/fuzz/dict/model.dict
    seed_dirs=(examples) ;;
  plan)
    sources=($(cd "$root" && echo runtime/lib/plan/*.cpp) runtime/lib/data/Schema.cpp
             test/fuzz/PlanFuzz.cpp)
    includes=(runtime/include runtime/lib/plan)
    libs=(-lxxhash)
    seed_dirs=() ;;
  checkpoint)
    sources=(runtime/lib/checkpoint/SafetensorsReader.cpp runtime/lib/checkpoint/SafetensorsFormat.cpp
             test/fuzz/CheckpointFuzz.cpp)
    includes=(runtime/include runtime/lib/checkpoint)
    libs=(-lxxhash)
    seed_dirs=() ;;
  data)
    sources=($(cd "$root" && echo runtime/lib/data/*.cpp) runtime/lib/cpu/ThreadPool.cpp
             test/fuzz/DataFuzz.cpp)
    includes=(runtime/include runtime/lib/data)
    libs=(-lpthread -lxxhash)
    seed_dirs=() ;;
  *)
    echo "run-fuzz.sh: unknown TARGET '$target' (model, plan, checkpoint or data)" >&2
    exit 2 ;;
esac
for f in "${sources[@]}" $dict; do
  if [ ! -f "$root/$f" ]; then
    echo "run-fuzz.sh: $root/$f not found (is $root the repository root?)" >&2
    exit 2
  fi
done
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "run-fuzz.sh: $cxx not found (set CXX_FUZZ to a clang++)" >&2
  exit 2
fi

inside_repo() {
  case "$1/" in "$root"/*) return 0 ;; *) return 1 ;; esac
}
if [ -n "${FUZZ_WORKDIR:-}" ]; then
  case "$FUZZ_WORKDIR" in /*) work=$FUZZ_WORKDIR ;; *) work=$PWD/$FUZZ_WORKDIR ;; esac
  if inside_repo "$work"; then
    echo "run-fuzz.sh: FUZZ_WORKDIR $work lies inside the repository" >&2
    exit 2
  fi
  mkdir -p "$work"
  work=$(cd "$work" && pwd -P)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/embc-fuzz.XXXXXX")
fi
if inside_repo "$work"; then
  echo "run-fuzz.sh: the work directory $work lies inside the repository" >&2
  rmdir "$work" 2>/dev/null || true
  exit 2
fi
# A fresh directory is removed unless something was found; FUZZ_WORKDIR stays.
keep=0
if [ -n "${FUZZ_WORKDIR:-}" ]; then keep=1; fi
cleanup() { if [ "$keep" = 0 ]; then rm -rf "$work"; fi; }
trap cleanup EXIT

mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
for d in "${seed_dirs[@]}"; do
  # The files only (examples/ has a subdirectory: hpo/).
  find "$root/$d" -maxdepth 1 -type f -exec cp {} "$work/seeds/" \;
done
if [ "$target" != model ]; then
  python3 "$root/test/fuzz/seeds.py" "$target" "$work/seeds" "$root"
fi
if [ "$target" = plan ] && [ -n "${EMBC_BIN:-}" ]; then
  for m in "$root"/examples/*.json; do
    "$EMBC_BIN" "$m" --emit=plan-json -o "$work/seeds/$(basename "$m" .json).plan.json" \
      >/dev/null 2>&1 || true
  done
fi

echo "run-fuzz.sh: building the $target fuzzer in $work"
flags=()
for i in "${includes[@]}"; do flags+=(-I"$root/$i"); done
paths=()
for f in "${sources[@]}"; do paths+=("$root/$f"); done
# Compile from inside the work directory so that nothing lands in the repo.
if ! (cd "$work" && "$cxx" -std=c++17 -O1 -g \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
        "${flags[@]}" "${paths[@]}" "${libs[@]}" -o "$work/$target-fuzz"); then
  echo "run-fuzz.sh: build failed; if the error is about a missing" \
       "libclang_rt.fuzzer, install libclang-rt-14-dev (the clang 14" \
       "compiler-rt package)" >&2
  exit 2
fi

echo "run-fuzz.sh: fuzzing for ${seconds}s (log: $work/fuzz.log)"
status=0
(
  cd "$work"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  # shellcheck disable=SC2086
  dict_flag=()
  if [ -n "$dict" ]; then dict_flag=(-dict="$root/$dict"); fi
  exec "$work/$target-fuzz" \
    -max_total_time="$seconds" \
    "${dict_flag[@]}" \
    -max_len=65536 \
    -rss_limit_mb=2048 \
    -timeout="$per_input_timeout" \
    -artifact_prefix="$work/artifacts/" \
    -print_final_stats=1 \
    ${FUZZ_ARGS:-} \
    "$work/corpus" "$work/seeds"
) > "$work/fuzz.log" 2>&1 || status=$?

# The last status lines: executions, coverage, corpus size.
grep -E '^#[0-9]+[[:space:]]+(DONE|INITED)|^stat::' "$work/fuzz.log" | tail -n 12 || true

findings=$(find "$work/artifacts" -type f | sort)
if [ "$status" -ne 0 ] || [ -n "$findings" ]; then
  keep=1
  echo "run-fuzz.sh: FINDING (fuzzer exit status $status)" >&2
  if grep -q -E '^==[0-9]+==|runtime error|Fuzz: invariant|ALARM' \
       "$work/fuzz.log"; then
    { grep -E -A40 '^==[0-9]+==|runtime error|Fuzz: invariant|ALARM' \
        "$work/fuzz.log" || true; } | head -n 80 >&2
  else
    tail -n 60 "$work/fuzz.log" >&2
  fi
  for f in $findings; do
    echo "run-fuzz.sh: reproducer $f (base64):" >&2
    base64 -w0 "$f" | head -c 4096 >&2
    echo >&2
    echo "run-fuzz.sh: rerun with: $work/$target-fuzz $f" >&2
  done
  echo "run-fuzz.sh: kept $work" >&2
  exit 1
fi

corpus_files=$(find "$work/corpus" -type f | wc -l)
echo "run-fuzz.sh: no findings in ${seconds}s; corpus grew to $corpus_files inputs"
if [ "$keep" = 1 ]; then
  echo "run-fuzz.sh: corpus kept in $work/corpus"
fi
