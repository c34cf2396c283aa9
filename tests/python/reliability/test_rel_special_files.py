"""A FIFO, device, socket or directory where a data file is expected (issue #36 item 4).

open() of a FIFO waits for a writer: a FIFO as a Zarr chunk or zarr.json hung b2lazy in
open(), deaf to SIGINT and SIGTERM, and the command left its .tmp-* output behind. Data
files are now opened with O_NONBLOCK and checked with fstat: what is not a regular file is
an OSError naming the path (symlinks to regular files still read, as in zarr-python), and
the command exits 1 leaving nothing behind. Each case runs in a subprocess with a timeout.
"""

import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import zarr

from conftest import B2LAZY_COMMAND

TIMEOUT = 60  # a refused file is refused at once; a hang is what this catches

TRY_OPEN = """
import sys, b2lazy
try:
    print("READ", b2lazy.open(sys.argv[1]).to_numpy().tolist())
except OSError as e:
    print("OSError:", e)
"""


def read_in_child(url):
    r = subprocess.run([sys.executable, "-c", TRY_OPEN, str(url)], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def zarr_store(path, fmt):
    z = zarr.create_array(str(path), shape=(8,), chunks=(4,), dtype="f8", zarr_format=fmt, overwrite=True)
    z[...] = np.arange(8.0)
    return path


def chunk_key(fmt):
    return "c/1" if fmt == 3 else "1"


def replace_with(path, kind):
    """`path` (removed first if there) becomes a `kind` special file."""
    if os.path.lexists(path):
        os.remove(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        os.mkdir(path)
    elif kind == "device":
        os.symlink("/dev/zero", path)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()


KIND_WORD = {"fifo": "a FIFO", "directory": "a directory", "device": "a device", "socket": "a socket"}


@pytest.mark.parametrize("kind", sorted(KIND_WORD))
@pytest.mark.parametrize("fmt", [2, 3])
def test_special_chunk_refused(tmp_path, fmt, kind):
    p = zarr_store(tmp_path / "a.zarr", fmt)
    replace_with(p / chunk_key(fmt), kind)
    said = read_in_child(p)
    assert said == f"OSError: '{p}/{chunk_key(fmt)}' is {KIND_WORD[kind]}, not a regular file", said


@pytest.mark.parametrize("fmt, name", [(3, "zarr.json"), (2, ".zarray"), (2, ".zgroup")])
def test_special_metadata_refused(tmp_path, fmt, name):
    p = zarr_store(tmp_path / "a.zarr", fmt)
    if name == ".zgroup":
        os.remove(p / ".zarray")
    replace_with(p / name, "fifo")
    said = read_in_child(p)
    assert said == f"OSError: '{p}/{name}' is a FIFO, not a regular file", said


@pytest.mark.parametrize("name", [".zattrs", ".zmetadata"])
def test_metadata_b2lazy_does_not_read(tmp_path, name):
    """.zattrs and .zmetadata are not read: a FIFO there changes nothing."""
    p = zarr_store(tmp_path / "a.zarr", 2)
    replace_with(p / name, "fifo")
    assert read_in_child(p) == f"READ {np.arange(8.0).tolist()}"


@pytest.mark.parametrize("name, url", [("x.b2z", "x.b2z#/x"), ("x.h5", "x.h5#/x"), ("x.b2nd", "x.b2nd")])
def test_special_container_files_refused(tmp_path, name, url):
    replace_with(tmp_path / name, "fifo")
    said = read_in_child(tmp_path / url)
    assert said.startswith("OSError:") and str(tmp_path / name) in said, said


def test_symlinks_to_regular_files_read(tmp_path):
    """As zarr-python: a chunk or zarr.json that is a symlink to a regular file reads."""
    p = zarr_store(tmp_path / "a.zarr", 3)
    os.rename(p / "c" / "1", tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", p / "c" / "1")
    os.rename(p / "zarr.json", tmp_path / "meta.json")
    os.symlink(tmp_path / "meta.json", p / "zarr.json")
    np.testing.assert_array_equal(zarr.open_array(str(p), mode="r")[...], np.arange(8.0))
    assert read_in_child(p) == f"READ {np.arange(8.0).tolist()}"


@pytest.mark.skipif(not B2LAZY_COMMAND, reason="the b2lazy command is not installed")
@pytest.mark.parametrize("out", ["o.b2nd", "o.zarr"])
@pytest.mark.parametrize("where", ["chunk", "zarr.json"])
def test_command_refuses_and_leaves_nothing(tmp_path, where, out):
    p = zarr_store(tmp_path / "a.zarr", 3)
    replace_with(p / ("c/1" if where == "chunk" else "zarr.json"), "fifo")
    work = tmp_path / "work"
    work.mkdir()
    r = subprocess.run(
        [B2LAZY_COMMAND, "eval", "a + 1", f"a={p}", "-o", out, "--no-progress"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert r.returncode == 1 and "is a FIFO, not a regular file" in r.stderr and str(p) in r.stderr, r.stderr
    assert os.listdir(work) == []


# --- every wait stays interruptible: SIGTERM and SIGINT while Zarr chunks are read ------


def _big_zarr(path):
    """A Zarr array whose evaluation takes minutes (many chunks, a costly expression)."""
    z = zarr.create_array(str(path), shape=(4000, 4000), chunks=(100, 4000), dtype="f8", overwrite=True)
    z[...] = 1.0
    return path


def _wait_until_evaluating(p):
    """Until the process handles SIGTERM (b2lazy installs its handler while it evaluates)."""
    import re

    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        assert p.poll() is None, p.communicate()
        with open(f"/proc/{p.pid}/status") as f:
            if int(re.search(r"SigCgt:\s*([0-9a-fA-F]+)", f.read()).group(1), 16) >> (signal.SIGTERM - 1) & 1:
                return
        time.sleep(0.01)
    p.kill()
    pytest.fail("the evaluation did not start")


EXPENSIVE = "sum(sin(a[:, :, None] + a[:, None, :1000]), axis=2)"


@pytest.mark.skipif(not B2LAZY_COMMAND, reason="the b2lazy command is not installed")
@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 130)])
@pytest.mark.parametrize("out", ["o.b2nd", "o.zarr"])
def test_command_stops_reading_zarr_on_signals(tmp_path, sig, status, out):
    p = _big_zarr(tmp_path / "a.zarr")
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.Popen(
        [B2LAZY_COMMAND, "eval", EXPENSIVE, f"a={p}", "-o", out, "--threads", "2", "--no-progress"],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_until_evaluating(proc)
    time.sleep(0.3)  # well into the reads
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"did not stop within {TIMEOUT} s of the signal")
    assert proc.returncode == status, err
    assert os.listdir(work) == [], "a temporary was left behind"
