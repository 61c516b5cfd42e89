#!/usr/bin/env bash
# Builds the test suite under AddressSanitizer + UndefinedBehaviorSanitizer in
# ${TILEC_ASAN_BUILD_DIR:-build-asan} and runs the ctest tests there: by
# default every test but the `run` label's (the emulator's end-to-end kernel
# verifications, about 95% of the sanitizer run's time: 21 of 22 minutes here,
# over CI's budget next to the plain test suite, which runs them all);
# nothing else is left out. docs/fuzzing.md, "Sanitizers", says what it covers,
# how long it takes and why each setting.
#
#   scripts/sanitize.sh                                  # all but `run` (CI)
#   TILEC_ASAN_SKIP_LABELS= scripts/sanitize.sh          # every test
#   TILEC_ASAN_LABELS='jit|tune' scripts/sanitize.sh     # a ctest -L subset
#
# LLVM, MLIR and clang are Debian's prebuilt shared libraries, not
# instrumented: ASan checks tilec's own code and the memory it hands to them.
# Leak checking is off: those libraries keep process-lifetime allocations
# (cl::opt registries, the clang/lld driver state) that LeakSanitizer reports
# at exit.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TILEC_ASAN_BUILD_DIR:-$root/build-asan}"
labels="${TILEC_ASAN_LABELS:-}"
skip_labels="${TILEC_ASAN_SKIP_LABELS-^run\$}"
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
# use_sigaltstack=0: LLVM 19's ASan runtime unmaps, at thread exit, whatever
# alternate signal stack the thread has, and LLVM's signal-handler registration
# (clang and lld, on a compile thread) can have put a malloc'd one there: the
# process aborts with "unable to unmmap" on CPUs without AMX.
# tests/sanitizer/llvm_altstack_thread_exit.cpp reproduces it without tilec.
# allow_user_poisoning=0: LLVM's allocators mark memory they hand back or
# recycle with __asan_poison_memory_region from inline header code, which is
# instrumented in tilec's objects and not in Debian's static lld archives; the
# linker keeps one copy of each inline function, so lld (uninstrumented) can
# write into memory an instrumented copy poisoned: `tilec --emit=bundle` for
# gfx942 aborted in lld::elf::LinkerScript::createOutputSection with
# "use-after-poison". Ordinary heap, stack and global checks stay on.
export ASAN_OPTIONS="detect_leaks=0:detect_odr_violation=0:use_sigaltstack=0:allow_user_poisoning=0:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
start=$SECONDS
cmake --build "$build" -j "$jobs"
echo "sanitize: build took $((SECONDS - start)) s"

export TILEC_CACHE_DIR="$build/test-cache"
start=$SECONDS
args=(--test-dir "$build" --output-on-failure -j "$(nproc)")
[ -n "$labels" ] && args+=(-L "$labels")
[ -n "$skip_labels" ] && args+=(-LE "$skip_labels")
ctest "${args[@]}"
echo "sanitize: tests took $((SECONDS - start)) s"
