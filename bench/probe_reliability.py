"""The probes of issue #11, run as a new user would: each in a fresh interpreter (or the
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
    ("1", "compute(urlpath=dir, contiguous=True) over a user's directory", """
os.mkdir("d"); open("d/keep.txt", "w").write("x")
try: bl.asarray(np.ones(3)).compute(urlpath="d", contiguous=True)
except OSError as e: out("OSError", "d" in str(e))
out(os.path.exists("d/keep.txt"))
""", "OSError True True"),
    ("1", "compute(urlpath='.') in a directory with files", """
open("keep.txt", "w").write("x")
try: bl.asarray(np.ones(3)).compute(urlpath=".", contiguous=True)
except OSError as e: out("OSError")
out(os.path.exists("keep.txt"))
""", "OSError True"),
    ("1", "a text file and a .npy file at the output path", """
open("t.txt", "w").write("text"); np.save("x.npy", np.arange(3))
for p in ("t.txt", "x.npy"):
    try: bl.asarray(np.ones(3)).compute(urlpath=p)
    except OSError: out("OSError")
out(open("t.txt", "rb").read() == b"text", open("x.npy", "rb").read(6) == b"\\x93NUMPY")
""", "OSError OSError True True"),
    ("1", "`b2lazy eval -o notes.txt` over a text file", "CLI", "exit:1"),
    ("2", "compute(chunks=(2**32, 2**32))", """
try: bl.asarray(np.ones((10, 10))).compute(chunks=(2**32, 2**32))
except ValueError: out("ValueError")
""", "ValueError"),
    ("2", "`b2lazy eval --chunks 4294967296,4294967296`", "CLI", "exit:1|2"),
    ("3", "ones((2**32, 2**32)).size / sum", """
try: a = bl.ones((2**32, 2**32)); out(a.size, float(bl.sum(a)))
except ValueError: out("ValueError")
""", "ValueError"),
    ("3", "zeros((2**63,)), a[2**63], chunks=(100.5, 10), max_memory=2**70", """
a = bl.asarray(np.arange(10.0))
for f, err in [(lambda: bl.zeros((2**63,)), (ValueError, OverflowError)), (lambda: a[2**63], IndexError),
               (lambda: bl.asarray(np.ones((200, 20)), chunks=(100.5, 10)), TypeError),
               (lambda: a.compute(max_memory=2**70), (ValueError, OverflowError))]:
    try: f(); out("no-error")
    except err as e: out(type(e).__name__ in ("ValueError", "OverflowError", "IndexError", "TypeError"))
""", "True True True True"),
    ("3", "a[::-2**63] has NumPy's shape", """
x = np.arange(10.0); out(bl.asarray(x)[::-2**63].shape == x[::-2**63].shape)
""", "True"),
    ("4", "metalayer chunks (100,100) over a frame of (50,100) chunks", """
blosc2.asarray(np.arange(20000.0).reshape(200, 100), urlpath="m.b2nd", mode="w", chunks=(50, 100), blocks=(10, 100))
raw = bytearray(open("m.b2nd", "rb").read())
# The b2nd metalayer holds the chunk shape as msgpack int32 (0xd2 + big-endian) after the shape.
import struct
old = b"\\xd2" + struct.pack(">i", 50) + b"\\xd2" + struct.pack(">i", 100)
i = raw.find(old); raw[i:i + len(old)] = b"\\xd2" + struct.pack(">i", 100) + b"\\xd2" + struct.pack(">i", 100)
open("m.b2nd", "wb").write(raw)
try: r = bl.open("m.b2nd").to_numpy(); out("read", int((r != np.arange(20000.0).reshape(200, 100)).sum()))
except OSError: out("OSError")
""", "OSError"),
    ("5", "e = e - mean(e, axis=0), 30 times on 40x50", """
x = np.random.default_rng(0).random((40, 50)); e, n = bl.asarray(x), x
for _ in range(30): e, n = e - bl.mean(e, axis=0), n - n.mean(axis=0)
out(bool(np.allclose(e.to_numpy(), n)))
""", "True"),
    ("5", "e = e*0.5 + sum(e)*0, 30 times", """
x = np.random.default_rng(0).random((40, 50)); e, n = bl.asarray(x), x
for _ in range(30): e, n = e * 0.5 + bl.sum(e) * 0, n * 0.5 + n.sum() * 0
out(bool(np.allclose(e.to_numpy(), n)))
""", "True"),
    ("6", "compute(nthreads=400) with threads that cannot be created", """
import resource
resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))
try: bl.asarray(np.ones(10)).compute(nthreads=400); out("ran")
except (ValueError, RuntimeError, OSError, MemoryError) as e: out("error")
""", "error|ran"),
    ("7", "sum(zeros((2**40, 300))): explain, then 4 s of compute, peak RSS < 256 MiB", """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
