"""lazyudf's views do not outlive their call (issue #36, item 11).

A function may keep the NumPy arrays it is given (in a list, a closure, a global); writing
through them later must not change any result — neither the lazyudf's own nor an unrelated
later one that reuses the engine's memory. And Ctrl-C or sys.exit() inside the function
reach the caller as themselves, not as the function's failure."""

from __future__ import annotations

import numpy as np
import pytest

import b2lazy


@pytest.mark.parametrize("how", ["to_numpy", "compute"])
def test_views_kept_after_the_call_write_nowhere_that_matters(how):
    kept = []

    def f(ins, out, offset):
        out[...] = ins[0] + 1
        kept.append((ins[0], out))

    x = np.arange(65536.0).reshape(256, 256)
    a = b2lazy.asarray(x, chunks=(64, 64))
    u = b2lazy.lazyudf(f, [a], "float64")
    r = u.to_numpy() if how == "to_numpy" else u.compute()
    b = b2lazy.asarray(np.ones((256, 256)), chunks=(64, 64))
    later = (b * 3).to_numpy()
    later_stored = (b * 3 + a).compute()
    assert kept
    for inp, out in kept:
        assert not inp.flags.writeable
        out[...] = -7.0  # the function still holds writable arrays: they are its own now
    np.testing.assert_array_equal(r if how == "to_numpy" else r.to_numpy(), x + 1)
    np.testing.assert_array_equal(later, 3.0)
    np.testing.assert_array_equal(later_stored.to_numpy(), x + 3)
    # ... and the next evaluations of the lazyudf itself are not disturbed by them either.
    np.testing.assert_array_equal(u.to_numpy(), x + 1)


def test_a_kept_view_keeps_the_values_it_was_given():
    kept = []

    def f(ins, out, offset):
        out[...] = ins[0] * 2
        kept.append((offset, ins[0], out.copy(), out))

    x = np.arange(4096.0).reshape(64, 64)
    b2lazy.lazyudf(f, [b2lazy.asarray(x, chunks=(16, 64))], "float64").to_numpy()
    (b2lazy.asarray(x, chunks=(16, 64)) * 5).to_numpy()  # other work in between
    for offset, inp, out_then, out in kept:
        sl = tuple(slice(o, o + s) for o, s in zip(offset, inp.shape))
        np.testing.assert_array_equal(inp, x[sl])
        np.testing.assert_array_equal(out, out_then)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_interrupt_and_exit_in_the_function_propagate_as_themselves(exc):
    def f(ins, out, offset):
        raise exc()

    with pytest.raises(exc):
        b2lazy.lazyudf(f, [b2lazy.asarray(np.ones((64, 64)), chunks=(16, 16))], "float64").to_numpy()

    # Other exceptions stay the function's failure, named.
    def g(ins, out, offset):
        raise RuntimeError("boom")

    with pytest.raises(ValueError, match="lazyudf 'g' failed.*RuntimeError: boom"):
        b2lazy.lazyudf(g, [b2lazy.asarray(np.ones((8, 8)))], "float64").to_numpy()
