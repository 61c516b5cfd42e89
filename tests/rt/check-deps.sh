#!/bin/sh
# Fails when libtilec_rt needs a library beyond libc, libstdc++ and the
# toolchain's support libraries (the runtime must run where LLVM, MLIR and
# clang are not installed): its direct dependencies must be on the list
# below, and none of its resolved ones may be LLVM, MLIR or clang. The
# sanitizer build (scripts/sanitize.sh) links the sanitizer runtime
# (libclang_rt.asan-*, compiler-rt's, not the compiler): allowed, and only there.
set -eu
lib="$1"
allowed="libc.so.6 libstdc++.so.6 libm.so.6 libgcc_s.so.1 libdl.so.2 libpthread.so.0 ld-linux-x86-64.so.2"
status=0
for needed in $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  case " $allowed " in
    *" $needed "*) continue ;;
  esac
  case "$needed" in
    libclang_rt.asan-*) continue ;;
  esac
  echo "check-deps: $lib needs $needed, which is not on the list: $allowed"
  status=1
done
if ldd "$lib" | grep -v 'libclang_rt\.asan-' | grep -i -E 'llvm|mlir|clang'; then
  echo "check-deps: $lib resolves LLVM, MLIR or clang libraries (above)"
  status=1
fi
[ $status -eq 0 ] && echo "check-deps: $lib needs only: $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
exit $status
