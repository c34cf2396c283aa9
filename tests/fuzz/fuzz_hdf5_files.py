"""Fuzzes HDF5 files read through b2lazy.open with atheris (libFuzzer for Python).

    python tests/fuzz/fuzz_hdf5_files.py                      # bounded run, what CI does
    python tests/fuzz/fuzz_hdf5_files.py -max_total_time=600  # longer; any libFuzzer flag works
    python tests/fuzz/fuzz_hdf5_files.py CRASH_FILE           # replay one input

Every input is written to a file, its only dataset opened with b2lazy.open and read with
.to_numpy() at two threads (a corner only when it is large), then again through a byte
store (the driver over ObjectPages, chunks fetched by the source): the same values or a
documented error. The run fails on a crash, a
hang past -timeout, memory past -rss_limit_mb, an exception other than the errors b2lazy
documents for a file (OSError naming the path, TypeError, ValueError), or values that
differ from h5py's when h5py reads the same bytes too (h5py is asked only when b2lazy read
them: it may read garbage where b2lazy refuses, and it is no oracle of memory or time).
Inputs that b2lazy reads but h5py refuses are counted in the final line, as 'ours only'
(kept in the directory $B2LAZY_FUZZ_KEEP when set); they are not failures, since h5py's libhdf5 (2.0) checks
more than Debian's (1.10) whose
metadata b2lazy follows.

Inputs are not whole files but patches of seed files (see _patched and _regions): the
regions b2lazy interprets itself. Seeds: small h5py files of one dataset each — contiguous, compact, scalar,
chunked with
gzip, shuffle, fletcher32, scale-offset, lzf (not decodable: an error) and hdf5plugin's
Blosc, Blosc2, Zstd and LZ4, fill values of unwritten chunks, big-endian, bool, complex,
external storage and a virtual dataset (their other files sit beside the input, not
mutated), and a null dataspace. Outcomes feed the coverage signal of fuzz_feedback.py.
"""

from __future__ import annotations

import atexit
import os
import sys
import tempfile

import atheris
import numpy as np

from fuzz_feedback import FILE_ERRORS, feedback, file_error, fuzz

with atheris.instrument_imports():
    import b2lazy
    from b2lazy import _core

import h5py  # noqa: E402  (not instrumented: the oracle)
import hdf5plugin  # noqa: E402,F401  (its filters, for h5py)

MAX_ITEMS = 1 << 16
INPUT = None  # the file each input is written to (set in main)
OURS_ONLY = [0]  # inputs b2lazy read and h5py refused
SEEDS = []  # (a seed file's bytes, its fuzzable regions as (start, length))


def _corner(ndim, size):
    return (slice(0, 3),) * ndim if size > MAX_ITEMS else ()


def _converts(d):
    """Is `d` a virtual dataset whose type differs from a source's? libhdf5 converts the
    values, and its versions disagree (float64 -0.13 to int64: Debian's 1.10, which b2lazy
    reads through, gives 0, as NumPy's astype; h5py's 2.0 gives -2**63): no oracle."""
    if not d.is_virtual:
        return False
    for m in d.virtual_sources():
        path = os.path.join(os.path.dirname(INPUT), m.file_name)
        with h5py.File(path, "r") as src:
            if src[m.dset_name].dtype != d.dtype:
                return True
    return False


def _unfiltered_size_damaged(d):
    """Is `d` chunked without filters, with an index record whose chunk size is not its
    values' size? Debian's libhdf5 1.10 (b2lazy's) reads such a chunk at the layout's size,
    h5py's 2.0 reads the recorded number of bytes into an uninitialised buffer: no oracle."""
    if not d.chunks or d.id.get_create_plist().get_nfilters():
        return False
    full = int(np.prod(d.chunks)) * d.dtype.itemsize
    return any(d.id.get_chunk_info(i).size != full for i in range(d.id.get_num_chunks()))


def _h5py_reads(dataset, corner):
    """What h5py reads, or None when it cannot (or its libhdf5 converts as b2lazy's does not)."""
    try:
        with h5py.File(INPUT, "r") as f:
            d = f[dataset]
            if _converts(d) or _unfiltered_size_damaged(d):
                return None
            return np.asarray(d[corner] if corner else d[()])
    except Exception:  # noqa: BLE001  (any refusal of h5py's: not ours to judge)
        return None


def _patched(data: bytes) -> bytes:
    """The input's file: seed data[0], its bytes in the fuzzable regions changed by the
    patches that follow, 3 bytes each: a position (16 bits, modulo the regions' length)
    and a value xored into the byte there."""
    seed, regions = SEEDS[data[0] % len(SEEDS)]
    out = bytearray(seed)
    total = sum(n for _, n in regions)
    for k in range(1, len(data) - 2, 3):
        pos = int.from_bytes(data[k : k + 2], "little") % total
        for start, n in regions:
            if pos < n:
                out[start + pos] ^= data[k + 2]
                break
            pos -= n
    return bytes(out)


