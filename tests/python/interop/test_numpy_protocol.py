"""NumPy's protocols on b2lazy arrays (__array_function__, __array_ufunc__), NumPy as the oracle.

The list of functions is generated from NumPy's namespace: every public function that
dispatches through __array_function__ and every ufunc must be classified here — lazy (a
case run on b2lazy operands gives a b2lazy Array with NumPy's values and dtype) or an
explicit eager fallback (the case warns EagerEvaluationWarning and gives NumPy's values).
A function a new NumPy adds fails test_every_numpy_function_is_classified until it is.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import b2lazy as bl
from b2lazy import _numpy_protocol as proto
from b2lazy._numpy_functions import FUNCTIONS
from b2lazy._numpy_linalg import LINALG
from b2lazy._numpy_ufuncs import ufunc_function

RNG = np.random.default_rng(37)
A = RNG.random((4, 6))  # 2-d float64
B = RNG.random((6, 3))  # for products with A
V = RNG.random(6)  # 1-d float64
I = np.array([3, 0, 5, 1, 1])  # int64 indices / counts
Q = np.array([[1.0, np.nan, 3.0], [np.inf, -2.0, 0.5]])  # nan and inf
C = A[:, :4] + 1j * A[:, 2:]  # complex

# --- cases: a function of the operands, called once with NumPy and once with b2lazy arrays
# (the same call: NumPy dispatches to b2lazy when a b2lazy operand is present).
LAZY = {
    "sum": lambda a: np.sum(a, axis=0),
    "prod": lambda a: np.prod(a, axis=1, keepdims=True),
    "mean": lambda a: np.mean(a, axis=0),
    "std": lambda a: np.std(a, axis=1, ddof=1),
    "var": lambda a: np.var(a, dtype=np.float32),
    "max": lambda a: np.max(a, axis=1),
    "min": lambda a: np.min(a, initial=-1.0),
    "amax": lambda a: np.amax(a),
    "amin": lambda a: np.amin(a, 0),
    "all": lambda a: np.all(a > 0.1, axis=0),
    "any": lambda a: np.any(a > 0.9),
    "argmax": lambda a: np.argmax(a, axis=1),
    "argmin": lambda a: np.argmin(a),
    "nansum": lambda q: np.nansum(q, axis=0),
    "nanprod": lambda q: np.nanprod(q),
    "nanmean": lambda q: np.nanmean(q, axis=1),
    "nanstd": lambda q: np.nanstd(q[:, 1:]),
    "nanvar": lambda q: np.nanvar(q, axis=0, ddof=0),
    "nanmax": lambda q: np.nanmax(q, axis=1),
    "nanmin": lambda q: np.nanmin(q),
    "nanargmax": lambda q: np.nanargmax(q, axis=1),
    "nanargmin": lambda q: np.nanargmin(q, axis=1),
    "ptp": lambda a: np.ptp(a, axis=0),
    "average": lambda a: np.average(a, axis=1, weights=a),
    "count_nonzero": lambda a: np.count_nonzero(a > 0.5, axis=0),
    "median": lambda a: np.median(a, axis=0),
    "quantile": lambda a: np.quantile(a, 0.3, axis=1),
    "percentile": lambda a: np.percentile(a, [10, 90]),
    "nanmedian": lambda q: np.nanmedian(q, axis=1),
    "nanquantile": lambda q: np.nanquantile(q, 0.25, axis=1),
    "nanpercentile": lambda q: np.nanpercentile(q, 40, axis=1),
    "cumsum": lambda a: np.cumsum(a, axis=1),
    "cumprod": lambda a: np.cumprod(a),
    "nancumsum": lambda q: np.nancumsum(q, axis=1),
    "nancumprod": lambda q: np.nancumprod(q),
    "cumulative_sum": lambda a: np.cumulative_sum(a, axis=0, include_initial=True),
    "cumulative_prod": lambda a: np.cumulative_prod(a, axis=1),
    "dot": lambda a, b: np.dot(a, b),
    "inner": lambda a: np.inner(a, a),
    "vdot": lambda a: np.vdot(a, a),
    "tensordot": lambda a, b: np.tensordot(a, b, axes=1),
    "outer": lambda v: np.outer(v, v[:3]),
    "einsum": lambda a, b: np.einsum("ij,jk->ik", a, b),
    "concatenate": lambda a: np.concatenate([a, a[:2]], axis=0),
    "concat": lambda a: np.concat([a, a], axis=1),
    "stack": lambda a: np.stack([a, a], axis=1),
    "vstack": lambda a, v: np.vstack([a, v]),
    "hstack": lambda v: np.hstack([v, v]),
    "dstack": lambda a: np.dstack([a, a]),
    "column_stack": lambda a, v: np.column_stack([v[:4], a]),
    "atleast_1d": lambda a: np.atleast_1d(a[0, 0]),
    "atleast_2d": lambda v: np.atleast_2d(v),
    "atleast_3d": lambda a: np.atleast_3d(a),
    "transpose": lambda a: np.transpose(a),
    "permute_dims": lambda a: np.permute_dims(a, (1, 0)),
    "matrix_transpose": lambda a: np.matrix_transpose(a),
    "swapaxes": lambda a: np.swapaxes(a, 0, 1),
    "rollaxis": lambda a: np.rollaxis(np.reshape(a, (2, 2, 6)), 2),
    "reshape": lambda a: np.reshape(a, (3, 8)),
    "ravel": lambda a: np.ravel(a),
    "squeeze": lambda a: np.squeeze(a[:1]),
    "expand_dims": lambda a: np.expand_dims(a, (0, 3)),
    "moveaxis": lambda a: np.moveaxis(a, 0, -1),
    "flip": lambda a: np.flip(a, 1),
    "fliplr": lambda a: np.fliplr(a),
    "flipud": lambda a: np.flipud(a),
    "rot90": lambda a: np.rot90(a, 3),
    "roll": lambda a: np.roll(a, 2, axis=1),
    "broadcast_to": lambda v: np.broadcast_to(v, (3, 6)),
    "broadcast_arrays": lambda a, v: np.broadcast_arrays(a, v),
    "tile": lambda v: np.tile(v, 2),
    "repeat": lambda a: np.repeat(a, 2, axis=0),
    "take": lambda a: np.take(a, [0, 3, 1], axis=1),
    "take_along_axis": lambda a: np.take_along_axis(a, np.argsort(np.asarray(a), axis=1), axis=1),
    "diagonal": lambda a: np.diagonal(a, 1),
    "trace": lambda a: np.trace(a),
    "diag": lambda a: np.diag(a, -1),
    "tril": lambda a: np.tril(a),
    "triu": lambda a: np.triu(a, 1),
    "diff": lambda a: np.diff(a, axis=0),
    "ediff1d": lambda a: np.ediff1d(a),
    "split": lambda a: np.split(a, 2),
    "array_split": lambda a: np.array_split(a, 4, axis=1),
    "hsplit": lambda a: np.hsplit(a, [1, 4]),
    "vsplit": lambda a: np.vsplit(a, 2),
    "dsplit": lambda a: np.dsplit(np.reshape(a, (2, 2, 6)), 3),
    "unstack": lambda a: np.unstack(a),
    "block": lambda a, v: np.block([[a, a], [v[:3], v[:3], v[:6]]]),
    "append": lambda a, v: np.append(a, v),
    "where": lambda a: np.where(a > 0.5, a, -1.0),
    "clip": lambda a: np.clip(a, 0.2, 0.7),
    "select": lambda a: np.select([a < 0.3, a > 0.7], [a, -a], 5.0),
    "extract": lambda a: np.extract(a > 0.5, a),
    "compress": lambda a: np.compress([True, False, True, True], a, axis=0),
    "sort": lambda a: np.sort(a, axis=0),
    "argsort": lambda a: np.argsort(a, axis=None),
    "searchsorted": lambda v: np.searchsorted(np.sort(v), v),
    # (the order inside the parts is undefined: compared through what partition defines)
    "argpartition": lambda v: np.sort(np.argpartition(v, 2)[:2]),
    "partition": lambda a: np.partition(a, 2, axis=0)[2],
    "unique": lambda i: np.unique(i, return_counts=True),
    "union1d": lambda i: np.union1d(i, i + 2),
    "unique_values": lambda i: np.sort(np.unique_values(i)),
    "unique_counts": lambda i: np.unique_counts(i),
    "unique_inverse": lambda i: np.unique_inverse(i),
    "unique_all": lambda i: np.unique_all(i),
    "nonzero": lambda a: np.nonzero(a > 0.5),
    "argwhere": lambda a: np.argwhere(a > 0.5),
    "flatnonzero": lambda a: np.flatnonzero(a > 0.5),
    "unravel_index": lambda i: np.unravel_index(i, (2, 3)),
    "ravel_multi_index": lambda i: np.ravel_multi_index((i, i[::-1]), (6, 7)),
    "round": lambda a: np.round(a * 10, 1),
    "around": lambda a: np.around(a * 10),
    "fix": lambda a: np.fix(a * 10 - 5),
    "real": lambda c: np.real(c),
    "imag": lambda c: np.imag(c),
    "angle": lambda c: np.angle(c, deg=True),
    "iscomplex": lambda c: np.iscomplex(c),
    "isreal": lambda a: np.isreal(a),
    "isneginf": lambda q: np.isneginf(-q),
    "isposinf": lambda q: np.isposinf(q),
    "nan_to_num": lambda q: np.nan_to_num(q, nan=-1.0),
    "trapezoid": lambda a: np.trapezoid(a, dx=0.5),
    "isclose": lambda a, q: np.isclose(a[:2, :3], q),
    "allclose": lambda a: np.allclose(a, a + 1e-9),
    "array_equal": lambda a: np.array_equal(a, a),
    "array_equiv": lambda a: np.array_equiv(a, a[0]),
    "empty_like": lambda a: np.empty_like(a, dtype=np.int32),
    "zeros_like": lambda a: np.zeros_like(a),
    "ones_like": lambda a: np.ones_like(a, shape=(2, 2)),
    "full_like": lambda a: np.full_like(a, 7),
    "astype": lambda a: np.astype(a, np.float32),
    "copy": lambda a: np.copy(a),
    "meshgrid": lambda v: np.meshgrid(v, v[:3]),
    "pad": lambda a: np.pad(a, 2, mode="edge"),
    "gradient": lambda v: np.gradient(v),
    "isin": lambda i: np.isin(i, [1, 5]),
    "digitize": lambda v: np.digitize(v, [0.2, 0.5]),
    "bincount": lambda i: np.bincount(i),
    "histogram": lambda v: np.histogram(v, bins=3, range=(0, 1)),
    "histogram2d": lambda v: np.histogram2d(v, v, bins=2, range=[[0, 1], [0, 1]]),
    "shape": lambda a: np.shape(a),
    "ndim": lambda a: np.ndim(a),
    "size": lambda a: np.size(a, 1),
    "result_type": lambda a, i: np.result_type(a, i),
    "can_cast": lambda a: np.can_cast(a, np.float32),
    "common_type": lambda a: np.common_type(a),
    "iscomplexobj": lambda c: np.iscomplexobj(c),
    "isrealobj": lambda a: np.isrealobj(a),
    "diag_indices_from": lambda a: np.diag_indices_from(a[:, :4]),
    "tril_indices_from": lambda a: np.tril_indices_from(a),
    "triu_indices_from": lambda a: np.triu_indices_from(a),
}

# Functions b2lazy computes through NumPy (EagerEvaluationWarning).
EAGER = {
    "apply_along_axis": lambda a: np.apply_along_axis(np.sum, 0, a),
    "apply_over_axes": lambda a: np.apply_over_axes(np.sum, a, [0]),
    "array2string": lambda a: np.array2string(a),
    "array_repr": lambda a: np.array_repr(a),
    "array_str": lambda a: np.array_str(a),
    "choose": lambda i: np.choose(i[:3] % 2, [i[:3], i[1:4]]),
    "convolve": lambda v: np.convolve(v, v),
    "correlate": lambda v: np.correlate(v, v),
    "corrcoef": lambda a: np.corrcoef(a),
    "cov": lambda a: np.cov(a),
    "cross": lambda a: np.cross(a[:, :3], a[:, 3:]),
    "delete": lambda a: np.delete(a, 1, axis=0),
    "insert": lambda v: np.insert(v, 1, 9.0),
    "diagflat": lambda v: np.diagflat(v),
    "einsum_path": lambda a, b: np.einsum_path("ij,jk->ik", a, b)[0],
    "geomspace": lambda v: np.geomspace(v[:2] + 1, 10, 3),
    "linspace": lambda v: np.linspace(v[:2], 1, 3),
    "logspace": lambda v: np.logspace(v[:2], 1, 3),
    "histogram_bin_edges": lambda v: np.histogram_bin_edges(v, 3),
    "histogramdd": lambda a: np.histogramdd(a[:, :2], 2)[0],
    "i0": lambda v: np.i0(v),
    "interp": lambda v: np.interp(v, [0, 1], [1, 2]),
    "intersect1d": lambda i: np.intersect1d(i, i + 1),
    "setdiff1d": lambda i: np.setdiff1d(i, [1]),
    "setxor1d": lambda i: np.setxor1d(i, [1, 7]),
    "ix_": lambda i: np.ix_(i, i)[0],
    "kron": lambda v: np.kron(v, v),
    "lexsort": lambda v: np.lexsort((v, v)),
    "may_share_memory": lambda a, b: np.may_share_memory(a, b),
    "shares_memory": lambda a, b: np.shares_memory(a, b),
    "min_scalar_type": lambda a: np.min_scalar_type(a[0, 0]),
    "packbits": lambda i: np.packbits(i > 1),
    "unpackbits": lambda i: np.unpackbits(np.astype(i, np.uint8)),
    "piecewise": lambda v: np.piecewise(v, [v < 0.5], [0.0, 1.0]),
    "poly": lambda v: np.poly(v[:3]),
    "polyadd": lambda v: np.polyadd(v, v),
    "polyder": lambda v: np.polyder(v),
    "polydiv": lambda v: np.polydiv(v, v[:2])[0],
    "polyfit": lambda v: np.polyfit(v, v, 1),
    "polyint": lambda v: np.polyint(v),
    "polymul": lambda v: np.polymul(v, v),
    "polysub": lambda v: np.polysub(v, v),
    "polyval": lambda v: np.polyval(v, v),
    "roots": lambda v: np.sort_complex(np.roots(v[:3])),
    "real_if_close": lambda c: np.real_if_close(c),
    "resize": lambda v: np.resize(v, (2, 4)),
    "sinc": lambda v: np.sinc(v),
    "sort_complex": lambda c: np.sort_complex(c[0]),
    "trim_zeros": lambda i: np.trim_zeros(i),
    "unwrap": lambda v: np.unwrap(v * 10),
    "vander": lambda v: np.vander(v[:3]),
}
# numpy.linalg: lazy, and eager (decompositions, solvers: computed by LAPACK on loaded operands).
S = A[:, :4] @ A[:, :4].T + 4 * np.eye(4)  # symmetric positive definite
OPERANDS_LINALG = {"s": S}
LINALG_LAZY = {
    "norm": lambda a: np.linalg.norm(a),
    "vector_norm": lambda a: np.linalg.vector_norm(a, axis=0, ord=3),
    "matrix_norm": lambda a: np.linalg.matrix_norm(a, ord=np.inf),
    "matmul": lambda a, b: np.linalg.matmul(a, b),
    "outer": lambda v: np.linalg.outer(v, v),
    "tensordot": lambda a, b: np.linalg.tensordot(a, b, axes=1),
    "vecdot": lambda a: np.linalg.vecdot(a, a),
    "matrix_transpose": lambda a: np.linalg.matrix_transpose(a),
    "trace": lambda s: np.linalg.trace(s, offset=1),
    "diagonal": lambda a: np.linalg.diagonal(a),
    "multi_dot": lambda a, b: np.linalg.multi_dot([a, b, b.T]),
    "matrix_power": lambda s: np.linalg.matrix_power(s, 5),
    "lstsq": lambda v: np.linalg.lstsq(S, v[:4])[0],  # a NumPy matrix, lazy right-hand sides (polyfit)
}
LINALG_EAGER = {
    "cholesky": lambda s: np.linalg.cholesky(s),
    "cond": lambda s: np.linalg.cond(s),
    "det": lambda s: np.linalg.det(s),
    "eig": lambda s: np.sort(np.linalg.eig(s).eigenvalues),
    "eigh": lambda s: np.linalg.eigh(s).eigenvalues,
    "eigvals": lambda s: np.sort(np.linalg.eigvals(s)),
    "eigvalsh": lambda s: np.linalg.eigvalsh(s),
    "inv": lambda s: np.linalg.inv(s),
    "lstsq": lambda s, v: np.linalg.lstsq(s, v[:4])[0],  # (a lazy matrix)
    "matrix_rank": lambda s: np.linalg.matrix_rank(s),
    "pinv": lambda s: np.linalg.pinv(s),
    "qr": lambda s: np.abs(np.linalg.qr(s).R),
    "slogdet": lambda s: np.linalg.slogdet(s).logabsdet,
    "solve": lambda s, v: np.linalg.solve(s, v[:4]),
    "svd": lambda s: np.linalg.svd(s).S,
    "svdvals": lambda s: np.linalg.svdvals(s),
    "cross": lambda a: np.linalg.cross(a[:, :3], a[:, 3:]),
    "tensorinv": lambda s: np.linalg.tensorinv(s, ind=1),
    "tensorsolve": lambda s, v: np.linalg.tensorsolve(s, v[:4]),
}

# Functions that write to a file: eager, checked by what they wrote.
WRITERS = {"save", "savez", "savez_compressed", "savetxt"}
# In-place updates: refused on a b2lazy target (its copy's update would be lost), eager
# into a NumPy target.
IN_PLACE = {
    "copyto": lambda dst, src: np.copyto(dst, src),
    "fill_diagonal": lambda dst, src: np.fill_diagonal(dst, src[0, 0]),
    "place": lambda dst, src: np.place(dst, dst > 0.5, src[0]),
    "put": lambda dst, src: np.put(dst, [0, 2], src[0, :2]),
    "putmask": lambda dst, src: np.putmask(dst, dst > 0.5, src),
    "put_along_axis": lambda dst, src: np.put_along_axis(dst, np.zeros((4, 1), int), src[:, :1], axis=1),
}
# Datetime-only functions: b2lazy has no datetime dtype, so a b2lazy operand never reaches them.
DATETIME = {"busday_count", "busday_offset", "is_busday", "datetime_as_string"}

# Operands by parameter name.
OPERANDS = {"a": A, "b": B, "v": V, "i": I, "q": Q, "c": C, "dst": A, "src": A, "s": S}


def numpy_functions():
    """Every public function of `numpy` that dispatches through __array_function__."""
    return sorted(
        n
        for n in dir(np)
        if not n.startswith("_") and callable(getattr(np, n)) and hasattr(getattr(np, n), "_implementation")
    )


def linalg_functions():
    return sorted(
        n
        for n in dir(np.linalg)
        if not n.startswith("_")
        and callable(getattr(np.linalg, n))
        and hasattr(getattr(np.linalg, n), "_implementation")
    )


def numpy_ufuncs():
    return sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc))


def _operands(case, wrap):
    names = case.__code__.co_varnames[: case.__code__.co_argcount]
    return [bl.asarray(OPERANDS[n]) if wrap else OPERANDS[n].copy() for n in names]


def _same(got, want, lazy, what):
    """got (from b2lazy operands) equals want (NumPy's), as the same kind of thing."""
    if isinstance(want, np.ndarray) or (isinstance(want, np.generic) and lazy and isinstance(got, bl.Array)):
        if lazy:
            assert isinstance(got, bl.Array), f"{what}: {type(got).__name__}, not a b2lazy Array"
        g = np.asarray(got)
        assert g.dtype == np.asarray(want).dtype, f"{what}: dtype {g.dtype}, NumPy's {np.asarray(want).dtype}"
        assert g.shape == np.shape(want), f"{what}: shape {g.shape}, NumPy's {np.shape(want)}"
        if what.startswith("empty_like"):
            return
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=what)
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), what
        for k, (g, w) in enumerate(zip(got, want)):
            _same(g, w, lazy, f"{what}[{k}]")
    elif isinstance(want, (float, np.floating)):
        assert np.isclose(got, want, rtol=1e-12, equal_nan=True), what
    else:
        assert got == want, f"{what}: {got!r} != {want!r}"