s = bl.sum(bl.zeros((2**40, 300))); s.explain()
threading.Timer(4.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try: float(s); out("finished")
except KeyboardInterrupt: pass
except MemoryError: out("MemoryError")
out(int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) < 256 << 10)
""", "True"),
    ("8", "SIGTERM during compute() to a file", "SIGTERM", "no-temporary"),
    ("8", "SIGINT during compute() in a non-main thread", "SIGINT-THREAD", "no-temporary"),
    ("8", "Ctrl-C during single-chunk work (sum of a big lazy array)", """
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    x = bl.sin(bl.arange(0, 4e9, 1.0)); float(bl.sum(x * x)); out("finished")
except KeyboardInterrupt: out("KeyboardInterrupt")
""", "KeyboardInterrupt"),
    ("8", "Ctrl-C during to_numpy()", """
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try: (bl.sin(bl.arange(0, 3e8, 1.0)) ** 2).to_numpy(); out("finished")
except KeyboardInterrupt: out("KeyboardInterrupt")
""", "KeyboardInterrupt"),
    ("9", "two processes computing into one path", "WRITERS", "own-values"),
    ("10", "python-blosc2 empty arrays (chunks (0,)), take(x, []), x[True], var(correction>N)", """
blosc2.zeros((0,), urlpath="e.b2nd", mode="w")
x = bl.asarray(np.arange(6.0).reshape(2, 3))
out(bl.open("e.b2nd").to_numpy().shape, bl.take(x, np.array([], np.int64), axis=0).shape, x[True].shape,
    bool(np.isnan(float(bl.var(bl.asarray(np.ones(2)), correction=3)))))
""", "(0,) (0, 3) (1, 2, 3) True"),
    ("10", "an out-of-range axis is an IndexError and a ValueError", """
x = bl.asarray(np.ones((2, 3)))
try: bl.sum(x, axis=5)
except Exception as e: out(isinstance(e, IndexError) and isinstance(e, ValueError))
""", "True"),
]


def run_python(code, cwd, timeout=120):
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def command():
    return shutil.which("b2lazy", path=os.path.dirname(sys.executable)) or shutil.which("b2lazy")


def leftovers(cwd):
    return [n for n in os.listdir(cwd) if ".tmp-" in n]


def special(kind, cwd):
    """The probes that drive processes from outside; returns what they observed."""
    import numpy as np
    setup = run_python('np.save("a.npy", np.random.default_rng(0).random((3000, 3000)))\n'
                       'bl.asarray(np.load("a.npy"), chunks=(100, 3000)).compute(urlpath="a.b2nd")', cwd)
    if setup.returncode:
        return "setup failed: " + setup.stderr.strip().splitlines()[-1]
    if kind == "CLI":
        raise AssertionError
    if kind in ("SIGTERM", "SIGINT-THREAD"):
        import signal
        import time
        if kind == "SIGTERM":
            code = ('a = bl.open("a.b2nd"); print("go", flush=True)\n'
                    '(bl.matmul(a, a) + a).compute(urlpath="o.b2nd", chunks=(100, 100), nthreads=1)')
            sig = signal.SIGTERM
        else:
            code = ('a = bl.open("a.b2nd")\n'
                    't = threading.Thread(target=lambda: (bl.matmul(a, a) + a).compute(urlpath="o.b2nd", '
                    'chunks=(100, 100), nthreads=1), daemon=True)\n'
                    't.start(); print("go", flush=True); t.join()')
            sig = signal.SIGINT
        p = subprocess.Popen([sys.executable, "-c", PRELUDE + code], cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
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
        ps = [subprocess.Popen([sys.executable, "-c", PRELUDE + code, str(v)], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for v in (1, 2)]
        outs = [p.communicate(timeout=300) for p in ps]
        got = [o[0].split("RESULT")[-1].strip() if "RESULT" in o[0] else "error: " + o[1].strip()[-80:] for o in outs]
        return "own-values" if got == ["own", "own"] else " / ".join(got)
    raise ValueError(kind)


def cli_probe(name, cwd):
    exe = command()
    if exe is None:
        return "no command"
    run_python('bl.asarray(np.ones((10, 10))).compute(urlpath="a.b2nd")', cwd)
    if "notes.txt" in name:
        with open(os.path.join(cwd, "notes.txt"), "w") as f:
            f.write("my notes")
        r = subprocess.run([exe, "eval", "a + 1", "a=a.b2nd", "-o", "notes.txt"], cwd=cwd, capture_output=True,
                           text=True, timeout=60)
        with open(os.path.join(cwd, "notes.txt"), "rb") as f:
            intact = f.read() == b"my notes"
        return f"exit:{r.returncode}" + ("" if intact else " (notes.txt overwritten)")
    r = subprocess.run([exe, "eval", "a + 1", "a=a.b2nd", "-o", "o.b2nd", "--chunks", "4294967296,4294967296"],
                       cwd=cwd, capture_output=True, text=True, timeout=60)
    return f"exit:{r.returncode}"


def main():
    only = sys.argv[1:]  # item numbers to run; all when none
    probes = [p for p in PROBES if not only or p[0] in only]
    rows, passed = [], 0
    for item, name, code, expect in probes:
        with tempfile.TemporaryDirectory() as cwd:
            try:
                if code == "CLI":
                    got = cli_probe(name, cwd)
                elif code in ("SIGTERM", "SIGINT-THREAD", "WRITERS"):
                    got = special(code, cwd)
                else:
                    r = run_python(code, cwd)
                    lines = [ln[len("RESULT "):] for ln in r.stdout.splitlines() if ln.startswith("RESULT")]
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
        ok = got in expect.split("|") if not expect.startswith("exit:") else got in [
            "exit:" + s for s in expect[5:].split("|")]
        passed += ok
        rows.append(f"| {item} | {name} | {'pass' if ok else 'FAIL'} | {got} |")
    print("| item | probe | result | observed |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"\n{passed} of {len(probes)} probes pass ({sys.executable})")


if __name__ == "__main__":
    main()
