#!/usr/bin/env bash
# Quick start, first command: set up, build, then compile the shipped GEMM for
# each supported target, show its code-object report, and run it on the best
# device present (a HIP GPU if there is one, else the CPU wavefront emulator),
# verified against the CPU reference.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TILEC_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
tilec="$build/bin/tilec"
shape=(-p M=1000 -p N=1000 -p K=777)
for arch in gfx942 gfx90a; do
  echo
  echo "== tilec --kernel=gemm ${shape[*]} --offload-arch=$arch --emit=report"
  "$tilec" --kernel=gemm "${shape[@]}" --offload-arch="$arch" --emit=report
  echo "== tilec --kernel=gemm ${shape[*]} --offload-arch=$arch --run --device=auto"
  "$tilec" --kernel=gemm "${shape[@]}" --offload-arch="$arch" --run --device=auto
done
