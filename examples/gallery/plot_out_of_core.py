"""
An out-of-core product under max_memory
=======================================

``max_memory`` is a limit: the plan's projected peak is checked against it before any
work, and the plan adapts — keeping an operand decompressed when it fits, keeping it
compressed, spilling stages to a temporary file, shrinking the output chunks. Here the same
product ``matmul(a, b) + b`` runs under budgets from 8 MiB up, and the peak RSS growth of
the process is measured beside the projection. Operands are 2048 x 2048 float64 (32 MiB
each, small so the page builds quickly); NumPy holds both operands and the result (96 MiB).
"""

import os
import shutil
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np

import b2lazy as bl


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def reset_peak():
    """Reset the process's peak-RSS mark (Linux); return the RSS now."""
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
x = bl.linspace(0, 1, n * n, shape=(n, n))
bl.sin(x).compute(urlpath=os.path.join(d, "a.b2nd"), chunks=(256, n))
bl.cos(x).compute(urlpath=os.path.join(d, "b.b2nd"), chunks=(256, n))
a, b = bl.open(os.path.join(d, "a.b2nd")), bl.open(os.path.join(d, "b.b2nd"))
e = bl.matmul(a, b) + b

# %%
# The smallest budget that works is in the error when the budget is too small:
try:
    e.compute(urlpath=os.path.join(d, "out.b2nd"), max_memory=2**20)
except ValueError as err:
    print(err)

# %%
rows = []
for budget_mib in (8, 16, 32, 64, 256):
    base = reset_peak()
    t0 = time.perf_counter()
    r = e.compute(urlpath=os.path.join(d, "out.b2nd"), max_memory=budget_mib * 2**20)
    seconds = time.perf_counter() - t0
    growth = peak_mib() - base
    projected = r.stats["projected_peak_bytes"] / 2**20
    rows.append((budget_mib, projected, growth, seconds))
    print(
        f"max_memory {budget_mib:4d} MiB: projected {projected:6.1f} MiB, RSS growth {growth:6.1f} MiB, {seconds:.2f} s"
    )

base = reset_peak()
t0 = time.perf_counter()
an, bn = a.to_numpy(), b.to_numpy()
ref = an @ bn + bn
np_seconds = time.perf_counter() - t0
np_growth = peak_mib() - base
print(f"NumPy (load, then compute): RSS growth {np_growth:.1f} MiB, {np_seconds:.2f} s")
print("same values:", np.allclose(bl.open(os.path.join(d, "out.b2nd"))[:8].to_numpy(), ref[:8]))

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3.2))
budgets = [r[0] for r in rows]
ax1.plot(budgets, [r[1] for r in rows], "o-", label="projected peak")
ax1.plot(budgets, [r[2] for r in rows], "s-", label="measured RSS growth")
ax1.plot(budgets, budgets, "k:", label="max_memory")
ax1.axhline(np_growth, color="C3", ls="--", label="NumPy")
ax1.set_xscale("log", base=2)
ax1.set_xlabel("max_memory (MiB)")
ax1.set_ylabel("MiB")
ax1.legend(fontsize=7)
ax2.plot(budgets, [r[3] for r in rows], "o-", label="b2lazy")
ax2.axhline(np_seconds, color="C3", ls="--", label="NumPy")
ax2.set_xscale("log", base=2)
ax2.set_xlabel("max_memory (MiB)")
ax2.set_ylabel("seconds")
ax2.legend(fontsize=7)
fig.tight_layout()

shutil.rmtree(d)
