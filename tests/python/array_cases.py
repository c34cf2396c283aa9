"""Strategies and checks shared by test_reductions.py and test_scans.py: random shapes,
chunkings and source kinds, the ways of evaluating a lazy array, and NaN/inf-aware
comparisons."""

from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import b2lazy

SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)


def examples(n):
    """n examples, scaled by the environment variable B2LAZY_EXAMPLES_SCALE (default 1)."""
    scale = float(os.environ.get("B2LAZY_EXAMPLES_SCALE", "1"))
    return settings(max_examples=max(1, int(n * scale)), **SETTINGS)


DTYPES = [
    np.dtype(t)
    for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")
]
INT_DTYPES = [d for d in DTYPES if d.kind in "iu"]
FLOAT_DTYPES = [d for d in DTYPES if d.kind == "f"]
SOURCE_KINDS = ["numpy", "numpy_view", "mem", "disk"]


@st.composite
def shapes(draw, min_nd=1, max_nd=4, allow_empty=True, max_size=4000):
    nd = draw(st.integers(min_nd, max_nd))
    cap = {0: 1, 1: 300, 2: 40, 3: 14, 4: 8}[nd]
    shape = []
    for _ in range(nd):
        r = draw(st.integers(0, 19))
        if r == 0 and allow_empty:
            shape.append(0)
        elif r <= 3:
            shape.append(1)
        else:
            shape.append(draw(st.integers(1, cap)))
    while math.prod(shape) > max_size:
        i = int(np.argmax(shape))
        shape[i] = max(1, shape[i] // 2)
    return tuple(shape)


@st.composite
def chunking(draw, shape):
    chunks = tuple(draw(st.integers(1, max(1, n))) for n in shape)
    blocks = tuple(draw(st.integers(1, c)) for c in chunks)
    return chunks, blocks


def make_source(draw, x, tmp_path_factory, kinds=SOURCE_KINDS, label="source"):
    """A b2lazy source with the values of the NumPy array x, of a random kind."""
    kind = draw(st.sampled_from(kinds), label=f"{label} kind")
    if kind == "numpy":
        return b2lazy.asarray(x)
    if kind == "numpy_view" and x.ndim == 0:
        return b2lazy.asarray(x.copy())
    if kind == "numpy_view":  # non-contiguous zero-copy view with the same values
        big = np.empty(tuple(2 * n for n in x.shape), dtype=x.dtype)
        view = big[tuple(slice(None, None, 2) for _ in x.shape)]
        view[...] = x
        return b2lazy.asarray(view)
    chunks, blocks = draw(chunking(x.shape), label=f"{label} chunks/blocks")
    if kind == "mem":
        return b2lazy.asarray(x, chunks=chunks, blocks=blocks)
    path = tmp_path_factory.mktemp("src") / "src.b2nd"
    b2lazy.asarray(x).compute(urlpath=str(path), chunks=chunks, blocks=blocks)
    return b2lazy.open(path)


def evaluate(draw, lazy):
    """Values of `lazy`, through to_numpy(), compute() or compute() with random chunks."""
    how = draw(st.sampled_from(["to_numpy", "compute", "compute_chunks"]), label="evaluate")
    if how == "to_numpy":
        return lazy.to_numpy()
    if how == "compute" or lazy.ndim == 0:
        return lazy.compute().to_numpy()
    chunks, blocks = draw(chunking(lazy.shape), label="output chunks/blocks")
    return lazy.compute(chunks=chunks, blocks=blocks).to_numpy()


@st.composite
def basic_index(draw, shape, newaxis=False):
    """A random basic index for `shape`: integers, slices with any step, maybe a None."""
    items = []
    for n in shape:
        if n > 0 and draw(st.integers(0, 3)) == 0:
            items.append(draw(st.integers(-n, n - 1)))
        else:
            b = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            items.append(slice(draw(b), draw(b), draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))))
    items = items[: draw(st.integers(0, len(items)))]
    if newaxis and items and draw(st.integers(0, 4)) == 0:
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)


def assert_close(got, ref, rtol, atol, what=""):
    """|got - ref| <= atol + rtol*|ref| elementwise; NaN where ref is NaN, equal infinities."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    atol = np.broadcast_to(np.asarray(atol, dtype=np.float64), ref.shape)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan), f"{what}: NaN mismatch\ngot={got}\nref={ref}"
    inf = np.isinf(ref)
    assert np.array_equal(got[inf], ref[inf]), f"{what}: inf mismatch\ngot={got}\nref={ref}"
    fin = ~(nan | inf)
    err = np.abs(got[fin] - ref[fin])
    tol = atol[fin] + rtol * np.abs(ref[fin])
    bad = ~(err <= tol)
    assert not bad.any(), (
        f"{what}: max excess {np.max(err[bad] - tol[bad])}\n"
        f"got={got[fin][bad][:8]}\nref={ref[fin][bad][:8]}\ntol={tol[bad][:8]}"
    )


def assert_exact(got, ref, what=""):
    got = np.asarray(got)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    if ref.dtype.kind == "f":
        np.testing.assert_array_equal(got, ref, err_msg=what)  # NaN == NaN here
    else:
        assert np.array_equal(got, ref), f"{what}\ngot={got}\nref={ref}"
