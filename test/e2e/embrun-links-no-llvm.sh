#!/usr/bin/env bash
# The runtime must not depend on LLVM/MLIR: neither a shared library (ldd)
# nor a statically linked symbol (nm) of theirs may appear in embrun.
set -euo pipefail
exe="$1"
if ldd "$exe" | grep -Ei 'libLLVM|libMLIR'; then
  echo "FAIL: $exe links an LLVM/MLIR shared library" >&2
  exit 1
fi
count=$(nm -C "$exe" | grep -cE ' (mlir|llvm)::' || true)
if [[ "$count" -ne 0 ]]; then
  echo "FAIL: $exe contains $count mlir::/llvm:: symbols" >&2
  exit 1
fi
echo "OK: $exe has no LLVM/MLIR dependency"
