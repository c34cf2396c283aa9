"""Ranged reads of one object served by nginx on 127.0.0.1: b2lazy's libcurl store
(read_many, 32 in flight) against fsspec's HTTPFileSystem (aiohttp; cat_ranges, batches of
32). 1 MiB ranges (not coalesced: each is one request), every range of a 256 MiB file,
best of `--repeat`. Optional: --latency S puts the fault proxy (tests/python/remote_servers)
in front with S seconds added per request.

    python bench/bench_store_http.py [--size-mib 256] [--range-kib 1024] [--repeat 5]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
import remote_servers  # noqa: E402

from b2lazy import _core  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--range-kib", type=int, default=1024)
    ap.add_argument("--inflight", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.0)
    a = ap.parse_args()
    server = remote_servers.NginxServer().start()
    proxy = None
    try:
        size = a.size_mib << 20
        data = os.urandom(size)
        server.put("bench/blob.bin", data)
        base = server.url
        if a.latency:
            proxy = remote_servers.FaultProxy(server.port).start()
            proxy.set(latency=a.latency)
            base = proxy.url
        step = a.range_kib << 10
        offsets = list(range(0, size, step))
        n = len(offsets)
        print(
            f"{n} ranges of {a.range_kib} KiB of a {a.size_mib} MiB object, "
            f"{a.inflight} in flight, latency {a.latency} s"
        )

        store = _core.open_store(f"{base}/bench", {"coalesce_max": str(step)}, concurrency=a.inflight)
        best = float("inf")
        for _ in range(a.repeat):
            t = time.perf_counter()
            got = store.read_many([("blob.bin", [(o, step)]) for o in offsets])
            best = min(best, time.perf_counter() - t)
        assert b"".join(g[0] for g in got) == data
        c = store.counters()
        print(
            f"b2lazy libcurl store: {n / best:8.0f} requests/s {size / best / 1e6:8.0f} MB/s "
            f"({c['requests'] // a.repeat} requests a pass)"
        )

        try:
            import aiohttp
            import fsspec
            from fsspec.implementations.http import HTTPFileSystem
        except ImportError as e:
            print(f"fsspec HTTPFileSystem: not measured ({e})")
            return
        fs = HTTPFileSystem()
        url = f"{base}/bench/blob.bin"
        best = float("inf")
        for _ in range(a.repeat):
            t = time.perf_counter()
            got = fs.cat_ranges([url] * n, offsets, [o + step for o in offsets], batch_size=a.inflight)
            best = min(best, time.perf_counter() - t)
        assert b"".join(got) == data
        print(
            f"fsspec {fsspec.__version__} HTTPFileSystem (aiohttp {aiohttp.__version__}): "
            f"{n / best:8.0f} requests/s {size / best / 1e6:8.0f} MB/s"
        )
    finally:
        if proxy:
            proxy.stop()
        server.stop()


if __name__ == "__main__":
    main()
