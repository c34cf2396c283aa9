#!/usr/bin/env python3
"""Dask on b2lazy blocks (issue #37): da.from_array(b2lazy.open(f)).mean(axis=0) against
da.from_zarr on the same values, and np.mean(x, axis=0) through the NumPy protocol against
b2lazy.mean(x, axis=0).

    python bench/bench_dask_blocks.py [--mib 256] [--protocol-mib 512] [--data-dir D] [--repeat 3]

Data: float64 random values, chunks (1000, 1000), blosc zstd clevel 1 + shuffle, written
once as a b2nd file (python-blosc2) and a Zarr v3 array (zarr-python).
Each contender runs in a fresh subprocess (peak RSS is its own): time = best of --repeat,
peak = VmHWM minus VmRSS before the first run.
  dask+b2lazy  da.from_array(bl.open(f), chunks).mean(axis=0).compute() -> a lazy b2lazy Array
               (Dask returns the block type), then .to_numpy(): where the values are computed
  dask+zarr    da.from_zarr(path, chunks).mean(axis=0).compute() (NumPy blocks, threaded scheduler)
Both Dask arrays use the storage chunks (1000, 1000) as blocks. Reads: the bytes the engine
decompressed from the b2nd file over the array's bytes (1.00: each value read once).
  np.mean      np.mean(bl.open(f), axis=0).to_numpy()  (the protocol, ~--protocol-mib file)
  bl.mean      bl.mean(bl.open(f), axis=0).to_numpy()
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHUNKS = (1000, 1000)


def _status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024


def _make(data_dir, mib, zarr_too):
    import blosc2
    import numpy as np

    n_cols = 8192
    n_rows = mib * 2**20 // 8 // n_cols
    b2 = os.path.join(data_dir, f"a{mib}.b2nd")
    zp = os.path.join(data_dir, f"a{mib}.zarr")
    cp = {"codec": blosc2.Codec.ZSTD, "clevel": 1, "filters": [blosc2.Filter.SHUFFLE]}
    if not os.path.exists(b2):
        a = np.random.default_rng(0).random((n_rows, n_cols))
        blosc2.asarray(a, urlpath=b2, mode="w", chunks=CHUNKS, cparams=cp)
        if zarr_too:
            import zarr
            from zarr.codecs import BloscCodec

            z = zarr.create_array(
                zp,
                shape=a.shape,
                dtype=a.dtype,
                chunks=CHUNKS,
                overwrite=True,
                compressors=[BloscCodec(cname="zstd", clevel=1, shuffle="shuffle")],
            )
            z[...] = a
    return b2, zp


def _run_one(kind, path, repeat):
    """In the subprocess: the contender `kind` on `path`; prints JSON."""
    import blosc2
    import numpy as np
    import b2lazy as bl
    import dask
    import dask.array as da

    base = _status("VmRSS")
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        reads = None
        if kind == "dask+b2lazy":
            lazy = da.from_array(bl.open(path), chunks=CHUNKS).mean(axis=0).compute()
            r = lazy.to_numpy()
            reads = {k: lazy.last_stats[k][path] for k in ("chunks_decompressed", "bytes_decompressed")}
        elif kind == "dask+zarr":
            with dask.config.set(scheduler="threads"):
                r = da.from_zarr(path, chunks=CHUNKS).mean(axis=0).compute()
        elif kind == "np.mean":
            lazy = np.mean(bl.open(path), axis=0)
            r = lazy.to_numpy()
            reads = {k: lazy.last_stats[k][path] for k in ("chunks_decompressed", "bytes_decompressed")}
        else:
            lazy = bl.mean(bl.open(path), axis=0)
            r = lazy.to_numpy()
            reads = {k: lazy.last_stats[k][path] for k in ("chunks_decompressed", "bytes_decompressed")}
        times.append(time.perf_counter() - t0)
    print(
        json.dumps(
            {
                "kind": kind,
                "seconds": min(times),
                "peak_mib": (_status("VmHWM") - base) / 2**20,
                "checksum": float(np.asarray(r).sum()),
                "reads": reads,
                "nbytes": blosc2.open(path).nbytes if path.endswith(".b2nd") else None,
            }
        )
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--protocol-mib", type=int, default=512)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        return _run_one(args.one[0], args.one[1], args.repeat)
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="bench_dask_blocks_")
    b2, zp = _make(data_dir, args.mib, True)
    b2p, _ = _make(data_dir, args.protocol_mib, False)
    runs = [
        ("dask+b2lazy", b2),
        ("dask+zarr", zp),
        ("np.mean", b2p),
        ("bl.mean", b2p),
        ("np.mean", b2p),
        ("bl.mean", b2p),
    ]  # the protocol pair twice, interleaved
    results = []
    for kind, path in runs:
        out = subprocess.run(
            [sys.executable, __file__, "--one", kind, path, "--repeat", str(args.repeat)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        r = json.loads(out.strip().splitlines()[-1])
        size = args.mib if path in (b2, zp) else args.protocol_mib
        print(
            f"{kind:12s} {size:5d} MiB  {r['seconds']:.3f} s  peak {r['peak_mib']:.0f} MiB  "
            f"(checksum {r['checksum']:.6g})",
            flush=True,
        )
        if r.get("reads"):
            print(
                f"             read {r['reads']['bytes_decompressed'] / r['nbytes']:.2f}x the array's bytes "
                f"({r['reads']['chunks_decompressed']} chunk fetches, partial ones included)",
                flush=True,
            )
        results.append(r)
    # what the protocol adds per call (building the lazy expression, nothing evaluated)
    code = (
        "import timeit, numpy as np, b2lazy as bl; x = bl.open(%r); n = 2000; "
        "print(*(timeit.timeit(s, globals=globals(), number=n) / n * 1e6 "
        "for s in ('np.mean(x, axis=0)', 'bl.mean(x, axis=0)')))" % b2p
    )
    t_np, t_bl = map(
        float, subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    )
    print(f"building the expression: np.mean {t_np:.1f} us, bl.mean {t_bl:.1f} us per call")


if __name__ == "__main__":
    main()
