"""einsum against np.einsum: random subscripts (repeated indices, ellipses, implicit and
explicit outputs, broadcast length-1 axes), shapes, dtypes and operand counts; xarray's
patterns; the contraction order a chain picks; errors; peak memory of a stored product."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import b2lazy as bl

LETTERS = "abcdeAB"
DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float32, np.float64, np.complex128, np.float16]


def _values(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 5, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _check(subscripts, ops, **kw):
    expected = np.einsum(subscripts, *ops)
    got = bl.einsum(subscripts, *ops, **kw)
    assert got.dtype == expected.dtype, (subscripts, got.dtype, expected.dtype)
    assert got.shape == expected.shape
    r = got.to_numpy()
    if expected.dtype == np.float16:
        np.testing.assert_allclose(r.astype(np.float64), expected.astype(np.float64), rtol=2e-2, atol=0.1)
    elif expected.dtype.kind in "fc":
        np.testing.assert_allclose(r, expected, rtol=1e-4, atol=1e-4)
    else:
        np.testing.assert_array_equal(r, expected)


@st.composite
def einsum_cases(draw):
    """(subscripts, shapes): 1-4 operands, letters shared at random, some repeated within
    an operand, some length-1 (broadcast), an ellipsis sometimes, output implicit or a
    random choice of the letters."""
    nops = draw(st.integers(1, 4))
    sizes = {c: draw(st.integers(1, 4)) for c in LETTERS}
    use_ell = draw(st.booleans())
    ell_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))) if use_ell else ()
    terms, shapes = [], []
    for _ in range(nops):
        letters = draw(st.lists(st.sampled_from(LETTERS), min_size=0, max_size=3))
        shape = [sizes[c] if not draw(st.integers(0, 5)) == 0 else 1 for c in letters]
        # a repeated letter's axes have one length
        for i, c in enumerate(letters):
            j = letters.index(c)
            shape[i] = shape[j]
        term = "".join(letters)
        if use_ell and draw(st.booleans()):
            k = draw(st.integers(0, len(ell_shape)))
            e = ell_shape[len(ell_shape) - k :]
            if k and draw(st.booleans()):  # a broadcast length-1 axis in the ellipsis
                e = (1,) + e[1:]
            pos = draw(st.integers(0, len(letters)))
            term = term[:pos] + "..." + term[pos:]
            shape = shape[:pos] + list(e) + shape[pos:]
        terms.append(term)
        shapes.append(tuple(shape))
    subscripts = ",".join(terms)
    if draw(st.booleans()):
        seen = sorted({c for t in terms for c in t if c != "."})
        out = draw(st.permutations(seen)) if seen else []
        out = out[: draw(st.integers(0, len(out)))]
        ell = "..." if any("..." in t for t in terms) else ""
        subscripts += "->" + ell + "".join(out)
    return subscripts, shapes


@settings(max_examples=150)
@given(
    einsum_cases(),
    st.sampled_from(DTYPES),
    st.sampled_from(DTYPES),
    st.integers(0, 2**32 - 1),
    st.sampled_from([True, False, "optimal"]),
)
def test_random_subscripts_match_numpy(case, dt1, dt2, seed, optimize):
    subscripts, shapes = case
    rng = np.random.default_rng(seed)
    ops = [_values(rng, s, dt1 if i % 2 == 0 else dt2) for i, s in enumerate(shapes)]
    try:
        np.einsum(subscripts, *ops)
    except ValueError:  # a combination NumPy refuses (ellipsis axes that do not broadcast, ...)
        event("refused by NumPy")
        with pytest.raises(ValueError):
            bl.einsum(subscripts, *ops, optimize=optimize).to_numpy()
        return
    event(f"{len(ops)} operand(s)")
    _check(subscripts, ops, optimize=optimize)


XARRAY_PATTERNS = [
    ("...i,...i->...", [(3, 4, 5), (4, 5)]),
    ("ij,j->i", [(6, 5), (5,)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("i,i", [(7,), (7,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij->...ji", [(2, 3, 4, 5)]),
    ("ij,jk,kl->il", [(4, 5), (5, 6), (6, 3)]),
    ("abc,cd,dbe->ae", [(2, 3, 4), (4, 5), (5, 3, 2)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ji,jk->ik", [(4, 3), (4, 5)]),
]


@pytest.mark.parametrize("subscripts,shapes", XARRAY_PATTERNS)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.float32])
def test_xarray_patterns(subscripts, shapes, dtype):
    rng = np.random.default_rng(0)
    _check(subscripts, [_values(rng, s, dtype) for s in shapes])


def test_expression_string_and_interleaved_form():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 6)), rng.standard_normal((6, 7))
    r = bl.evaluate("einsum('ij,jk->ik', a, b)", {"a": a, "b": b})
    np.testing.assert_allclose(r.to_numpy(), a @ b)
    r = bl.evaluate("einsum('ij,jk,k->i', a, b, v, optimize='optimal')", {"a": a, "b": b, "v": np.ones(7)})
    np.testing.assert_allclose(r.to_numpy(), a @ b @ np.ones(7))
    np.testing.assert_allclose(bl.einsum(a, [0, 1], b, [1, 2], [0, 2]).to_numpy(), a @ b)
    np.testing.assert_allclose(
        bl.einsum("ij,jk,k->i", a, b, np.ones(7), optimize=[(1, 2), (0, 1)]).to_numpy(), a @ b @ np.ones(7)
    )
    assert "einsum" in bl._registry.ENTRIES


def test_lazy_on_lazy_operands():
    a = bl.arange(12, dtype=bl.float64).reshape((3, 4)) + 1
    r = bl.einsum("ij,ij->i", a, a)
    assert isinstance(r, bl.Array)
    np.testing.assert_allclose(r.to_numpy(), np.einsum("ij,ij->i", a.to_numpy(), a.to_numpy()))


def _matmul_nesting(text):
    """The indentation of each matmul line of an explain() tree (deeper: computed first)."""
    return [len(line) - len(line.lstrip()) for line in text.splitlines() if "matmul" in line]


def test_chain_picks_the_cheaper_order():
    n = 300
    A, B, v = bl.ones((n, n)), bl.ones((n, n)), bl.ones((n,))
    path, report = bl.einsum_path("ij,jk,k->i", A, B, v)
    assert path == ["einsum_path", (1, 2), (0, 1)]  # B . v first: 2 n^2 operations, not n^3
    assert "180000" in report and "2.709e+07" in report  # 2 n^2 and n^3 + n^2
    fast = bl.einsum("ij,jk,k->i", A, B, v)
    slow = bl.einsum("ij,jk,k->i", A, B, v, optimize=False)
    # A . (B . v): two matrix-vector products, the inner one below the outer; left to right,
    # the inner one is the (n, n) x (n, n) product A . B.
    fast_plan, slow_plan = fast.explain(), slow.explain()
    assert len(_matmul_nesting(fast_plan)) == 2 and len(_matmul_nesting(slow_plan)) == 2
    assert "matmul (300, 300) x (300, 300)" in slow_plan, slow_plan
    assert "matmul (300, 300) x (300, 300)" not in fast_plan, fast_plan
    assert fast_plan.count("matmul (300, 300) x (300,)") == 2, fast_plan
    np.testing.assert_allclose(fast.to_numpy(), slow.to_numpy())


def test_errors_name_the_fault():
    with pytest.raises(ValueError, match="einsum.*'j'"):
        bl.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="einsum: operand 0 repeats subscript 'i'"):
        bl.einsum("ii", np.ones((1, 3)))
    with pytest.raises(ValueError, match="einsum.*2 operand"):
        bl.einsum("ij,jk", np.ones((2, 3)))
    with pytest.raises(ValueError, match="einsum.*'x'"):
        bl.einsum("ij->x", np.ones((2, 3)))
    with pytest.raises(TypeError, match="einsum.*optimize"):
        bl.einsum("ij", np.ones((2, 3)), optimize=3.5)
    with pytest.raises(ValueError, match="einsum.*path"):
        bl.einsum("i,i,i", np.ones(2), np.ones(2), np.ones(2), optimize=[(0, 1)])
    with pytest.raises(TypeError):  # (helper E makes such messages name the function)
        bl.einsum("i", np.ones(2), optimise=True)


PEAK = textwrap.dedent("""
    import resource, sys, numpy as np, b2lazy as bl
    a, b, how = bl.open(sys.argv[1]), bl.open(sys.argv[2]), sys.argv[3]
    r = bl.matmul(a, b) if how == "matmul" else bl.einsum("ij,jk->ik", a, b)
    r.compute(sys.argv[4], max_memory=128 << 20)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def test_stored_product_peak_memory_is_matmuls(tmp_path):
    n = 6144  # two 288 MiB float64 operands on disk
    for name in "ab":
        bl.arange(n * n, dtype=bl.float64).reshape((n, n)).compute(str(tmp_path / f"{name}.b2nd"), chunks=(1024, 1024))
    peaks = {}
    for how in ("matmul", "einsum"):
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                PEAK,
                str(tmp_path / "a.b2nd"),
                str(tmp_path / "b.b2nd"),
                how,
                str(tmp_path / f"{how}.b2nd"),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        peaks[how] = int(out.stdout.split()[-1])
    # the same plan: einsum('ij,jk->ik') is matmul itself, no temporaries of its own
    assert peaks["einsum"] <= peaks["matmul"] * 1.1 + 20_000, peaks
    print("peak KiB", peaks)


@settings(max_examples=60)
@given(einsum_cases(), st.integers(0, 2**32 - 1), st.data())
def test_chunked_operands_and_output_chunks(case, seed, data):
    """The same on operands stored in small chunks, the result computed in small chunks: every
    contraction pulls regions of its operands, not whole arrays."""
    subscripts, shapes = case
    rng = np.random.default_rng(seed)
    ops = [rng.standard_normal(tuple(3 * n for n in s)) for s in shapes]  # (lengths x3: several chunks)
    sub = subscripts
    try:
        expected = np.einsum(sub, *ops)
    except ValueError:
        return
    stored = [
        bl.asarray(o).compute(chunks=tuple(data.draw(st.integers(1, max(1, n))) for n in o.shape))
        if o.ndim
        else bl.asarray(o)
        for o in ops
    ]
    got = bl.einsum(sub, *stored)
    chunks = tuple(data.draw(st.integers(1, max(1, n))) for n in expected.shape)
    r = got.compute(chunks=chunks) if expected.ndim else got
    np.testing.assert_allclose(r.to_numpy(), expected, rtol=1e-9, atol=1e-9)