def _run(name, case, lazy):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own, on the NaN rows
        want = case(*_operands(case, wrap=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        proto._warned.discard(name)
        got = case(*_operands(case, wrap=True))
    eager = [w for w in caught if issubclass(w.category, bl.EagerEvaluationWarning)]
    if lazy:
        assert not eager, f"{name}: lazy, but warned {eager[0].message}"
    else:
        assert eager and name in str(eager[0].message) and "loaded" in str(eager[0].message), (
            f"{name}: an eager fallback must warn EagerEvaluationWarning naming it"
        )
    _same(got, want, lazy, name)


def _target_exists(name):
    entry = FUNCTIONS.get(name)
    return entry is not None and proto._lazy(entry[0]) is not None


def test_every_numpy_function_is_classified():
    sets = {"lazy": set(LAZY), "eager": set(EAGER), "writers": WRITERS, "in-place": set(IN_PLACE), "datetime": DATETIME}
    missing = [n for n in numpy_functions() if not any(n in s for s in sets.values())]
    assert not missing, f"NumPy functions with no b2lazy classification: {missing}"
    # the cases' classification is the protocol's: lazy exactly when the table has it
    assert not [n for n in LAZY if n not in FUNCTIONS]
    assert not [n for n in EAGER if n in FUNCTIONS]


def test_every_linalg_function_is_classified():
    missing = [n for n in linalg_functions() if n not in LINALG_LAZY and n not in LINALG_EAGER]
    assert not missing, f"numpy.linalg functions with no b2lazy classification: {missing}"
    assert sorted(LINALG_LAZY) == sorted(LINALG)


@pytest.mark.parametrize("name", sorted(LINALG_LAZY))
def test_lazy_linalg_function(name):
    _run(f"linalg.{name}", LINALG_LAZY[name], lazy=True)


@pytest.mark.parametrize("name", sorted(LINALG_EAGER))
def test_eager_linalg_function(name):
    _run(f"linalg.{name}", LINALG_EAGER[name], lazy=False)


@pytest.mark.parametrize("ord_", [None, 1, 2, np.inf, -np.inf, 0, 3, -1])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), (1, 0)])
def test_norm_orders(ord_, axis):
    for data in (A, C[:, :3], I.reshape(1, 5)):
        try:
            with np.errstate(all="ignore"):
                want = np.linalg.norm(data, ord_, axis)
        except ValueError:
            continue
        proto._warned.discard("linalg.norm")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = np.linalg.norm(bl.asarray(data), ord_, axis)
        eager = [w for w in caught if issubclass(w.category, bl.EagerEvaluationWarning)]
        lazy = not (ord_ in (2, -2) and (axis in ((0, 1), (1, 0)) or (axis is None and data.ndim == 2)))
        assert bool(eager) != lazy, (ord_, axis, eager)
        _same(got, want, lazy, f"norm ord={ord_} axis={axis}")


