"""The probes of issues #11 and #36, run as a new user would: each in a fresh interpreter (or the
b2lazy command) in an empty temporary directory, with a timeout. A probe passes when it
gives NumPy's result or a clear error of the documented type, and no crash, hang, leftover
temporary or change to any file other than the output.

    python bench/probe_reliability.py            # the b2lazy importable by this interpreter
    python bench/probe_reliability.py 1 7        # only the probes of items 1 and 7
    /usr/bin/python3 bench/probe_reliability.py  # e.g. an older install, for a before/after

Prints one Markdown table row per probe and a count; bench/RESULTS.md ("Reliability") has
the figures. The regression tests (tests/python/reliability/) check the same cases and
many more; this script only re-runs the issue's own probes against any install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

PRELUDE = """
import os, sys, signal, threading, time, numpy as np, blosc2, b2lazy as bl
def out(*a): print("RESULT", *a, flush=True)
"""

# (item, probe, code, expectation). The expectation is the text the snippet must print
# after RESULT (all of it, in order), or "exit:N" for the process's status.
PROBES = [
    (
        "1",
        "compute(urlpath=dir, contiguous=True) over a user's directory",
        """
os.mkdir("d"); open("d/keep.txt", "w").write("x")
try: bl.asarray(np.ones(3)).compute(urlpath="d", contiguous=True)
except OSError as e: out("OSError", "d" in str(e))
out(os.path.exists("d/keep.txt"))
""",
        "OSError True True",
    ),
    (
        "1",
        "compute(urlpath='.') in a directory with files",
        """
open("keep.txt", "w").write("x")
try: bl.asarray(np.ones(3)).compute(urlpath=".", contiguous=True)
except OSError as e: out("OSError")
out(os.path.exists("keep.txt"))
""",
        "OSError True",
    ),
    (
        "1",
        "a text file and a .npy file at the output path",
        """
open("t.txt", "w").write("text"); np.save("x.npy", np.arange(3))
for p in ("t.txt", "x.npy"):
    try: bl.asarray(np.ones(3)).compute(urlpath=p)
    except OSError: out("OSError")
out(open("t.txt", "rb").read() == b"text", open("x.npy", "rb").read(6) == b"\\x93NUMPY")
""",
        "OSError OSError True True",
    ),
    ("1", "`b2lazy eval -o notes.txt` over a text file", "CLI", "exit:1"),
    (
        "2",
        "compute(chunks=(2**32, 2**32))",
        """
try: bl.asarray(np.ones((10, 10))).compute(chunks=(2**32, 2**32))
except ValueError: out("ValueError")
""",
        "ValueError",
    ),
    ("2", "`b2lazy eval --chunks 4294967296,4294967296`", "CLI", "exit:1|2"),
    (
        "3",
        "ones((2**32, 2**32)).size / sum",
        """
try: a = bl.ones((2**32, 2**32)); out(a.size, float(bl.sum(a)))
except ValueError: out("ValueError")
""",
        "ValueError",
    ),
    (
        "3",
        "zeros((2**63,)), a[2**63], chunks=(100.5, 10), max_memory=2**70",
        """
a = bl.asarray(np.arange(10.0))
for f, err in [(lambda: bl.zeros((2**63,)), (ValueError, OverflowError)), (lambda: a[2**63], IndexError),
               (lambda: bl.asarray(np.ones((200, 20)), chunks=(100.5, 10)), TypeError),
               (lambda: a.compute(max_memory=2**70), (ValueError, OverflowError))]:
    try: f(); out("no-error")
    except err as e: out(type(e).__name__ in ("ValueError", "OverflowError", "IndexError", "TypeError"))
""",
        "True True True True",
    ),
    (
        "3",
        "a[::-2**63] has NumPy's shape",
        """
x = np.arange(10.0); out(bl.asarray(x)[::-2**63].shape == x[::-2**63].shape)
""",
        "True",
    ),
    (
        "4",
        "metalayer chunks (100,100) over a frame of (50,100) chunks",
        """
