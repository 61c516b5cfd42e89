#!/usr/bin/env bash
# Quick start, first command: set up, build, then compile the shipped GEMM for
# each supported target and show its code-object report.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TILEC_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
tilec="$build/bin/tilec"
for arch in gfx942 gfx90a; do
  echo
  echo "== tilec --kernel=gemm -p M=4096 -p N=4096 -p K=4096 --offload-arch=$arch --emit=report"
  "$tilec" --kernel=gemm -p M=4096 -p N=4096 -p K=4096 --offload-arch="$arch" --emit=report
done
