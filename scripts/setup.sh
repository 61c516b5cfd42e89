#!/usr/bin/env bash
# Installs every Debian 12 package tilec needs to build, test and JIT-compile.
# Idempotent: packages already present are left alone. Run as root (or with sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build git python3 pkg-config
  python3-pip python3-setuptools python3-wheel
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  clang-19 lld-19 libclang-19-dev libclang-cpp19-dev liblld-19-dev
  libzstd-dev zlib1g-dev libedit-dev libcurl4-openssl-dev libxml2-dev libffi-dev
  libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libamdhip64-dev
  libboost-context-dev
  nlohmann-json3-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: installed ${missing[*]}"
