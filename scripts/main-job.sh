#!/usr/bin/env bash
# Quick start, first command: set up, build, then compile the shipped GEMM for
# each supported target (gfx942, gfx90a, gfx1151), show its code-object report,
# and run it on the best device present (a HIP GPU if there is one, else the CPU
# wavefront emulator), verified against the CPU reference; then the fp8 GEMM on gfx942
# and the GEMM for NVIDIA sm_90a (report, emulator run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TILEC_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
tilec="$build/bin/tilec"
shape=(-p M=1000 -p N=1000 -p K=777)
for arch in gfx942 gfx90a gfx1151; do
  # A GPU that is present is a CDNA part at best: gfx1151 (Strix Halo) runs on the emulator.
  device=auto
  [[ "$arch" == gfx1151 ]] && device=emulator
  echo
  echo "== tilec --kernel=gemm ${shape[*]} --offload-arch=$arch --emit=report"
  "$tilec" --kernel=gemm "${shape[@]}" --offload-arch="$arch" --emit=report
  echo "== tilec --kernel=gemm ${shape[*]} --offload-arch=$arch --run --device=$device"
  "$tilec" --kernel=gemm "${shape[@]}" --offload-arch="$arch" --run --device="$device"
done
# fp8 (e4m3fnuz) with per-tensor scales: gfx942 only.
fp8=(-p dtype=fp8 -p scale_a=0.375 -p scale_b=-2.5)
echo
echo "== tilec --kernel=gemm ${shape[*]} ${fp8[*]} --offload-arch=gfx942 --run --device=auto"
"$tilec" --kernel=gemm "${shape[@]}" "${fp8[@]}" --offload-arch=gfx942 --run --device=auto
# NVIDIA Hopper through the same pipeline (a cubin through the CUDA toolkit's
# nvJitLink; no GPU needed), verified in the emulator with its warp-level
# mma.sync semantics.
echo
echo "== tilec --kernel=gemm ${shape[*]} --offload-arch=sm_90a --emit=report"
"$tilec" --kernel=gemm "${shape[@]}" --offload-arch=sm_90a --emit=report
echo "== tilec --kernel=gemm -p M=300 -p N=264 -p K=200 --offload-arch=sm_90a --run --device=emulator"
"$tilec" --kernel=gemm -p M=300 -p N=264 -p K=200 --offload-arch=sm_90a --run --device=emulator
