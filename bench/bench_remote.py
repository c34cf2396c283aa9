#!/usr/bin/env python3
"""Remote-data benchmark (issue #39): one float64 array served over HTTP by nginx behind a
latency proxy, read by zarr-python (FsspecStore, ObjectStore), Dask, python-blosc2 and b2lazy.

    python bench/bench_remote.py [--size 2G] [--data /work/data/remote] [--latency 0 20 80]
                                 [--only sum slice ...] [--engines ...] [--formats ...] [--reps 3]
                                 [--out bench/RESULTS-remote.json] [--plot bench/remote.png]
    python bench/bench_remote.py --quick [--in-process]  # a tiny generated array, one run each: a smoke run

The array (--size bytes of float64, 4096 columns; written once under --data, reused) is stored
as Zarr v3 with Blosc-zstd chunks of 1 MiB (128 x 1024, "zarr-1m") and of 16 MiB
(1024 x 2048, "zarr-16m"), as sharded Zarr v3 (shards 1024 x 2048 of 128 x 1024 chunks,
"zarr-shard") and as b2nd (python-blosc2, zstd, chunks 1024 x 2048, its default blocks).
nginx (tests/python/remote_servers.py) serves that directory; every request goes through
the fault proxy of the same module, with --latency milliseconds added before each answer,
which also counts the requests and the bytes it forwards (so "MB fetched" is what went over
the wire for that run, headers not counted). With --s3, the same files are uploaded to moto's
S3 server (bucket "bench") and every cell runs again over s3:// through another such proxy
(fsspec's S3 needs s3fs; b2lazy gets the endpoint and keys from AWS_* variables).

Every (latency, row, contender) runs in a fresh process: its time counts opening the array
plus computing the result (to memory, or written to a local Zarr v3 for `anomaly`); its peak
is VmHWM at the end minus VmRSS after the imports (the high-water mark is reset there).
Median of --reps runs. Contenders (engine on format):
  zarr-fsspec  zarr.open_array(FsspecStore.from_url(url)) (fsspec HTTPFileSystem, aiohttp);
  zarr-obstore zarr.open_array(ObjectStore(obstore HTTPStore)) — zarr-python has no compute:
               both read slabs of whole chunk rows of about 64 MiB (z[i:i+h], zarr's own
               concurrency inside a slab) and do the arithmetic in NumPy, as a user would;
  dask         da.from_zarr(url) (zarr + fsspec), threaded scheduler, 2 workers;
  blosc2       blosc2.open(url, lazy=True) (a RemoteArray: ranged reads of the blocks a slice
               needs, through fsspec): its own sum, mean and slicing; the anomaly is its
               LazyExpr `a - a.mean(axis=0)` evaluated slab by slab into Zarr; the product
               over slabs (4.14.1's permute_dims/matrix_transpose raise TypeError on a
               RemoteArray). It reads these Zarr arrays too (not run: its own format here);
  b2lazy       b2lazy.open(url) on every format (--max-memory MIB: its max_memory).
A run that raises is recorded as "fails: <error>". Results are checked against NumPy over
the local files (the anomaly row: every 13th row of the written Zarr).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
NTHREADS = 2
SLAB_BYTES = 64 << 20
K = 16  # columns of the product's right operand

# name: (what the table says). The bodies are in WORK (the child's code) below.
ROWS = {
    "sum": "sum(a)",
    "slice": "a[::97, 100:200]",
    "anomaly": "a - mean(a, axis=0) to local Zarr",
    "product": "a.T @ a[:, :16]",
}
ENGINES = ("zarr-fsspec", "zarr-obstore", "dask", "blosc2", "b2lazy")
FORMATS = ("zarr-1m", "zarr-16m", "zarr-shard", "b2nd")
# which formats each engine reads
READS = {
    "zarr-fsspec": FORMATS[:3],
    "zarr-obstore": FORMATS[:3],
    "dask": FORMATS[:3],
    "blosc2": ("b2nd",),
    "b2lazy": FORMATS,
}


def geometry(quick):
    """ncols, {format: (chunks, inner chunks or None)}; rows follow from the size."""
    if quick:
        return (
            256,
            {
                "zarr-1m": ((16, 128), None),
                "zarr-16m": ((128, 256), None),
                "zarr-shard": ((128, 256), (16, 128)),
                "b2nd": ((128, 256), None),
            },
            128,
        )
    return (
        4096,
        {
            "zarr-1m": ((128, 1024), None),
            "zarr-16m": ((1024, 2048), None),
            "zarr-shard": ((1024, 2048), (128, 1024)),
            "b2nd": ((1024, 2048), None),
        },
        1024,
    )


def file_name(fmt):
    return fmt + (".b2nd" if fmt == "b2nd" else ".zarr")


def parse_size(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMG]?)i?B?", text.strip(), re.I)
    if not m:
        raise argparse.ArgumentTypeError(f"a size like 256M or 2G, not {text!r}")
    return int(float(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2).upper()])


# ------------------------------------------------------------------ the data (written once)
def slab_values(i0, i1, ncols):
    """Rows i0:i1 of the array: rounded normal noise (compresses about 2x) plus a column trend,
    the same whichever slab asks."""
    import numpy as np

    rng = np.random.default_rng(i0)
    return np.round(rng.standard_normal((i1 - i0, ncols)), 3) + np.arange(ncols) * 1e-3


def make_data(root, nrows, ncols, formats, step):
    """Writes the formats missing under root (a directory per size); returns their paths."""
    import blosc2
    import numpy as np
    import zarr
    from zarr.codecs import BloscCodec

    os.makedirs(root, exist_ok=True)
    paths = {}
    for fmt, (chunks, inner) in formats.items():
        path = os.path.join(root, file_name(fmt))
        paths[fmt] = path
        if os.path.exists(path):
            continue
        tmp = path + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        if fmt == "b2nd":
            out = blosc2.empty(
                (nrows, ncols),
                dtype=np.float64,
                chunks=chunks,
                urlpath=tmp,
                mode="w",
                cparams={"codec": blosc2.Codec.ZSTD, "clevel": 5},
            )
        else:
            kw = {"chunks": inner, "shards": chunks} if inner else {"chunks": chunks}
            out = zarr.create_array(
                tmp,
                shape=(nrows, ncols),
                dtype="f8",
                zarr_format=3,
                compressors=BloscCodec(cname="zstd", clevel=5, shuffle="shuffle"),
                **kw,
            )
        for i in range(0, nrows, step):
            out[i : i + step] = slab_values(i, min(nrows, i + step), ncols)
        del out
        os.rename(tmp, path)
        print(f"wrote {path} ({dataset_bytes(path) / 2**20:.0f} MiB)", flush=True)
    return paths


def dataset_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def reference(paths, nrows, ncols, step, scratch):
    """The expected results, computed by NumPy slab by slab from the generated values;
    returns {row: .npy path}."""
    import numpy as np

    total, colsum, prod = 0.0, np.zeros(ncols), np.zeros((ncols, K))
    every13, sl = [], []
    for i in range(0, nrows, step):
        s = slab_values(i, min(nrows, i + step), ncols)
        total += s.sum()
        colsum += s.sum(axis=0)
        prod += s.T @ s[:, :K]
        every13.append(s[(-i) % 13 :: 13])
        sl.append(s[(-i) % 97 :: 97, 100:200])
    anomaly = np.concatenate(every13) - colsum / nrows
    sl = np.concatenate(sl)
    out = {}
    for name, value in (("sum", np.asarray(total)), ("slice", sl), ("anomaly", anomaly), ("product", prod)):
        out[name] = os.path.join(scratch, f"ref-{name}.npy")
        np.save(out[name], value)
    return out


def slice_needs(path, fmt, nrows, ncols):
    """Compressed bytes of the chunks a[::97, 100:200] touches, and of the Blosc blocks
    inside them holding its values (header and block-offset table included), read from the
    local files: what a reader that fetches whole chunks, or only the needed blocks, must get."""
    import numpy as np

    rows = np.arange(0, nrows, 97)
    c0, c1 = 100, 200
    chunk_bytes = block_bytes = 0
    if fmt == "b2nd":
        import blosc2

        a = blosc2.open(path)
        (ch_r, ch_c), (bl_r, bl_c) = a.chunks, a.blocks
        nch_c = -(-ncols // ch_c)
        for cr in np.unique(rows // ch_r):
            for cc in range(c0 // ch_c, (c1 - 1) // ch_c + 1):
                raw = a.schunk.get_chunk(int(cr * nch_c + cc))
                chunk_bytes += len(raw)
                local = rows[(rows // ch_r) == cr] - cr * ch_r
                lo, hi = max(c0 - cc * ch_c, 0), min(c1 - cc * ch_c, ch_c)
                nbr, nbc = -(-ch_r // bl_r), -(-ch_c // bl_c)
                need = {int(r // bl_r * nbc + b) for r in local for b in range(lo // bl_c, (hi - 1) // bl_c + 1)}
                block_bytes += _blosc_blocks_bytes(raw, 32, nbr * nbc, need)
        return chunk_bytes, block_bytes
    import zarr

    z = zarr.open_array(path, mode="r")
    inner = z.chunks
    outer = z.shards or z.chunks
    nin_c = outer[1] // inner[1]
    for cr in np.unique(rows // inner[0]):
        local = rows[(rows // inner[0]) == cr] - cr * inner[0]
        for cc in range(c0 // inner[1], (c1 - 1) // inner[1] + 1):
            raw = _zarr_chunk_bytes(path, z, outer, inner, nin_c, int(cr), cc)
            chunk_bytes += len(raw)
            lo, hi = max(c0 - cc * inner[1], 0), min(c1 - cc * inner[1], inner[1])
            blocksize = int.from_bytes(raw[8:12], "little")
            starts = [((int(r) * inner[1] + lo) * 8, (int(r) * inner[1] + hi) * 8) for r in local]
            need = {b for s, e in starts for b in range(s // blocksize, (e - 1) // blocksize + 1)}
            nblocks = -(-int.from_bytes(raw[4:8], "little") // blocksize)
            block_bytes += _blosc_blocks_bytes(raw, 16, nblocks, need)
    return chunk_bytes, block_bytes


def _zarr_chunk_bytes(path, z, outer, inner, nin_c, cr, cc):
    """One inner chunk's stored bytes (for a sharded array, found through its shard's index)."""
    import numpy as np

    if outer == inner:
        with open(os.path.join(path, "c", str(cr), str(cc)), "rb") as f:
            return f.read()
    rin = outer[0] // inner[0]
    shard = os.path.join(path, "c", str(cr // rin), str(cc // nin_c))
    n = rin * nin_c
    with open(shard, "rb") as f:
        data = f.read()
    index = np.frombuffer(data[-(16 * n + 4) : -4], dtype="<u8").reshape(n, 2)
    off, nb = index[(cr % rin) * nin_c + cc % nin_c]
    return data[int(off) : int(off + nb)]


def _blosc_blocks_bytes(raw, header, nblocks, need):
    """Bytes of a Blosc chunk's header + block-offset table + the `need`ed blocks (a block's
    length: up to the next block's start). A memcpyed or special chunk counts whole."""
    import numpy as np

    flags = raw[2]
    if flags & 0x02 or len(raw) < header + 4 * nblocks:
        return len(raw)
    starts = np.frombuffer(raw[header : header + 4 * nblocks], dtype="<i4").astype(np.int64)
    if (starts <= 0).any():
        return len(raw)
    ends = np.append(np.sort(starts)[1:], len(raw))
    length = dict(zip(np.sort(starts).tolist(), (ends - np.sort(starts)).tolist()))
    return header + 4 * nblocks + sum(length[int(starts[b])] for b in need if b < nblocks)


