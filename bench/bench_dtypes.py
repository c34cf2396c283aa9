"""complex128 and float16 side by side (issue #15 item 2): fused elementwise expressions, a
reduction and a product, b2lazy (compressed in-memory operands, python-blosc2's default
chunks) against NumPy and numexpr in memory, python-blosc2's lazy expressions and Dask. One
process, methods interleaved per repeat; best wall time of the repeats; the results agree
(checked: complex to 1e-9, float16 to a float16 rounding).

    python bench/bench_dtypes.py [million elements (default 16)] [repeats (default 3)]
"""

import sys
import time

import blosc2
import dask.array as da
import numexpr as ne
import numpy as np

import b2lazy

N = int(float(sys.argv[1]) * 1e6) if len(sys.argv) > 1 else 16_000_000
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 3

rng = np.random.default_rng(0)
z = (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(np.complex128)
w = (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(np.complex128)
bz, bw = blosc2.asarray(z), blosc2.asarray(w)  # python-blosc2's default chunks and blocks
lz, lw = b2lazy.asarray(bz), b2lazy.asarray(bw)
dz, dw = da.from_array(z, chunks=bz.chunks), da.from_array(w, chunks=bw.chunks)

CASES = {
    "abs(z*w + 1j)**2": {
        "numpy": lambda: np.abs(z * w + 1j) ** 2,
        "numexpr": lambda: ne.evaluate("abs(z*w + 1j)**2"),
        "python-blosc2": lambda: (abs(bz * bw + 1j) ** 2).compute()[:],
        "dask": lambda: (abs(dz * dw + 1j) ** 2).compute(),
        "b2lazy": lambda: (b2lazy.abs(lz * lw + 1j) ** 2).to_numpy(),
    },
    "exp(z) * conj(w)": {
        "numpy": lambda: np.exp(z) * np.conj(w),
        "numexpr": lambda: ne.evaluate("exp(z) * conj(w)"),
        "python-blosc2": lambda: (blosc2.exp(bz) * blosc2.conj(bw)).compute()[:],
        "dask": lambda: (da.exp(dz) * da.conj(dw)).compute(),
        "b2lazy": lambda: (b2lazy.exp(lz) * b2lazy.conj(lw)).to_numpy(),
    },
    "sum(conj(z) * w)": {
        "numpy": lambda: np.vdot(z, w),
        "python-blosc2": lambda: blosc2.sum(blosc2.conj(bz) * bw),
        "dask": lambda: da.sum(da.conj(dz) * dw).compute(),
        "b2lazy": lambda: b2lazy.vecdot(lz, lw).to_numpy(),
    },
}
h = (rng.standard_normal(N) * 4).astype(np.float16)
g = (rng.standard_normal(N) * 4).astype(np.float16)
bh, bg = blosc2.asarray(h), blosc2.asarray(g)
lh, lg = b2lazy.asarray(bh), b2lazy.asarray(bg)
dh, dg = da.from_array(h, chunks=bh.chunks), da.from_array(g, chunks=bg.chunks)
CASES["float16: sin(h)*g + h**2"] = {
    "numpy": lambda: np.sin(h) * g + h**2,
    "python-blosc2": lambda: (blosc2.sin(bh) * bg + bh**2).compute()[:],
    "dask": lambda: (da.sin(dh) * dg + dh**2).compute(),
    "b2lazy": lambda: (b2lazy.sin(lh) * lg + lh**2).to_numpy(),
}
CASES["float16: sum(h)"] = {
    "numpy": lambda: np.sum(h),
    "python-blosc2": lambda: blosc2.sum(bh),
    "dask": lambda: da.sum(dh).compute(),
    "b2lazy": lambda: b2lazy.sum(lh).to_numpy(),
}

M = 2048
a = rng.standard_normal((M, M)) + 1j * rng.standard_normal((M, M))
b = rng.standard_normal((M, M)) + 1j * rng.standard_normal((M, M))
ba, bb = blosc2.asarray(a), blosc2.asarray(b)
CASES[f"matmul {M}x{M}"] = {
    "numpy": lambda: a @ b,
    "dask": lambda: (da.from_array(a, chunks=ba.chunks) @ da.from_array(b, chunks=bb.chunks)).compute(),
    "b2lazy": lambda: b2lazy.matmul(b2lazy.asarray(ba), b2lazy.asarray(bb)).to_numpy(),
}


def main():
    print(
        f"complex128 / float16, {N / 1e6:g} M elements "
        f"({z.nbytes / 2**20:.0f} / {h.nbytes / 2**20:.0f} MiB per operand); "
        f"blosc2 chunks {bz.chunks}; best of {REPEATS}"
    )
    for name, methods in CASES.items():
        best = {m: float("inf") for m in methods}
        ref = None
        for _ in range(REPEATS):
            for m, f in methods.items():
                t = time.perf_counter()
                try:
                    r = f()
                except Exception as e:  # noqa: BLE001 - a peer without this function
                    best[m] = None
                    print(f"  {m}: {type(e).__name__}: {str(e)[:80]}")
                    continue
                dt = time.perf_counter() - t
                if best[m] is not None:
                    best[m] = min(best[m], dt)
                r = np.asarray(r)
                if ref is None:
                    ref = r
                elif "float16" in name:  # each peer's own float16 rounding
                    np.testing.assert_allclose(r.astype(float), ref.astype(float), rtol=4e-3, atol=0.1)
                else:
                    np.testing.assert_allclose(r, ref, rtol=1e-9 if "matmul" not in name else 1e-8)
        base = best["b2lazy"]
        cells = ", ".join(
            f"{m} {t:.3f} s ({t / base:.2f}x b2lazy's)" for m, t in best.items() if t is not None and m != "b2lazy"
        )
        print(f"{name}: b2lazy {base:.3f} s; {cells}")


if __name__ == "__main__":
    main()