def _through_store(local_out, corner):
    """The same file read through a byte store (src/io/hdf5/h5_store_vfd.cpp: libhdf5's
    reads served by our driver's pages, chunks fetched by the source): an error b2lazy
    documents, naming the file, or the local read's values. (External storage and virtual
    datasets are refused over a store; anything else may fail only as the local read does.)"""
    try:
        a = b2lazy.Array(_core.open_in_store(_core.open_store(INPUT), "hdf5"))
        if corner is None:
            corner = _corner(a.ndim, a.size)
        part = a[corner] if corner else a
        out = part.to_numpy(nthreads=2)
    except FILE_ERRORS as err:
        file_error(err, INPUT)
        return
    feedback("store read")
    if local_out is not None:
        assert np.array_equal(out, local_out, equal_nan=out.dtype.kind in "fc"), (
            f"read through a store differs from the local read:\n{out!r}\n{local_out!r}"
        )


def TestOneInput(data: bytes):
    if not data:
        return
    with open(INPUT, "wb") as fh:
        fh.write(_patched(data))
    try:
        a = b2lazy.open(INPUT)
        corner = _corner(a.ndim, a.size)
        part = a[corner] if corner else a
        feedback(f"opened {a.dtype} {a.ndim} {bool(corner)}")
        out = part.to_numpy(nthreads=2)
        assert out.shape == part.shape and out.dtype == part.dtype, (out.shape, part.shape, out.dtype, part.dtype)
        feedback("read")
    except FILE_ERRORS as err:
        file_error(err, INPUT)
        _through_store(None, None)
        return
    _through_store(out, corner)
    ref = _h5py_reads(a.urlpath.split("#", 1)[1], corner)
    if ref is None:
        OURS_ONLY[0] += 1
        feedback("ours only")
        if os.environ.get("B2LAZY_FUZZ_KEEP"):  # to look at them: a directory
            with open(os.path.join(os.environ["B2LAZY_FUZZ_KEEP"], f"ours-only-{OURS_ONLY[0]}.h5"), "wb") as fh:
                fh.write(_patched(data))
        return
    ref = ref.astype(ref.dtype.newbyteorder("="))
    assert ref.shape == out.shape and ref.dtype == out.dtype, (
        f"h5py reads {ref.shape} {ref.dtype}, b2lazy {out.shape} {out.dtype}"
    )
    same = np.array_equal(ref, out, equal_nan=out.dtype.kind in "fc")
    assert same, f"b2lazy and h5py read different values from {a.urlpath}:\n{out!r}\n{ref!r}"


def _regions(path, data=True):
    """The byte ranges of a seed file that b2lazy itself interprets (or that decide what
    it reads): stored chunks and contiguous data; the chunk index's records (each chunk's
    size, filter mask and offsets lie before its address); the dataspace's dimensions;
    the external file list's names and sizes; a VDS's source names; what follows a
    filter's name (its client data); a float64's bit layout; a bool enum's values. libhdf5 1.10 reads the
    rest of the metadata, and crashes on some damage there that h5py's 2.0 refuses (a
    local heap's size: a read past a buffer in H5F__accum_read): mutating all of a file
    finds those within seconds, libhdf5's bugs rather than b2lazy's, so they are left out.
    So are the chunks and index records of filters libhdf5 decodes for b2lazy (`data`
    False): its 1.10 decodes a damaged scale-offset chunk (or one whose recorded size is
    changed) to uninitialised memory, h5py's 2.0 to other garbage."""
    raw = open(path, "rb").read()
    regions = []

    def every(pattern, before=0, after=0):
        at = raw.find(pattern)
        while at >= 0:
            regions.append((max(at - before, 0), min(len(pattern) + before + after, len(raw) - max(at - before, 0))))
            at = raw.find(pattern, at + 1)

    with h5py.File(path, "r") as f:
        d = f["x"]
        if d.shape:
            every(b"".join(int(n).to_bytes(8, "little") for n in d.shape))
        if d.chunks and data:
            for i in range(d.id.get_num_chunks()):
                c = d.id.get_chunk_info(i)
                regions.append((c.byte_offset, c.size))
                every(c.byte_offset.to_bytes(8, "little"), before=8 + 8 * (d.ndim + 1))
        elif d.id.get_offset() is not None:
            regions.append((d.id.get_offset(), d.id.get_storage_size()))
        plist = d.id.get_create_plist()
        for i in range(plist.get_external_count()):
            name, offset, size = plist.get_external(i)
            every(name)
            every(int(offset).to_bytes(8, "little"))
            every(int(size).to_bytes(8, "little"))
        if d.is_virtual:
            every(b"src.h5")
        for name in [b"shuffle", b"deflate", b"fletcher32", b"blosc", b"zstd", b"lz4", b"FALSE", b"TRUE"]:
            every(name, after=16)  # a filter's flags and client data; h5py's bool enum's values
        every(b"\x34\x0b\x00\x34", before=12, after=8)  # an IEEE float64's bit layout
    return raw, [r for r in regions if r[1] > 0] or [(0, len(raw))]


