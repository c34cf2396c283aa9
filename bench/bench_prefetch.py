"""Wall time of reading an array of N objects over HTTP (nginx behind the fault proxy with
added latency per request) on 2 workers, with the plan's prefetch and without it (the
test source b2lazy._core._store_units_array, opted in or not). Prints a table.

    python bench/bench_prefetch.py [--units 64] [--unit-kib 64] [--repeat 3]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))
import remote_servers  # noqa: E402  (nginx and the fault proxy of the tests)

import b2lazy  # noqa: E402
from b2lazy import _core  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", type=int, default=64)
    ap.add_argument("--unit-kib", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    unit = args.unit_kib * 1024 // 8
    nginx = remote_servers.NginxServer().start()
    proxy = remote_servers.FaultProxy(nginx.port).start()
    try:
        values = np.arange(args.units * unit, dtype=np.float64)
        for u in range(args.units):
            nginx.put(f"bench/u/{u}", values[u * unit : (u + 1) * unit].tobytes())
        print(f"{args.units} units of {args.unit_kib} KiB, {args.threads} workers, best of {args.repeat}")
        print(f"{'latency':>8} {'prefetch':>9} {'seconds':>8} {'requests':>9} {'most in flight':>15}")
        for latency in (0.0, 0.02, 0.08):
            for prefetch in (False, True):
                best = None
                for _ in range(args.repeat):
                    proxy.set(latency=latency)
                    store = _core.open_store(f"{proxy.url}/bench")
                    a = b2lazy._wrap(_core._store_units_array(store, "float64", [values.size], [unit], prefetch))
                    t0 = time.perf_counter()
                    out = a.to_numpy(nthreads=args.threads)
                    dt = time.perf_counter() - t0
                    assert np.array_equal(out, values)
                    best = dt if best is None else min(best, dt)
                print(
                    f"{latency * 1000:>6.0f}ms {str(prefetch):>9} {best:>8.3f} "
                    f"{store.counters()['requests']:>9} {proxy.most_in_flight:>15}"
                )
    finally:
        proxy.stop()
        nginx.stop()


if __name__ == "__main__":
    main()
