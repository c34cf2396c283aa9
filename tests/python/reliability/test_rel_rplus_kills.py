"""What a crash during x[key] = value on a file opened with mode="r+" may leave (issue #36,
the r+ guarantee written in the README): a readable array whose every storage chunk is
wholly old or wholly new — never a chunk mixing both, never values that are neither. A
contiguous .b2nd file switches to a statement's new chunks at once (all old or all new);
a sparse directory's chunk files are replaced one by one.

A writer process is SIGKILLed at random points of a whole-array write; after each kill the
file is read by b2lazy and python-blosc2 (which must agree) and classified chunk by chunk."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time

import blosc2
import numpy as np
import pytest

import b2lazy

N, C = 1024, 128
WRITER = """
import sys, numpy as np, b2lazy
w = b2lazy.open(sys.argv[1], mode="r+")
new = -np.arange({n} * {n}, dtype=np.float64).reshape({n}, {n}) - 1
print("go", flush=True)
for i in range(3):  # long enough to be killed inside, at any point
    w[...] = new if i % 2 == 0 else -new - 1
    w[...] = new
print("done", flush=True)
""".format(n=N)


@pytest.mark.parametrize("contiguous", [True, False], ids=["file", "directory"])
def test_killed_writer_leaves_whole_chunks(contiguous, tmp_path):
    path = str(tmp_path / ("x.b2nd" if contiguous else "xdir"))
    old = np.arange(N * N, dtype=np.float64).reshape(N, N)
    new = -old - 1
    rng = random.Random(36)
    seen = {"old": 0, "new": 0}
    for _ in range(8):
        blosc2.asarray(old, urlpath=path, mode="w", chunks=(C, C), blocks=(32, 32), contiguous=contiguous)
        p = subprocess.Popen([sys.executable, "-c", WRITER, path], stdout=subprocess.PIPE)
        assert p.stdout.readline().strip() == b"go"
        time.sleep(rng.uniform(0.0, 0.4))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        p.stdout.close()
        got = b2lazy.open(path).to_numpy()
        np.testing.assert_array_equal(got, blosc2.open(path)[...])
        if contiguous:  # one statement's chunks all switched at once
            assert np.array_equal(got, old) or np.array_equal(got, new)
        for i in range(0, N, C):
            for j in range(0, N, C):
                g = got[i : i + C, j : j + C]
                if np.array_equal(g, old[i : i + C, j : j + C]):
                    seen["old"] += 1
                elif np.array_equal(g, new[i : i + C, j : j + C]):
                    seen["new"] += 1
                else:
                    raise AssertionError(f"chunk at ({i}, {j}) mixes old and new values after a kill")
    assert seen["old"] + seen["new"] == 8 * 64
