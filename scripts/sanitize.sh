#!/usr/bin/env bash
# Builds the test suite under AddressSanitizer + UndefinedBehaviorSanitizer in
# ${TILEC_ASAN_BUILD_DIR:-build-asan} and runs a labelled subset through ctest
# (docs/fuzzing.md, "Sanitizers", says which labels and why).
#
#   scripts/sanitize.sh                          # labels dsl|target|jit|emu (CI)
#   TILEC_ASAN_LABELS='.*' TILEC_ASAN_EXCLUDE= scripts/sanitize.sh   # every labelled test
#
# TILEC_ASAN_EXCLUDE (a ctest -E regex) names the tests known to fail under
# ASan for a reason outside tilec's code; docs/fuzzing.md says why.
#
# LLVM, MLIR and clang are Debian's prebuilt shared libraries, not
# instrumented: ASan checks tilec's own code and the memory it hands to them.
# Leak checking is off: those libraries keep process-lifetime allocations
# (cl::opt registries, the clang/lld driver state) that LeakSanitizer reports
# at exit.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TILEC_ASAN_BUILD_DIR:-$root/build-asan}"
labels="${TILEC_ASAN_LABELS-dsl|target|jit|emu}"
exclude="${TILEC_ASAN_EXCLUDE-^ClangJIT.ConcurrentCompiles\$}"
jobs="${TILEC_ASAN_JOBS:-$(nproc)}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

bash "$root/scripts/setup.sh"
# The sanitizer runtimes are not part of clang-19 itself.
if ! dpkg-query -W -f='${Status}' libclang-rt-19-dev 2>/dev/null | grep -q "install ok installed"; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends libclang-rt-19-dev
fi

# libtilec.so is linked with -z defs (LLVM's CMake): it and the executables
# share the runtime as a shared library (-shared-libsan), found by rpath.
rtdir="$(dirname "$(clang-19 -print-file-name=libclang_rt.asan-x86_64.so)")"
ldflags="-shared-libsan -Wl,-rpath,$rtdir"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags"
fi
# detect_odr_violation=0: the test executables link the static tilec_dialect
# (and tilec_kernels) next to libtilec.so, which holds them too, so their
# globals exist twice; ASan reports that at start-up (and gtest discovery runs
# the tests during the build). See docs/fuzzing.md.
export ASAN_OPTIONS="detect_leaks=0:detect_odr_violation=0:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
start=$SECONDS
cmake --build "$build" -j "$jobs"
echo "sanitize: build took $((SECONDS - start)) s"

export TILEC_CACHE_DIR="$build/test-cache"
start=$SECONDS
args=(--test-dir "$build" --output-on-failure -j "$(nproc)")
[ -n "$labels" ] && args+=(-L "$labels")
[ -n "$exclude" ] && args+=(-E "$exclude")
ctest "${args[@]}"
echo "sanitize: tests took $((SECONDS - start)) s"
