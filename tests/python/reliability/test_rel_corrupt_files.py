"""Corrupted and inconsistent b2nd files (issue #11, items 4 and 11).

Every case of tests/corrupt_files.py (truncations, flipped bytes in header, chunks, index
and trailer, tampered metalayers, short chunks, damaged sparse directories) is read by
python-blosc2 (the oracle) and by b2lazy: b2lazy.open, to_numpy, (a + 1).compute() and a
partial read, and the `b2lazy info` / `b2lazy eval` commands. b2lazy's outcome must be an
OSError naming the path (exit status 1 and such a message for the commands) or exactly the
values python-blosc2 reads; never a crash, never other values, never exit 0 with wrong data.

The readers run in worker subprocesses (this file run as a script), one case after another;
a case that kills its worker is recorded as a crash and the worker restarted after it.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap

import blosc2
import numpy as np
import pytest

import b2lazy

# tests/ and tests/python/ (this file also runs as the readers' worker script, outside pytest)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", ".."), os.path.join(HERE, "..")]
import corrupt_files  # noqa: E402  (tests/corrupt_files.py)
from conftest import B2LAZY_COMMAND  # noqa: E402

EXE = B2LAZY_COMMAND
# The cases' names (they do not depend on where the files are written).
CASES = corrupt_files.cases(corrupt_files.originals("/nonexistent"))
# A file's dtype that b2lazy does not know is a TypeError naming the path (as for a valid
# file in such a dtype); every other failure to read is an OSError.
ERRORS_ALLOWED = {"OSError": "", "TypeError": "unsupported dtype"}


def partial_index(shape):
    """A few items inside the first chunk (the single-chunk getitem path of a read)."""
    return tuple(slice(1, min(s, 3)) for s in shape)


# ---------------------------------------------------------------------------------------
# Workers: `python test_rel_corrupt_files.py blosc2|b2lazy OUTDIR I PATH...` reads each path
# and saves OUTDIR/<i>.npz (the values of each read that succeeded) and OUTDIR/<i>.json
# (the error of each that failed), printing "start i" before and "done i" after each.
# ---------------------------------------------------------------------------------------
def _reads_blosc2(path):
    a = blosc2.open(path)
    yield "values", lambda: a[...]


def _reads_b2lazy(path):
    x = b2lazy.open(path)
    yield "values", x.to_numpy
    yield "plus_one", lambda: (x + 1).compute().to_numpy()
    if x.ndim:
        yield "partial", lambda: x[partial_index(x.shape)].to_numpy()


def _error(e):
    return {"type": type(e).__name__, "message": str(e), "os_error": isinstance(e, OSError)}


def _worker(kind, outdir, paths):
    reads = _reads_blosc2 if kind == "blosc2" else _reads_b2lazy
    for i, path in paths:
        print("start", i, flush=True)
        values, errors = {}, {}
        try:
            for what, read in reads(path):
                try:
                    values[what] = read()
                except Exception as e:  # noqa: BLE001 (recorded, judged by the test)
                    errors[what] = _error(e)
        except Exception as e:  # noqa: BLE001 (the open)
            errors["open"] = _error(e)
        np.savez(os.path.join(outdir, f"{i}.npz"), **values)
        with open(os.path.join(outdir, f"{i}.json"), "w") as fh:
            json.dump(errors, fh)
        print("done", i, flush=True)


def run_workers(kind, paths, outdir):
    """Reads `paths` in worker subprocesses; returns {i: result}, a result being
    {"values": {read: array}, "errors": {read or "open": error}} or {"crash": stderr}."""
    os.makedirs(outdir, exist_ok=True)
    todo = list(enumerate(paths))
    crashes = {}
    while todo:
        args = [a for i, p in todo for a in (str(i), p)]
        r = subprocess.run([sys.executable, __file__, kind, outdir, *args], capture_output=True, text=True, timeout=600)
        started = [int(line.split()[1]) for line in r.stdout.splitlines() if line.startswith("start")]
        finished = {int(line.split()[1]) for line in r.stdout.splitlines() if line.startswith("done")}
        if r.returncode == 0:
            break
        crashed = started[-1] if started and started[-1] not in finished else None
        assert crashed is not None, f"{kind} worker failed outside a case: {r.stderr[-2000:]}"
        crashes[crashed] = f"exit status {r.returncode}: {r.stderr[-2000:]}"
        todo = [(i, p) for i, p in todo if i > crashed]
    results = {}
    for i in range(len(paths)):
        if i in crashes:
            results[i] = {"crash": crashes[i]}
            continue
        with np.load(os.path.join(outdir, f"{i}.npz")) as f:
            values = {k: f[k] for k in f.files}
        with open(os.path.join(outdir, f"{i}.json")) as fh:
            results[i] = {"values": values, "errors": json.load(fh)}
    return results


def run_command(*args):
    r = subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120)
    return {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Every case written and read by python-blosc2, b2lazy and the command."""
    root = tmp_path_factory.mktemp("corrupt")
    origs = corrupt_files.write_originals(str(root / "originals"))
    cases = corrupt_files.cases(origs)
    paths = [c.write(str(root / (c.name + ".b2nd"))) for c in cases]
    ref = run_workers("blosc2", paths, str(root / "out-blosc2"))
    got = run_workers("b2lazy", paths, str(root / "out-b2lazy"))
    out = {}
    for i, (case, path) in enumerate(zip(cases, paths)):
        o = {"case": case, "path": path, "ref": ref[i], "got": got[i]}
        if EXE:
            o["info"] = run_command("info", path)
            dst = str(root / "eval-out.b2nd")
            o["eval"] = run_command("eval", "a + 1", f"a={path}", "-o", dst, "--no-progress")
            if o["eval"]["rc"] == 0:
                o["eval"]["values"] = blosc2.open(dst)[...]
        out[case.name] = o
    return out


