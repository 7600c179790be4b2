#!/usr/bin/env bash
# Builds and runs bench/micro/gemm_shapes.cpp: OpenBLAS, libxsmm and (when
# libdnnl-dev is installed) oneDNN at the example models' GEMM shapes, one
# thread each. Needs libopenblas-dev and libxsmm-dev.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
libs=(-lopenblas /usr/lib/libxsmm.a -ldl -lpthread)
flags=()
[[ -f /usr/include/dnnl.hpp ]] && libs+=(-ldnnl) && flags+=(-fopenmp)
g++ -O2 -std=c++17 "${flags[@]}" "$here/micro/gemm_shapes.cpp" -o "$out/gemm_shapes" "${libs[@]}"
"$out/gemm_shapes"