blosc2.asarray(np.arange(20000.0).reshape(200, 100), urlpath="m.b2nd", mode="w", chunks=(50, 100), blocks=(10, 100))
raw = bytearray(open("m.b2nd", "rb").read())
# The b2nd metalayer holds the chunk shape as msgpack int32 (0xd2 + big-endian) after the shape.
import struct
old = b"\\xd2" + struct.pack(">i", 50) + b"\\xd2" + struct.pack(">i", 100)
i = raw.find(old); raw[i:i + len(old)] = b"\\xd2" + struct.pack(">i", 100) + b"\\xd2" + struct.pack(">i", 100)
open("m.b2nd", "wb").write(raw)
try: r = bl.open("m.b2nd").to_numpy(); out("read", int((r != np.arange(20000.0).reshape(200, 100)).sum()))
except OSError: out("OSError")
""",
        "OSError",
    ),
    (
        "5",
        "e = e - mean(e, axis=0), 30 times on 40x50",
        """
x = np.random.default_rng(0).random((40, 50)); e, n = bl.asarray(x), x
for _ in range(30): e, n = e - bl.mean(e, axis=0), n - n.mean(axis=0)
out(bool(np.allclose(e.to_numpy(), n)))
""",
        "True",
    ),
    (
        "5",
        "e = e*0.5 + sum(e)*0, 30 times",
        """
x = np.random.default_rng(0).random((40, 50)); e, n = bl.asarray(x), x
for _ in range(30): e, n = e * 0.5 + bl.sum(e) * 0, n * 0.5 + n.sum() * 0
out(bool(np.allclose(e.to_numpy(), n)))
""",
        "True",
    ),
    (
        "6",
        "compute(nthreads=400) with threads that cannot be created",
        """
import resource
resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))
try: bl.asarray(np.ones(10)).compute(nthreads=400); out("ran")
except (ValueError, RuntimeError, OSError, MemoryError) as e: out("error")
""",
        "error|ran",
    ),
    (
        "7",
        "sum(zeros((2**40, 300))): explain, then 4 s of compute, peak RSS < 256 MiB",
        """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
s = bl.sum(bl.zeros((2**40, 300))); s.explain()
threading.Timer(4.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try: float(s); out("finished")
except KeyboardInterrupt: pass
except MemoryError: out("MemoryError")
out(int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) < 256 << 10)
""",
        "True",
    ),
    ("8", "SIGTERM during compute() to a file", "SIGTERM", "no-temporary"),
    ("8", "SIGINT during compute() in a non-main thread", "SIGINT-THREAD", "no-temporary"),
    (
        "8",
        "Ctrl-C during single-chunk work (sum of a big lazy array)",
        """
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    x = bl.sin(bl.arange(0, 4e9, 1.0)); float(bl.sum(x * x)); out("finished")
except KeyboardInterrupt: out("KeyboardInterrupt")
""",
        "KeyboardInterrupt",
    ),
    (
        "8",
        "Ctrl-C during to_numpy()",
        """
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try: (bl.sin(bl.arange(0, 3e8, 1.0)) ** 2).to_numpy(); out("finished")
except KeyboardInterrupt: out("KeyboardInterrupt")
""",
        "KeyboardInterrupt",
    ),
    ("9", "two processes computing into one path", "WRITERS", "own-values"),
    (
        "10",
        "python-blosc2 empty arrays (chunks (0,)), take(x, []), x[True], var(correction>N)",
        """
blosc2.zeros((0,), urlpath="e.b2nd", mode="w")
x = bl.asarray(np.arange(6.0).reshape(2, 3))
out(bl.open("e.b2nd").to_numpy().shape, bl.take(x, np.array([], np.int64), axis=0).shape, x[True].shape,
    bool(np.isnan(float(bl.var(bl.asarray(np.ones(2)), correction=3)))))
""",
        "(0,) (0, 3) (1, 2, 3) True",
    ),
    (
        "10",
        "an out-of-range axis is an IndexError and a ValueError",
        """
x = bl.asarray(np.ones((2, 3)))
try: bl.sum(x, axis=5)
except Exception as e: out(isinstance(e, IndexError) and isinstance(e, ValueError))
""",
        "True",
    ),
    # --- issue #36: hostile files and saved expressions ---
    (
        "36.1",
        "400 random one-byte mutations of an inline .cframe in a saved expression: no crash",
        """
