#!/usr/bin/env bash
# Installs everything b2lazy needs on Debian 12 with Python 3.11, then b2lazy itself.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config libsleef-dev libhwy-dev libgtest-dev \
  libzstd-dev liblz4-dev zlib1g-dev libisal-dev nlohmann-json3-dev libminizip-dev libhdf5-dev \
  clang clang-format-14 libclang-rt-14-dev nodejs librandom123-dev \
  libcurl4-openssl-dev nginx-light libfftw3-dev >/dev/null
PY=${PYTHON:-python3}
$PY -m pip install -q -r requirements.txt -r requirements-bench.txt
# The documentation site's tools (scripts/docs.sh; scripts/test.sh builds the site).
$PY -m pip install -q -r requirements-docs.txt
# No build isolation: build against the pinned blosc2/nanobind installed above. Warnings
# are errors with the pinned toolchain (Debian 12's g++ 12). The same build makes the C++
# tests, which scripts/test.sh runs from its build directory (build/<wheel tag>).
$PY -m pip install -q --no-build-isolation --config-settings=cmake.define.B2LAZY_WERROR=ON \
  --config-settings=cmake.define.B2LAZY_TESTS=ON .
