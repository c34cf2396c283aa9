#!/usr/bin/env bash
# The C++ engine under ThreadSanitizer (clang, -Werror): the GoogleTest suite (parallel_for,
# the carry board, stage results and the node cache run concurrently there), then the b2lazy
# command at 2 to 4 threads over expressions that run workers together: reductions, matmul,
# scans, sort and median, a boolean selection, stage spills under a small --max-memory,
# HDF5 chunks read by several workers (decoded by b2lazy, or by libhdf5 under its lock;
# external storage) and the demo. Any report
# fails the run (exit code 66). Python is not part of this stage: an uninstrumented CPython
# running an instrumented module needs libtsan preloaded and reports CPython's own
# unsynchronised (GIL-protected) accesses; the command drives the same engine.
# OpenBLAS and C-Blosc2 come prebuilt (not instrumented): their accesses are not seen, and
# tests/sanitizers/tsan.supp may list only reports inside them, each with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
BUILD=${B2LAZY_TSAN_BUILD_DIR:-build/tsan}
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$PWD/tests/sanitizers/tsan.supp"

start=$(date +%s)
CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DB2LAZY_TSAN=ON -DB2LAZY_WERROR=ON -DB2LAZY_PYTHON=OFF >/dev/null
cmake --build "$BUILD" -j 2 --target b2lazy_tests b2lazy_cli
built=$(date +%s)

echo "tsan: GoogleTest suite"
"$BUILD/b2lazy_tests" --gtest_brief=1

echo "tsan: the command at 2-4 threads"
WORK="$BUILD/smoke"
rm -rf "$WORK" && mkdir -p "$WORK/demo"
$PY - "$WORK" <<'PYEOF'
import sys
import blosc2, h5py, hdf5plugin, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(0)
a, b = rng.standard_normal((600, 400)), rng.standard_normal((400, 300))
blosc2.asarray(a, urlpath=f"{d}/a.b2nd", chunks=(150, 200), blocks=(50, 100), mode="w")
blosc2.asarray(b, urlpath=f"{d}/b.b2nd", chunks=(100, 150), blocks=(50, 50), mode="w")
with h5py.File(f"{d}/h.h5", "w") as f:
    f.create_dataset("x", data=a, chunks=(100, 100), **hdf5plugin.Zstd())
    f.create_dataset("y", data=a, chunks=(75, 100), compression="gzip", shuffle=True)
    f.create_dataset("z", data=(a * 100).astype("i4"), chunks=(50, 100), scaleoffset=0)  # through libhdf5
    a.tofile(f"{d}/raw.bin")
    f.create_dataset("e", shape=a.shape, dtype=a.dtype, external=[("raw.bin", 0, a.nbytes)])
PYEOF
A="a=$WORK/a.b2nd" B="b=$WORK/b.b2nd" H="h=$WORK/h.h5#/x" G="g=$WORK/h.h5#/y" Z="z=$WORK/h.h5#/z"
E="e=$WORK/h.h5#/e"
n=0
for threads in 2 3 4; do
  while IFS='|' read -r expr operands memory; do
    # shellcheck disable=SC2086
    "$BUILD/b2lazy" eval "$expr" $operands -o "$WORK/out.b2nd" --threads "$threads" $memory --no-progress >/dev/null
    n=$((n + 1))
  done <<LIST
sum(a, axis=0) + mean(a) + max(a, axis=1)[0]|$A|
matmul(a - mean(a, axis=0), b) * 2|$A $B|
matmul(a, b) + 1|$A $B|--max-memory 14M
cumsum(a, axis=0) + cumprod(a > 0, axis=1)|$A|
sort(a, axis=0)|$A|--max-memory 16M
median(h, axis=1) + std(g, axis=1)|$H $G|--max-memory 20M
a[a > 1.5]|$A|
sum(h * g) + argmax(h)|$H $G|
sum(z, axis=0) + max(e, axis=0)|$Z $E|
LIST
done
"$BUILD/b2lazy" demo --n 512 --threads 4 --dir "$WORK/demo" >/dev/null
echo "tsan: no reports over the GoogleTest suite and $n threaded evaluations + the demo" \
  "(build $((built - start)) s, runs $(($(date +%s) - built)) s)"