# ------------------------------------------------------------------ one run (a fresh process)
def _rss():
    got = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                key, value = line.split(":")
                got[key] = int(value.split()[0]) * 1024
    return got


# `so`: fsspec's storage options (None over HTTP; s3fs's over S3), `obs`: obstore's S3 config;
# b2lazy finds the S3 endpoint and keys in AWS_* variables (set by run_one).
OPEN = {
    "zarr-fsspec": "a = zarr.open_array("
    "zarr.storage.FsspecStore.from_url(url, storage_options=so, read_only=True), mode='r')",
    "zarr-obstore": "import obstore.store\n"
    "a = zarr.open_array(zarr.storage.ObjectStore(obstore.store.from_url(url, client_options={'allow_http': True},"
    " **obs), read_only=True), mode='r')",
    "dask": "a = da.from_zarr(url, storage_options=so)",
    "blosc2": "a = blosc2.open(url, lazy=True, **({'storage_options': so} if so else {}))",
    "b2lazy": "a = bl.open(url)",
}

# The bodies: see `a`, `np`, `out` (a local Zarr path to write), `slabs(a)` (row ranges of
# about SLAB_BYTES of whole chunk rows) and `zarr`; leave the result in `r`.
SLABBED = {
    "sum": "r = sum(float(a[i:j].sum()) for i, j in slabs(a))",
    "slice": "r = np.asarray(a[::97, 100:200])",
    "anomaly": "m = sum(np.asarray(a[i:j]).sum(axis=0) for i, j in slabs(a)) / a.shape[0]\n"
    "o = zarr.create_array(out, shape=a.shape, dtype='f8', chunks=write_chunks, zarr_format=3)\n"
    "for i, j in slabs(a):\n    o[i:j] = np.asarray(a[i:j]) - m\n"
    "r = None",
    "product": "r = 0\nfor i, j in slabs(a):\n    s = np.asarray(a[i:j]); r = r + s.T @ s[:, :K]",
}
WORK = {
    "zarr-fsspec": SLABBED,
    "zarr-obstore": SLABBED,
    "dask": {
        "sum": "r = a.sum().compute()",
        "slice": "r = a[::97, 100:200].compute()",
        "anomaly": "(a - a.mean(axis=0)).rechunk(write_chunks).to_zarr(out, zarr_format=3); r = None",
        "product": "r = (a.T @ a[:, :K]).compute()",
    },
    "blosc2": {
        "sum": "r = a.sum()",
        "slice": "r = np.asarray(a[::97, 100:200])",
        "anomaly": "e = a - a.mean(axis=0)\n"  # a blosc2 LazyExpr over the RemoteArray
        "o = zarr.create_array(out, shape=a.shape, dtype='f8', chunks=write_chunks, zarr_format=3)\n"
        "for i, j in slabs(a):\n    o[i:j] = e[i:j]\n"
        "r = None",
        "product": SLABBED["product"],
    },
    "b2lazy": {
        "sum": "r = a.sum().to_numpy(max_memory=mm)",
        "slice": "r = a[::97, 100:200].to_numpy(max_memory=mm)",
        "anomaly": "(a - a.mean(axis=0)).compute(urlpath=out, chunks=write_chunks, max_memory=mm); r = None",
        "product": "r = (a.T @ a[:, :K]).to_numpy(max_memory=mm)",
    },
}


