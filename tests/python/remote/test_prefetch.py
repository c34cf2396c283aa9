"""The plan's prefetch over HTTP (nginx behind the fault proxy, 20 ms added per request):
an array whose units are objects "u/<id>" (b2lazy._core._store_units_array, the test
source of exec/prefetcher.hpp) read by 2 workers has its units' requests in flight many at
once, each unit fetched once, values exact; without the prefetch the workers' own reads
keep at most 2 in flight. Asserted by counting requests, never by timing."""

import numpy as np
import pytest

import b2lazy
from b2lazy import _core

UNIT = 4096  # float64 items: 32 KiB objects
N = 48


@pytest.fixture(scope="module")
def units(nginx_server):
    values = np.arange(N * UNIT, dtype=np.float64)
    for u in range(N):
        nginx_server.put(f"prefetch/u/{u}", values[u * UNIT : (u + 1) * UNIT].tobytes())
    return values


def array(proxy, prefetch=True, **options):
    store = _core.open_store(f"{proxy.url}/prefetch", options or None)
    return b2lazy._wrap(_core._store_units_array(store, "float64", [N * UNIT], [UNIT], prefetch)), store


def test_units_in_flight_at_once_each_fetched_once(faults, units):
    faults.set(latency=0.02)
    a, store = array(faults)
    np.testing.assert_array_equal(a.to_numpy(nthreads=2), units)
    assert store.counters()["requests"] == N  # each unit once
    assert len(faults.seen) == N
    # The reads ahead go out in batches of up to 16, two batches at once: far more than
    # the 2 workers' own reads in flight, so N units take ~N/16 round trips, not N/2.
    assert faults.most_in_flight >= 8, faults.in_flight_seen
    assert np.mean(faults.in_flight_seen) > 4, faults.in_flight_seen


def test_without_prefetch_the_workers_read_two_at_a_time(faults, units):
    faults.set(latency=0.02)
    a, store = array(faults, prefetch=False)
    np.testing.assert_array_equal(a.to_numpy(nthreads=2), units)
    assert store.counters()["requests"] == N
    assert faults.most_in_flight <= 2
    assert a.last_stats["prefetch_reads"] == 0 and a.last_stats["prefetch_misses"] == N


def test_stats_count_the_stores_and_the_prefetch(faults, units):
    faults.set(latency=0.005)
    a, store = array(faults)
    np.testing.assert_array_equal(a.to_numpy(nthreads=2), units)
    s = a.last_stats
    assert s["store_requests"] == N == store.counters()["requests"]
    assert s["store_bytes"] == N * UNIT * 8
    assert s["store_retries"] == 0
    assert s["prefetch_hits"] + s["prefetch_misses"] == N
    assert s["prefetch_reads"] >= N - 2
    assert s["store_wait_seconds"] > 0
    assert "stores: 48 requests" in a.compute(nthreads=2).explain()


def test_retries_counted_and_values_exact(faults, units):
    faults.set(["503", "503", "reset"])
    a, store = array(faults, retry_backoff="0.001", retry_backoff_max="0.01")
    np.testing.assert_array_equal(a.to_numpy(nthreads=2), units)
    c = store.counters()  # (libcurl itself resends once what a reused connection lost unanswered)
    assert a.last_stats["store_retries"] == c["retries"] >= 2
    assert a.last_stats["store_requests"] == c["requests"] >= N + 2


def test_a_persistent_error_names_the_url(faults, units):
    faults.set(then="503")
    a, _ = array(faults, retry_backoff="0.001", retry_backoff_max="0.01")
    with pytest.raises(OSError, match=r"prefetch/u/\d+.*503"):
        a.to_numpy(nthreads=2)
    faults.reset()
    np.testing.assert_array_equal(a.to_numpy(nthreads=2), units)  # nothing left running in the way