@pytest.mark.parametrize("name", sorted(LAZY))
def test_lazy_function(name):
    # Names another part of b2lazy adds (einsum, pad, isin, ...) stay eager until it exists.
    _run(name, LAZY[name], lazy=_target_exists(name))


@pytest.mark.parametrize("name", sorted(EAGER))
def test_eager_function(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _run(name, EAGER[name], lazy=False)


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_eager_writer(name, tmp_path):
    f = getattr(np, name)
    proto._warned.discard(name)
    with pytest.warns(bl.EagerEvaluationWarning, match=name):
        f(tmp_path / "x.npy", bl.asarray(A)) if name in ("save", "savetxt") else f(tmp_path / "x.npz", bl.asarray(A))
    got = (
        np.loadtxt(tmp_path / "x.npy")
        if name == "savetxt"
        else (np.load(tmp_path / "x.npy") if name == "save" else np.load(tmp_path / "x.npz")["arr_0"])
    )
    np.testing.assert_allclose(got, A, rtol=1e-15)


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_refused_on_b2lazy_eager_into_numpy(name):
    with pytest.raises(TypeError, match=name):
        IN_PLACE[name](bl.asarray(A), A)
    want, got = A.copy(), A.copy()
    IN_PLACE[name](want, A)
    proto._warned.discard(name)
    if name == "fill_diagonal":  # dispatches on the target only: NumPy converts the value itself
        IN_PLACE[name](got, bl.asarray(A))
    else:
        with pytest.warns(bl.EagerEvaluationWarning, match=name):
            IN_PLACE[name](got, bl.asarray(A))
    np.testing.assert_array_equal(got, want)


def test_datetime_functions_cannot_get_b2lazy_operands():
    with pytest.raises(TypeError):
        bl.asarray(np.array(["2020-01-01"], "M8[D]"))


# --- ufuncs -------------------------------------------------------------------------------
# Ufuncs b2lazy computes through NumPy; every other ufunc must be lazy.
EAGER_UFUNCS = {"bitwise_count", "fmod", "frexp", "gcd", "isnat", "lcm", "ldexp", "spacing"}


def _ufunc_operands(ufunc, wrap):
    """Operands of a dtype the ufunc takes: float64 in (0.1, 0.9), else int64, else bool."""
    for code, dt in (("d", np.float64), ("l", np.int64), ("?", np.bool_), ("M", "M8[D]")):
        if any(t.split("->")[0] == code * ufunc.nin for t in ufunc.types):
            break
    else:  # mixed input types (ldexp: float, int)
        dt = None
    rng = np.random.default_rng(ufunc.nin)
    if dt is None:
        ops = [rng.random((3, 4)), rng.integers(0, 4, (3, 4))]
    elif ufunc.signature:  # matmul, vecdot, matvec, vecmat: (3, 4) and (4,)/(4, 2)
        shapes = {
            "matmul": [(3, 4), (4, 2)],
            "vecdot": [(3, 4), (4,)],
            "matvec": [(3, 4), (4,)],
            "vecmat": [(3,), (3, 4)],
        }[ufunc.__name__]
        ops = [rng.random(s) for s in shapes]
    elif np.dtype(dt) == np.float64:
        ops = [rng.uniform(0.1, 0.9, (3, 4)) for _ in range(ufunc.nin)]
    elif np.dtype(dt) == np.int64:
        ops = [rng.integers(1, 8, (3, 4)) for _ in range(ufunc.nin)]
    elif np.dtype(dt) == np.bool_:
        ops = [rng.random((3, 4)) > 0.5 for _ in range(ufunc.nin)]
    else:
        return None
    return [bl.asarray(o) for o in ops] if wrap else ops


def test_every_ufunc_is_classified():
    lazy = {n for n in numpy_ufuncs() if ufunc_function(getattr(np, n)) is not None}
    assert set(numpy_ufuncs()) - lazy == EAGER_UFUNCS


@pytest.mark.parametrize("name", numpy_ufuncs())
def test_ufunc_call(name):
    ufunc = getattr(np, name)
    ops = _ufunc_operands(ufunc, wrap=False)
    if ops is None:  # isnat: datetimes only, which b2lazy has not
        assert name in EAGER_UFUNCS
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = ufunc(*ops)
        proto._warned.discard(name)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = ufunc(*_ufunc_operands(ufunc, wrap=True))
    eager = [w for w in caught if issubclass(w.category, bl.EagerEvaluationWarning)]
    assert bool(eager) == (name in EAGER_UFUNCS), f"{name}: {[str(w.message) for w in eager]}"
    _same(got, want, name not in EAGER_UFUNCS, name)


def test_ufunc_call_keywords():
    x = bl.asarray(A)
    q = np.array([-2.5, -0.0, 0.0, 3.75, np.inf, -np.inf, np.nan])
    for g, w in zip(np.modf(bl.asarray(q)), np.modf(q)):  # signs of zero and infinities as NumPy's
        np.testing.assert_array_equal(np.signbit(g.to_numpy()), np.signbit(w))
        np.testing.assert_array_equal(g.to_numpy(), w)
    _same(np.add(x, 1, dtype=np.float32), np.add(A, 1, dtype=np.float32), True, "add dtype=")
    _same(np.less(x, 0.5, dtype=bool), np.less(A, 0.5, dtype=bool), True, "less dtype=")
    out = np.zeros_like(A)
    r = np.multiply(x, 2, out=out)
    assert r is out
    np.testing.assert_array_equal(out, A * 2)
    o = bl.zeros(A.shape)
    assert np.sqrt(x, out=o) is o and isinstance(o, bl.Array)
    np.testing.assert_array_equal(o.to_numpy(), np.sqrt(A))
    out = np.full_like(A, -1.0)
    np.add(x, 1, out=out, where=A > 0.5)
    want = np.full_like(A, -1.0)
    np.add(A, 1, out=want, where=A > 0.5)
    np.testing.assert_array_equal(out, want)
    with pytest.raises(ValueError, match="where= without out="):
        np.add(x, 1, where=A > 0.5)
    with pytest.raises(ValueError, match="out has shape"):
        np.add(x, 1, out=np.zeros((2, 2)))


@pytest.mark.parametrize(
    "ufunc,fn",
    [
        (np.add, "sum"),
        (np.multiply, "prod"),
        (np.maximum, "max"),
        (np.minimum, "min"),
        (np.logical_and, "all"),
        (np.logical_or, "any"),
        (np.fmax, "nanmax"),
        (np.fmin, "nanmin"),
    ],
)
def test_ufunc_reduce(ufunc, fn):
    data = Q if fn.startswith("nan") else A
    x = bl.asarray(data)
    for kw in ({}, {"axis": 1}, {"axis": None, "keepdims": True}, {"axis": 0, "initial": 0.5}):
        if fn in ("all", "any") and "initial" in kw:
            continue
        got = ufunc.reduce(x, **kw)
        _same(got, ufunc.reduce(data, **kw), True, f"{ufunc.__name__}.reduce {kw}")


def test_ufunc_accumulate_outer_and_eager_methods():
    x = bl.asarray(A)
    _same(np.add.accumulate(x), np.add.accumulate(A), True, "add.accumulate")
    _same(np.multiply.accumulate(x, axis=1), np.multiply.accumulate(A, axis=1), True, "multiply.accumulate")
    _same(np.subtract.outer(x[0], x[:, 1]), np.subtract.outer(A[0], A[:, 1]), True, "subtract.outer")
    proto._warned.discard("add.reduceat")
    with pytest.warns(bl.EagerEvaluationWarning, match="add.reduceat"):
        got = np.add.reduceat(x, [0, 2], axis=1)
    np.testing.assert_array_equal(got, np.add.reduceat(A, [0, 2], axis=1))
    proto._warned.discard("maximum.accumulate")
    with pytest.warns(bl.EagerEvaluationWarning, match="maximum.accumulate"):
        np.maximum.accumulate(x)
    with pytest.raises(TypeError, match="add.at"):
        np.add.at(x, [0], 1.0)


def test_round_and_nan_to_num_as_numpy():
    data = RNG.normal(0, 1e4, 50)
    for d in (-3, -1, 0, 2, 5):
        _same(np.round(bl.asarray(data), d), np.round(data, d), True, f"round decimals={d}")
    q = np.array([np.nan, np.inf, -np.inf, 1.5])
    for kw in ({}, {"nan": np.inf}, {"posinf": np.nan, "neginf": 7.0}):
        _same(np.nan_to_num(bl.asarray(q), **kw), np.nan_to_num(q, **kw), True, f"nan_to_num {kw}")


def test_unravel_index_out_of_bounds():
    with pytest.raises(ValueError, match="unravel_index"):
        np.unravel_index(bl.asarray(I), (2, 2))
    with pytest.raises(ValueError, match="ravel_multi_index"):
        np.ravel_multi_index((bl.asarray(I), bl.asarray(I)), (6, 5))


def test_warning_is_once_per_function():
    x = bl.asarray(A)
    proto._warned.discard("kron")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.kron(x[0], x[1])
        np.kron(x[0], x[1])
    assert len([w for w in caught if issubclass(w.category, bl.EagerEvaluationWarning)]) == 1


# --- out= of __array_function__ --------------------------------------------------------------
def test_out_targets(tmp_path):
    import blosc2

    x = bl.asarray(A)
    out = np.empty(6)
    assert np.sum(x, axis=0, out=out) is out
    np.testing.assert_allclose(out, A.sum(axis=0))
    f = tmp_path / "t.b2nd"
    blosc2.asarray(np.zeros((4, 6)), urlpath=str(f), mode="w")
    t = bl.open(f, mode="r+")
    assert np.clip(x, 0.2, 0.8, out=t) is t
    np.testing.assert_array_equal(bl.open(f).to_numpy(), np.clip(A, 0.2, 0.8))
    # the result read from the file it is written to (r+): evaluated before it is replaced
    np.multiply(np.flip(t, axis=0), 2.0, out=t)
    np.testing.assert_array_equal(bl.open(f).to_numpy(), np.clip(A, 0.2, 0.8)[::-1] * 2)
    r = np.mean(x, axis=1, out=str(tmp_path / "m.b2nd"))
    np.testing.assert_allclose(bl.open(tmp_path / "m.b2nd").to_numpy(), A.mean(axis=1))
    assert isinstance(r, bl.Array)
    with pytest.raises(TypeError, match="sum: out must be"):
        np.sum(x, out=[0.0])


def test_on_opened_file_and_computed_result(tmp_path):
    import blosc2

    f = tmp_path / "x.b2nd"
    blosc2.asarray(A, urlpath=str(f), mode="w", chunks=(2, 3))
    for x in (bl.open(f), (bl.open(f) + 0).compute()):
        for fn, kw in ((np.sum, {}), (np.mean, {"axis": 0}), (np.max, {}), (np.std, {"axis": 1})):
            r = fn(x, **kw)
            assert isinstance(r, bl.Array)
            np.testing.assert_allclose(r.to_numpy(), fn(A, **kw), rtol=1e-13)


def test_masked_arrays_are_not_taken_as_plain_arrays():
    """A masked operand is not wrapped (its mask would be lost): b2lazy steps aside, and
    NumPy says no implementation takes both, instead of a result without the mask."""
    m = np.ma.masked_array(A, mask=A > 0.5)
    with pytest.raises(TypeError):
        np.add(bl.asarray(A), m)
    with pytest.raises(TypeError):
        np.concatenate([bl.asarray(A), m])


def test_mixed_operands():
    import blosc2

    x = bl.asarray(A)
    nd = blosc2.asarray(A)
    _same(np.concatenate([x, A, nd]), np.concatenate([A, A, A]), True, "concatenate mixed")
    _same(np.where(A > 0.5, x, 0.0), np.where(A > 0.5, A, 0.0), True, "where mixed")
    _same(np.add(A, x), A + A, True, "add ndarray + b2lazy")


# --- random shapes and dtypes ---------------------------------------------------------------
_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8]
_REDUCTIONS = [np.sum, np.mean, np.max, np.min, np.prod, np.std, np.var, np.argmax, np.argmin, np.any, np.all]