import json, base64, random
orig = np.arange(256.).reshape(16, 16)
fr = bl.asarray(orig, chunks=(8, 8), blocks=(4, 4)).to_cframe()
rng = random.Random(0); n = {"same": 0, "error": 0, "as python-blosc2": 0, "other": 0}
for i in range(400):
    f = bytearray(fr); f[634 if i == 0 else rng.randrange(len(f))] = rng.randrange(256)
    d = {"format": "b2lazy-expression", "version": 1, "root": 0,
         "calls": [{"fn": ".cframe", "args": [base64.b64encode(bytes(f)).decode()], "kwargs": {}}],
         "nodes": [{"shape": [16, 16], "dtype": "float64", "call": 0}]}
    open("e.b2lazy", "w").write(json.dumps(d))
    try: v = bl.open("e.b2lazy").to_numpy()
    except (OSError, ValueError): n["error"] += 1; continue
    if np.array_equal(v, orig): n["same"] += 1; continue
    try: ref = blosc2.ndarray_from_cframe(bytes(f))[...]  # frames carry no checksum: the reference reader
    except Exception: ref = None
    n["as python-blosc2" if ref is not None and np.array_equal(v, ref, equal_nan=True) else "other"] += 1
out("no crash", "(" + ", ".join(f"{k}: {c}" for k, c in n.items()) + ")")
""",
        "no crash",
    ),
    (
        "36.2",
        "Zarr [bytes, zstd, blosc] chunk whose Blosc header claims 2 GiB: error, peak RSS < 300 MiB",
        """
import zarr, struct
z = zarr.create_array("z.zarr", shape=(1000,), chunks=(1000,), dtype="f8", serializer=zarr.codecs.BytesCodec(),
                      compressors=[zarr.codecs.ZstdCodec(), zarr.codecs.BloscCodec()])
z[:] = 1.0
hdr = bytes([2, 1, 0x01, 8]) + struct.pack("<III", 2**31 - 16, 2**16, 50)
open("z.zarr/c/0", "wb").write(hdr + bytes(50 - len(hdr)))
try: bl.open("z.zarr").to_numpy(); out("read")
except OSError: out("OSError")
out(int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) < 300 << 10)
""",
        "OSError True",
    ),
    (
        "36.3",
        ".b2z member names of 300 and 5000 bytes: listed and opened",
        """
import zipfile
blosc2.asarray(np.arange(10.), urlpath="m.b2nd", mode="w")
with zipfile.ZipFile("s.b2z", "w", zipfile.ZIP_STORED) as z:
    for k in (300, 5000): z.write("m.b2nd", "a" * k + ".b2nd")
out(*[float(bl.open("s.b2z", key="/" + "a" * k).to_numpy().sum()) for k in (300, 5000)])
""",
        "45.0 45.0",
    ),
    (
        "36.4",
        "a FIFO as a Zarr chunk and as zarr.json: an error, no hang",
        """
signal.alarm(20)
bl.asarray(np.ones(10)).compute(urlpath="z.zarr", chunks=(10,))
os.remove("z.zarr/c/0"); os.mkfifo("z.zarr/c/0")
try: bl.open("z.zarr").to_numpy(); out("read")
except OSError: out("OSError")
bl.asarray(np.ones(10)).compute(urlpath="y.zarr")
os.remove("y.zarr/zarr.json"); os.mkfifo("y.zarr/zarr.json")
try: bl.open("y.zarr"); out("opened")
except OSError: out("OSError")
""",
        "OSError OSError",
    ),
    (
        "36.5",
        "HDF5 external storage, a virtual dataset, a null dataspace: values or errors, stderr quiet",
        """
import h5py, io, contextlib
np.arange(10.).tofile("ext.bin")
with h5py.File("f.h5", "w") as f:
    f.create_dataset("ext", shape=(10,), dtype="f8", external=[("ext.bin", 0, 80)])
    f.create_dataset("src", data=np.arange(10.))
    lay = h5py.VirtualLayout(shape=(10,), dtype="f8"); lay[:] = h5py.VirtualSource("f.h5", "src", shape=(10,))
    f.create_virtual_dataset("vds", lay, fillvalue=-1)
    f.create_dataset("null", data=h5py.Empty("f8"))
