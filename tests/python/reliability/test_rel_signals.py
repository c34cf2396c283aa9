"""Issue #11, items 6 and 8: signals stop evaluations on any thread, within a unit of work,
leaving no temporary and an existing output unchanged; thread creation failures are errors.

Each case runs a script (or the command) in a subprocess on work far too long to finish
by itself, waits until the evaluation is under way (its signal handlers are installed, or
its progress callback printed a marker), sends the signal and checks how the process
ended. "Stops promptly" is checked only as "ends within a generous timeout"."""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import b2lazy as bl
from conftest import B2LAZY_COMMAND

TIMEOUT = 120  # generous: a stopped evaluation ends within about a second

# Minutes of work whose output compresses to almost nothing: sin² + cos² of a broadcast
# constant (the sum keeps it from being folded away).
BIG = (
    "(bl.sin(bl.ones((200000, 1)) + bl.ones((1, 200000))) ** 2"
    " + bl.cos(bl.ones((200000, 1)) + bl.ones((1, 200000))) ** 2)"
)


EXE = B2LAZY_COMMAND


def start(tmp_path, body, *args):
    """Runs `body` (after `import b2lazy as bl` and friends) in a new interpreter, in the
    directory tmp_path/work, which holds the output of an earlier run, out.b2nd."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    bl.arange(100).compute(urlpath=work / "out.b2nd")
    script = tmp_path / "script.py"
    script.write_text(
        "import os, signal, sys, threading\nimport numpy as np\nimport b2lazy as bl\n" + textwrap.dedent(body)
    )
    p = subprocess.Popen(
        [sys.executable, str(script), *args], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return p, work


def catches(pid, sig):
    with open(f"/proc/{pid}/status") as f:
        mask = int(re.search(r"SigCgt:\s*([0-9a-fA-F]+)", f.read()).group(1), 16)
    return bool(mask >> (sig - 1) & 1)


def wait_until_evaluating(p):
    """Until the process handles SIGTERM, which b2lazy does only while an evaluation runs
    (neither Python nor the command handle it otherwise)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if p.poll() is not None:
            out, err = p.communicate()
            pytest.fail(f"ended before its evaluation started: {p.returncode}\n{out}\n{err}")
        try:
            if catches(p.pid, signal.SIGTERM):
                return
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    p.kill()
    pytest.fail("the evaluation did not start")


def wait_for_line(p, marker):
    """Until the script prints `marker` (from its progress callback)."""
    for line in p.stdout:
        if marker in line:
            return
    out, err = p.communicate()
    pytest.fail(f"no {marker!r} from the script: {p.returncode}\n{out}\n{err}")


def finish(p):
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"did not stop within {TIMEOUT} s of the signal\n{out}\n{err}")
    return p.returncode, out, err


def assert_untouched(work):
    """No temporary left, and the earlier output as it was."""
    assert os.listdir(work) == ["out.b2nd"], "a temporary was left behind"
    np.testing.assert_array_equal(bl.open(work / "out.b2nd").to_numpy(), np.arange(100))


# --- compute() to a file: main thread, other thread, daemon thread ---------------------


@pytest.mark.parametrize(
    "sig, status, raised", [(signal.SIGINT, -signal.SIGINT, "KeyboardInterrupt"), (signal.SIGTERM, -signal.SIGTERM, "")]
)
def test_compute_main_thread(tmp_path, sig, status, raised):
    p, work = start(
        tmp_path,
        f"""
        x = {BIG}
        seen = []
        def progress(done, total):
            if not seen:
                seen.append(done)
                print("STARTED", flush=True)
        x.compute(urlpath="out.b2nd", nthreads=2, progress=progress)
        print("FINISHED")
    """,
    )
    wait_for_line(p, "STARTED")
    p.send_signal(sig)
    code, out, err = finish(p)
    assert code == status, err
    assert raised in err and "FINISHED" not in out
    assert_untouched(work)


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, -signal.SIGINT), (signal.SIGTERM, -signal.SIGTERM)])
def test_compute_other_thread(tmp_path, sig, status):
    """The compute thread stops and raises in its thread (SIGINT); the main thread gets its
    own KeyboardInterrupt from Python's handler. SIGTERM ends the process by SIGTERM.
    (The main thread waits on an Event: Python 3.11's Thread.join() interrupted by Ctrl-C
    marks a running thread as stopped, bpo-45274, and then exit does not wait for it.)"""
    p, work = start(
        tmp_path,
        f"""
        x = {BIG}
        done = threading.Event()
        def work():
            try:
                x.compute(urlpath="out.b2nd", nthreads=2, progress=lambda d, t: print("STARTED", flush=True))
            except KeyboardInterrupt:
                print("THREAD INTERRUPTED", flush=True)
            done.set()
        threading.Thread(target=work).start()
        done.wait()
    """,
    )
    wait_for_line(p, "STARTED")
    p.send_signal(sig)
    code, out, err = finish(p)
    assert code == status, err
    if sig == signal.SIGINT:
        assert "THREAD INTERRUPTED" in out and "KeyboardInterrupt" in err
    assert_untouched(work)


def test_daemon_thread_compute_when_main_thread_exits(tmp_path):
    """At interpreter exit, a daemon thread's evaluation is stopped and its temporary removed."""
    p, work = start(
        tmp_path,
        f"""
        x = {BIG}
        started = threading.Event()
        threading.Thread(target=lambda: x.compute(urlpath="out.b2nd", nthreads=2,
                                                  progress=lambda d, t: started.set()), daemon=True).start()
        started.wait()
        print("MAIN EXITS", flush=True)
    """,
    )
    code, out, err = finish(p)
    assert code == 0, err
    assert "MAIN EXITS" in out and err == ""
    assert_untouched(work)


