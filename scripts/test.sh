#!/usr/bin/env bash
# Runs the whole test suite: C++ (GoogleTest, examples), a bounded fuzz run of expression
# strings (atheris) and Python (pytest + hypothesis).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
BUILD=${B2LAZY_BUILD_DIR:-build/cpp}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DB2LAZY_WERROR=ON -DPython_EXECUTABLE="$(command -v $PY)" >/dev/null
cmake --build "$BUILD" -j 2
(cd "$BUILD" && ctest --output-on-failure)
# A bounded fuzz run of the expression parser (atheris; about 60 s; the command and its
# flags are in tests/fuzz/fuzz_expressions.py). Its log is kept, and shown on failure.
echo "fuzzing expression strings for 60 s: $PY tests/fuzz/fuzz_expressions.py -max_total_time=60"
if ! $PY tests/fuzz/fuzz_expressions.py -max_total_time=60 > "$BUILD/fuzz_expressions.log" 2>&1; then
  tail -n 80 "$BUILD/fuzz_expressions.log"
  echo "the expression fuzzer failed (log: $BUILD/fuzz_expressions.log)"
  exit 1
fi
grep -E "^Done [0-9]+ runs" "$BUILD/fuzz_expressions.log" || true
$PY -m pytest tests/python -q -p no:cacheprovider
