#!/usr/bin/env bash
# Builds and runs bench/micro/residual_norm.cpp: -emb-fuse's add_layer_norm
# and add_layer_norm_grad CPU kernels against the unfused dropout, add and
# layer_norm kernels, one thread, on bert_mini_mlm's 2048 x 128 rows. Uses
# the build's team library (BUILD, default build/).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The flags the CPU backend compiles these header kernels with
# (runtime/lib/backends/cpu/CMakeLists.txt).
g++ -O3 -fno-math-errno -fopenmp-simd -march=x86-64-v2 -std=c++17 -I"$here/../runtime/include" \
  "$here/micro/residual_norm.cpp" "$build/runtime/lib/cpu/libEmbCpuTeam.a" -lpthread \
  -o "$out/residual_norm"
"$out/residual_norm"
