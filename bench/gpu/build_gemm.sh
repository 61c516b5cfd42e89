#!/usr/bin/env bash
# Builds the sm_90a GEMM cubins the H200 harness runs (bench/gpu/gemm_bench.py):
# for each shape and configuration, the cubin and a JSON with the report and
# the launch facts. Usage: bench/gpu/build_gemm.sh OUT_DIR [tilec binary]
set -euo pipefail
out="$1"; tilec="${2:-$(dirname "$0")/../../build/bin/tilec}"
mkdir -p "$out"
# shape -> configurations "block_m block_n block_k waves stages [group_m]" (override with TILEC_GEMM_CONFIGS)
big=("128 128 32 8 3" "128 128 32 8 4" "128 128 64 8 3" "128 256 32 8 3" "128 256 32 8 4" "128 256 32 8 3 8" "128 256 64 8 3 8" "256 128 32 8 3" "64 128 32 4 4")
skinny=("16 64 64 4 4" "16 64 128 4 4" "16 32 128 2 4" "32 64 64 4 4" "16 128 64 4 4")
shapes=("4096 4096 4096" "8192 8192 8192" "4097 4097 4097" "4095 4095 4095" "1000 1000 777" "16 4096 4096" "4096 14336 4096")
for s in "${shapes[@]}"; do
  read -r M N K <<<"$s"
  if [ -n "${TILEC_GEMM_CONFIGS:-}" ]; then read -r -a configs <<<"$TILEC_GEMM_CONFIGS"; configs=("$TILEC_GEMM_CONFIGS");
  elif [ "$M" -le 64 ]; then configs=("${skinny[@]}"); else configs=("${big[@]}"); fi
  for c in "${configs[@]}"; do
    read -r bm bn bk w st gm <<<"$c"
    p=(-p M=$M -p N=$N -p K=$K -p out=bf16 -p block_m=$bm -p block_n=$bn -p block_k=$bk -p waves=$w -p stages=$st -p group_m=${gm:-1})
    report=$("$tilec" --kernel=gemm "${p[@]}" --offload-arch=sm_90a --emit=report --json 2>/dev/null) || { echo "skip $s $c"; continue; }
    name=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["kernel"])' "$report")
    [ -f "$out/$name.cubin" ] || "$tilec" --kernel=gemm "${p[@]}" --offload-arch=sm_90a --emit=obj -o "$out/$name.cubin" 2>/dev/null
    python3 - "$out" "$name" "$report" "$M" "$N" "$K" "$bm" "$bn" "$w" <<'PY'
import json, sys
out, name, report, M, N, K, bm, bn, w = sys.argv[1:]
entry = {"kernel": name, "report": json.loads(report), "M": int(M), "N": int(N), "K": int(K),
         "block_m": int(bm), "block_n": int(bn), "threads": int(w) * 32}
with open(f"{out}/gemm_{M}x{N}x{K}_{name}.json", "w") as f:
    json.dump(entry, f)
PY
  done
done
ls "$out" | wc -l
