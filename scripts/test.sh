#!/usr/bin/env bash
# Runs the whole test suite: C++ (GoogleTest, examples) and Python (pytest + hypothesis).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
BUILD=${B2LAZY_BUILD_DIR:-build/cpp}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v $PY)" >/dev/null
cmake --build "$BUILD" -j 2
(cd "$BUILD" && ctest --output-on-failure)
$PY -m pytest tests/python -q -p no:cacheprovider
