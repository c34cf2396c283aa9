"""Issue #11, items 5 and 7: planning costs what the graph holds, not what its paths or
its size would list.

* A graph that shares a node between several consumers (`e = e - mean(e, 0)` nested) is
  planned, explained and evaluated with work linear in its distinct nodes: the planner's
  node visits (`stats["plan_visits"]`) are bounded by a constant times the nodes, and every
  shared reduction is computed once (`cache_misses`), not once per path to it.
* Building and planning a reduction over a huge lazy array (2**40 x 300) allocates
  little: slabs are iterated, never listed. Measured as RSS in a subprocess, under an
  address-space limit so a regression fails instead of swapping the machine.

No timings are asserted: counters and memory only.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import b2lazy

DEPTHS = (10, 20, 40)
BASE = np.arange(2000, dtype=np.float64).reshape(40, 50) / 7.0


def centered_chain(depth):
    """e = e - mean(e, axis=0), `depth` times: each e feeds its mean and the next e."""
    e, n = b2lazy.asarray(BASE), BASE.copy()
    for _ in range(depth):
        e, n = e - b2lazy.mean(e, axis=0), n - n.mean(axis=0)
    return e, n


def damped_chain(depth):
    """e = e*0.5 + sum(e)*0, `depth` times."""
    e, n = b2lazy.asarray(BASE), BASE.copy()
    for _ in range(depth):
        e, n = e * 0.5 + b2lazy.sum(e) * 0, n * 0.5 + n.sum() * 0
    return e, n


# Nodes added per level: `e - mean(e)` is 2 (subtract, mean); `e*0.5 + sum(e)*0` is at
# most 6 (two multiplies, two constants, sum, add). A generous constant per node keeps
# the bound about the growth, not about the walker's details.
CHAINS = {"centered": (centered_chain, 2), "damped": (damped_chain, 6)}
VISITS_PER_NODE = 8


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_deep_shared_chain_is_planned_in_linear_visits(name):
    build, per_level = CHAINS[name]
    visits = {}
    for depth in DEPTHS:
        e, n = build(depth)
        r = e.compute()
        np.testing.assert_allclose(r[:], n, rtol=1e-9, atol=1e-9)
        nodes = 1 + per_level * depth
        visits[depth] = r.stats["plan_visits"]
        assert 0 < visits[depth] <= VISITS_PER_NODE * nodes, (depth, visits[depth], nodes)
    # Doubling the depth about doubles the work (exponential growth would square it).
    assert visits[40] <= 2.5 * visits[20] and visits[20] <= 2.5 * visits[10], visits


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_each_shared_reduction_is_computed_once(name):
    # The outermost reduction has one consumer and is computed in place; every inner one
    # is needed by two (the next level's reduction and the fused expression above), so it
    # is computed once and read from the cache (before: recomputed per path, 2**depth).
    depth = 30
    e, n = CHAINS[name][0](depth)
    r = e.compute()
    np.testing.assert_allclose(r[:], n, rtol=1e-9, atol=1e-9)
    assert r.stats["cache_misses"] == depth - 1
    assert r.stats["cache_hits"] >= depth - 1
    np.testing.assert_allclose(e.to_numpy(), n, rtol=1e-9, atol=1e-9)


def test_explain_of_a_deep_shared_chain_lists_each_reduction_once():
    depth = 40
    e, _ = centered_chain(depth)
    text = e.explain()
    once = text.split("computed once (several output chunks need the same part):")[1].split("estimates:")[0]
    assert once.count("mean(axis=0)") == depth - 1
    # Every node of the tree is printed in full once; a second consumer sees one line.
    assert text.count("fused elementwise") == 2 * depth - 1
    r = e.compute()
    assert f"computed once: {depth - 1} nodes" in r.explain()


def stored_8x8():
    return b2lazy.asarray(np.arange(64.0).reshape(8, 8), chunks=(4, 8), blocks=(2, 8))


def doubled(x, depth):
    for _ in range(depth):
        x = x + x  # 2**depth paths from the top to x
    return x


def test_explain_walks_each_shared_node_once():
    # explain() propagated every output chunk's region along every path (2**40 here).
    a = stored_8x8()
    x = doubled(a, 40)
    text = (x + b2lazy.sum(x)).explain()
    assert "sum(axis=0,1)" in text


@pytest.mark.parametrize("op", ["take", "matmul", "cumsum", "reshape"])
def test_building_over_shared_subexpressions_is_linear(op):
    # Storage alignment, block length and preferred-chunk lookups at node construction
    # recursed once per path (take / matmul over `x + x` nested, cumsum chains).
    depth = 40
    a = stored_8x8()
    an = np.arange(64.0).reshape(8, 8)
    if op == "take":
        got = b2lazy.take(doubled(a, depth), np.array([1, 6]), axis=0)
        want = np.take(an * 2.0**depth, [1, 6], axis=0)
    elif op == "matmul":
        got = b2lazy.matmul(doubled(a, depth), a)
        want = (an * 2.0**depth) @ an
    elif op == "reshape":
        x = a
        for _ in range(depth):
            x = b2lazy.reshape(x + x, (8, 8))
        got, want = x, an * 2.0**depth
    else:
        x, want = a, an
        for _ in range(depth):
            x, want = b2lazy.cumsum(x, axis=0), np.cumsum(want, axis=0)
        got = x
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12)


HUGE = textwrap.dedent("""
    import os, resource, sys, threading, time
    import b2lazy
    # A plan that lists every slab grows by ~200 MB/s: the limit turns it into a failure.
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    def rss():
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS"))

    make = {
        "sum": lambda x: b2lazy.sum(x),
        "sum0": lambda x: b2lazy.sum(x, axis=0),
        "sum1": lambda x: b2lazy.sum(x, axis=1)[:3],
        "cumsum": lambda x: b2lazy.cumsum(x, axis=0)[:3],
    }[sys.argv[1]]
    make(b2lazy.zeros((40, 300))).to_numpy()  # warm every code path on a small array
    before = rss()
    e = make(b2lazy.zeros((2**40, 300)))
    e.explain()  # plans without computing
    planned = rss() - before
    # Then the work itself (2.6 PB of zeros for the full reductions) for a second or two:
    # memory may hold a slab per thread, not a list of every slab.
    worker = threading.Thread(target=e.to_numpy, daemon=True)
    worker.start()
    peak, t0 = rss(), time.monotonic()
    while worker.is_alive() and time.monotonic() - t0 < 1.5:
        peak = max(peak, rss())
        time.sleep(0.01)
    print(planned >> 20, (peak - before) >> 20, flush=True)
    os._exit(0)  # the huge reductions are not waited for
""")


@pytest.mark.parametrize("what", ["sum", "sum0", "sum1", "cumsum"])
def test_planning_a_huge_reduction_allocates_little(what):
    p = subprocess.run([sys.executable, "-c", HUGE, what], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    planned_mib, working_mib = map(int, p.stdout.split()[-2:])
    assert planned_mib < 16, planned_mib
    assert working_mib < 64, working_mib