res = []
for k in ("ext", "vds", "null"):
    try: v = bl.open("f.h5#/" + k).to_numpy(); res.append("values" if np.array_equal(v, np.arange(10.)) else "WRONG")
    except (OSError, ValueError, TypeError) as e: res.append("error" if k in str(e) else "unnamed-error")
out(*res)
""",
        "values values error|error error error|values error error|error values error",
    ),
    (
        "36.6",
        "python-blosc2's saved LazyExpr (a + 1).save(): its values or a refusal naming it",
        """
a = blosc2.asarray(np.arange(16.), urlpath="a.b2nd", mode="w")
(a + 1).save(urlpath="le.b2nd")
try: v = bl.open("le.b2nd").to_numpy(); out("values" if np.array_equal(v, np.arange(16.) + 1) else "WRONG")
except (OSError, ValueError, TypeError) as e: out("refused" if "le.b2nd" in str(e) else "unnamed")
""",
        "values|refused",
    ),
    (
        "36.7",
        "r+ int64 file: x[0] = nan, inf, 1+2j, np.uint64(2**64-1)",
        """
blosc2.asarray(np.zeros(4, np.int64), urlpath="i.b2nd", mode="w")
w = bl.open("i.b2nd", mode="r+"); res = []
for v in (np.nan, np.inf, 1 + 2j, np.uint64(2**64 - 1)):
    try: w[0] = v; res.append("stored")
    except Exception as e: res.append(type(e).__name__)
out(*res, int(np.abs(blosc2.open("i.b2nd")[:]).sum()))
""",
        "ValueError OverflowError TypeError OverflowError 0",
    ),
    (
        "36.8",
        "a[a > 5] saved, a.b2nd rewritten (same shape, 128 Trues instead of 64)",
        """
v = np.zeros((64, 64)); v[0] = 10
blosc2.asarray(v, urlpath="a.b2nd", mode="w", chunks=(16, 64))
a = bl.open("a.b2nd"); a[a > 5].save("s.b2lazy")
v[1] = 10; blosc2.asarray(v, urlpath="a.b2nd", mode="w", chunks=(16, 64))
try: out(bl.open("s.b2lazy").to_numpy().size)
except (OSError, ValueError) as e: out("refused" if "a.b2nd" in str(e) else "unnamed")
""",
        "128|refused",
    ),
    (
        "36.9",
        "zarr:, f.h5#/x, s.b2z#/x operands round-trip through save/open and pickle",
        """
import pickle, h5py, zipfile
bl.asarray(np.arange(6.)).compute(urlpath="z.zarr")
with h5py.File("f.h5", "w") as f: f["x"] = np.arange(6.)
blosc2.asarray(np.arange(6.), urlpath="m.b2nd", mode="w")
with zipfile.ZipFile("s.b2z", "w", zipfile.ZIP_STORED) as z: z.write("m.b2nd", "x.b2nd")
res = []
for url in ("zarr:z.zarr", "f.h5#/x", "hdf5:f.h5#/x", "s.b2z#/x", "b2z:s.b2z#/x"):
    e = bl.open(url) + 1
    try:
        e.save("e.b2lazy")
        ok = np.array_equal(bl.open("e.b2lazy").to_numpy(), np.arange(6.) + 1)
        ok = ok and np.array_equal(pickle.loads(pickle.dumps(e)).to_numpy(), np.arange(6.) + 1)
        res.append(ok)
    except Exception as ex: res.append(type(ex).__name__)
out(*res)
""",
        "True True True True True",
    ),
    (
        "36.10",
        "250 chained operations: save, pickle, reopen",
        """
import pickle
e = bl.asarray(np.zeros(4))
for i in range(250): e = e + 1
try:
    e.save("e.b2lazy"); p = pickle.loads(pickle.dumps(e))
    out(float(bl.open("e.b2lazy").to_numpy()[0]), float(p.to_numpy()[0]))
