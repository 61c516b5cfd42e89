#!/bin/sh
# Installs the "runtime" component of the build BUILD into a fresh prefix,
# builds tests/rt/consumer against it with find_package(tilec COMPONENTS
# runtime), and runs it on BUNDLE: it must list KERNELS (one string, names
# separated by spaces).
set -eu
build="$1" consumer="$2" work="$3" bundle="$4" kernels="$5"
rm -rf "$work"
cmake --install "$build" --component runtime --prefix "$work/prefix" > "$work.install.log"
if ls "$work/prefix/lib"* | grep -E 'libtilec\.so|tilec-cli'; then
  echo "find-package: the runtime component installed compiler libraries (above)"; exit 1
fi
cmake -S "$consumer" -B "$work/consumer" -G Ninja -DCMAKE_C_COMPILER="${CC:-cc}" \
  -DCMAKE_PREFIX_PATH="$work/prefix" > "$work.configure.log"
cmake --build "$work/consumer" > "$work.build.log"
listed=$("$work/consumer/list_kernels" "$bundle" | tr '\n' ' ' | sed 's/ $//')
if [ "$listed" != "$kernels" ]; then
  echo "find-package: list_kernels printed '$listed', expected '$kernels'"; exit 1
fi
echo "find-package: the installed runtime lists: $listed"
