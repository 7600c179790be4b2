#!/usr/bin/env bash
# Installs what embc needs on Debian 12 (when missing), then configures and
# builds it in ./build. Sourced by quickstart.sh and check.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${EMBC_BUILD_DIR:-$ROOT/build}"

PACKAGES=(
  g++ cmake ninja-build python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev
  clang libclang-rt-14-dev
  libopenblas-dev libxsmm-dev libxxhash-dev
  libopenmpi-dev openmpi-bin
  python3-optuna
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The CUDA toolkit lives under /usr/local/cuda on our machines; CMake finds
# nvcc through CUDACXX when it is not on PATH.
if [[ -z "${CUDACXX:-}" && -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi

echo "== configuring $BUILD"
cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
echo "== building"
ninja -C "$BUILD" "$@"