def assert_same(got, want, what):
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, got.dtype, want.shape, want.dtype)
    assert got.tobytes() == want.tobytes() or np.array_equal(got, want, equal_nan=True), what


def assert_error_names_path(err, path):
    assert err["type"] in ERRORS_ALLOWED and ERRORS_ALLOWED[err["type"]] in err["message"], err
    assert err["os_error"] or err["type"] != "OSError", err
    assert path in err["message"], err


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_corrupted_file(outcomes, name):
    o = outcomes[name]
    case, path, ref, got = o["case"], o["path"], o["ref"], o["got"]
    assert "crash" not in got, f"b2lazy crashed on {name}: {got['crash']}"
    errors, values = got["errors"], got["values"]
    for what, err in errors.items():
        assert not case.harmless, f"{name}: b2lazy refused a harmless change ({what}): {err}"
        assert_error_names_path(err, path)
    # What a successful read must give: python-blosc2's values; the original's when
    # python-blosc2 fails (in its own layer: vlmeta, checks of its own) or when the file is
    # inconsistent (then only a read of an intact chunk may succeed: the partial one).
    want = ref.get("values", {}).get("values") if "crash" not in ref else None
    if case.must_fail:
        assert "values" not in values and "plus_one" not in values, f"{name}: b2lazy read an inconsistent file"
        want = None
    if want is None:
        want = case.original.values
    v = values.get("values")
    if v is not None:
        assert_same(v, want, f"{name}: b2lazy and python-blosc2 read different values")
    if "plus_one" in values:
        assert_same(values["plus_one"], want + 1, f"{name}: (a + 1).compute()")
    if "partial" in values:
        assert_same(values["partial"], want[partial_index(want.shape)], f"{name}: a partial read")
    if not EXE:
        return
    info, ev = o["info"], o["eval"]
    for what, r in (("info", info), ("eval", ev)):
        assert r["rc"] in (0, 1), f"b2lazy {what} on {name}: exit status {r['rc']}\n{r['stderr'][-2000:]}"
        if r["rc"] == 1:
            assert "error" in r["stderr"] and path in r["stderr"], r["stderr"]
    assert (info["rc"] == 0) == ("open" not in errors), f"b2lazy info and b2lazy.open disagree on {name}: {info}"
    if ev["rc"] == 0:
        assert not case.must_fail, f"b2lazy eval exits 0 on the inconsistent {name}"
        assert_same(ev["values"], want + 1, f"{name}: b2lazy eval wrote other values")


