#!/usr/bin/env bash
# The C++ engine once more under AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer, built by clang with -Werror: the GoogleTest suite, the
# b2lazy command over a corpus of corrupted b2nd files and Zarr stores, and short libFuzzer
# runs on b2nd files, Zarr codec chains, Zarr shards and .b2z member tables. Any sanitizer
# report fails the run (-fno-sanitize-recover; exit code 86).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
BUILD=${B2LAZY_SAN_BUILD_DIR:-build/sanitize}
FUZZ_SECONDS=${B2LAZY_SAN_FUZZ_SECONDS:-45}
DECODER_FUZZ_SECONDS=${B2LAZY_SAN_DECODER_FUZZ_SECONDS:-30}

SUPP="$PWD/tests/sanitizers"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0:exitcode=86"

CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DB2LAZY_SANITIZE=ON -DB2LAZY_FUZZ=ON -DB2LAZY_WERROR=ON -DB2LAZY_PYTHON=OFF >/dev/null
# Only what this stage runs (the Python module is tested by the release build).
cmake --build "$BUILD" -j 2 --target b2lazy_tests b2lazy_cli fuzz_b2nd_file fuzz_zarr_codecs fuzz_zarr_shard \
  fuzz_b2z_members

echo "sanitizers: GoogleTest suite"
"$BUILD/b2lazy_tests" --gtest_brief=1

# The command over corrupted files and Zarr stores: each run ends with status 0 (the corruption was
# harmless) or 1 (a clear error); a sanitizer report (86) or a signal fails.
CORPUS="$BUILD/corrupt_corpus"
rm -rf "$CORPUS" && mkdir -p "$CORPUS"
$PY tests/corrupt_files.py "$CORPUS" >/dev/null
$PY tests/corrupt_zarr.py "$CORPUS" >/dev/null  # damaged Zarr stores (directories)
n=0
for f in "$CORPUS"/*; do
  for cmd in "info $f" "eval a*2+sum(a) a=$f -o $BUILD/corrupt_out.b2nd --no-progress"; do
    set +e
    # shellcheck disable=SC2086
    "$BUILD/b2lazy" $cmd >/dev/null 2>"$BUILD/corrupt_stderr.txt"
    rc=$?
    set -e
    if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
      cat "$BUILD/corrupt_stderr.txt"
      echo "sanitizers: 'b2lazy $cmd' ended with status $rc"
      exit 1
    fi
    n=$((n + 1))
  done
done
echo "sanitizers: the command ran over $n corrupted-file cases"

# A libFuzzer target over a seed corpus for some seconds; its log is kept, and shown on failure.
fuzz() {  # fuzz NAME SEEDS SECONDS
  echo "sanitizers: fuzzing $1 for $3 s"
  if ! "$BUILD/fuzz_$1" -max_total_time="$3" -rss_limit_mb=2048 -timeout=20 -artifact_prefix="$BUILD/" \
      "$2" > "$BUILD/fuzz_$1.log" 2>&1; then
    tail -n 60 "$BUILD/fuzz_$1.log"
    echo "sanitizers: the $1 fuzzer failed (log: $BUILD/fuzz_$1.log)"
    exit 1
  fi
  grep -E "^Done [0-9]+ runs" "$BUILD/fuzz_$1.log" || true
}

SEEDS="$BUILD/fuzz_seeds"
rm -rf "$SEEDS" && mkdir -p "$SEEDS"
$PY tests/corrupt_files.py --valid "$SEEDS" >/dev/null
fuzz b2nd_file "$SEEDS" "$FUZZ_SECONDS"

# The Zarr codec chain, Zarr v3 shards and the .b2z member table, from what zarr-python,
# python-blosc2 and zipfile wrote (tests/fuzz/zarr_seeds.py); an allocation past 2 GiB fails.
for target in zarr_codecs:codecs zarr_shard:shards b2z_members:b2z; do
  name=${target%%:*} seeds="$BUILD/fuzz_seeds_${name}"
  rm -rf "$seeds" && $PY tests/fuzz/zarr_seeds.py "${target##*:}" "$seeds"
  fuzz "$name" "$seeds" "$DECODER_FUZZ_SECONDS"
done
echo "sanitizers: no reports"