def run_one(spec):
    """One (engine, format, row) in this process; returns seconds, open_seconds, peak_bytes,
    cpu_seconds; saves the result's values to spec["save"]."""
    import numpy as np
    import zarr
    import dask
    import dask.array as da
    import blosc2
    import b2lazy as bl

    for mod in ("aiohttp", "obstore"):  # imported by every engine when present: the same baseline
        try:
            __import__(mod)
        except ImportError:
            pass
    chunk_rows = spec["chunk_rows"]

    def slabs(a):
        step = max(chunk_rows, SLAB_BYTES // (a.shape[1] * 8) // chunk_rows * chunk_rows)
        return [(i, min(a.shape[0], i + step)) for i in range(0, a.shape[0], step)]

    scratch = tempfile.mkdtemp(dir=spec["scratch"])
    out = os.path.join(scratch, "out.zarr")
    so, obs, s3 = None, {}, spec.get("s3")
    if s3:
        so = {"key": s3["key"], "secret": s3["secret"], "endpoint_url": s3["endpoint"]}
        obs = {
            "endpoint": s3["endpoint"],
            "access_key_id": s3["key"],
            "secret_access_key": s3["secret"],
            "region": "us-east-1",
            "virtual_hosted_style_request": False,
        }
        os.environ.update(
            {
                "AWS_ENDPOINT_URL": s3["endpoint"],
                "AWS_ACCESS_KEY_ID": s3["key"],
                "AWS_SECRET_ACCESS_KEY": s3["secret"],
                "AWS_REGION": "us-east-1",
            }
        )
    env = {
        "np": np,
        "zarr": zarr,
        "da": da,
        "blosc2": blosc2,
        "bl": bl,
        "url": spec["url"],
        "out": out,
        "slabs": slabs,
        "K": K,
        "write_chunks": tuple(spec["write_chunks"]),
        "so": so,
        "obs": obs,
        "mm": spec.get("max_memory"),
    }
    import warnings

    try:
        with warnings.catch_warnings(), dask.config.set(scheduler="threads", num_workers=NTHREADS):
            warnings.simplefilter("ignore")
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            base = _rss()["VmRSS"]
            c0 = os.times()
            t0 = time.perf_counter()
            exec(OPEN[spec["engine"]], env)
            t1 = time.perf_counter()
            exec(WORK[spec["engine"]][spec["row"]], env)
            t2 = time.perf_counter()
            c1 = os.times()
            peak = _rss()["VmHWM"] - base
        r = env["r"]
        if spec["row"] == "anomaly":
            r = zarr.open_array(out, mode="r")[::13]
        if spec.get("save"):
            np.save(spec["save"], np.asarray(r, dtype="f8"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "seconds": t2 - t0,
        "open_seconds": t1 - t0,
        "peak_bytes": max(0, peak),
        "cpu_seconds": (c1.user - c0.user) + (c1.system - c0.system),
    }


def run_fresh(spec, timeout):
    try:
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:g} s"}
    if out.returncode != 0:
        lines = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
        return {"error": (lines[-1] if lines else f"exit {out.returncode}")[:300]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_in_process(spec):
    try:
        return run_one(spec)
    except Exception as e:  # noqa: BLE001  (recorded in the table)
        return {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}


def compare(got_path, ref_path, rel=1e-9):
    """ "ok" or what differs (max|a - b| against rel * max|ref|: sums in other orders)."""
    import numpy as np

    a, b = np.load(got_path), np.load(ref_path)
    if a.shape != b.shape:
        return f"mismatch: shape {a.shape} vs {b.shape}"
    worst = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    if not worst <= rel * max(scale, 1e-30):
        return f"mismatch: max|diff| {worst:.3g} (max|ref| {scale:.3g})"
    return "ok"


# ------------------------------------------------------------------ servers
def counting_proxy(upstream_port):
    """The fault proxy of tests/python/remote_servers.py in front of upstream_port, counting
    the requests and the body bytes it forwards (take_counts() returns and restarts them)."""
    import remote_servers as rs

    class CountingProxy(rs.FaultProxy):
        def reset(self):
            super().reset()
            self.counts = {"requests": 0, "bytes": 0}

        async def _upstream(self, head, body):
            resp_head, resp_body = await super()._upstream(head, body)
            with self._lock:
                self.counts["requests"] += 1
                if not head.startswith(b"HEAD"):
                    self.counts["bytes"] += len(resp_body)
            return resp_head, resp_body

        def take_counts(self):
            with self._lock:
                got, self.counts = self.counts, {"requests": 0, "bytes": 0}
            return got

    return CountingProxy(upstream_port).start()


def start_http(data_root):
    """nginx serving data_root (a link in its www directory) behind a counting proxy;
    returns (nginx, proxy, base URL through the proxy)."""
    import remote_servers as rs

    server = rs.NginxServer()
    if server.nginx is None or server.openssl is None:
        raise SystemExit("nginx and openssl are needed (Debian: apt-get install nginx-light openssl)")
    server.start()
    os.symlink(os.path.abspath(data_root), server.root / "data")
    proxy = counting_proxy(server.port)
    return server, proxy, f"{proxy.url}/data"


def start_s3(data_root):
    """moto's S3 server holding every file of data_root in bucket "bench" (uploaded through
    boto3, not through the proxy), behind a counting proxy; returns (moto, proxy, credentials)."""
    import remote_servers as rs

    moto = rs.MotoServer().start()
    client = moto.client()
    client.create_bucket(Bucket="bench")
    for dirpath, _, files in os.walk(data_root):
        for f in files:
            path = os.path.join(dirpath, f)
            client.upload_file(path, "bench", os.path.relpath(path, data_root))
    proxy = counting_proxy(moto.port)
    return moto, proxy, {"endpoint": proxy.url, "key": moto.key, "secret": moto.secret}


# ------------------------------------------------------------------ the report
def cell(res):
    if res is None:
        return "—"
    if "error" in res:
        # the URL (long, and the column names it) left out
        return "fails: " + re.sub(r"'[a-z0-9]+://[^']*'", "URL", res["error"]).replace("|", "\\|")[:90]
    text = f"{res['seconds']:.2f} s / {res['peak_mib']:.0f} MiB"
    if "fetched_mb" in res:
        text += f" / {res['fetched_mb']:.1f} MB"
    if res.get("check", "ok") != "ok":
        text += f" ({res['check']})"
    return text


def tables(results, needs):
    out = []
    for lat, rows in results.items():
        cols = [c for c in dict.fromkeys(c for r in rows.values() for c in r)]
        where = "S3 (moto)" if lat.startswith("s3") else "HTTP (nginx)"
        out += [
            f"### {where}, {lat.split()[-1]} ms added per request",
            "",
            "| row | " + " | ".join(cols) + " |",
            "|---|" + "---|" * len(cols),
        ]
        for row, res in rows.items():
            out.append(
                f"| `{ROWS[row]}` | "
                + " | ".join(cell(res.get(c)) + _vs_blocks(row, c, res.get(c), needs) for c in cols)
                + " |"
            )
        out.append("")
    if needs:
        out += [
            "Bytes `a[::97, 100:200]` needs (compressed, headers and block tables included): "
            + "; ".join(f"{fmt}: chunks {c / 1e6:.1f} MB, blocks {b / 1e6:.1f} MB" for fmt, (c, b) in needs.items())
            + "."
        ]
    return "\n".join(out)


def _vs_blocks(row, col, res, needs):
    """For the slice: bytes fetched over the compressed Blosc blocks it needs."""
    fmt = col.split()[-1]
    if row != "slice" or not res or "fetched_mb" not in res or not needs.get(fmt):
        return ""
    return f" ({res['fetched_mb'] * 1e6 / needs[fmt][1]:.2f}x blocks)"


def plot(results, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lats = list(results)
    rows = list(dict.fromkeys(r for v in results.values() for r in v))
    fig, axes = plt.subplots(1, len(rows), figsize=(4.2 * len(rows), 4.2), squeeze=False)
    for ax, row in zip(axes[0], rows):
        cols = list(dict.fromkeys(c for lat in lats for c in results[lat].get(row, {})))
        for protocol in dict.fromkeys("s3" if lat.startswith("s3") else "http" for lat in lats):
            mine = [lat for lat in lats if lat.startswith("s3") == (protocol == "s3")]
            for col in cols:
                xs, ys = [], []
                for lat in mine:
                    res = results[lat].get(row, {}).get(col)
                    if res and "seconds" in res:
                        xs.append(float(lat.split()[-1]))
                        ys.append(res["seconds"])
                if xs:
                    ax.plot(
                        xs,
                        ys,
                        marker="o",
                        ls="-" if protocol == "http" else "--",
                        label=col + (" (S3)" if protocol == "s3" else ""),
                        lw=2.5 if col.startswith("b2lazy") else 1.2,
                    )
        ax.set_xlabel("added latency per request (ms)")
        ax.set_ylabel("time (s)")
        ax.set_yscale("log")
        ax.set_title(ROWS[row])
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)


def machine():
    import importlib.metadata as md

    versions = {}
    for p in ("numpy", "zarr", "dask", "fsspec", "aiohttp", "obstore", "blosc2", "b2lazy"):
        try:
            versions[p] = md.version(p)
        except md.PackageNotFoundError:
            pass
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "versions": versions,
    }


# ------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", default="/work/data/remote", help="where the generated arrays are kept")
    ap.add_argument("--size", type=parse_size, default=parse_size("2G"), help="bytes of float64 (e.g. 256M, 2G)")
    ap.add_argument("--latency", type=float, nargs="*", default=[0, 20, 80], help="ms added per request")
    ap.add_argument("--only", nargs="*", default=None, choices=list(ROWS), metavar="ROW")
    ap.add_argument("--engines", nargs="*", default=list(ENGINES), choices=ENGINES)
    ap.add_argument("--formats", nargs="*", default=list(FORMATS), choices=FORMATS)
    ap.add_argument(
        "--s3",
        action="store_true",
        help="also over moto's S3 server (pip install 'moto[server]'), the same objects uploaded",
    )
    ap.add_argument(
        "--max-memory",
        type=int,
        default=None,
        metavar="MIB",
        help="b2lazy's max_memory (the target: its peak within this + 32 MiB)",
    )
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1200)
    ap.add_argument("--quick", action="store_true", help="a tiny array, one run each, 0 ms: a smoke run")
    ap.add_argument(
        "--in-process",
        action="store_true",
        help="run every cell in this process (no fresh processes: the peaks mean nothing)",
    )
    ap.add_argument("--out", default=None, help="JSON results (e.g. bench/RESULTS-remote.json)")
    ap.add_argument("--plot", default=None, help="PNG: time vs latency per contender, a panel per row")
    ap.add_argument("--md", default=None, help="write the markdown tables here too")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_one(json.loads(args.child))))
        return 0
    scratch = tempfile.mkdtemp(prefix="bench-remote-")
    try:
        return _main(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _main(args, scratch):
    ncols, shapes, step = geometry(args.quick)
    if args.quick:
        nrows, reps, root = 1024, 1, os.path.join(scratch, "data")
        lats = args.latency if args.latency != [0, 20, 80] else [0]
    else:
        nrows = max(step, args.size // (ncols * 8) // step * step)
        reps, lats = args.reps, args.latency
        root = os.path.join(args.data, f"f8-{nrows}x{ncols}")
    shapes = {f: shapes[f] for f in args.formats}
    paths = make_data(root, nrows, ncols, shapes, step)
    refs = reference(paths, nrows, ncols, step, scratch)
    needs = {f: slice_needs(paths[f], f, nrows, ncols) for f in shapes}
    info = machine()
    info["array"] = {
        "shape": [nrows, ncols],
        "dtype": "float64",
        "gib": nrows * ncols * 8 / 2**30,
        "stored_mib": {f: dataset_bytes(p) / 2**20 for f, p in paths.items()},
    }
    print(
        f"# {info['date']}, {info['cores']} cores, array {nrows} x {ncols} float64 "
        f"({info['array']['gib']:.2f} GiB), load {os.getloadavg()}",
        flush=True,
    )
    results = {}
    for protocol in ["http"] + (["s3"] if args.s3 else []):
        if protocol == "http":
            server, proxy, base = start_http(root)
            s3 = None
        else:
            server, proxy, s3 = start_s3(root)
            base = "s3://bench"
        try:
            for lat in lats:
                key = f"{lat:g}" if protocol == "http" else f"s3 {lat:g}"
                results[key] = {}
                for row in args.only or list(ROWS):
                    results[key][row] = cells = {}
                    for eng in args.engines:
                        for fmt in READS[eng]:
                            if fmt not in shapes:
                                continue
                            col = f"{eng} {fmt}"
                            cells[col] = _measure(
                                args, proxy, lat, reps, scratch, base, s3, eng, fmt, row, shapes, refs[row]
                            )
                            print(f"{key:>6} ms {row:8s} {col:24s} {cell(cells[col])}", flush=True)
                            if args.out:  # as it goes: a run stopped early keeps its cells
                                _save(args.out, info, reps, results, needs)
        finally:
            proxy.stop()
            server.stop()
    md = tables(results, needs) + (
        f"\n\nArray {nrows} x {ncols} float64 ({info['array']['gib']:.2f} GiB); cells: median time (open"
        f" included) / peak RSS growth / MB fetched through the proxy (bodies), median of {reps} runs."
        f" {info['cores']} cores, {info['cpu']}."
    )
    print(md)
    if args.md:
        with open(args.md, "w") as f:
            f.write(md + "\n")
    if args.out:
        _save(args.out, info, reps, results, needs, md)
    if args.plot:
        plot(results, args.plot)
    return 0


def _save(path, info, reps, results, needs, md=None):
    with open(path, "w") as f:
        json.dump(
            {
                "machine": info,
                "reps": reps,
                "rows": ROWS,
                "results": results,
                "slice_needs": {k: {"chunks_bytes": c, "blocks_bytes": b} for k, (c, b) in needs.items()},
                "markdown": md,
            },
            f,
            indent=1,
        )


def _measure(args, proxy, lat, reps, scratch, base, s3, eng, fmt, row, shapes, ref):
    chunks, inner = shapes[fmt]
    runs = []
    for rep in range(reps):
        spec = {
            "engine": eng,
            "row": row,
            "url": f"{base}/{file_name(fmt)}",
            "scratch": scratch,
            "chunk_rows": chunks[0],
            "write_chunks": list(inner or chunks),
            "s3": s3,
            "max_memory": args.max_memory and args.max_memory << 20,
        }
        if rep == 0:
            spec["save"] = os.path.join(scratch, "got.npy")
        proxy.set(latency=lat / 1000)
        proxy.take_counts()
        res = run_in_process(spec) if args.in_process else run_fresh(spec, args.timeout)
        res.update(proxy.take_counts())
        runs.append(res)
        if "error" in res:
            return {"error": res["error"], "requests": res["requests"]}
        if rep == 0:
            res["check"] = compare(spec["save"], ref)
            os.remove(spec["save"])
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "open_seconds": statistics.median(r["open_seconds"] for r in runs),
        "peak_mib": max(r["peak_bytes"] for r in runs) / 2**20,
        "cpu_seconds": statistics.median(r["cpu_seconds"] for r in runs),
        "fetched_mb": statistics.median(r["bytes"] for r in runs) / 1e6,
        "requests": int(statistics.median(r["requests"] for r in runs)),
        "check": runs[0]["check"],
        "runs": [round(r["seconds"], 3) for r in runs],
    }


if __name__ == "__main__":
    sys.exit(main())