# ---------------------------------------------------------------------------------------
# The two files of the issue, as regression tests.
# ---------------------------------------------------------------------------------------
def _issue_array(path):
    ref = np.arange(10000.0).reshape(100, 100)
    blosc2.asarray(ref, urlpath=path, chunks=(50, 100), blocks=(10, 100), mode="w")
    return ref


def test_metalayer_chunks_disagree_with_frame(tmp_path):
    """Metalayer chunks (100, 100) where the frame holds (50, 100) chunks: b2lazy read
    45 000 wrong cells and `b2lazy eval` exited 0."""
    path = str(tmp_path / "a.b2nd")
    _issue_array(path)
    with open(path, "rb") as fh:
        data = fh.read()
    old = corrupt_files.meta_bytes((100, 100), (50, 100), (10, 100), "<f8")
    new = corrupt_files.meta_bytes((100, 100), (100, 100), (10, 100), "<f8")
    assert data.count(old) == 1
    with open(path, "wb") as fh:
        fh.write(data.replace(old, new))
    with pytest.raises(OSError, match=r"a\.b2nd.*2 chunks.*chunks \(100, 100\).* 1"):
        b2lazy.open(path)
    if EXE:
        r = run_command("eval", "a + 1", f"a={path}", "-o", str(tmp_path / "o.b2nd"), "--no-progress")
        assert r["rc"] == 1 and path in r["stderr"], r
        assert not os.path.exists(tmp_path / "o.b2nd")


