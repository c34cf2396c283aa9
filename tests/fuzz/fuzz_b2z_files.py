"""Fuzzes .b2z stores (python-blosc2's DictStore zips) read through b2lazy.open with
atheris (libFuzzer for Python).

    python tests/fuzz/fuzz_b2z_files.py                      # bounded run, what CI does
    python tests/fuzz/fuzz_b2z_files.py -max_total_time=600  # longer; any libFuzzer flag works
    python tests/fuzz/fuzz_b2z_files.py CRASH_FILE           # replay one input

Each input is a zip, written to a file and opened as b2lazy.open(path) and, for members
Python's zipfile lists (up to four), as b2lazy.open(path, key=...), each read on a corner.
The run fails on a crash, a hang past -timeout, a process past -rss_limit_mb, or an
exception other than what b2lazy documents for a file: OSError (which must name the
path), TypeError or ValueError. When zipfile reads the member table, the arrays b2lazy
lists must be the stored .b2nd members python-blosc2 would map (the last of a name).
Seeds: zips python-blosc2 and zipfile wrote (long names, duplicates, a deflated member).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import zipfile

import atheris

from fuzz_feedback import FILE_ERRORS, feedback, fuzz

with atheris.instrument_imports():
    import b2lazy

INPUT = None  # the file each input is written to (set in main)


def _well_formed(data: bytes):
    """Whether the zip's member table is plain: an end record at the very end (no comment,
    no zip64) whose central directory is exactly its entries. Readers may disagree on
    anything else (a name running past the directory, say), so only then are b2lazy's
    arrays checked against python-blosc2's."""
    import struct

    if len(data) < 22 or data[-22:-18] != b"PK\x05\x06":
        return False
    _, _, _, n, size, offset, _ = struct.unpack("<HHHHIIH", data[-18:])
    if offset + size != len(data) - 22:
        return False
    at, end = offset, offset + size
    for _ in range(n):
        if at + 46 > end or data[at : at + 4] != b"PK\x01\x02":
            return False
        name, extra, comment = struct.unpack("<HHH", data[at + 28 : at + 34])
        at += 46 + name + extra + comment
    return at == end


def _python_blosc2_keys(path):
    """The array keys python-blosc2 maps for this zip (stored .b2nd members, the last of a
    name), or None when zipfile cannot read its member table."""
    try:
        with zipfile.ZipFile(path) as z:
            members = {}
            for info in z.infolist():
                members[info.filename] = info
    except Exception:
        return None
    return sorted(
        ("" if n.startswith("/") else "/") + n[:-5]
        for n, i in members.items()
        if n.endswith(".b2nd") and len(n) > 5 and i.compress_type == zipfile.ZIP_STORED
    )


def _read(a):
    if a.ndim:
        a = a[(slice(0, 2),) * a.ndim]
    return (a + 1).to_numpy()


def TestOneInput(data: bytes):
    with open(INPUT, "wb") as fh:
        fh.write(data)
    keys = _python_blosc2_keys(INPUT)
    well_formed = _well_formed(data)
    try:
        _read(b2lazy.open(INPUT))
        feedback("one array read")
    except FILE_ERRORS as err:
        msg = str(err)
        if isinstance(err, OSError):
            assert INPUT in msg, f"an OSError that does not name the file: {msg!r}"
            m = re.search(r"holds (\d+) arrays", msg)
            if m and keys is not None and well_formed and all(k.isascii() for k in keys):
                assert int(m.group(1)) == len(keys), f"b2lazy lists {m.group(1)} arrays, python-blosc2 {keys}"
        feedback(type(err).__name__ + ": " + msg.replace(INPUT, "PATH"))
    for key in (keys or [])[:4]:
        try:
            _read(b2lazy.open(INPUT, key=key))
            feedback("member read")
        except FILE_ERRORS as err:
            msg = str(err)
            if isinstance(err, OSError):
                assert INPUT in msg, f"an OSError that does not name the file: {msg!r}"
            feedback(type(err).__name__ + ": " + msg.replace(INPUT, "PATH")[:200])


def _dictionary(path):
    tokens = [
        b"PK\x03\x04",
        b"PK\x01\x02",
        b"PK\x05\x06",
        b"PK\x06\x06",
        b"PK\x06\x07",
        b".b2nd",
        b"embed.b2e",
        b"\xff\xff\xff\xff",
        b"\x00\x00\x00\x00",
        b"\xff\xff",
        b"\x00\x10",
        b"\x01\x00",
        b"b2frame\x00",
    ]
    with open(path, "w") as fh:
        for t in tokens:
            fh.write('"' + "".join(f"\\x{b:02x}" for b in t) + '"\n')


def _seeds(corpus):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import zarr_seeds

    zarr_seeds.b2z_seeds(corpus)


def main():
    global INPUT
    work = tempfile.mkdtemp(prefix="b2lazy-fuzz-b2z-")
    INPUT = os.path.join(work, "input.b2z")
    fuzz(TestOneInput, work, _seeds, _dictionary, max_len=32768)


if __name__ == "__main__":
    main()
