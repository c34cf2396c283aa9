"""Issue #13, item 4: damaged Zarr stores (tests/corrupt_zarr.py: metadata that is not
JSON, has wrong types, unknown codecs or data types; chunks emptied, truncated, garbled,
of the wrong size; shard indexes pointing outside the shard; paths that are no store) give
an OSError or TypeError naming the file or key at fault — never a crash or silent wrong
values where the format can tell. Each store is read in a fresh process (a crash there
fails the test rather than the suite)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

TESTS = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, TESTS)
import corrupt_zarr  # noqa: E402

READER = textwrap.dedent("""
    import json, sys
    import numpy as np, zarr
    import b2lazy
    out = {}
    for path in sys.argv[1:]:
        try:
            got = b2lazy.open(path).to_numpy()
            try:
                ref = zarr.open_array(path, mode="r")[...]
                out[path] = ["ok", bool(np.array_equal(got, ref, equal_nan=True))]
            except Exception as e:
                out[path] = ["ok", None]
        except (OSError, TypeError) as e:
            out[path] = ["error", type(e).__name__ + ": " + str(e)]
        except Exception as e:
            out[path] = ["other", type(e).__name__ + ": " + str(e)]
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    d = tmp_path_factory.mktemp("corrupt_zarr")
    cases = corrupt_zarr.write_corpus(str(d))
    p = subprocess.run(
        [sys.executable, "-c", READER, *[c.path for c in cases]], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return cases, json.loads(p.stdout)


def test_damaged_stores(outcomes):
    cases, out = outcomes
    problems = []
    for c in cases:
        kind, detail = out[c.path]
        if kind == "other":
            problems.append(f"{c.name}: unexpected {detail}")
        elif c.must_fail and kind != "error":
            problems.append(f"{c.name}: read without an error")
        elif kind == "error" and c.names and c.names not in detail:
            problems.append(f"{c.name}: the error does not name {c.names!r}: {detail}")
        elif kind == "error" and os.path.basename(c.path) not in detail:
            problems.append(f"{c.name}: the error does not name the store: {detail}")
        elif c.harmless and not (kind == "ok" and detail is True):
            problems.append(f"{c.name}: not read as zarr-python reads it: {kind} {detail}")
    assert not problems, "\n".join(problems)
    assert sum(c.must_fail for c in cases) > 80


def test_a_store_removed_while_open_is_an_error(tmp_path):
    import shutil
    import b2lazy
    import zarr

    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=(20,), chunks=(5,), dtype="f8")
    z[:10] = 1.0  # chunks 2 and 3 absent: read as the fill value while the store exists
    a = b2lazy.open(str(tmp_path / "a.zarr"))
    assert a.to_numpy()[10:].sum() == 0
    shutil.rmtree(tmp_path / "a.zarr")
    with pytest.raises(OSError, match="removed"):
        a[10:].to_numpy()


# --- fill_value null (issue #36 item 13): refused where zarr-python refuses it ----------


def _with_fill(path, fmt, dtype, fill, drop=False):
    import zarr

    z = zarr.create_array(str(path), shape=(4,), chunks=(2,), dtype=dtype, zarr_format=fmt, overwrite=True)
    z[:2] = 1
    meta = os.path.join(str(path), "zarr.json" if fmt == 3 else ".zarray")
    with open(meta) as f:
        m = json.load(f)
    if drop:
        del m["fill_value"]
    else:
        m["fill_value"] = fill
    with open(meta, "w") as f:
        json.dump(m, f)
    return meta


def _zarr_python(path):
    import warnings
    import zarr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return zarr.open_array(str(path), mode="r")[...]
        except Exception:
            return None


@pytest.mark.parametrize(
    "fmt, dtype, fill, where",
    [
        (3, "float64", None, "fill_value"),
        (3, "int32", None, "fill_value"),
        (3, "uint8", None, "fill_value"),
        (3, "float16", None, "fill_value"),
        (3, "complex128", None, "fill_value"),
        (3, "complex64", [None, 0.0], "fill_value[0]"),
        (2, "<c16", [0.0, None], "fill_value[1]"),
        (2, "<c16", [None, None], "fill_value[0]"),
    ],
)
def test_null_fill_value_refused_as_zarr_python_does(tmp_path, fmt, dtype, fill, where):
    import b2lazy

    p = tmp_path / "a.zarr"
    meta = _with_fill(p, fmt, dtype, fill)
    assert _zarr_python(p) is None  # the oracle refuses it
    with pytest.raises(OSError) as e:
        b2lazy.open(str(p))
    assert str(e.value).startswith(f"'{meta}': {where}: null is not a fill value of data type"), e.value


@pytest.mark.parametrize("fmt, dtype", [(2, "<f8"), (2, "<i4"), (2, "|b1"), (2, "<c16"), (2, "<f2"), (3, "bool")])
def test_null_fill_value_read_as_zarr_python_does(tmp_path, fmt, dtype):
    """v2's null means "no fill value" (missing chunks read as 0); zarr-python reads a v3
    bool's null as False."""
    import numpy as np
    import b2lazy

    p = tmp_path / "a.zarr"
    _with_fill(p, fmt, dtype, None)
    ref = _zarr_python(p)
    assert ref is not None
    np.testing.assert_array_equal(b2lazy.open(str(p)).to_numpy(), ref)


@pytest.mark.parametrize("fmt", [2, 3])
def test_missing_fill_value_refused(tmp_path, fmt):
    import b2lazy

    p = tmp_path / "a.zarr"
    meta = _with_fill(p, fmt, "<f8" if fmt == 2 else "float64", None, drop=True)
    assert _zarr_python(p) is None
    with pytest.raises(OSError, match=f"'{meta}': missing 'fill_value'"):
        b2lazy.open(str(p))