def _shorten_last_chunk(path):
    a = blosc2.open(path, mode="a")
    full = a.schunk.decompress_chunk(1)
    a.schunk.update_chunk(1, blosc2.compress2(full[: len(full) // 2], typesize=8))


def test_short_last_chunk(tmp_path):
    """The last chunk holds fewer bytes than the metalayer says: b2lazy returned 5 000
    cells of stale memory. The frame's total size tells at open."""
    path = str(tmp_path / "a.b2nd")
    _issue_array(path)
    _shorten_last_chunk(path)
    with pytest.raises(OSError, match=r"a\.b2nd.* 60000 uncompressed bytes"):
        b2lazy.open(path)


def test_short_last_chunk_found_when_read(tmp_path):
    """Same, with the frame's total size patched to agree: the chunk's own header is checked
    before every decompression, whole chunk or a few items of it."""
    path = str(tmp_path / "a.b2nd")
    ref = _issue_array(path)
    _shorten_last_chunk(path)
    with open(path, "r+b") as fh:
        fh.seek(corrupt_files.NBYTES_FIELD.start)
        fh.write(struct.pack(">q", 80000))
    a = b2lazy.open(path)
    np.testing.assert_array_equal(a[:50].to_numpy(), ref[:50])  # the intact chunk reads
    for read in (lambda: a.to_numpy(), lambda: a[60, 3:5].to_numpy(), lambda: (a + 1).compute()):
        with pytest.raises(OSError, match=r"a\.b2nd': chunk 1 holds 20000 bytes where the array's chunks hold 40000"):
            read()
    if EXE:
        r = run_command("eval", "a + 1", f"a={path}", "-o", str(tmp_path / "o.b2nd"), "--no-progress")
        assert r["rc"] == 1 and "chunk 1 holds 20000 bytes" in r["stderr"], r


def test_inconsistent_in_memory_array():
    """An in-memory python-blosc2 array (passed to b2lazy as a frame) is checked as files are."""
    ref = np.arange(10000.0).reshape(100, 100)
    frame = blosc2.asarray(ref, chunks=(50, 100), blocks=(10, 100)).to_cframe()
    old = corrupt_files.meta_bytes((100, 100), (50, 100), (10, 100), "<f8")
    bad = frame.replace(old, corrupt_files.meta_bytes((100, 100), (100, 100), (10, 100), "<f8"))
    assert bad != frame
    nd = blosc2.ndarray_from_cframe(bad)  # python-blosc2 takes it
    with pytest.raises(OSError, match=r"'memory#\d+' as a b2nd array: its frame holds 2 chunks"):
        b2lazy.asarray(nd)
    assert_same(b2lazy.asarray(blosc2.ndarray_from_cframe(frame)).to_numpy(), ref, "the intact frame")


def test_valid_special_chunks_read(tmp_path):
    """Files whose chunks are run-length specials (zeros, NaNs, never written) and empty
    arrays pass the checks."""
    for name, make, want in [
        (
            "z",
            lambda p: blosc2.zeros((100, 30), dtype=np.float64, urlpath=p, chunks=(30, 30), blocks=(10, 30)),
            np.zeros((100, 30)),
        ),
        (
            "n",
            lambda p: blosc2.full((100,), np.nan, dtype=np.float32, urlpath=p, chunks=(30,), blocks=(10,)),
            np.full(100, np.nan, np.float32),
        ),
        (
            "e",
            lambda p: blosc2.empty((5, 0), dtype=np.int32, urlpath=p, chunks=(2, 3), blocks=(1, 2)),
            np.empty((5, 0), np.int32),
        ),
    ]:
        p = str(tmp_path / f"{name}.b2nd")
        make(p)
        assert_same(b2lazy.open(p).to_numpy(), want, name)


def test_uninitialised_chunks_read_as_zeros(tmp_path):
    """A chunk of "uninitialised" values (a special chunk C-Blosc2 does not write into the
    output) reads as zeros, never as whatever the scratch buffer held before."""
    path = str(tmp_path / "u.b2nd")
    a = blosc2.asarray(np.arange(100.0), urlpath=path, chunks=(50,), blocks=(10,), mode="w")
    a.schunk.update_chunk(1, _uninit_chunk(400, 8, 80))
    del a
    b = b2lazy.open(path)
    junk = b2lazy.asarray(np.full(100, 7.0), chunks=(50,), blocks=(10,))
    (junk + 1).to_numpy()  # leave non-zero values in the scratch buffers
    want = np.concatenate([np.arange(50.0), np.zeros(50)])
    assert_same(b.to_numpy(), want, "whole chunks")
    assert_same(b[60:62].to_numpy(), np.zeros(2), "a few items")


def _uninit_chunk(nbytes, typesize, blocksize):
    """A Blosc2 chunk of `nbytes` uninitialised values (what blosc2_chunk_uninit makes)."""
    header = bytearray(32)
    header[0], header[1], header[2], header[3] = 5, 1, 0x05 | 0x10, typesize  # extended header
    header[4:8] = nbytes.to_bytes(4, "little")
    header[8:12] = blocksize.to_bytes(4, "little")
    header[12:16] = (32).to_bytes(4, "little")
    header[31] = 4 << 4  # BLOSC2_SPECIAL_UNINIT
    return bytes(header)


# ---------------------------------------------------------------------------------------
# Item 11: failed opens free what they allocated. RSS of one process that opens corrupted
# files thousands of times must not grow (a leak of a frame per open would be megabytes).
# ---------------------------------------------------------------------------------------
def test_failed_opens_do_not_grow_memory(tmp_path):
    origs = corrupt_files.write_originals(str(tmp_path / "originals"))
    bad = [c.write(str(tmp_path / (c.name + ".b2nd"))) for c in corrupt_files.cases(origs) if c.must_fail]
    assert len(bad) > 150
    code = textwrap.dedent(f"""
        import b2lazy, psutil
        paths = {bad!r}
        def rounds(n):
            for _ in range(n):
                for p in paths:
                    try:
                        b2lazy.open(p).to_numpy()
                    except (OSError, TypeError):
                        pass
        rounds(3)  # warm-up: allocator pools, caches
        before = psutil.Process().memory_info().rss
        rounds(20)
        print(len(paths) * 20, psutil.Process().memory_info().rss - before)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    opens, growth = map(int, r.stdout.split())
    # A frame and its chunk index are hundreds of bytes to kilobytes: a leak per open
    # would add several megabytes over these opens.
    assert growth < 4 * 2**20, f"RSS grew by {growth} bytes over {opens} failed opens"


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2], list(zip(map(int, sys.argv[3::2]), sys.argv[4::2])))
