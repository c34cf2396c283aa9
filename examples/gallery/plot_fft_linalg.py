"""
FFTs and linear algebra
=======================

``b2lazy.fft`` (the Array API's fft extension, over FFTW) and ``b2lazy.linalg`` (its linalg
extension, with NumPy's additions) are lazy like the rest: a transform's output region
pulls whole lanes along its axis; factorisations are LAPACK's, one per matrix; a tall and
skinny QR or SVD goes by TSQR over row panels. Small sizes, checked against NumPy.
"""

import os
import shutil
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np

import b2lazy as bl

d = tempfile.mkdtemp()
t = bl.linspace(0, 1, 8192, shape=(8192,))
sig = bl.sin(2 * np.pi * 50 * t) + 0.5 * bl.sin(2 * np.pi * 120 * t)
noise = bl.random.default_rng(0).normal(0, 0.2, (64, 8192))
signals = (sig + noise).compute(urlpath=os.path.join(d, "signals.b2nd"), chunks=(8, 8192))

spectrum = bl.abs(bl.fft.rfft(signals, axis=1)).mean(axis=0)  # lazy
freqs = bl.fft.rfftfreq(8192, d=1 / 8192)
p = spectrum.to_numpy()
ref = np.abs(np.fft.rfft(signals.to_numpy(), axis=1)).mean(axis=0)
print("same as NumPy:", np.allclose(p, ref), "; peaks at", sorted(freqs.to_numpy()[np.argsort(p)[-2:]].tolist()), "Hz")

# %%
# A least-squares fit of a tall system by QR, and singular values by TSQR:
rng = bl.random.default_rng(1)
A = rng.standard_normal((200_000, 8)).compute(urlpath=os.path.join(d, "A.b2nd"), chunks=(25_000, 8))
coef = bl.asarray(np.arange(1.0, 9.0))
y = A @ coef + 0.01 * rng.standard_normal((200_000,))
t0 = time.perf_counter()
q, r = bl.linalg.qr(A)
fit = bl.linalg.solve(r, (q.mT @ y)[:, None])[:, 0].to_numpy()
print(f"fit in {time.perf_counter() - t0:.2f} s:", fit.round(3))
s = bl.linalg.svdvals(A).to_numpy()
print("singular values match NumPy:", np.allclose(s, np.linalg.svd(A.to_numpy(), compute_uv=False)))

fig, ax = plt.subplots(figsize=(7, 2.8))
ax.plot(freqs.to_numpy(), p, lw=0.8)
ax.set_xlim(0, 200)
ax.set_xlabel("Hz")
ax.set_ylabel("mean |rfft|")
fig.tight_layout()
shutil.rmtree(d)