except RecursionError: out("RecursionError")
""",
        "250.0 250.0",
    ),
    (
        "36.11",
        "lazyudf views kept after the call, written later; Ctrl-C inside a UDF",
        """
kept = []
def f(ins, o, off): o[...] = ins[0] + 1; kept.append(o)
x = np.arange(65536.).reshape(256, 256)
r = bl.lazyudf(f, [bl.asarray(x, chunks=(64, 64))], "float64").to_numpy()
later = (bl.asarray(np.ones((256, 256)), chunks=(64, 64)) * 3).to_numpy()
for o in kept: o[...] = -7.0
out(int((r != x + 1).sum()) + int((later != 3).sum()))
def g(ins, o, off): raise KeyboardInterrupt
try: bl.lazyudf(g, [bl.asarray(x)], "float64").to_numpy()
except BaseException as e: out(type(e).__name__)
""",
        "0 KeyboardInterrupt",
    ),
    (
        "36.12",
        ".b2z with two members named x.b2nd: agrees with python-blosc2 or refuses",
        """
import zipfile, warnings
warnings.simplefilter("ignore")
with blosc2.DictStore("s.b2z", mode="w", threshold=0) as ds: ds["/seed"] = np.zeros(2)
with zipfile.ZipFile("s.b2z") as zin, zipfile.ZipFile("d.b2z", "w") as z:
    z.writestr("embed.b2e", zin.read("embed.b2e"))
    z.writestr("x.b2nd", blosc2.asarray(np.arange(64.)).to_cframe())
    z.writestr("x.b2nd", blosc2.asarray(np.full(64, 9.)).to_cframe())
ref = float(blosc2.DictStore("d.b2z", mode="r")["/x"][:].sum())
try: out("agree" if float(bl.open("d.b2z", key="/x").to_numpy().sum()) == ref else "DIFFER")
except (OSError, ValueError) as e: out("refused" if "x" in str(e) else "unnamed")
""",
        "agree|refused",
    ),
    (
        "36.13",
        "malformed saved files, fn 'Plan', a lone surrogate, Zarr fill_value null",
        """
import json
res = []
for d in ({"format": "b2lazy-expression", "version": 1, "root": 0, "calls": 5, "nodes": [1]},
          {"format": "b2lazy-expression", "version": 1, "root": 0, "calls": [{"fn": "Plan", "args": [], "kwargs": {}}],
           "nodes": [{"shape": [], "dtype": "float64", "call": 0}]}):
    open("m.b2lazy", "w").write(json.dumps(d))
    try: r = bl.open("m.b2lazy"); res.append(type(r).__name__)
    except ValueError as e: res.append("ValueError" if "m.b2lazy" in str(e) else "unnamed")
    except Exception as e: res.append(type(e).__name__)
try: bl.evaluate("a\\ud800 + 1", a=bl.asarray(np.ones(2)))
except ValueError: res.append("ValueError")
except Exception as e: res.append(type(e).__name__)
bl.asarray(np.ones(4)).compute(urlpath="z.zarr")
m = json.load(open("z.zarr/zarr.json")); m["fill_value"] = None; json.dump(m, open("z.zarr/zarr.json", "w"))
try: bl.open("z.zarr"); res.append("accepted")
except (OSError, ValueError) as e: res.append("refused" if "fill_value" in str(e) else "unnamed")
out(*res)
""",
        "ValueError ValueError ValueError refused",
    ),
    (
        "36.14",
        "a saved unique_values(zeros(2**40)) opens without doing the work",
        """
import json
signal.alarm(30)
d = {"format": "b2lazy-expression", "version": 1, "root": 1,
     "calls": [{"fn": "zeros", "args": [{"tuple": [2**40]}], "kwargs": {}},
               {"fn": "unique_values", "args": [{"array": 0}], "kwargs": {}}],
     "nodes": [{"shape": [2**40], "dtype": "float64", "call": 0}, {"shape": [1], "dtype": "float64", "call": 1}]}
open("w.b2lazy", "w").write(json.dumps(d))
try: bl.open("w.b2lazy"); out("opened")
except (OSError, ValueError) as e: out("refused")
""",
        "opened|refused",
    ),
    (
        "36.g",
        "b2lazy.open(saved, operands={path: other}) substitutes an operand without editing the file",
        """
