"""b2lazy.linalg (the Array API's linalg extension) against np.linalg: random batch shapes,
matrix shapes (0 included), dtypes (float32/64, complex64/128, int64 promoted to float64)
and chunkings of the stored operand; the factorisations checked by their defining
identities (Q R = A and Q^H Q = I, L L^H = A, U diag(S) Vh = A, A V = V diag(w),
A x = b) and their values against NumPy where they are unique.

Tolerances scale with the dtype's epsilon, the matrix size and the operands' magnitude:
    |got - want| <= C * eps * n * max|A|   (C = 200; eps of float32 or float64)
so that float32 and complex64 pass with LAPACK's backward errors, never by luck.
"""

from __future__ import annotations

import blosc2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import b2lazy
import b2lazy.linalg as la
from array_cases import examples

DTYPES = [np.dtype(t) for t in ("float32", "float64", "complex64", "complex128")]


def _eps(dt):
    dt = np.dtype(dt)
    return float(np.finfo(dt if dt.kind in "fc" else np.float64).eps)


def close(got, want, dt, n, scale=1.0, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    tol = 200 * _eps(dt) * max(1, n) * max(1.0, scale)
    if got.size:
        err = float(np.max(np.abs(got.astype(np.complex128) - want.astype(np.complex128))))
        assert err <= tol, f"{what}: max error {err:.3g} over {tol:.3g}"


@st.composite
def matrices(draw, square=False, min_n=0, max_n=9, dtypes=DTYPES, batch=True):
    """(NumPy matrix stack, b2lazy operand of random chunks, dtype)."""
    dt = draw(st.sampled_from(dtypes), label="dtype")
    nb = draw(st.integers(0, 2 if batch else 0), label="batch ndim")
    bshape = tuple(draw(st.integers(0 if i == 0 and draw(st.booleans()) and False else 1, 3)) for i in range(nb))
    m = draw(st.integers(min_n, max_n), label="m")
    n = m if square else draw(st.integers(min_n, max_n), label="n")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    shape = bshape + (m, n)
    if dt.kind == "c":
        a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    elif dt.kind == "i":
        a = rng.integers(-5, 6, shape)
    else:
        a = rng.standard_normal(shape)
    a = a.astype(dt)
    chunks = tuple(draw(st.integers(1, max(1, s)), label="chunks") for s in shape)
    return a, b2lazy.asarray(a, chunks=chunks), dt


def _mh(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _calc(dt):
    """The dtype NumPy's linalg computes in for `dt`."""
    return np.dtype(np.float64) if dt.kind in "iub" else dt


@examples(60)
@given(matrices(dtypes=DTYPES + [np.dtype("int64")]), st.sampled_from(["reduced", "complete"]))
def test_qr(case, mode):
    a, x, dt = case
    q, r = la.qr(x, mode=mode)
    qn, rn = q.to_numpy(), r.to_numpy()
    wq, wr = np.linalg.qr(a, mode=mode)
    assert qn.dtype == wq.dtype and rn.dtype == wr.dtype
    assert qn.shape == wq.shape and rn.shape == wr.shape
    m, n = a.shape[-2:]
    scale = float(np.max(np.abs(a))) if a.size else 1.0
    close(qn @ rn, a, _calc(dt), max(m, n), scale, "Q R = A")
    k = qn.shape[-1]
    close(_mh(qn) @ qn, np.broadcast_to(np.eye(k), qn.shape[:-2] + (k, k)), _calc(dt), m, 1.0, "Q^H Q = I")
    assert np.all(np.tril(rn, -1) == 0)
    close(
        np.abs(np.diagonal(rn, axis1=-2, axis2=-1)),
        np.abs(np.diagonal(wr, axis1=-2, axis2=-1)),
        _calc(dt),
        max(m, n),
        scale,
        "|diag R|",
    )


@examples(50)
@given(matrices(square=True), st.booleans())
def test_cholesky(case, upper):
    a, _, dt = case
    n = a.shape[-1]
    spd = (a @ _mh(a) + n * np.eye(n)).astype(dt)
    x = b2lazy.asarray(spd, chunks=tuple(max(1, s // 2) for s in spd.shape))
    got = la.cholesky(x, upper=upper).to_numpy()
    want = np.linalg.cholesky(spd, upper=upper)
    assert got.dtype == want.dtype
    scale = float(np.max(np.abs(spd))) if spd.size else 1.0
    close(got, want, dt, n, np.sqrt(scale), "cholesky")
    l = _mh(got) if upper else got
    close(l @ _mh(l), spd, dt, n, scale, "L L^H = A")


def test_cholesky_not_positive_definite():
    with pytest.raises(ValueError, match="cholesky: the matrix is not positive definite"):
        la.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])).to_numpy()


@examples(50)
@given(matrices(), st.booleans())
def test_svd(case, full):
    a, x, dt = case
    u, s, vh = la.svd(x, full_matrices=full)
    un, sn, vn = u.to_numpy(), s.to_numpy(), vh.to_numpy()
    wu, ws, wv = np.linalg.svd(a, full_matrices=full)
    assert (un.shape, sn.shape, vn.shape) == (wu.shape, ws.shape, wv.shape)
    assert un.dtype == wu.dtype and sn.dtype == ws.dtype
    m, n = a.shape[-2:]
    k = min(m, n)
    scale = float(np.max(np.abs(a))) if a.size else 1.0
    close(sn, ws, dt, max(m, n), scale, "S")
    close((un[..., :, :k] * sn[..., None, :]) @ vn[..., :k, :], a, dt, max(m, n), scale, "U S Vh = A")
    close(la.svdvals(x).to_numpy(), ws, dt, max(m, n), scale, "svdvals")


@examples(50)
@given(matrices(square=True, dtypes=DTYPES + [np.dtype("int64")]))
def test_eigh(case):
    a, _, dt = case
    h = a + _mh(a)
    x = b2lazy.asarray(h, chunks=tuple(max(1, s // 2) for s in h.shape))
    w, v = la.eigh(x)
    wn, vn = w.to_numpy(), v.to_numpy()
    ww = np.linalg.eigvalsh(h)
    assert wn.dtype == ww.dtype
    n = h.shape[-1]
    scale = float(np.max(np.abs(h))) if h.size else 1.0
    close(wn, ww, _calc(dt), n, scale, "eigenvalues")
    close(h.astype(vn.dtype) @ vn, vn * wn[..., None, :], _calc(dt), n, scale, "A V = V diag(w)")
    close(la.eigvalsh(x).to_numpy(), ww, _calc(dt), n, scale, "eigvalsh")


@examples(50)
@given(matrices(square=True, min_n=1, dtypes=DTYPES + [np.dtype("int64")]))
def test_det_slogdet_inv(case):
    a, x, dt = case
    n = a.shape[-1]
    a = a + (10 * n * np.eye(n)).astype(a.dtype)  # diagonally dominant: well conditioned
    x = b2lazy.asarray(a)
    s, l = la.slogdet(x)
    ws, wl = np.linalg.slogdet(a)
    assert s.to_numpy().dtype == ws.dtype and l.to_numpy().dtype == wl.dtype
    close(s.to_numpy(), ws, _calc(dt), n, 1.0, "sign")
    close(l.to_numpy(), wl, _calc(dt), n, 1.0, "logabsdet")
    d = la.det(x).to_numpy()
    wd = np.linalg.det(a)
    close(d / np.where(wd == 0, 1, np.abs(wd)), wd / np.where(wd == 0, 1, np.abs(wd)), _calc(dt), n, 1.0, "det")
    inv = la.inv(x).to_numpy()
    assert inv.dtype == np.linalg.inv(a).dtype
    close(a @ inv, np.broadcast_to(np.eye(n), a.shape), _calc(dt), n, 1.0, "A inv(A) = I")


def test_singular():
    z = np.zeros((2, 3, 3))
    z[1] = np.eye(3)
    s, l = la.slogdet(z)
    assert s.to_numpy().tolist() == [0.0, 1.0] and l.to_numpy().tolist() == [-np.inf, 0.0]
    assert la.det(z).to_numpy().tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="inv: the matrix is singular"):
        la.inv(z).to_numpy()
    with pytest.raises(ValueError, match="solve: the matrix is singular"):
        la.solve(z, np.ones((3, 1))).to_numpy()


@examples(50)
@given(matrices(square=True, min_n=1), st.integers(0, 4), st.booleans(), st.integers(0, 2))
def test_solve(case, k, vector, extra_batch):
    a, _, dt = case
    n = a.shape[-1]
    a = a + (3 * n * np.eye(n)).astype(dt)
    rng = np.random.default_rng(k)
    bshape = (n,) if vector else (2,) * extra_batch + a.shape[:-2] + (n, k)
    b = rng.standard_normal(bshape).astype(dt)
    got = la.solve(b2lazy.asarray(a), b2lazy.asarray(b, chunks=tuple(max(1, s // 2) for s in bshape))).to_numpy()
    want = np.linalg.solve(a, b) if not vector or a.ndim == 2 else np.linalg.solve(a, b[..., None])[..., 0]
    assert got.shape == want.shape and got.dtype == want.dtype
    close(got, want, dt, n, 1.0, "solve")


@examples(30)
@given(matrices(square=True))
def test_eig(case):
    a, x, dt = case
    w, v = la.eig(x)
    wn, vn = w.to_numpy(), v.to_numpy()
    n = a.shape[-1]
    scale = float(np.max(np.abs(a))) if a.size else 1.0
    close(a.astype(vn.dtype) @ vn, vn * wn[..., None, :], dt, n, scale * n, "A V = V diag(w)")
    ww = np.linalg.eigvals(a)
    key = lambda z: np.sort_complex(np.round(z, 3))  # noqa: E731
    close(key(la.eigvals(x).to_numpy()), key(ww), dt, n, scale * 1e3, "eigvals")


@examples(30)
@given(matrices(dtypes=[np.dtype("float32"), np.dtype("float64"), np.dtype("complex128")]))
def test_pinv_rank_norms(case):
    a, x, dt = case
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return
    scale = float(np.max(np.abs(a)))
    p = la.pinv(x).to_numpy()
    close(a @ p @ a, a, dt, max(m, n) ** 2, scale, "A pinv(A) A = A")
    assert np.array_equal(la.matrix_rank(x).to_numpy(), np.linalg.matrix_rank(a))
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        got = la.matrix_norm(x, ord=ord).to_numpy()
        want = np.linalg.matrix_norm(a, ord=ord)
        assert got.dtype == want.dtype, ord
        close(got, want, dt, max(m, n), scale * max(m, n), f"matrix_norm {ord}")
    close(
        la.matrix_norm(x, ord=2, keepdims=True).to_numpy(),
        np.linalg.matrix_norm(a, ord=2, keepdims=True),
        dt,
        max(m, n),
        scale,
        "keepdims",
    )
    for ord in (2, 1, np.inf, 0, 3):
        close(
            la.vector_norm(x, ord=ord, axis=-1).to_numpy(),
            np.linalg.vector_norm(a, ord=ord, axis=-1),
            dt,
            n,
            scale * n,
            f"vector_norm {ord}",
        )


def test_lstsq_cond_cross_power_multi_dot():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((9, 4))
    b = rng.standard_normal((9, 2))
    x, res, rank, s = la.lstsq(a, b)
    wx, wres, wrank, ws = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(x.to_numpy(), wx, atol=1e-12)
    np.testing.assert_allclose(res.to_numpy(), wres, atol=1e-12)
    assert int(rank.to_numpy()) == wrank
    np.testing.assert_allclose(s.to_numpy(), ws, atol=1e-12)
    x1, *_ = la.lstsq(a, b[:, 0])
    np.testing.assert_allclose(x1.to_numpy(), wx[:, 0], atol=1e-12)
    sq = rng.standard_normal((3, 4, 4))
    for p in (None, 2, -2, 1, np.inf, "fro"):
        np.testing.assert_allclose(la.cond(sq, p).to_numpy(), np.linalg.cond(sq, p), rtol=1e-10)
    u, v = rng.standard_normal((5, 3)), rng.standard_normal((3,))
    np.testing.assert_allclose(la.cross(u, v).to_numpy(), np.cross(u, v), atol=1e-14)
    np.testing.assert_allclose(la.cross(u.T, u.T, axis=0).to_numpy(), np.cross(u.T, u.T, axis=0), atol=1e-14)
    for k in (0, 1, 2, 5, -1, -3):
        np.testing.assert_allclose(
            la.matrix_power(sq, k).to_numpy(), np.linalg.matrix_power(sq, k), rtol=1e-9, atol=1e-9
        )
    c = rng.standard_normal((4, 6))
    np.testing.assert_allclose(
        la.multi_dot([rng.standard_normal(4) if False else sq[0], sq[1], c]).to_numpy(),
        np.linalg.multi_dot([sq[0], sq[1], c]),
        rtol=1e-12,
    )
    for ord, axis in ((None, None), (2, None), ("nuc", (0, 1)), (-2, (1, 0)), (1, 0), (None, 1)):
        np.testing.assert_allclose(la.norm(a, ord, axis).to_numpy(), np.linalg.norm(a, ord, axis), rtol=1e-12)
    np.testing.assert_allclose(
        la.norm(sq, 2, axis=(0, 2), keepdims=True).to_numpy(),
        np.linalg.norm(sq, 2, axis=(0, 2), keepdims=True),
        rtol=1e-12,
    )


def test_results_are_named_tuples_and_lazy():
    a = b2lazy.asarray(np.arange(12.0).reshape(4, 3) ** 1.5)
    r = la.qr(a)
    assert isinstance(r.Q, b2lazy.Array) and isinstance(r.R, b2lazy.Array)
    assert la.svd(a)._fields == ("U", "S", "Vh")
    assert la.eigh(a[:3])._fields == ("eigenvalues", "eigenvectors")
    assert la.slogdet(a[:3])._fields == ("sign", "logabsdet")
    assert la.qr(a, mode="r").shape == (3, 3)


def test_each_matrix_factored_once_for_all_outputs_and_chunks():
    """Q @ R over small output chunks reads Q's and R's chunks from one factorisation per
    batch element: the stored operand is decompressed once, not once per output chunk."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 64, 16))
    x = b2lazy.asarray(a, chunks=(1, 64, 16))
    q, r = la.qr(x)
    out = (q @ r + q[..., :16] * 0).compute(chunks=(1, 8, 4))
    np.testing.assert_allclose(out.to_numpy(), a, atol=1e-12)
    assert out.stats["output_chunks"] == 96
    assert out.stats["chunks_decompressed"]["total"] == 3  # each matrix read (and factored) once
    text = str((q @ r).plan(chunks=(1, 8, 4)))
    assert "factor qr of (3, 64, 16) float64 (qr): box (3, 1280)" in text


def test_over_max_memory_is_refused_naming_the_budget():
    x = b2lazy.zeros((2048, 2048), dtype="float64", chunks=(512, 512))
    with pytest.raises(ValueError, match=r"qr: the matrix \(2048, 2048\) float64 is 32 MiB .*over max_memory 8 MiB"):
        la.qr(x)[0].to_numpy(max_memory=8 << 20)
    with pytest.raises(ValueError, match=r"svd: the matrix"):
        la.svd(x)[1].to_numpy(max_memory=8 << 20)


def test_expression_strings():
    a = np.array([[4.0, 2.0], [2.0, 3.0]])
    ops = {"a": b2lazy.asarray(a)}
    np.testing.assert_allclose(b2lazy.evaluate("linalg_qr(a)[1]", ops).to_numpy(), np.linalg.qr(a)[1])
    np.testing.assert_allclose(
        b2lazy.evaluate("linalg_cholesky(a, upper=True)", ops).to_numpy(), np.linalg.cholesky(a, upper=True)
    )
    np.testing.assert_allclose(b2lazy.evaluate("linalg_solve(a, a[0])", ops).to_numpy(), np.linalg.solve(a, a[0]))
    np.testing.assert_allclose(
        b2lazy.evaluate("linalg_svd(a, full_matrices=False)[1] * 2", ops).to_numpy(), np.linalg.svd(a)[1] * 2
    )


def test_bad_input():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        la.qr(np.ones(3))
    with pytest.raises(ValueError, match="square"):
        la.inv(np.ones((2, 3)))
    with pytest.raises(ValueError, match="do not match"):
        la.solve(np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match="mode"):
        la.qr(np.eye(3), mode="full")
    with pytest.raises(ValueError, match="length 3"):
        la.cross(np.ones(2), np.ones(2))


# --- TSQR: tall-and-skinny matrices beyond one panel, within a small max_memory ---------------


@pytest.fixture
def small_panels():
    """Graphs built while it lives factor tall-and-skinny matrices over 64 KiB by TSQR."""
    old = b2lazy._core.linalg_panel_bytes()
    b2lazy._core.set_linalg_panel_bytes(64 << 10)
    yield
    b2lazy._core.set_linalg_panel_bytes(old)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("m,n", [(60000, 7), (32768, 16), (9001, 30)])
def test_tsqr_qr_svd_svdvals(small_panels, dt, m, n):
    rng = np.random.default_rng(m + n)
    a = rng.standard_normal((m, n))
    if dt == "complex128":
        a = a + 1j * rng.standard_normal((m, n))
    a = a.astype(dt)
    x = b2lazy.asarray(a, chunks=(777, n))
    budget = 32 << 20  # the matrix is 1.6-8 MiB; panels of 64 KiB
    q, r = la.qr(x)
    assert "TSQR" not in repr(q)  # (lazy: nothing computed yet)
    qn, rn = q.to_numpy(max_memory=budget), r.to_numpy(max_memory=budget)
    assert qn.shape == (m, n) and rn.shape == (n, n) and qn.dtype == np.dtype(dt)
    scale = float(np.max(np.abs(a)))
    close(qn @ rn, a, dt, m, scale, "Q R = A")
    close(_mh(qn) @ qn, np.eye(n), dt, m, 1.0, "Q^H Q = I")
    assert np.all(np.tril(rn, -1) == 0)
    close(np.abs(np.diagonal(rn)), np.abs(np.diagonal(np.linalg.qr(a)[1])), dt, m, scale, "|diag R|")
    close(la.qr(x, mode="r").to_numpy(max_memory=budget), rn, dt, m, scale, "mode r")
    ws = np.linalg.svd(a, compute_uv=False)
    close(la.svdvals(x).to_numpy(max_memory=budget), ws, dt, m, scale, "svdvals")
    close(la.svdvals(la.matrix_transpose(x)).to_numpy(max_memory=budget), ws, dt, m, scale, "svdvals of the wide")
    u, s, vh = la.svd(x, full_matrices=False)
    un, sn, vn = u.to_numpy(max_memory=budget), s.to_numpy(max_memory=budget), vh.to_numpy(max_memory=budget)
    close(sn, ws, dt, m, scale, "S")
    close((un * sn) @ vn, a, dt, m, scale, "U S Vh = A")
    close(_mh(un) @ un, np.eye(n), dt, m, 1.0, "U^H U = I")
    assert int(la.matrix_rank(x).to_numpy(max_memory=budget)) == n


@pytest.mark.parametrize("m,n,chunk", [(6000, 8, 1024), (131072, 16, 512)])
def test_tsqr_q_by_row_panels_reads_each_chunk_twice(small_panels, m, n, chunk):
    """Q of a TSQR is pulled by row panels: its evaluation reads the stored matrix once for
    the R tree and once more for the panels' Qs, not once per output chunk, nor once more per
    level of the tree (131072 x 16 in panels of 512 rows: 256 panels, their Rs stacked 4096
    rows high are factored by TSQR again, in 8 panels whose 128 stacked rows are the last)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, n))
    x = b2lazy.asarray(a, chunks=(chunk, n))
    q, r = la.qr(x)
    out = q.compute(max_memory=16 << 20)
    assert max(out.stats["max_decompressions_per_chunk"].values()) <= 2
    padded = -(-m // chunk) * chunk * n * a.itemsize  # (the last chunk decompresses whole)
    assert sum(out.stats["bytes_decompressed"].values()) <= 2 * padded
    close(out.to_numpy() @ r.to_numpy(), a, "float64", m, float(np.max(np.abs(a))), "Q R = A")


# --- Cholesky by spilled tiles: square SPD matrices over a small max_memory ---------------


def _spd(n, dt, seed):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    if np.dtype(dt).kind == "c":
        m = m + 1j * rng.standard_normal((n, n))
    return (m @ m.conj().T + n * np.eye(n)).astype(dt)


def _leftovers(path):
    return sorted(p.name for p in path.iterdir())


@pytest.fixture
def tmpdir_env(tmp_path, monkeypatch):
    """The system temp dir pointed at an empty folder: the spilled tiles go there."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return tmp_path


# 3 n^2 itemsize is over the budget: the tiled path; sizes not multiples of the tile.
TILED = [(450, 2 << 20), (601, 3 << 20)]


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("n,budget", TILED)
def test_cholesky_by_tiles_against_numpy(dt, n, budget, tmpdir_env):
    a = _spd(n, dt, n)
    x = b2lazy.asarray(a, chunks=(64, 64))
    runs = b2lazy._core.linalg_tiled_factorisations()
    out = la.cholesky(x).compute(max_memory=budget)
    assert b2lazy._core.linalg_tiled_factorisations() == runs + 1  # the tiled path ran, once
    assert 0 < out.stats["peak_scratch_bytes"] <= budget
    want = np.linalg.cholesky(a)
    scale = float(np.max(np.abs(want)))
    close(out.to_numpy(), want, dt, n, scale, "L")
    u = la.cholesky(x, upper=True)[5:400:3, ::2].to_numpy(max_memory=budget)  # strided regions of U = L^H
    close(u, want.conj().T[5:400:3, ::2], dt, n, scale, "U")
    assert _leftovers(tmpdir_env) == []


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_solve_and_inv_of_spd_by_tiles(dt, tmpdir_env):
    n, budget = 520, 2 << 20
    a = _spd(n, dt, 7)
    rng = np.random.default_rng(8)
    b = rng.standard_normal((n, 5)).astype(dt)
    x = b2lazy.asarray(a, chunks=(50, 50))
    runs = b2lazy._core.linalg_tiled_factorisations()
    scale = float(np.max(np.abs(np.linalg.solve(a.astype(np.complex128), b))))
    close(la.solve(x, b).to_numpy(max_memory=budget), np.linalg.solve(a, b), dt, n, scale, "solve")
    close(la.solve(x, b[:, 0]).to_numpy(max_memory=budget), np.linalg.solve(a, b[:, 0]), dt, n, scale, "solve vector")
    inv = la.inv(x).to_numpy(max_memory=budget)
    close(inv, np.linalg.inv(a), dt, n, float(np.max(np.abs(np.linalg.inv(a)))), "inv")
    assert b2lazy._core.linalg_tiled_factorisations() == runs + 3
    assert _leftovers(tmpdir_env) == []


def test_cholesky_of_a_non_spd_matrix_names_the_leading_minor(tmpdir_env):
    n = 450
    a = _spd(n, "float64", 3)
    a[300, 300] = -1e6  # the leading minors of order 1..300 are positive
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite: its leading minor of order 301 "):
        la.cholesky(a).to_numpy(max_memory=2 << 20)
    with pytest.raises(np.linalg.LinAlgError, match="cholesky: the matrix is not positive definite"):
        la.cholesky(a).to_numpy()  # in memory (LAPACK whole)
    assert _leftovers(tmpdir_env) == []


def test_solve_over_the_budget_refuses_a_general_matrix_naming_the_budget(tmpdir_env):
    n = 450
    rng = np.random.default_rng(5)
    a = rng.standard_normal((n, n)) + n * np.eye(n)  # not symmetric
    with pytest.raises(ValueError, match=r"solve: the matrix \(450, 450\) float64 .*not symmetric.*raise max_memory"):
        la.solve(a, np.ones(n)).to_numpy(max_memory=2 << 20)
    s = _spd(n, "float64", 5)
    s[0, 0] = -1.0  # symmetric, not positive definite
    with pytest.raises(ValueError, match=r"inv: .*not positive definite.*raise max_memory to \d+"):
        la.inv(s).to_numpy(max_memory=2 << 20)
    np.testing.assert_allclose(la.solve(a, np.ones(n)).to_numpy(), np.linalg.solve(a, np.ones(n)))  # LU within it
    assert _leftovers(tmpdir_env) == []


def test_tiles_forced_small_read_by_strided_regions():
    """set_linalg_tile_bytes factors any matrix larger than a tile by tiles (tests)."""
    n = 97
    a = _spd(n, "float64", 11)
    want = np.linalg.cholesky(a)
    b2lazy._core.set_linalg_tile_bytes(16 * 16 * 8)
    try:
        got = la.cholesky(b2lazy.asarray(a, chunks=(10, 30)))
        for idx in [np.s_[:, :], np.s_[3:90:7, 1::5], np.s_[96, :], np.s_[::-3, 40:17:-2]]:
            close(got[idx].to_numpy(), want[idx], "float64", n, float(np.max(want)), str(idx))
        close(la.solve(a, a[:, :3]).to_numpy(), np.eye(n)[:, :3], "float64", n, 1.0, "solve")
    finally:
        b2lazy._core.set_linalg_tile_bytes(0)


# --- svd_compressed: a rank-k SVD by randomized range finding -------------------------------


@st.composite
def low_rank(draw, dtypes=(np.dtype("float32"), np.dtype("float64"), np.dtype("complex128"))):
    """(NumPy matrix of rank r, b2lazy operand of random chunks, dtype, r)."""
    dt = draw(st.sampled_from(dtypes), label="dtype")
    m, n = draw(st.integers(1, 40), label="m"), draw(st.integers(1, 40), label="n")
    r = draw(st.integers(1, min(m, n)), label="rank")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))

    def normal(shape):
        z = rng.standard_normal(shape)
        return z + 1j * rng.standard_normal(shape) if dt.kind == "c" else z

    # well separated singular values (a rank-k truncation is then unique)
    left, _ = np.linalg.qr(normal((m, r)))
    right, _ = np.linalg.qr(normal((n, r)))
    a = ((left * np.geomspace(10.0, 1.0, r)) @ _mh(right)).astype(dt)
    chunks = (draw(st.integers(1, m), label="row chunks"), draw(st.integers(1, n), label="column chunks"))
    return a, b2lazy.asarray(a, chunks=chunks), dt, r


@examples(40)
@given(low_rank(), st.data())
def test_svd_compressed_recovers_a_low_rank_matrix(case, data):
    # k + n_oversamples >= rank: Q spans A's range, so the result is A's leading k triplets
    a, x, dt, r = case
    k = data.draw(st.integers(1, r), label="k")
    q = data.draw(st.integers(0, 2), label="n_power_iter")
    u, s, vh = la.svd_compressed(x, k, n_power_iter=q, n_oversamples=r, seed=data.draw(st.integers(0, 99)))
    un, sn, vn = u.to_numpy(), s.to_numpy(), vh.to_numpy()
    m, n = a.shape
    real = np.float32 if dt in (np.float32, np.complex64) else np.float64
    assert un.shape == (m, k) and sn.shape == (k,) and vn.shape == (k, n)
    assert un.dtype == dt and vn.dtype == dt and sn.dtype == real
    wu, ws, wv = np.linalg.svd(a.astype(np.complex128 if dt.kind == "c" else np.float64), full_matrices=False)
    tol = 4 * max(m, n)
    close(sn, ws[:k], dt, tol, 10.0, "S")
    close(_mh(un) @ un, np.eye(k), dt, tol, 1.0, "U^H U = I")
    close(vn @ _mh(vn), np.eye(k), dt, tol, 1.0, "Vh Vh^H = I")
    close((un * sn) @ vn, (wu[:, :k] * ws[:k]) @ wv[:k], dt, tol, 10.0, "the rank-k truncation")


@pytest.mark.parametrize("dt", ["float64", "complex128"])
@pytest.mark.parametrize("shape", [(100000, 24), (24, 100000), (1500, 1500)])
def test_svd_compressed_out_of_core(small_panels, dt, shape):
    """Matrices of 18-36 MiB (x2 for complex), hundreds of panels of 64 KiB: the products
    pull them by regions and each tall QR (Y, and A^H Q of the square one) is TSQR."""
    m, n = shape
    rng = np.random.default_rng(m)
    k, r = 5, 8
    decay = np.geomspace(100.0, 1.0, r)
    left = rng.standard_normal((m, r)) + (1j * rng.standard_normal((m, r)) if dt == "complex128" else 0)
    a = ((left * decay) @ rng.standard_normal((r, n)) + 1e-6 * rng.standard_normal((m, n))).astype(dt)
    x = b2lazy.asarray(a, chunks=(min(m, 1500), min(n, 1500)))
    u, s, vh = la.svd_compressed(x, k, n_power_iter=1, seed=7)
    budget = 128 << 20
    sn = s.to_numpy(max_memory=budget)
    un, vn = u.to_numpy(max_memory=budget), vh.to_numpy(max_memory=budget)
    ws = np.linalg.svd(a, compute_uv=False)[:k]
    np.testing.assert_allclose(sn, ws, rtol=1e-7)
    np.testing.assert_allclose(_mh(un) @ un, np.eye(k), atol=1e-10)
    np.testing.assert_allclose(vn @ _mh(vn), np.eye(k), atol=1e-10)
    # A minus its rank-k approximation: the singular values below the k-th
    resid = np.linalg.svd(a - (un * sn) @ vn, compute_uv=False)[0]
    assert resid <= 1.01 * np.linalg.svd(a, compute_uv=False)[k], resid


def _svd_compressed_reference(a, k, seed):
    """Halko-Martinsson-Tropp with one power iteration in NumPy, on b2lazy's own Omega."""
    omega = b2lazy.random_normal(
        (a.shape[1], k + 10), 0.0, 1.0, seed=seed, stream=0, dtype="float64", chunks=None
    ).to_numpy()
    q = np.linalg.qr(a @ omega)[0]
    q = np.linalg.qr(a @ np.linalg.qr(a.T @ q)[0])[0]
    ub, s, vh = np.linalg.svd(q.T @ a, full_matrices=False)
    return (q @ ub)[:, :k], s[:k], vh[:k]


def test_svd_compressed_of_a_stored_matrix_and_compute_together(tmp_path):
    """U, S and Vh of a stored tall matrix (TSQR panels of 4 MiB, the default) against the same
    algorithm in NumPy, on output chunks that cut the panels; then the three computed
    together (b2lazy.compute): the later ones read the stages the first computed."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((200000, 32))
    path = str(tmp_path / "tall.b2nd")
    blosc2.asarray(a, urlpath=path, chunks=(65536, 32), blocks=(256, 32), mode="w")
    x = b2lazy.open(path)
    u, s, vh = la.svd_compressed(x, 4, n_power_iter=1, seed=3)
    ur, sr, vr = _svd_compressed_reference(a, 4, 3)
    budget = 256 << 20
    for chunks in [(512, 4), (32768, 4), None]:
        un = u.compute(max_memory=budget, chunks=chunks).to_numpy()
        np.testing.assert_allclose(np.abs(un), np.abs(ur), atol=1e-10, err_msg=str(chunks))
    np.testing.assert_allclose(s.compute(max_memory=budget).to_numpy(), sr, rtol=1e-10)
    U, S, V = b2lazy.compute(u, s, vh, max_memory=budget)
    np.testing.assert_allclose(np.abs(U.to_numpy()), np.abs(ur), atol=1e-10)
    np.testing.assert_allclose(S.to_numpy(), sr, rtol=1e-10)
    np.testing.assert_allclose(np.abs(V.to_numpy()), np.abs(vr), atol=1e-10)
    # S and Vh read at most one pass more (B = Q^H A when U's plan computed it in place)
    # where alone each makes every pass again (the TSQRs of Y and of A Qz, A^H Q, ...)
    alone = s.compute(max_memory=budget).stats["bytes_decompressed"][path]
    for r in (S, V):
        assert r.stats["bytes_decompressed"].get(path, 0) <= a.nbytes * 1.05 < alone / 2, (r.stats, alone)


def test_svd_compressed_reads_the_matrix_by_panels_not_repacked(tmp_path):
    """The planner counts a batch of TSQR panels (4 MiB each, the default) as the
    factorisation pulls it, one panel at a time: the stored matrix is read by whole rows a few
    times (Y, its Q, A^H Q, ...). Counted as one pull of the whole batch, it was estimated
    read once per column and re-packed into a temporary copy read 7 times over (and, with 64
    columns, in tiles of the short last panel's 16 rows: S of 512 MiB took minutes)."""
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((200000, 6)) * np.geomspace(10.0, 1.0, 6)) @ rng.standard_normal((6, 32))
    path = str(tmp_path / "tall.b2nd")
    blosc2.asarray(a, urlpath=path, chunks=(65536, 32), blocks=(256, 32), mode="w")
    x = b2lazy.open(path)
    s = la.svd_compressed(x, 4, n_power_iter=1, seed=3)[1]  # rank 6 < k + p: exact
    out = s.compute(max_memory=256 << 20)
    read = out.stats["bytes_decompressed"]
    assert read[path] <= 8 * a.nbytes, read
    assert max(v for name, v in read.items() if name not in (path, "total")) <= a.nbytes, read  # Y's stages
    np.testing.assert_allclose(out.to_numpy(), np.linalg.svd(a, compute_uv=False)[:4], rtol=1e-6)


def test_compute_together_factors_qr_once(small_panels, tmp_path):
    """q and r of a TSQR computed together: r's evaluation reads the R tree q's computed and
    decompresses nothing of the matrix (alone, it reads it once)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6000, 8))
    path = str(tmp_path / "a.b2nd")
    blosc2.asarray(a, urlpath=path, chunks=(1024, 8), mode="w")
    q, r = la.qr(b2lazy.open(path))
    Q, R = b2lazy.compute(q, r)
    assert path not in R.stats["bytes_decompressed"] and R.stats["cache_hits"] >= 1
    assert path in r.compute().stats["bytes_decompressed"]
    np.testing.assert_allclose(Q.to_numpy() @ R.to_numpy(), a, atol=1e-10)
    one = b2lazy.compute(q)
    assert isinstance(one, tuple) and len(one) == 1


@pytest.mark.parametrize(
    "fn, shape",
    [
        (lambda x: la.qr(x), (300, 200)),
        (lambda x: la.qr(x), (6, 90, 40)),
        (lambda x: la.svd(x, full_matrices=False), (250, 120)),
        (lambda x: la.eigh(x @ la.matrix_transpose(x)), (150, 150)),
    ],
    ids=["qr", "qr-batch", "svd", "eigh"],
)
def test_compute_together_factors_a_matrix_once(tmp_path, fn, shape):
    """The outputs of one LAPACK factorisation computed together: the first evaluation keeps
    the factorisation for the others, which decompress nothing of the matrix (each alone
    reads it again); the results are the ones computed apart."""
    a = np.random.default_rng(9).standard_normal(shape)
    path = str(tmp_path / "m.b2nd")
    blosc2.asarray(a, urlpath=path, chunks=tuple(max(1, d // 3) for d in shape), mode="w")
    outs = fn(b2lazy.open(path))
    together = b2lazy.compute(*outs)
    for i, (r, o) in enumerate(zip(together, outs)):
        np.testing.assert_allclose(r.to_numpy(), o.to_numpy(), rtol=1e-9, atol=1e-10)
        if i:
            assert path not in r.stats["bytes_decompressed"], r.stats
            assert path in o.compute().stats["bytes_decompressed"]


def test_compute_together_options_and_errors(tmp_path):
    x = b2lazy.asarray(np.arange(12.0).reshape(4, 3))
    m = b2lazy.mean(x, axis=0)
    p1, p2 = str(tmp_path / "a.b2nd"), str(tmp_path / "b.b2nd")
    a, b = b2lazy.compute(x - m, x + m, urlpath=[p1, p2])
    np.testing.assert_allclose(b2lazy.open(p1).to_numpy(), x.to_numpy() - m.to_numpy())
    np.testing.assert_allclose(b.to_numpy(), x.to_numpy() + m.to_numpy())
    with pytest.raises(ValueError, match="one urlpath per array"):
        b2lazy.compute(x, x, urlpath=p1)
    with pytest.raises(ValueError, match="1 urlpaths for 2 arrays"):
        b2lazy.compute(x, x, urlpath=[p1])
    with pytest.raises(TypeError, match="at least one"):
        b2lazy.compute()
    with pytest.raises(ValueError, match="max_memory"):  # every plan checked before any runs
        b2lazy.compute(x + 1, la.qr(b2lazy.ones((2000, 2000)))[0], urlpath=[p1, None], max_memory=1 << 20)


def test_svd_compressed_seed_and_bad_input():
    a = np.random.default_rng(1).standard_normal((30, 12))
    s1 = la.svd_compressed(a, 3, n_oversamples=0, seed=5).S.to_numpy()
    assert np.array_equal(s1, la.svd_compressed(a, 3, n_oversamples=0, seed=5).S.to_numpy())
    assert not np.array_equal(s1, la.svd_compressed(a, 3, n_oversamples=0, seed=6).S.to_numpy())
    with pytest.raises(ValueError, match=r"svd_compressed: k must be in \[1, min\(m, n\)\] = \[1, 12\]"):
        la.svd_compressed(a, 13)
    with pytest.raises(ValueError, match="k must be"):
        la.svd_compressed(a, 0)
    with pytest.raises(ValueError, match="2-d matrix, got shape"):
        la.svd_compressed(np.ones((2, 3, 4)), 1)
    with pytest.raises(ValueError, match="n_power_iter must be 0 or more"):
        la.svd_compressed(a, 2, n_power_iter=-1)
    got = b2lazy.evaluate("linalg_svd_compressed(a, 2, seed=3)[1]", {"a": a}).to_numpy()
    np.testing.assert_allclose(got, np.linalg.svd(a, compute_uv=False)[:2], rtol=0.5)
