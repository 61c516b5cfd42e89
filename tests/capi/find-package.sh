#!/bin/sh
# Installs the build BUILD into a fresh prefix, builds tests/capi/consumer
# against it with find_package(tilec) and tilec::tilec_c, and runs it: the
# installed libtilec_c must compile the shipped GEMM.
set -eu
build="$1" consumer="$2" work="$3"
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work.install.log"
cmake -S "$consumer" -B "$work/consumer" -G Ninja -DCMAKE_C_COMPILER="${CC:-cc}" \
  -DCMAKE_PREFIX_PATH="$work/prefix" > "$work.configure.log"
cmake --build "$work/consumer" > "$work.build.log"
out=$("$work/consumer/compile_gemm")
case "$out" in
  "gemm_bf16_f32_64x64x32_"*" has a code object") echo "find-package: the installed compiler built $out" ;;
  *) echo "find-package: compile_gemm printed '$out'"; exit 1 ;;
esac