def test_user_sigterm_handler_runs(tmp_path):
    """Python's handler decides what compute() raises: here the user's, which exits with 5."""
    p, work = start(
        tmp_path,
        f"""
        def handler(sig, frame):
            print("HANDLER", flush=True)
            sys.exit(5)
        signal.signal(signal.SIGTERM, handler)
        x = {BIG}
        x.compute(urlpath="out.b2nd", nthreads=2, progress=lambda d, t: print("STARTED", flush=True))
        print("FINISHED")
    """,
    )
    wait_for_line(p, "STARTED")
    p.send_signal(signal.SIGTERM)
    code, out, err = finish(p)
    assert code == 5, err
    assert "HANDLER" in out and "FINISHED" not in out
    assert_untouched(work)


# --- to_numpy() and single-chunk work ---------------------------------------------------


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, -signal.SIGINT), (signal.SIGTERM, -signal.SIGTERM)])
@pytest.mark.parametrize(
    "what",
    [
        "bl.sum(x, axis=1).to_numpy(nthreads=2)",  # was deaf to Ctrl-C until the end
        "bl.sum(x).compute(nthreads=2)",  # one output chunk: the node forks its slabs
        "float(bl.sum(x).to_numpy(nthreads=1))",  # one output chunk, one thread: a loop over slabs
        "bl.sum(x, axis=0).compute(urlpath='out.b2nd', nthreads=2)",
    ],
)
def test_single_chunk_and_to_numpy(tmp_path, what, sig, status):
    """Ctrl-C during one output chunk's work was swallowed (status 0); now it stops."""
    p, work = start(
        tmp_path,
        f"""
        x = {BIG}
        {what}
        print("FINISHED")
    """,
    )
    wait_until_evaluating(p)
    p.send_signal(sig)
    code, out, err = finish(p)
    assert code == status, err
    assert "FINISHED" not in out
    if sig == signal.SIGINT:
        assert "KeyboardInterrupt" in err
    assert_untouched(work)


# --- the command --------------------------------------------------------------------------


@pytest.mark.skipif(EXE is None, reason="the b2lazy command is not installed")
@pytest.mark.parametrize(
    "sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM), (signal.SIGHUP, -signal.SIGHUP)]
)
@pytest.mark.parametrize("expr", ["sin(a + b) ** 2 + cos(a + b) ** 2", "sum(sin(a + b), axis=0)"])
def test_command(tmp_path, sig, status, expr):
    work = tmp_path / "work"
    work.mkdir()
    bl.arange(100).compute(urlpath=work / "out.b2nd")
    bl.ones((200000, 1)).compute(urlpath=tmp_path / "a.b2nd")
    bl.ones((1, 200000)).compute(urlpath=tmp_path / "b.b2nd")
    p = subprocess.Popen(
        [EXE, "eval", expr, f"a={tmp_path / 'a.b2nd'}", f"b={tmp_path / 'b.b2nd'}", "-o", "out.b2nd", "--threads", "2"],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until_evaluating(p)
    p.send_signal(sig)
    code, out, err = finish(p)
    assert code == status, err
    if sig == signal.SIGINT:
        assert "interrupted" in err
    assert_untouched(work)


# --- progress callbacks and stops in the same process ---------------------------------------


def test_keyboard_interrupt_in_progress_callback_stops_compute(tmp_path):
    """A KeyboardInterrupt raised in the callback (where Python runs its signal handlers
    when the callback runs on the main thread) stops the evaluation and is raised."""
    calls = []

    def progress(done, total):
        calls.append(done)
        raise KeyboardInterrupt

    x = bl.ones((4000, 1000)) * 2
    with pytest.raises(KeyboardInterrupt):
        x.compute(urlpath=tmp_path / "o.b2nd", chunks=(10, 1000), nthreads=2, progress=progress)
    assert 1 <= len(calls) < 400
    assert os.listdir(tmp_path) == []


def test_to_numpy_progress():
    seen = []
    got = (bl.arange(1000, chunks=(100,)) + 1).to_numpy(progress=lambda d, t: seen.append((d, t)))
    np.testing.assert_array_equal(got, np.arange(1000) + 1)
    assert seen and max(seen) == (seen[-1][1], seen[-1][1])


# --- threads ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad, error",
    [(0, ValueError), (-1, ValueError), (1025, ValueError), (2.0, TypeError), ("2", TypeError), (True, TypeError)],
)
def test_nthreads_bounded_like_the_command(bad, error):
    with pytest.raises(error, match="nthreads"):
        bl.ones(10).compute(nthreads=bad)
    with pytest.raises(error, match="nthreads"):
        bl.ones(10).to_numpy(nthreads=bad)
    assert bl.ones(10).to_numpy(nthreads=np.int64(2)).sum() == 10


def test_thread_creation_failure_raises_instead_of_hanging(tmp_path):
    """Under an address-space limit 400 workers cannot be created: an error naming the
    count (it blocked forever in Context::Context)."""
    p, _ = start(
        tmp_path,
        """
        import resource
        with open("/proc/self/status") as f:
            vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 20), resource.getrlimit(resource.RLIMIT_AS)[1]))
        try:
            bl.ones(10).compute(nthreads=400)
        except RuntimeError as e:
            print("RuntimeError:", e)
        print(bl.ones(10).to_numpy(nthreads=2).sum())  # fewer threads still work
    """,
    )
    code, out, err = finish(p)
    assert code == 0, err
    assert "RuntimeError: cannot create 400 worker threads" in out
    assert out.strip().endswith("10.0")
