#!/usr/bin/env bash
# Quick start, second command: set up, build, and pass the whole test suite
# (lit + GoogleTest through ctest).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TILEC_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
export TILEC_CACHE_DIR="$build/test-cache"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
