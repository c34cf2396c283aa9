"""Issue #11, items 1, 8 (SIGKILL leftovers) and 9: what compute() and `b2lazy eval -o` may
write over, how a result replaces an old array, and readers and writers at one path.

Rules under test: only a b2nd array (a file C-Blosc2 opens as b2nd, or a sparse directory)
is ever replaced, and only once the new one is complete; anything else at the output path
is refused with an OSError naming the path, before any work, and is left untouched.
compute() returns the array that process wrote; an open array keeps reading the version it
opened (or fails with "changed on disk" when its file is modified in place).

Destructive cases run in fresh temporary directories (and a temporary cwd for "." and
".."). "/" is checked only by the C++ test of classify_output(): a regression there must
not be able to touch the root directory.
"""

import gc
import os
import pathlib
import signal
import subprocess
import sys
import textwrap

import blosc2
import numpy as np
import pytest

import b2lazy
from conftest import B2LAZY_COMMAND

# The command installed with this interpreter's b2lazy (PATH may hold another installation).
EXE = B2LAZY_COMMAND
needs_command = pytest.mark.skipif(EXE is None, reason="the b2lazy command is not on PATH (pip install .)")

VALUES = np.arange(600.0).reshape(20, 30)


def snapshot(root):
    """Every entry below `root` (kind and bytes, or a link's target), to compare before/after."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir", None)
            else:
                out[rel] = ("file", pathlib.Path(p).read_bytes())
    return out


def temporaries(d):
    return sorted(n for n in os.listdir(d) if ".tmp-" in n)


def stored(path, values=VALUES, contiguous=True):
    b2lazy.asarray(values).compute(urlpath=path, chunks=(5, 10), blocks=(5, 5), contiguous=contiguous)


def read(path):
    return b2lazy.open(path).to_numpy()


def run(*args, cwd=None):
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def run_python(code, cwd=None):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300, cwd=cwd
    )


# ----------------------------------------------------------------------------------------
# refusals: nothing but a b2nd array is replaced
# ----------------------------------------------------------------------------------------
def make_thing(kind, d):
    """Puts a `kind` of non-b2nd thing at d/'target' and returns the output path to give."""
    target = d / "target"
    if kind == "directory":
        target.mkdir()
        (target / "precious.txt").write_text("keep me")
        (target / "sub").mkdir()
        (target / "sub" / "more.txt").write_text("me too")
    elif kind == "directory-with-fake-index":
        target.mkdir()
        (target / "chunks.b2frame").write_text("not a frame")
        (target / "00000000.chunk").write_bytes(os.urandom(100))
    elif kind == "text-file":
        target.write_text("some notes\n")
    elif kind == "npy-file":
        np.save(target, VALUES)  # writes target.npy
        target = d / "target.npy"
    elif kind == "empty-file":
        target.write_bytes(b"")
    elif kind == "link-to-b2nd":
        stored(d / "real.b2nd")
        target.symlink_to(d / "real.b2nd")
    elif kind == "dangling-link":
        target.symlink_to(d / "nowhere.b2nd")
    elif kind == "missing-parent":
        target = d / "no" / "such" / "x.b2nd"
    elif kind == "file-parent":
        (d / "notes.txt").write_text("notes")
        target = d / "notes.txt" / "x.b2nd"
    return target


REFUSED = {
    "directory": "a directory that is not a b2nd array",
    "directory-with-fake-index": "a directory that is not a b2nd array",
    "text-file": "a file that is not a b2nd array",
    "npy-file": "a file that is not a b2nd array",
    "empty-file": "a file that is not a b2nd array",
    "link-to-b2nd": "a symbolic link",
    "dangling-link": "a symbolic link",
    "missing-parent": "does not exist",
    "file-parent": "is not a directory",
}


@pytest.mark.parametrize("contiguous", [True, False, None])
@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_compute_refuses_what_is_not_b2nd(tmp_path, kind, contiguous):
    d = tmp_path / "work"
    d.mkdir()
    target = make_thing(kind, d)
    before = snapshot(tmp_path)
    with pytest.raises(OSError) as e:
        (b2lazy.asarray(VALUES) + 1).compute(urlpath=target, contiguous=contiguous)
    assert str(target) in str(e.value) and REFUSED[kind] in str(e.value), str(e.value)
    assert snapshot(tmp_path) == before  # unchanged, and no temporary left


@needs_command
@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_command_refuses_what_is_not_b2nd(tmp_path, kind):
    d = tmp_path / "work"
    d.mkdir()
    stored(tmp_path / "a.b2nd")
    target = make_thing(kind, d)
    before = snapshot(tmp_path)
    r = run("eval", "a + 1", f"a={tmp_path / 'a.b2nd'}", "-o", str(target))
    assert r.returncode == 1, r
    assert str(target) in r.stderr and REFUSED[kind] in r.stderr, r.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("name", [".", "..", "./", "sub/..", "sub/."])
@pytest.mark.parametrize("contiguous", [True, False, None])
def test_compute_refuses_a_directory_itself(tmp_path, name, contiguous):
    """'.' and '..' are refused; the cwd (a fresh temporary) and its parent are untouched."""
    cwd = tmp_path / "cwd"
    (cwd / "sub").mkdir(parents=True)
    (cwd / "mine.txt").write_text("keep")
    (tmp_path / "beside.txt").write_text("keep")
    before = snapshot(tmp_path)
    code = f"""
        import b2lazy, numpy as np
        try:
            b2lazy.asarray(np.ones(10)).compute(urlpath={name!r}, contiguous={contiguous!r})
        except OSError as e:
            print("OSError:", e)
    """
    r = run_python(code, cwd=cwd)
    assert r.returncode == 0, r.stderr
    assert f"cannot write output '{name.rstrip('/') or '/'}'" in r.stdout, r.stdout
    assert snapshot(tmp_path) == before


@needs_command
@pytest.mark.parametrize("name", [".", "..", "./"])
def test_command_refuses_a_directory_itself(tmp_path, name):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    stored(cwd / "a.b2nd")
    (tmp_path / "beside.txt").write_text("keep")
    before = snapshot(tmp_path)
    r = run("eval", "a + 1", "a=a.b2nd", "-o", name, cwd=cwd)
    assert r.returncode == 1 and "names a directory" in r.stderr, r
    assert snapshot(tmp_path) == before


def test_refusal_comes_before_any_work(tmp_path):
    (tmp_path / "t.txt").write_text("x")
    calls = []
    with pytest.raises(OSError, match="t.txt"):
        (b2lazy.asarray(VALUES) * 2).compute(
            urlpath=tmp_path / "t.txt", chunks=(5, 5), progress=lambda done, total: calls.append(done)
        )
    assert calls == []


# ----------------------------------------------------------------------------------------
# replacement of b2nd arrays, both forms and a change of form
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "old_form, new_form",
    [
        ("file", "file"),
        ("dir", "dir"),
        ("file", "dir"),
        ("dir", "file"),
        ("dir", None),
        ("file", None),
        ("blosc2-file", "file"),
        ("blosc2-dir", "dir"),
    ],
)
def test_replaces_a_b2nd_array(tmp_path, old_form, new_form):
    path = tmp_path / "out"
    if old_form.startswith("blosc2"):
        blosc2.asarray(VALUES, urlpath=str(path), contiguous=old_form == "blosc2-file", mode="w")
    else:
        stored(path, contiguous=old_form == "file")
    (tmp_path / "other.txt").write_text("unrelated")
    contiguous = None if new_form is None else new_form == "file"
    r = (b2lazy.asarray(VALUES) * -1).compute(urlpath=path, chunks=(7, 7), contiguous=contiguous)
    np.testing.assert_array_equal(r.to_numpy(), -VALUES)
    np.testing.assert_array_equal(read(path), -VALUES)
    np.testing.assert_array_equal(blosc2.open(str(path))[:], -VALUES)
    expect_dir = old_form.endswith("dir") if new_form is None else new_form == "dir"
    assert path.is_dir() == expect_dir
    assert sorted(os.listdir(tmp_path)) == ["other.txt", "out"]


@needs_command
@pytest.mark.parametrize("old_form", ["file", "dir"])
def test_command_replaces_a_b2nd_array(tmp_path, old_form):
    stored(tmp_path / "a.b2nd")
    out = tmp_path / "out"
    stored(out, values=VALUES * 0, contiguous=old_form == "file")
    r = run("eval", "a * 3", f"a={tmp_path / 'a.b2nd'}", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "shape (20, 30), float64" in r.stdout
    np.testing.assert_array_equal(read(out), VALUES * 3)
    assert out.is_dir() == (old_form == "dir")  # the default form follows what was there
    assert temporaries(tmp_path) == []


def test_failed_compute_leaves_the_old_array(tmp_path):
    """A failure during the evaluation (a corrupted operand) leaves the old array as it was."""
    src = tmp_path / "src.b2nd"
    stored(src)
    data = bytearray(src.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 300):
        data[i] ^= 0x5A
    src.write_bytes(bytes(data))
    for form in (True, False):
        out = tmp_path / f"out{form}"
        stored(out, contiguous=form)
        before = snapshot(out) if out.is_dir() else out.read_bytes()
        with pytest.raises(OSError):
            (b2lazy.open(src) * 2).compute(urlpath=out, contiguous=not form)
        assert (snapshot(out) if out.is_dir() else out.read_bytes()) == before
        np.testing.assert_array_equal(read(out), VALUES)
    assert temporaries(tmp_path) == []


# ----------------------------------------------------------------------------------------
# hostile but valid names
# ----------------------------------------------------------------------------------------
HOSTILE = [
    "with space.b2nd",
    "données é 数据.b2nd",
    "-leading-dash.b2nd",
    "a" * 250,
    "é" * 125,
    "trailing-slash/",
    "x.b2nd.tmp-1-1",
    ".hidden",
]


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("as_path", [False, True])
def test_hostile_names(tmp_path, name, as_path):
    path = os.path.join(str(tmp_path), name)
    given = pathlib.Path(path) if as_path else path
    for round_ in (1, 2):  # the second round replaces the first
        r = (b2lazy.asarray(VALUES) + round_).compute(urlpath=given, chunks=(8, 8))
        np.testing.assert_array_equal(r.to_numpy(), VALUES + round_)
        np.testing.assert_array_equal(read(given), VALUES + round_)
    assert os.listdir(tmp_path) == [name.rstrip("/")]
    # pathlib drops the trailing slash, so the directory form is only chosen from a str
    assert os.path.isdir(path) == (name.endswith("/") and not as_path)


@needs_command
@pytest.mark.parametrize("name", HOSTILE)
def test_command_hostile_names(tmp_path, name):
    stored(tmp_path / "-a.b2nd")
    r = run("eval", "a - 1", "a=-a.b2nd", "-o", name, cwd=tmp_path)  # relative, so '-' leads
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(read(tmp_path / name), VALUES - 1)
    assert sorted(os.listdir(tmp_path)) == sorted(["-a.b2nd", name.rstrip("/")])


def test_name_too_long_is_a_clear_error(tmp_path):
    with pytest.raises(OSError, match="x" * 50):
        b2lazy.asarray(VALUES).compute(urlpath=tmp_path / ("x" * 300))
    assert os.listdir(tmp_path) == []


# ----------------------------------------------------------------------------------------
# the output is an input
# ----------------------------------------------------------------------------------------
def test_output_is_an_input_file(tmp_path):
    path = tmp_path / "a.b2nd"
    stored(path)
    a = b2lazy.open(path)
    r = (a * 2 + a[::-1]).compute(urlpath=path, chunks=(3, 7))
    np.testing.assert_array_equal(r.to_numpy(), VALUES * 2 + VALUES[::-1])
    np.testing.assert_array_equal(read(path), VALUES * 2 + VALUES[::-1])
    np.testing.assert_array_equal(a.to_numpy(), VALUES)  # still the version it opened
    assert os.listdir(tmp_path) == ["a.b2nd"]


def test_output_is_an_input_directory(tmp_path):
    path = tmp_path / "a"
    stored(path, contiguous=False)
    a = b2lazy.open(path)
    r = (a * 2 + a[::-1]).compute(urlpath=path, chunks=(3, 7))
    np.testing.assert_array_equal(r.to_numpy(), VALUES * 2 + VALUES[::-1])
    np.testing.assert_array_equal(read(path), VALUES * 2 + VALUES[::-1])
    # The old directory was removed: `a` reports it, never reads the new one's chunks.
    with pytest.raises(OSError, match="changed on disk since it was opened"):
        a.to_numpy()
    assert os.listdir(tmp_path) == ["a"]


@needs_command
def test_command_output_is_an_input(tmp_path):
    stored(tmp_path / "a.b2nd")
    r = run("eval", "a * 2 + 1", "a=a.b2nd", "-o", "a.b2nd", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(read(tmp_path / "a.b2nd"), VALUES * 2 + 1)
    assert os.listdir(tmp_path) == ["a.b2nd"]


# ----------------------------------------------------------------------------------------
# writers and readers at one path (processes: a crash stays in its process)
# ----------------------------------------------------------------------------------------
WRITER = """
    import sys, numpy as np, b2lazy
    path, value, rounds, contiguous = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
    gone = 0
    for i in range(rounds):
        v = value + (i % 2) * 1000 if len(sys.argv) > 5 else value
        r = b2lazy.full((120, 120), v).compute(urlpath=path, chunks=(10, 10), blocks=(5, 5), contiguous=contiguous)
        try:
            got = r.to_numpy()
        except OSError as e:  # a directory replaced (and removed) by the other writer first
            assert not contiguous and "changed on disk since it was opened" in str(e), e
            gone += 1
            continue
        assert (got == v).all(), ("compute() returned another writer's values", v, np.unique(got))
    print("ok", gone)
