"""Fuzzes b2nd files read through b2lazy.open with atheris (libFuzzer for Python).

    python tests/fuzz/fuzz_b2nd_files.py                      # bounded run, what CI does (~1 min)
    python tests/fuzz/fuzz_b2nd_files.py -max_total_time=600  # longer; any libFuzzer flag works
    python tests/fuzz/fuzz_b2nd_files.py CRASH_FILE           # replay one input

Every input is written to a file, opened with b2lazy.open, and a small expression over it,
a + 1, is evaluated with .to_numpy() and with .compute() (which reads chunks whole, in
Blosc2's block order); a partial read of a few items takes the single-chunk path. The run
fails on a crash (libFuzzer catches the signal), on a hang past -timeout, past
-rss_limit_mb, or on any exception other than the errors b2lazy documents for a file:
OSError (a damaged or inconsistent file, which must name the path), TypeError (a dtype
b2lazy does not handle) and ValueError (geometry the engine refuses, e.g. chunks of 0).

The corpus starts from valid contiguous b2nd files written by python-blosc2 and b2lazy and
their corruptions (tests/corrupt_files.py), and a libFuzzer dictionary of the frame
format's markers. Outcomes (the error with its numbers and path blanked, or the dtype and
ndim read) feed the coverage signal of fuzz_feedback.py, since the C++ extension is not
instrumented. A file may describe a huge array in a few bytes (a chunk index of run-length
chunks): arrays above MAX_ITEMS are evaluated on a corner only.
"""

from __future__ import annotations

import os
import sys
import tempfile

import atheris

from fuzz_feedback import FILE_ERRORS, feedback, file_error, fuzz, read_every_way

with atheris.instrument_imports():
    import b2lazy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import corrupt_files  # noqa: E402  (tests/corrupt_files.py)

MAX_ITEMS = 1 << 20
INPUT = None  # the file each input is written to (set in main)


def TestOneInput(data: bytes):
    with open(INPUT, "wb") as fh:
        fh.write(data)
    try:
        a = b2lazy.open(INPUT)
        feedback(f"opened {a.dtype} {a.ndim}")
        read_every_way(a, MAX_ITEMS)
        feedback("read")
    except FILE_ERRORS as err:
        file_error(err, INPUT)


def _dictionary(path):
    """The frame format's markers: msgpack types, the magic, metalayer names, dtypes."""
    tokens = [
        b"b2frame\x00",
        b"b2nd",
        b"caterva",
        b"\x97\x00",
        b"\xd2",
        b"\xd3",
        b"\xdb",
        b"\xcd",
        b"\xce",
        b"\xcf",
        b"\xde",
        b"\xc6",
        b"<f8",
        b"<f4",
        b"<i4",
        b"<i8",
        b"|u1",
        b"|b1",
        b"\x00\x00\x00\x00",
        b"\xff\xff\xff\xff",
        b"\x00\x00\x00\x80",
        b"\x05\x01",
        b"\x10",
        b"\x40",
    ]
    with open(path, "w") as fh:
        for t in tokens:
            fh.write('"' + "".join(f"\\x{b:02x}" for b in t) + '"\n')


def _seeds(corpus, work):
    """Valid contiguous files and their corruptions (sparse directories are not one input)."""
    originals = [o for o in corrupt_files.write_originals(os.path.join(work, "originals")) if o.contiguous]
    for case in corrupt_files.cases(originals):
        case.write(os.path.join(corpus, case.name))
    for o in originals:
        with open(o.path, "rb") as src, open(os.path.join(corpus, o.name), "wb") as dst:
            dst.write(src.read())


def main():
    global INPUT
    work = tempfile.mkdtemp(prefix="b2lazy-fuzz-files-")
    INPUT = os.path.join(work, "input.b2nd")
    fuzz(TestOneInput, work, lambda corpus: _seeds(corpus, work), _dictionary, max_len=16384)


if __name__ == "__main__":
    main()
