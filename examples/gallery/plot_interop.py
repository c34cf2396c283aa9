"""
NumPy and Dask code over b2lazy arrays
======================================

NumPy's functions and ufuncs dispatch to b2lazy (``__array_function__``,
``__array_ufunc__``), so NumPy code builds lazy b2lazy expressions; Dask passes b2lazy
blocks through, so a Dask graph over a b2lazy array becomes one b2lazy expression. Small
sizes (a 2048 x 2048 float64 array, 32 MiB): the point is what runs where, and the
memory each way holds.
"""

import os
import shutil
import tempfile
import time

import dask.array as da
import matplotlib.pyplot as plt
import numpy as np

import b2lazy as bl


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return rss_mib()


def peak_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return rss_mib()


d = tempfile.mkdtemp()
n = 2048
bl.random.default_rng(3).random((n, n)).compute(urlpath=os.path.join(d, "x.b2nd"), chunks=(256, n))
x = bl.open(os.path.join(d, "x.b2nd"))


def numpy_code(x):
    """Plain NumPy: a standardised anomaly and its row norms."""
    z = (x - np.mean(x, axis=0)) / np.std(x, axis=0)
    return np.sqrt(np.sum(z**2, axis=1))


lazy = numpy_code(x)  # NumPy's functions, a lazy b2lazy result
print(type(lazy).__name__, lazy.shape)

# %%
# The same function three ways: on the NumPy array loaded into memory, on the b2lazy
# array (lazy, evaluated by ``np.asarray``), and through Dask over b2lazy blocks.
runs = {
    "NumPy (loaded)": lambda: numpy_code(x.to_numpy()),
    "NumPy code on b2lazy": lambda: np.asarray(numpy_code(x)),
    "Dask over b2lazy": lambda: np.asarray(numpy_code(da.from_array(x, chunks=(256, n))).compute()),
}
results = {}
ref = None
for label, fn in runs.items():
    base = reset_peak()
    t0 = time.perf_counter()
    out = fn()
    results[label] = (time.perf_counter() - t0, peak_mib() - base)
    ref = out if ref is None else ref
    seconds, growth = results[label]
    print(f"{label:22s} {seconds:.3f} s, peak RSS growth {growth:6.1f} MiB, same: {np.allclose(out, ref)}")

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 2.8))
labels = list(results)
ax1.barh(labels, [results[k][0] for k in labels], color=["C0", "C2", "C1"])
ax1.set_xlabel("seconds")
ax1.invert_yaxis()
ax2.barh(labels, [results[k][1] for k in labels], color=["C0", "C2", "C1"])
ax2.set_xlabel("peak RSS growth (MiB)")
ax2.invert_yaxis()
ax2.set_yticks([])
fig.tight_layout()

# %%
# A NumPy function b2lazy does not have loads its operands and says so, once per function:
import warnings  # noqa: E402

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    np.corrcoef(x[:4])
print(caught[0].message)
shutil.rmtree(d)
