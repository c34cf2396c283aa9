"""lazyudf (issue #15, item 5): Python and numba functions called on blocks, with their
inputs' values over each block (widened by `depth` for stencils) and the block's offset.
NumPy is the oracle; counters check what a block reads."""

import threading

import numpy as np
import pytest
from hypothesis import given, strategies as st

import b2lazy
from conftest import base_shapes, chunks_blocks, examples, run_python

numba = pytest.importorskip("numba")


def twice_plus(inputs, out, offset):
    x, y = inputs
    out[...] = 2 * x + y


def global_index(inputs, out, offset):
    """Each element's flat index in the whole array, from the block's offset."""
    (shape_holder,) = inputs
    idx = np.indices(out.shape)
    flat = np.zeros(out.shape, np.int64)
    for d in range(out.ndim):
        flat = flat * SHAPE[d] + idx[d] + offset[d]
    out[...] = flat


SHAPE = None


@given(shape=base_shapes(min_ndim=1, max_ndim=3), data=st.data())
@examples(40)
def test_elementwise_udf_matches_numpy(shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x, y = rng.standard_normal(shape), rng.standard_normal(shape)
    chunks, blocks = data.draw(chunks_blocks(shape))
    a = b2lazy.asarray(x, chunks=chunks, blocks=blocks)
    u = b2lazy.lazyudf(twice_plus, (a, y), np.float64)
    assert u.shape == shape and u.dtype == np.float64
    np.testing.assert_allclose(u.to_numpy(), 2 * x + y)
    out_chunks, _ = data.draw(chunks_blocks(shape))
    np.testing.assert_allclose(u.compute(chunks=out_chunks).to_numpy(), 2 * x + y)
    # nested in an expression, and read through a strided slice
    np.testing.assert_allclose((b2lazy.sin(u) + a).to_numpy(), np.sin(2 * x + y) + x)
    sl = tuple(slice(None, None, -2) for _ in shape)
    np.testing.assert_allclose(u[sl].to_numpy(), (2 * x + y)[sl])


def test_offset_names_the_block():
    global SHAPE
    SHAPE = (7, 9)
    u = b2lazy.lazyudf(global_index, (b2lazy.zeros(SHAPE),), np.int64)
    want = np.arange(63).reshape(7, 9)
    np.testing.assert_array_equal(u.compute(chunks=(3, 4)).to_numpy(), want)
    np.testing.assert_array_equal(u[1::3, ::-2].to_numpy(), want[1::3, ::-2])


def moving_sum(inputs, out, offset):
    """out[i] = x[i-1] + x[i] + x[i+1] (missing neighbours count 0)."""
    (x,) = inputs
    start = max(0, offset[0] - 1)  # the widened view's first index in x
    for k in range(out.shape[0]):
        i = offset[0] + k - start
        out[k] = x[i] + (x[i - 1] if i >= 1 else 0.0) + (x[i + 1] if i + 1 < x.shape[0] else 0.0)


@given(n=st.integers(1, 60), chunk=st.integers(1, 20))
@examples(40)
def test_stencil_with_depth(n, chunk):
    x = np.arange(1.0, n + 1)
    a = b2lazy.asarray(x, chunks=(chunk,))
    u = b2lazy.lazyudf(moving_sum, (a,), np.float64, depth=1)
    p = np.pad(x, 1)
    want = p[:-2] + p[1:-1] + p[2:]
    np.testing.assert_allclose(u.compute(chunks=(chunk,)).to_numpy(), want)
    np.testing.assert_allclose(u.to_numpy(), want)


def laplacian(inputs, out, offset):
    """2-D 5-point Laplacian with the view clipped at the edges (edges: 0)."""
    (x,) = inputs
    r0, c0 = max(0, offset[0] - 1), max(0, offset[1] - 1)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            gi, gj = offset[0] + i, offset[1] + j
            if gi in (0, N2 - 1) or gj in (0, N2 - 1):
                out[i, j] = 0.0
                continue
            li, lj = gi - r0, gj - c0
            out[i, j] = x[li - 1, lj] + x[li + 1, lj] + x[li, lj - 1] + x[li, lj + 1] - 4 * x[li, lj]


N2 = 12


def test_two_d_stencil_reads_only_neighbour_chunks(tmp_path):
    x = np.random.default_rng(1).standard_normal((N2, N2))
    path = str(tmp_path / "x.b2nd")
    b2lazy.asarray(x).compute(urlpath=path, chunks=(4, 4), blocks=(4, 4))
    u = b2lazy.lazyudf(laplacian, (b2lazy.open(path),), np.float64, depth=(1, 1))
    want = np.zeros_like(x)
    want[1:-1, 1:-1] = x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - 4 * x[1:-1, 1:-1]
    np.testing.assert_allclose(u.compute(chunks=(4, 4)).to_numpy(), want, atol=1e-12)
    # the middle chunk's block, widened by one: the 3 x 3 chunks around it
    part = u[4:8, 4:8].compute()
    assert part.stats["distinct_chunks_decompressed"][path] == 9
    # a corner block: its chunk and the three beside it
    corner = u[0:4, 0:4].compute()
    assert corner.stats["distinct_chunks_decompressed"][path] == 4
    np.testing.assert_allclose(part.to_numpy(), want[4:8, 4:8], atol=1e-12)


@numba.njit(nogil=True)
def _numba_kernel(x, out):
    flat_x, flat_o = x.ravel(), out.ravel()
    for i in range(flat_o.size):
        v = flat_x[i]
        flat_o[i] = v * v + 1.0


def numba_udf(inputs, out, offset):
    _numba_kernel(inputs[0], out)


def test_numba_function_without_the_gil():
    x = np.linspace(-3, 3, 200_000).reshape(400, 500)
    a = b2lazy.asarray(x, chunks=(50, 500))
    u = b2lazy.lazyudf(numba_udf, (a,), np.float64)
    np.testing.assert_allclose(u.compute(nthreads=2).to_numpy(), x * x + 1.0)

    # a numba dispatcher called directly as the function works too
    @numba.njit(nogil=True)
    def direct(inputs, out, offset):
        out[...] = inputs[0] * 3.0

    np.testing.assert_allclose(b2lazy.lazyudf(direct, (a,), np.float64).to_numpy(), x * 3.0)


def test_workers_overlap_while_a_function_releases_the_gil():
    """Two worker threads are inside a nogil numba kernel at once (counted, not timed)."""
    inside = [0, 0]  # now, most
    lock = threading.Lock()

    @numba.njit(nogil=True)
    def spin(n):
        s = 0.0
        for i in range(n):
            s += i * 0.5
        return s

    def udf(inputs, out, offset):
        with lock:
            inside[0] += 1
            inside[1] = max(inside[1], inside[0])
        spin(20_000_000)  # outside the GIL: the other worker runs its own call meanwhile
        with lock:
            inside[0] -= 1
        out[...] = inputs[0]

    a = b2lazy.asarray(np.ones((8, 100)), chunks=(1, 100))
    u = b2lazy.lazyudf(udf, (a,), np.float64)
    np.testing.assert_array_equal(u.compute(chunks=(1, 100), nthreads=2).to_numpy(), np.ones((8, 100)))
    assert inside[1] == 2


def test_scalars_shape_and_dtype():
    def fill(inputs, out, offset):
        (k,) = inputs
        assert k.shape == ()
        out[...] = k

    u = b2lazy.lazyudf(fill, (7,), np.int32, shape=(3, 4))
    np.testing.assert_array_equal(u.to_numpy(), np.full((3, 4), 7, np.int32))
    assert u.dtype == np.int32


def test_chunked_false_shows_whole_inputs():
    seen = []

    def cumulative(inputs, out, offset):
        (x,) = inputs
        seen.append(x.shape)
        out[...] = np.cumsum(x)[offset[0] : offset[0] + out.shape[0]]

    x = np.arange(30.0)
    u = b2lazy.lazyudf(cumulative, (b2lazy.asarray(x, chunks=(7,)),), np.float64, chunked_eval=False)
    np.testing.assert_array_equal(u.compute(chunks=(7,)).to_numpy(), np.cumsum(x))
    assert set(seen) == {(30,)}


def test_udf_errors():
    def boom(inputs, out, offset):
        raise ZeroDivisionError("no")

    u = b2lazy.lazyudf(boom, (b2lazy.zeros((4, 4)),), np.float64, name="boom")
    with pytest.raises(ValueError, match=r"lazyudf 'boom' failed on the block at \(0, 0\).*ZeroDivisionError"):
        u.to_numpy()
    with pytest.raises(ValueError, match=r"input 1 has shape \(3,\)"):
        b2lazy.lazyudf(twice_plus, (b2lazy.zeros((4,)), b2lazy.zeros((3,))), np.float64)
    with pytest.raises(ValueError, match="depth"):
        b2lazy.lazyudf(twice_plus, (b2lazy.zeros((4, 4)),), np.float64, depth=(1, 2, 3))
    with pytest.raises(TypeError, match="callable"):
        b2lazy.lazyudf(3, (b2lazy.zeros(4),), np.float64)
    with pytest.raises(ValueError, match="shape"):
        b2lazy.lazyudf(twice_plus, (1.0,), np.float64)


def test_module_level_function_exits_cleanly():
    """u = lazyudf(f, ...) at module level: f's globals hold u, a cycle through C++ that is
    released at exit (no leak report, no crash)."""
    code = (
        "import numpy as np, b2lazy\n"
        "def f(i, o, off):\n    o[...] = i[0] + 1\n"
        "u = b2lazy.lazyudf(f, (b2lazy.zeros((4, 4)),), np.float64)\n"
        "assert u.to_numpy().sum() == 16\n"
        "v = u * 2\n"
    )
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert "leaked" not in r.stderr


def test_a_udf_cannot_be_saved(tmp_path):
    u = b2lazy.lazyudf(twice_plus, (b2lazy.zeros(3), 1.0), np.float64)
    with pytest.raises(TypeError, match="function"):
        u.save(str(tmp_path / "u.b2lazy"))


def test_a_udf_result_in_an_expression_string():
    x = np.arange(12.0).reshape(3, 4)
    a = b2lazy.asarray(x, chunks=(2, 2))
    u = b2lazy.lazyudf(twice_plus, (a, 1.0), np.float64)
    np.testing.assert_allclose(
        b2lazy.evaluate("sum(u, axis=0) + a[0]", u=u, a=a).to_numpy(), (2 * x + 1).sum(axis=0) + x[0]
    )


def test_udfs_where_an_input_is_read_when_called():
    """Calls that evaluate an operand at once (a sorter, a mask) let the workers take the
    GIL a UDF needs: no deadlock."""

    def rev(inputs, out, offset):
        n = 5
        out[...] = n - 1 - (np.arange(out.shape[0]) + offset[0])

    sorter = b2lazy.lazyudf(rev, (), np.int64, shape=(5,))
    x1 = np.array([5.0, 4.0, 3.0, 2.0, 1.0])  # ascending in the sorter's order
    np.testing.assert_array_equal(b2lazy.searchsorted(x1, np.array([2.5]), sorter=sorter).to_numpy(), [2])
    mask = b2lazy.lazyudf(lambda i, o, off: o.__setitem__(..., i[0] > 2), (b2lazy.asarray(x1),), np.bool_)
    np.testing.assert_array_equal(b2lazy.asarray(x1)[mask].to_numpy(), x1[x1 > 2])
