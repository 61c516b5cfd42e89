#!/usr/bin/env bash
# Builds what the H200 benchmark needs on a machine without LLVM or tilec, into
# OUT_DIR (see bench/gpu/README.md):
#   OUT_DIR/run.py, plan.py, ...        the harness (make_bundle.py's HARNESS)
#   OUT_DIR/tilec/                       the Python package, with libtilec_rt.so beside it
#   OUT_DIR/bundle/                      one sm_90a bundle of every configuration plan.py lists
#   OUT_DIR/plan.json                    job key -> kernel name and code-object report
# then checks every launch run.py makes against the bundle (run.py --check-args).
# Usage: bench/gpu/prepare.sh OUT_DIR [BUILD_DIR]     (BUILD_DIR: default build/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:?usage: prepare.sh OUT_DIR [BUILD_DIR]}"
build="${2:-$root/build}"
limit_mib=50

echo "== building tilec and tilec_rt in $build"
cmake --build "$build" --target tilec tilec_rt -j2 >/dev/null
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -rf "$out/tilec" "$out/bundle" "$out/plan.json"

echo "== the Python package"
mkdir -p "$out/tilec"
cp "$root"/python/tilec/*.py "$out/tilec/"
# The package loads libtilec_rt.so from beside itself (python/tilec/__init__.py).
cp -L "$build/lib/libtilec_rt.so" "$out/tilec/libtilec_rt.so"
glibc=$(objdump -T "$out/tilec/libtilec_rt.so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 || true)
echo "   libtilec_rt.so needs $glibc at most (the GPU machine's glibc must be as new)"

echo "== the sm_90a bundle and the harness"
python3 "$here/make_bundle.py" "$build/bin/tilec" "$out"

echo "== checking every launch of run.py against the manifest"
if ! python3 "$out/run.py" "$out" --check-args >"$out/check_args.log"; then
  grep -v '^ok ' "$out/check_args.log" >&2
  exit 1
fi
tail -n 1 "$out/check_args.log"

size_kib=$(du -sk "$out" | cut -f1)
echo "== $out: $((size_kib / 1024)) MiB"
if [ "$size_kib" -ge $((limit_mib * 1024)) ]; then
  echo "prepare.sh: $out is $((size_kib / 1024)) MiB, over the ${limit_mib} MiB that may travel" >&2
  exit 1
fi
echo "GPU machine: python3 $out/run.py --out RESULTS.json"
