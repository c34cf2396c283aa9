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
    p = subprocess.run([sys.executable, "-c", READER, *[c.path for c in cases]], capture_output=True, text=True,
                       timeout=600)
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
    import numpy as np
    import b2lazy
    import zarr
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=(20,), chunks=(5,), dtype="f8")
    z[:10] = 1.0  # chunks 2 and 3 absent: read as the fill value while the store exists
    a = b2lazy.open(str(tmp_path / "a.zarr"))
    assert a.to_numpy()[10:].sum() == 0
    shutil.rmtree(tmp_path / "a.zarr")
    with pytest.raises(OSError, match="removed"):
        a[10:].to_numpy()
