"""
Saving an expression and reopening it
=====================================

``Array.save`` writes the expression — the calls that built it, operands by path — not its
values. Reopening replays only b2lazy functions (a saved file cannot run code), checks the
operands' shapes and dtypes, and reads no data until a result is asked for.
"""

import json
import os
import shutil
import tempfile

import numpy as np

import b2lazy as bl

d = tempfile.mkdtemp()
a = bl.linspace(-1, 1, 1000 * 500, shape=(1000, 500)).compute(urlpath=os.path.join(d, "a.b2nd"))
b = bl.asarray(np.random.default_rng(1).random((1000, 500))).compute(urlpath=os.path.join(d, "b.b2nd"))
e = bl.where(a > 0, bl.sqrt(a) * b, -b) - bl.median(b, axis=0)
e.save(os.path.join(d, "e.b2lazy"))
saved = json.load(open(os.path.join(d, "e.b2lazy")))
print(os.path.getsize(os.path.join(d, "e.b2lazy")), "bytes;", [c["fn"] for c in saved["calls"]])

# %%
e2 = bl.open(os.path.join(d, "e.b2lazy"))
print(e2)
print(np.array_equal(e2.to_numpy(), e.to_numpy()))

# %%
# Operands can be replaced when reopening, without editing the file: here ``b`` by other
# data of the same shape and dtype.
bl.ones((1000, 500)).compute(urlpath=os.path.join(d, "ones.b2nd"))
url = saved["calls"][[c["fn"] for c in saved["calls"]].index("open", 1)]["args"][0]
e3 = bl.open(os.path.join(d, "e.b2lazy"), operands={url: os.path.join(d, "ones.b2nd")})
print(url.endswith("b.b2nd"), e3[:2, :4].to_numpy())
shutil.rmtree(d)
