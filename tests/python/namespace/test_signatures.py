"""The Array API's signatures (issue #15): positional-only array arguments, keyword
arguments by name, and Array methods with their functions' signatures, as
inspect.signature reads them (the outside suite's test_signatures checks the rest)."""

import inspect

import b2lazy as bl

P = inspect.Parameter


def kinds(fn):
    return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values()]


def test_elementwise_functions_take_positional_only_arrays():
    assert kinds(bl.sin) == [("x", P.POSITIONAL_ONLY)]
    assert kinds(bl.atan2) == [("x1", P.POSITIONAL_ONLY), ("x2", P.POSITIONAL_ONLY)]
    assert bl.add.__name__ == "add" and bl.arctan2 is bl.atan2


def test_creation_and_manipulation_signatures():
    sig = inspect.signature(bl.eye)
    assert [p.kind for p in list(sig.parameters.values())[:2]] == [P.POSITIONAL_ONLY] * 2
    assert {"k", "dtype", "device"} <= set(sig.parameters)
    for fn in (bl.zeros, bl.ones, bl.empty, bl.full, bl.arange, bl.linspace, bl.asarray, bl.zeros_like):
        assert "device" in inspect.signature(fn).parameters, fn.__name__
    assert inspect.signature(bl.astype).parameters["copy"].default is True
    assert inspect.signature(bl.repeat).parameters["axis"].kind == P.KEYWORD_ONLY


def test_array_methods_have_their_functions_signatures():
    x = bl.asarray([1.0, 2.0])
    sig = inspect.signature(x.sum)
    assert {"axis", "keepdims", "dtype"} <= set(sig.parameters)
    assert float(x.sum(axis=0)) == 3.0 and x.mean(keepdims=True).shape == (1,)
    assert list(inspect.signature(x.to_device).parameters) == ["device", "stream"]
    assert inspect.signature(x.__dlpack__).parameters["copy"].kind == P.KEYWORD_ONLY
