"""Issue #36, items 9, 10 and 14 on the cluster path: compute(scheduler=...) ships the saved
form of the expression, so every operand URL, long chains and deferred calls (nonzero)
run there as they do locally."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import b2lazy as bl

pytest.importorskip("distributed")  # (the cluster: conftest.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "reliability"))
from test_rel_saved_files import _url_operands  # noqa: E402


def test_every_operand_url_on_the_cluster(client, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x, urls = _url_operands(tmp_path)
    for u in urls:
        a = bl.open(u[0], **u[1]) if isinstance(u, tuple) else bl.open(u)
        np.testing.assert_array_equal((a * 2 + 1).to_numpy(scheduler=client), 2 * x + 1, err_msg=str(u))
        out = str(tmp_path / "out.b2nd")
        (a - 1).compute(urlpath=out, scheduler=client)
        np.testing.assert_array_equal(bl.open(out).to_numpy(), x - 1, err_msg=str(u))


@pytest.mark.parametrize("depth", [250, 1000])
def test_long_chains_on_the_cluster(client, depth):
    x = np.arange(6.0)
    y = bl.asarray(x)
    for _ in range(depth):
        y = y + 1
    np.testing.assert_array_equal(y.to_numpy(scheduler=client), x + depth)


def test_reopened_deferred_calls_on_the_cluster(client, tmp_path):
    x = np.arange(40.0) % 7
    path = str(tmp_path / "a.b2nd")
    bl.asarray(x, chunks=(16,)).compute(urlpath=path)
    a = bl.open(path)
    f = str(tmp_path / "e.b2lazy")
    (bl.nonzero(a > 3)[0] * 2).save(f)
    np.testing.assert_array_equal(bl.open(f).to_numpy(scheduler=client), np.nonzero(x > 3)[0] * 2)
