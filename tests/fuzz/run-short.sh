#!/usr/bin/env bash
# CI's short fuzz run (docs/fuzzing.md): configures and builds the libFuzzer
# targets in build-fuzz (ASan + UBSan + fuzzer coverage), then runs each one
# for a fixed time on a copy of its committed seed corpus. Exits non-zero on
# the first crash, leak, timeout or sanitizer report; the reproducer is left in
# build-fuzz/artifacts/<target>/.
#
#   tests/fuzz/run-short.sh [SECONDS_PER_TARGET]      (default 60)
#
# Targets in TILEC_FUZZ_EXPLORE (default: tile_ir params) explore new inputs
# for the time budget; the others replay their corpus and regressions once
# (-runs=0). code_object replays only: its inputs reach LLVM 19's AMDGPU
# instruction printer, which trusts the decoder; the one crash exploring found
# is fixed (docs/fuzzing.md), but another found by chance would fail an
# unrelated change. Run it with TILEC_FUZZ_EXPLORE="tile_ir params code_object" by hand.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${TILEC_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-60}"
jobs="${TILEC_FUZZ_BUILD_JOBS:-$(nproc)}"
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

# libFuzzer and the sanitizer runtimes are not part of clang-19 itself.
if ! dpkg-query -W -f='${Status}' libclang-rt-19-dev 2>/dev/null | grep -q "install ok installed"; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends libclang-rt-19-dev
fi

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DTILEC_FUZZ=ON
fi
cmake --build "$build" -j "$jobs" --target tilec_fuzzers

# LLVM, MLIR and clang are prebuilt shared libraries without sanitizers: their
# process-lifetime globals are reported as leaks at exit, so leak checking is off.
# allow_user_poisoning=0, as in scripts/sanitize.sh: LLVM's BumpPtrAllocator
# poisons its slabs from inline header code, instrumented here and not in
# libMLIR, so an allocation that libMLIR's copy hands out from a slab an
# instrumented copy poisoned reads as use-after-poison (a `#tile.blocked`
# attribute's storage did; docs/fuzzing.md).
export ASAN_OPTIONS="detect_leaks=0:allow_user_poisoning=0:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"

explore=" ${TILEC_FUZZ_EXPLORE:-tile_ir params} "
status=0
for target in tile_ir params code_object; do
  corpus="$build/corpus/$target"
  artifacts="$build/artifacts/$target"
  rm -rf "$corpus" && mkdir -p "$corpus" "$artifacts"
  cp "$root/tests/fuzz/corpus/$target"/* "$corpus"/
  # Inputs that once crashed (each fixed, with a unit test) start every run.
  if [ -d "$root/tests/fuzz/regressions/$target" ]; then
    cp "$root/tests/fuzz/regressions/$target"/* "$corpus"/
  fi
  budget=(-max_total_time="$seconds")
  if [[ "$explore" == *" $target "* ]]; then
    echo "== tilec_fuzz_$target: ${seconds}s"
  else
    budget=(-runs=0)
    echo "== tilec_fuzz_$target: replaying its corpus and regressions"
  fi
  if ! "$build/bin/tilec_fuzz_$target" "$corpus" \
      "${budget[@]}" -timeout=30 -rss_limit_mb=4096 -max_len=65536 \
      -artifact_prefix="$artifacts/" -print_final_stats=1 2>"$build/fuzz-$target.log"; then
    tail -n 60 "$build/fuzz-$target.log"
    echo "tilec_fuzz_$target: FAILED (reproducer in $artifacts)"
    status=1
    continue
  fi
  grep -E "^stat::number_of_executed_units|^Done " "$build/fuzz-$target.log" || true
done
exit $status