bl.asarray(np.arange(5.)).compute(urlpath="a.b2nd"); bl.asarray(-np.arange(5.)).compute(urlpath="b.b2nd")
(bl.open("a.b2nd") * 2).save("e.b2lazy")
r = bl.open("e.b2lazy", operands={os.path.abspath("a.b2nd"): "b.b2nd"}).to_numpy()
out(bool((r == -2 * np.arange(5.)).all()))
""",
        "True",
    ),
    ("36.r+", "12 SIGKILLs during a 2048x2048 float64 r+ write: chunks wholly old or new", "KILLS", "whole-chunks"),
]


def run_python(code, cwd, timeout=120):
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def command():
    return shutil.which("b2lazy", path=os.path.dirname(sys.executable)) or shutil.which("b2lazy")


def leftovers(cwd):
    return [n for n in os.listdir(cwd) if ".tmp-" in n]


def special(kind, cwd):
    """The probes that drive processes from outside; returns what they observed."""
    setup = run_python(
        'np.save("a.npy", np.random.default_rng(0).random((3000, 3000)))\n'
        'bl.asarray(np.load("a.npy"), chunks=(100, 3000)).compute(urlpath="a.b2nd")',
        cwd,
    )
    if setup.returncode:
        return "setup failed: " + setup.stderr.strip().splitlines()[-1]
    if kind == "CLI":
        raise AssertionError
    if kind in ("SIGTERM", "SIGINT-THREAD"):
        import signal
        import time

        if kind == "SIGTERM":
            code = (
                'a = bl.open("a.b2nd"); print("go", flush=True)\n'
                '(bl.matmul(a, a) + a).compute(urlpath="o.b2nd", chunks=(100, 100), nthreads=1)'
            )
            sig = signal.SIGTERM
        else:
            code = (
                'a = bl.open("a.b2nd")\n'
                't = threading.Thread(target=lambda: (bl.matmul(a, a) + a).compute(urlpath="o.b2nd", '
                "chunks=(100, 100), nthreads=1), daemon=True)\n"
                't.start(); print("go", flush=True); t.join()'
            )
            sig = signal.SIGINT
        p = subprocess.Popen(
            [sys.executable, "-c", PRELUDE + code], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        p.stdout.readline()
        deadline = time.time() + 30  # wait until the temporary exists, so the signal hits the work
        while not leftovers(cwd) and time.time() < deadline and p.poll() is None:
            time.sleep(0.05)
        p.send_signal(sig)
        try:
            p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            return "hang"
        return "no-temporary" if not leftovers(cwd) else "temporary left: " + ", ".join(leftovers(cwd))
    if kind == "WRITERS":
        code = textwrap.dedent("""
            v = float(sys.argv[1])
            for _ in range(5):
                r = (bl.open("a.b2nd") * 0 + v).compute(urlpath="o.b2nd", chunks=(500, 3000))
                if not (r.to_numpy() == v).all(): out("other"); break
            else: out("own")
        """)
        ps = [
            subprocess.Popen(
                [sys.executable, "-c", PRELUDE + code, str(v)],
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for v in (1, 2)
        ]
        outs = [p.communicate(timeout=300) for p in ps]
        got = [o[0].split("RESULT")[-1].strip() if "RESULT" in o[0] else "error: " + o[1].strip()[-80:] for o in outs]
        return "own-values" if got == ["own", "own"] else " / ".join(got)
    if kind == "KILLS":
        return kills(cwd)
    raise ValueError(kind)


def kills(cwd, n=12, size=2048, chunk=256):
    """SIGKILLs at random points of an r+ write: each chunk wholly old or new (or the file
    refused with an OSError) on a contiguous file and a sparse directory."""
    import random
    import signal
    import time

    import blosc2
    import numpy as np
    import b2lazy

    old = np.arange(size * size, dtype=np.float64).reshape(size, size)
    writer = (
        'w = bl.open(sys.argv[1], mode="r+"); print("go", flush=True)\n'
        f"w[...] = -np.arange({size}**2, dtype=np.float64).reshape({size}, {size}) - 1"
    )
    rng, seen = random.Random(0), []
    for contiguous in (True, False):
        path = os.path.join(cwd, "x.b2nd" if contiguous else "xdir")
        counts = {"old": 0, "new": 0, "mixed": 0, "refused": 0}
        for _ in range(n):
            blosc2.asarray(old, urlpath=path, mode="w", chunks=(chunk, chunk), blocks=(64, 64), contiguous=contiguous)
            p = subprocess.Popen([sys.executable, "-c", PRELUDE + writer, path], stdout=subprocess.PIPE, text=True)
            p.stdout.readline()
            time.sleep(rng.uniform(0, 0.6))
            p.send_signal(signal.SIGKILL)
            p.wait()
            p.stdout.close()
            try:
                got = b2lazy.open(path).to_numpy()
            except OSError:
                counts["refused"] += 1
                continue
            for i in range(0, size, chunk):
                for j in range(0, size, chunk):
                    g, o = got[i : i + chunk, j : j + chunk], old[i : i + chunk, j : j + chunk]
                    counts["old" if np.array_equal(g, o) else "new" if np.array_equal(g, -o - 1) else "mixed"] += 1
        seen.append(("file" if contiguous else "dir", counts))
    detail = "; ".join(
        f"{k}: {c['old']} old, {c['new']} new, {c['mixed']} mixed chunks, {c['refused']} files refused" for k, c in seen
    )
    return ("whole-chunks" if all(c["mixed"] == 0 for _, c in seen) else "MIXED") + f" ({detail})"


def cli_probe(name, cwd):
    exe = command()
    if exe is None:
        return "no command"
    run_python('bl.asarray(np.ones((10, 10))).compute(urlpath="a.b2nd")', cwd)
    if "notes.txt" in name:
        with open(os.path.join(cwd, "notes.txt"), "w") as f:
            f.write("my notes")
        r = subprocess.run(
            [exe, "eval", "a + 1", "a=a.b2nd", "-o", "notes.txt"], cwd=cwd, capture_output=True, text=True, timeout=60
        )
        with open(os.path.join(cwd, "notes.txt"), "rb") as f:
            intact = f.read() == b"my notes"
        return f"exit:{r.returncode}" + ("" if intact else " (notes.txt overwritten)")
    r = subprocess.run(
        [exe, "eval", "a + 1", "a=a.b2nd", "-o", "o.b2nd", "--chunks", "4294967296,4294967296"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return f"exit:{r.returncode}"


def main():
    only = sys.argv[1:]  # item numbers to run ("7", "36.2", or "36" for all of issue #36); all when none
    probes = [p for p in PROBES if not only or p[0] in only or p[0].split(".")[0] in only]
    rows, passed = [], 0
    for item, name, code, expect in probes:
        with tempfile.TemporaryDirectory() as cwd:
            try:
                if code == "CLI":
                    got = cli_probe(name, cwd)
                elif code in ("SIGTERM", "SIGINT-THREAD", "WRITERS", "KILLS"):
                    got = special(code, cwd)
                else:
                    r = run_python(code, cwd)
                    lines = [ln[len("RESULT ") :] for ln in r.stdout.splitlines() if ln.startswith("RESULT")]
                    if r.returncode < 0:
                        got = f"crash (signal {-r.returncode})"
                    elif r.returncode and not lines:
                        got = "exception: " + (r.stderr.strip().splitlines() or ["?"])[-1][:100]
                    else:
                        got = " ".join(lines)
                    if leftovers(cwd):
                        got += " (temporary left)"
            except subprocess.TimeoutExpired:
                got = "hang (timeout)"
        ok = (
            got.split(" (")[0] in expect.split("|")
            if not expect.startswith("exit:")
            else got in ["exit:" + s for s in expect[5:].split("|")]
        )
        passed += ok
        rows.append(f"| {item} | {name} | {'pass' if ok else 'FAIL'} | {got} |")
    print("| item | probe | result | observed |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"\n{passed} of {len(probes)} probes pass ({sys.executable})")


if __name__ == "__main__":
    main()
