"""Issue #36: hostile and unlucky saved expressions (docs/serialization.md).

A saved expression is a small JSON file that other people may have made: opening it must
not crash, hang, do work proportional to data, read paths it does not name, or give values
of other data quietly. Each test checks one of the issue's defects against NumPy."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import b2lazy as bl

TIMEOUT = 300


def b64(b):
    return base64.b64encode(bytes(b)).decode()


def saved(path, calls, nodes, root=None):
    d = {"format": "b2lazy-expression", "version": 1, "root": len(nodes) - 1 if root is None else root,
         "calls": calls, "nodes": nodes}
    with open(path, "w") as f:
        json.dump(d, f)
    return str(path)


def run(code, cwd):
    """`code` in a fresh interpreter (a crash is its exit status, not ours)."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True,
                       timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


# --- item 1: a corrupt inline frame is a clean error, never a crash ---------------------------
MUTATIONS = """
import base64, json, random
import numpy as np, b2lazy as bl
ref = np.arange(256.).reshape(16, 16)
frame = bl.asarray(ref, chunks=(8, 8), blocks=(4, 4)).to_cframe()
def open_saved(f, tag):
    call = ({"fn": ".cframe", "args": [base64.b64encode(bytes(f)).decode()], "kwargs": {}} if tag == ".cframe" else
            {"fn": "asarray", "args": [{"blosc2": base64.b64encode(bytes(f)).decode()}], "kwargs": {}})
    d = {"format": "b2lazy-expression", "version": 1, "root": 0, "calls": [call],
         "nodes": [{"shape": [16, 16], "dtype": "float64", "call": 0}]}
    with open("e.b2lazy", "w") as fh:
        json.dump(d, fh)
    return bl.open("e.b2lazy").to_numpy()
f = bytearray(frame); f[634] = 1   # the issue's recipe
for tag in (".cframe", "blosc2"):
    try:
        open_saved(f, tag)
    except (OSError, ValueError) as e:
        print("recipe", tag, type(e).__name__, e)
rng = random.Random(36)
outcomes = {"values": 0, "error": 0}
for i in range(400):
    f = bytearray(frame)
    f[rng.randrange(len(f))] = rng.randrange(256)
    try:
        got = open_saved(f, ".cframe" if i % 2 else "blosc2")
        assert got.shape == ref.shape and got.dtype == ref.dtype
        outcomes["values"] += 1
    except (OSError, ValueError, TypeError) as e:
        outcomes["error"] += 1
print("outcomes", outcomes)
"""


def test_corrupt_inline_frames_are_clean_errors(tmp_path):
    """The issue's recipe (byte 634 of a frame set to 1) and 400 random single-byte
    mutations of an inline frame, as `.cframe` and as a `blosc2` value: the process ends
    normally, each mutation either opens (a frame has no checksum: a byte of compressed data
    may change values, never shape or dtype) or is an OSError/ValueError (TypeError for a
    dtype b2lazy does not handle, as for b2nd files)."""
    rc, out, err = run(MUTATIONS, tmp_path)
    assert rc == 0, f"exit status {rc}: {err[-2000:]}"
    assert "recipe .cframe OSError 'memory#" in out and "recipe blosc2 OSError 'memory#" in out, out
    assert "outcomes" in out, out
