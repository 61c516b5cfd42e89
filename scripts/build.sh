#!/usr/bin/env bash
# Installs the dependencies (scripts/setup.sh), then configures and builds tilec
# into ${TILEC_BUILD_DIR:-build} with clang 19, lld and Ninja.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TILEC_BUILD_DIR:-$root/build}"

bash "$root/scripts/setup.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir
fi
cmake --build "$build" -j "$(nproc)"