@settings(max_examples=40)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    dt=st.sampled_from(_DTYPES),
    fn=st.sampled_from(_REDUCTIONS),
    data=st.data(),
)
def test_reductions_random(shape, dt, fn, data):
    a = (np.random.default_rng(len(shape)).random(shape) * 10).astype(dt)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    kw = {"axis": axis}
    if fn not in (np.argmax, np.argmin) or axis is not None:
        kw["keepdims"] = data.draw(st.booleans())
    got = fn(bl.asarray(a), **kw)
    want = fn(a, **kw)
    assert isinstance(got, bl.Array)
    g = got.to_numpy()
    assert g.dtype == np.asarray(want).dtype and g.shape == np.shape(want)
    np.testing.assert_allclose(g, want, rtol=1e-5 if dt == np.float32 else 1e-12)


@settings(max_examples=30)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    dt=st.sampled_from(_DTYPES),
    name=st.sampled_from(
        [
            "add",
            "multiply",
            "maximum",
            "less",
            "sin",
            "sqrt",
            "negative",
            "fmax",
            "hypot",
            "fabs",
            "rint",
            "degrees",
            "radians",
            "heaviside",
            "float_power",
            "fmin",
        ]
    ),
)
def test_ufuncs_random(shape, dt, name):
    ufunc = getattr(np, name)
    rng = np.random.default_rng(len(shape))
    ops = [(rng.random(shape) * 10).astype(dt) for _ in range(ufunc.nin)]
    with np.errstate(all="ignore"):
        want = ufunc(*ops)
    got = ufunc(*[bl.asarray(o) for o in ops])
    assert isinstance(got, bl.Array) and got.dtype == want.dtype
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-6 if want.dtype.itemsize <= 4 else 1e-13)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.mean(x, axis=0),
        lambda m, x: m.sum(x),
        lambda m, x: m.std(x, axis=1),
        lambda m, x: m.max(x, axis=0, keepdims=True),
    ],
)
def test_protocol_builds_the_same_plan_as_b2lazy(tmp_path, call):
    """np.mean(x, axis=0) costs what bl.mean(x, axis=0) does: the same expression, the same plan."""
    import blosc2

    f = tmp_path / "p.b2nd"
    blosc2.asarray(RNG.random((40, 30)), urlpath=str(f), mode="w", chunks=(10, 10))
    x = bl.open(f)
    assert str(call(np, x).plan()) == str(call(bl, x).plan())
