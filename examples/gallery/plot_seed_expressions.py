"""
The expressions b2lazy is made for
===================================

The three kinds of work of ``b2lazy demo`` and ``examples/demo.py`` — fused elementwise
expressions, reductions the output needs everywhere, and matrix products — over operands
stored compressed on disk, timed against NumPy (operands loaded into memory) and Dask
(reading the same files). The sizes are small (32 MiB operands) so that this page builds in
seconds; at these sizes everything fits in memory and NumPy is at its best. The benchmark
tables at full size are on the performance page.
"""

import os
import shutil
import tempfile
import time

import dask.array as da
import matplotlib.pyplot as plt
import numpy as np

import b2lazy as bl

d = tempfile.mkdtemp()
n = 2048
x = bl.linspace(0, 1, n * n, shape=(n, n))
paths = {}
for name, expr in [("a", bl.sin(1234.5 * x) + x), ("b", bl.cos(777.7 * x) - x), ("c", x * x - 0.5)]:
    paths[name] = os.path.join(d, f"{name}.b2nd")
    expr.compute(urlpath=paths[name], chunks=(256, n), blocks=(16, n))
a, b, c = (bl.open(paths[k]) for k in "abc")
print(a)

# %%
# The expressions, written once for the three libraries (NumPy's functions take b2lazy and
# Dask arrays through their protocols).

workloads = {
    "sin(a)**2 + cos(b)**2": lambda m, a, b, c: m.sin(a) ** 2 + m.cos(b) ** 2,
    "where(a > b, a - b, 0.5*c)": lambda m, a, b, c: m.where(a > b, a - b, 0.5 * c),
    "a - mean(a, axis=0)": lambda m, a, b, c: a - m.mean(a, axis=0),
    "sum(a) + a": lambda m, a, b, c: m.sum(a) + a,
    "matmul(a, b) + b": lambda m, a, b, c: m.matmul(a, b) + b,
}


def best_of(fn, reps=3):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


an, bn, cn = (bl.open(paths[k]).to_numpy() for k in "abc")
ad, bd, cd = (da.from_array(bl.open(paths[k]).to_blosc2(), chunks=(256, n)) for k in "abc")
results = {}
for label, f in workloads.items():
    out = os.path.join(d, "out.b2nd")
    t_bl = best_of(lambda: f(bl, a, b, c).compute(urlpath=out))
    t_np = best_of(lambda: f(np, an, bn, cn))
    t_da = best_of(lambda: f(da, ad, bd, cd).compute(), reps=1)
    check = np.allclose(bl.open(out)[:4].to_numpy(), f(np, an, bn, cn)[:4])
    results[label] = (t_np, t_da, t_bl)
    print(f"{label:28s} NumPy {t_np:.3f} s  Dask {t_da:.3f} s  b2lazy {t_bl:.3f} s  (to disk; same values: {check})")

# %%
# NumPy computes in memory and writes nothing; b2lazy reads compressed files and writes a
# compressed result; Dask reads the same files through python-blosc2 and returns NumPy.

labels = list(results)
ypos = np.arange(len(labels))
fig, ax = plt.subplots(figsize=(7, 3.5))
for i, (name, color) in enumerate([("NumPy (in memory)", "C0"), ("Dask", "C1"), ("b2lazy (disk to disk)", "C2")]):
    ax.barh(ypos + (i - 1) * 0.27, [results[k][i] for k in labels], height=0.27, label=name, color=color)
ax.set_yticks(ypos, labels)
ax.invert_yaxis()
ax.set_xlabel("seconds (best of 3; 2048 x 2048 float64)")
ax.legend(loc="lower right")
fig.tight_layout()

shutil.rmtree(d)