"""


@pytest.mark.parametrize("contiguous", [True, False])
def test_two_writers_each_get_their_own_result(tmp_path, contiguous):
    """Each compute() returns the values it wrote. A sparse directory can be replaced and
    removed by the other writer before its result is read: then an error, never the other
    writer's values. A file stays readable through the result's descriptor."""
    path = str(tmp_path / "shared")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(WRITER), path, str(v), "25", "1" if contiguous else "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for v in (1.0, 2.0)
    ]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0 and out.split()[0] == "ok", err
    final = read(path)
    assert set(np.unique(final)) in ({1.0}, {2.0})  # exactly one writer's array, never a mix
    assert os.listdir(tmp_path) == ["shared"]


READER = """
    import os, sys, numpy as np, b2lazy
    path, stop = sys.argv[1], sys.argv[2]
    reads = errors = 0
    while not os.path.exists(stop) or reads == 0:
        try:
            v = np.unique(b2lazy.open(path).to_numpy())
        except OSError as e:
            if "changed on disk since it was opened" not in str(e) and "no such file" not in str(e):
                raise
            errors += 1
            continue
        assert len(v) == 1, ("mixed versions", v)
        reads += 1
    print(reads, errors)
"""


@pytest.mark.parametrize("contiguous", [True, False])
def test_reader_sees_old_or_new_never_a_mix(tmp_path, contiguous):
    path = str(tmp_path / "shared")
    stored(path, values=np.zeros((120, 120)), contiguous=contiguous)
    stop = str(tmp_path / "stop")
    reader = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(READER), path, stop],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writer = run_python_args(WRITER, path, "1", "40", "1" if contiguous else "0", "alternate")
    open(stop, "w").close()
    out, err = reader.communicate(timeout=600)
    assert writer.returncode == 0, writer.stderr
    assert reader.returncode == 0, err
    reads, errors = map(int, out.split())
    assert reads >= 1
    if contiguous:
        assert errors == 0  # a replaced file stays readable through the open descriptor


def run_python_args(code, *args):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=600
    )


def test_open_array_keeps_its_version_when_replaced(tmp_path):
    path = tmp_path / "a.b2nd"
    stored(path)
    a = b2lazy.open(path)
    np.testing.assert_array_equal(a[:5].to_numpy(), VALUES[:5])  # part read before
    stored(path, values=VALUES + 7)  # another writer replaces it
    np.testing.assert_array_equal(a.to_numpy(), VALUES)
    np.testing.assert_array_equal(read(path), VALUES + 7)


def rewrite_in_place(path, data):
    """Writes `data` into the existing file (same inode) until its size or mtime shows it
    (timestamps have a clock tick's resolution)."""
    before = os.stat(path)
    while True:
        with open(path, "r+b") as f:
            f.write(data)
        now = os.stat(path)
        if (now.st_size, now.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            return


@pytest.mark.parametrize("form", ["file", "dir"])
def test_modified_in_place_is_an_error_not_mixed_values(tmp_path, form):
    path = tmp_path / "a"
    other = tmp_path / "other"
    stored(path, contiguous=form == "file")
    stored(other, values=VALUES + 1, contiguous=form == "file")
    a = b2lazy.open(path)
    np.testing.assert_array_equal(a[:5].to_numpy(), VALUES[:5])
    if form == "file":
        rewrite_in_place(path, other.read_bytes())
    else:
        rewrite_in_place(path / "chunks.b2frame", (other / "chunks.b2frame").read_bytes())
    for call in (a.to_numpy, lambda: (a + 1).compute(), a.to_cframe):
        with pytest.raises(OSError, match="changed on disk since it was opened") as e:
            call()
        assert str(path) in str(e.value)
    np.testing.assert_array_equal(read(other), VALUES + 1)


def test_descriptors_are_released_with_the_arrays(tmp_path):
    stored(tmp_path / "a.b2nd")
    stored(tmp_path / "d", contiguous=False)
    fds = lambda: len(os.listdir("/proc/self/fd"))  # noqa: E731
    gc.collect()  # earlier tests' arrays in reference cycles would close theirs during the count
    base = fds()
    arrays = [b2lazy.open(tmp_path / n) for n in ("a.b2nd", "d") * 50]
    assert fds() == base + 100  # one descriptor per opened array
    sums = [float(x.sum().to_numpy()) for x in arrays[:4]]
    assert sums == [VALUES.sum()] * 4
    del arrays
    assert fds() == base


def test_too_many_open_arrays_is_a_clear_error(tmp_path):
    stored(tmp_path / "a.b2nd")
    code = f"""
        import resource, b2lazy
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        keep = []
        try:
            for i in range(100):
                keep.append(b2lazy.open({str(tmp_path / "a.b2nd")!r}))
        except OSError as e:
            print(e)
    """
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert "ulimit" in r.stdout and "a.b2nd" in r.stdout, r.stdout


# ----------------------------------------------------------------------------------------
# a run killed with SIGKILL
# ----------------------------------------------------------------------------------------
STUCK = """
    import sys, time, b2lazy
    path, contiguous = sys.argv[1], sys.argv[2] == "1"
    def progress(done, total):
        print("writing", flush=True)
        time.sleep(3600)  # held here, its temporary half written, until killed
    b2lazy.full((200, 200), 5.0).compute(urlpath=path, chunks=(10, 10), contiguous=contiguous,
                                          progress=progress, nthreads=1)
"""


def start_stuck_writer(path, contiguous):
    p = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(STUCK), str(path), "1" if contiguous else "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert p.stdout.readline().strip() == "writing", p.stderr.read()
    return p


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("old", [False, True])
def test_sigkill_leftover_does_not_block_or_corrupt(tmp_path, contiguous, old):
    path = tmp_path / "out.b2nd"
    if old:
        stored(path, contiguous=contiguous)
    p = start_stuck_writer(path, contiguous)
    p.send_signal(signal.SIGKILL)
    p.wait()
    p.stdout.close()
    p.stderr.close()
    left = temporaries(tmp_path)
    assert len(left) == 1 and left[0].startswith(".out.b2nd.tmp-"), left  # what SIGKILL leaves
    if old:
        np.testing.assert_array_equal(read(path), VALUES)  # the old array is untouched
    r = (b2lazy.asarray(VALUES) * 3).compute(urlpath=path, contiguous=contiguous)
    np.testing.assert_array_equal(r.to_numpy(), VALUES * 3)
    np.testing.assert_array_equal(read(path), VALUES * 3)
    assert os.listdir(tmp_path) == ["out.b2nd"]  # the dead run's temporary was removed


def test_live_writers_temporary_is_left_alone(tmp_path):
    path = tmp_path / "out.b2nd"
    p = start_stuck_writer(path, True)
    try:
        theirs = temporaries(tmp_path)
        r = (b2lazy.asarray(VALUES) + 1).compute(urlpath=path)
        np.testing.assert_array_equal(r.to_numpy(), VALUES + 1)
        assert temporaries(tmp_path) == theirs  # its process still runs
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
        p.stderr.close()


def test_fifo_is_refused_without_waiting(tmp_path):
    """Opening a FIFO for reading waits for a writer; neither open() nor compute() may."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code = f"""
        import b2lazy, numpy as np
        for call in (lambda: b2lazy.open({str(fifo)!r}),
                     lambda: b2lazy.asarray(np.ones(3)).compute(urlpath={str(fifo)!r})):
            try:
                call()
            except OSError as e:
                print("OSError:", e)
    """
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("OSError:") == 2 and "special file" in r.stdout, r.stdout
    assert os.listdir(tmp_path) == ["fifo"]