def _make_seeds(work):
    """SEEDS: one file per layout, filter and dtype, with its regions; the external and
    virtual datasets' other files beside the input (in `work`), where both readers look
    for them."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 10)).round(2)
    ints = rng.integers(-50, 50, (12, 10))

    def seed(name, make, data=True):
        path = os.path.join(work, name + ".h5")
        with h5py.File(path, "w") as f:
            make(f)
        SEEDS.append(_regions(path, data))

    def compact(f):
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        v = ints.astype("i2")
        d = h5py.h5d.create(f.id, b"x", h5py.h5t.py_create(v.dtype), h5py.h5s.create_simple(v.shape), dcpl=dcpl)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, v)

    seed("contiguous", lambda f: f.create_dataset("x", data=x))
    seed("compact", compact)
    seed("scalar", lambda f: f.create_dataset("x", data=np.float64(1.5)))
    seed("null", lambda f: f.create_dataset("x", data=h5py.Empty("f8")))
    seed(
        "gzip-shuffle",
        lambda f: f.create_dataset("x", data=ints.astype("i4"), chunks=(5, 4), compression="gzip", shuffle=True),
    )
    seed(
        "fletcher32",
        lambda f: f.create_dataset(
            "x", data=ints.astype("u2") + 100, chunks=(6, 5), fletcher32=True, compression="gzip"
        ),
    )
    seed(
        "scaleoffset", lambda f: f.create_dataset("x", data=ints.astype("i4"), chunks=(6, 5), scaleoffset=0), data=False
    )
    seed("lzf", lambda f: f.create_dataset("x", data=x, chunks=(6, 5), compression="lzf"))
    seed("blosc", lambda f: f.create_dataset("x", data=x.astype("f4"), chunks=(6, 10), **hdf5plugin.Blosc()))
    seed("blosc2", lambda f: f.create_dataset("x", data=x, chunks=(6, 10), **hdf5plugin.Blosc2(cname="lz4")))
    seed("zstd", lambda f: f.create_dataset("x", data=ints, chunks=(4, 10), **hdf5plugin.Zstd()))
    seed("lz4", lambda f: f.create_dataset("x", data=x, chunks=(12, 5), **hdf5plugin.LZ4()))
    seed("big-endian", lambda f: f.create_dataset("x", data=x.astype(">f8"), chunks=(5, 5)))
    seed("bool", lambda f: f.create_dataset("x", data=ints > 0, chunks=(6, 6)))
    seed("complex", lambda f: f.create_dataset("x", data=x + 1j * x[::-1], chunks=(6, 6)))

    def unwritten(f):
        d = f.create_dataset("x", shape=(20, 10), dtype="i8", chunks=(5, 5), fillvalue=-3, compression="gzip")
        d[5:10, 0:5] = 7

    seed("fill", unwritten)
    with h5py.File(os.path.join(work, "src.h5"), "w") as f:
        f.create_dataset("s", data=x)
    raw = x.tobytes()
    with open(os.path.join(work, "ext.bin"), "wb") as fh:
        fh.write(raw)
    seed(
        "external",
        lambda f: f.create_dataset(
            "x", shape=x.shape, dtype=x.dtype, external=[("ext.bin", 0, 480), ("ext.bin", 480, len(raw) - 480)]
        ),
    )
    lay = h5py.VirtualLayout(shape=(14, 10), dtype="f8")
    lay[0:12] = h5py.VirtualSource("src.h5", "s", shape=(12, 10))
    seed("virtual", lambda f: f.create_virtual_dataset("x", lay, fillvalue=-1))


def _write_corpus(corpus):
    """One input per seed, unpatched."""
    for i in range(len(SEEDS)):
        with open(os.path.join(corpus, f"seed-{i}"), "wb") as fh:
            fh.write(bytes([i]))


def _dictionary(path):
    """Patches that make sizes and counts huge, negative or zero (a position, then xor)."""
    tokens = [b"\xff", b"\x80", b"\x7f", b"\x01", b"\x40"]
    with open(path, "w") as fh:
        for t in tokens:
            fh.write('"' + "".join(f"\\x{b:02x}" for b in t) + '"\n')


def main():
    global INPUT
    work = tempfile.mkdtemp(prefix="b2lazy-fuzz-hdf5-")
    INPUT = os.path.join(work, "input.h5")
    os.chdir(work)  # h5py takes external files from the working directory, b2lazy from the file's
    atexit.register(lambda: print(f"inputs read by b2lazy and refused by h5py: {OURS_ONLY[0]}", file=sys.stderr))
    _make_seeds(work)
    fuzz(TestOneInput, work, _write_corpus, _dictionary, max_len=600)


if __name__ == "__main__":
    main()
