"""Random graphs, chunkings and budgets (issue #12): whatever the plan decides — stages,
where they are kept, task grouping — results equal NumPy's, running the plan's tasks in
two ranges equals running them all, and the plan's figures are consistent."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import b2lazy as bl
from conftest import within_budget

SIZES = (8, 12, 16, 24)


@st.composite
def stored(draw, n):
    x = draw(st.integers(0, 2**32 - 1))
    values = np.random.default_rng(x).random((n, n))
    c0, c1 = draw(st.integers(1, n)), draw(st.integers(1, n))
    b0, b1 = draw(st.integers(1, c0)), draw(st.sampled_from(sorted({1, c1 // 2 or 1, c1})))
    return bl.asarray(values, chunks=(c0, c1), blocks=(b0, b1)), values


@st.composite
def graph(draw, n, depth):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(stored(n))
    op = draw(
        st.sampled_from(
            ["add", "mul", "sin", "matmul", "center0", "center1", "total", "cumsum", "where", "T", "shared"]
        )
    )
    x, nx = draw(graph(n, depth - 1))
    if op in ("add", "mul", "matmul"):
        y, ny = draw(graph(n, depth - 1))
        if op == "add":
            return x + y, nx + ny
        if op == "mul":
            return x * y, nx * ny
        return bl.matmul(x, y) / n, (nx @ ny) / n
    if op == "sin":
        return bl.sin(x), np.sin(nx)
    if op == "center0":
        return x - bl.mean(x, axis=0), nx - nx.mean(axis=0)
    if op == "center1":
        return x - bl.mean(x, axis=1, keepdims=True), nx - nx.mean(axis=1, keepdims=True)
    if op == "total":
        return bl.sum(x) / n**2 + x, nx.sum() / n**2 + nx
    if op == "cumsum":
        axis = draw(st.integers(0, 1))
        return bl.cumsum(x, axis=axis) / n, np.cumsum(nx, axis=axis) / n
    if op == "where":
        return bl.where(x > 0.5, x, 0.0), np.where(nx > 0.5, nx, 0.0)
    if op == "T":
        return x.T, nx.T
    # a shared subexpression used twice: pulled by two consumers
    return bl.matmul(x, x.T) / n + x, (nx @ nx.T) / n + nx


def close(got, want):
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * scale)


BUDGETS = st.sampled_from([2**12, 2**14, 2**16, 2**20, 2**26, 2**30])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_graphs_equal_numpy_under_any_plan(data):
    n = data.draw(st.sampled_from(SIZES))
    e, want = data.draw(graph(n, 3))
    budget = data.draw(BUDGETS)
    chunks = data.draw(st.none() | st.tuples(st.integers(1, n), st.integers(1, n)))
    nthreads = data.draw(st.sampled_from([1, 2]))

    # max_memory is a limit: a plan whose memory model does not fit the budget is refused
    # before any work, naming the smallest budget that works; the plan at that one runs.
    def computed(b):
        p = e.plan(chunks=chunks, max_memory=b, nthreads=nthreads)
        return p, p.compute(), b

    p, r, used = within_budget(computed, budget)
    assert p.ntasks == len(p.tasks) and p.projected_peak > 0
    assert p.kept_bytes == sum(s["bytes"] for s in p.stages if s["where"] != "spilled")
    assert 0 < r.stats["projected_peak_bytes"] <= used
    close(r[:], want)
    # Two ranges of tasks, the later first, fill one result.
    k = data.draw(st.integers(0, p.ntasks))
    out = np.full(want.shape, np.nan)
    p.execute(out, k, p.ntasks)
    p.execute(out, 0, k)
    close(out, want)
    close(within_budget(lambda b: e.to_numpy(max_memory=b, nthreads=nthreads), budget), want)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_graphs_under_a_mask_selection(data):
    n = data.draw(st.sampled_from(SIZES))
    e, want = data.draw(graph(n, 2))
    budget = data.draw(BUDGETS)
    sel = e[e > 0.25]
    got = within_budget(lambda b: sel.plan(max_memory=b).execute(), budget)
    np.testing.assert_allclose(got, want[want > 0.25], rtol=1e-9, atol=1e-9)
