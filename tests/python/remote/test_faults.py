"""Reads through a fault-injecting proxy in front of nginx: 503s, 429s and connection resets
are retried and the bytes stay exact; a truncated body, a body shorter than its
Content-Range or a stalled one is retried and, when it keeps happening, an error naming the
URL — never silent zeros; added latency changes nothing but the time."""

import signal
import subprocess
import sys
import textwrap
import time

import blosc2
import numpy as np
import pytest

from b2lazy import _core

SIZE = 2_000_003
FAST = {"retry_backoff": "0.001", "retry_backoff_max": "0.01"}  # quick retries in tests


@pytest.fixture(scope="module")
def blob(nginx_server):
    data = np.random.default_rng(7).integers(0, 256, SIZE, dtype=np.uint8).tobytes()
    nginx_server.put("faults/blob.bin", data)
    return data


def store(proxy, max_retries=8, **options):
    return _core.open_store(f"{proxy.url}/faults", {**FAST, **options}, max_retries=max_retries)


@pytest.mark.parametrize("fault", ["503", "429", "500", "reset", "truncate", "short_range"])
def test_a_few_faults_are_retried_and_exact(faults, blob, fault):
    faults.set([fault, fault, fault])
    s = store(faults)
    assert s.read("blob.bin", [(1000, 300_000)]) == [blob[1000:301_000]]
    assert faults.seen == [fault] * 3 + ["ok"]
    c = s.counters()
    if fault == "reset":  # libcurl itself resends what a reused connection lost unanswered
        assert c["retries"] <= 3 and c["requests"] == c["retries"] + 1  # (uncounted: how many, varies)
    else:
        assert c["retries"] == 3 and c["requests"] == 4


@pytest.mark.parametrize(
    "fault, says",
    [
        ("503", r"HTTP 503 \(after 3 attempts\).*Injected: fault 503"),
        ("reset", r"(Recv failure|Connection reset|Empty reply|Send failure).*after 3 attempts"),
        ("truncate", r"(transfer closed|Partial|partial).*after 3 attempts"),
        ("short_range", r"a short body: \d+ bytes for Content-Range 'bytes 10-200009/2000003'.*after 3 attempts"),
    ],
)
def test_persistent_faults_are_errors_naming_the_url(faults, blob, fault, says):
    faults.set(then=fault)
    s = store(faults, max_retries=2)
    with pytest.raises(OSError, match=rf"'{faults.url}/faults/blob\.bin': .*{says}"):
        s.read("blob.bin", [(10, 200_000)])
    assert s.counters()["requests"] == 3 and s.counters()["retries"] == 2


def test_stalled_body_times_out_and_is_retried(faults, blob):
    faults.set(["stall"])
    s = store(faults, read_timeout="1")
    assert s.read("blob.bin", [(0, 100_000)]) == [blob[:100_000]]
    assert s.counters()["retries"] == 1


def test_stat_and_whole_reads_are_retried(faults, blob):
    faults.set(["503", "reset"])
    s = store(faults)
    assert s.stat("blob.bin")["size"] == SIZE
    faults.set(["truncate", "429"])
    assert s.read("blob.bin", [(0, -1)]) == [blob]
    assert 3 <= s.counters()["retries"] <= 4  # (a reset may be resent by libcurl itself)


def test_missing_stays_none_through_faults(faults, blob):
    faults.set(["503"])
    assert store(faults).read("nope.bin", [(0, 1)]) is None


def test_many_in_flight_with_mixed_faults_stay_exact(faults, blob):
    rng = np.random.default_rng(3)
    kinds = ["ok", "ok", "503", "429", "reset", "truncate", "short_range"]
    faults.set([kinds[i] for i in rng.integers(0, len(kinds), 150)])
    reqs = [("blob.bin", [(int(o), 5000)]) for o in rng.integers(0, SIZE - 5000, 120)]
    s = store(faults, coalesce_gap="0", coalesce_max="8192")
    got = s.read_many(reqs)
    assert got == [[blob[o : o + n] for o, n in r] for _, r in reqs]
    c = s.counters()
    # every fault but the resets libcurl resent itself is a retry of ours
    resets = sum(f == "reset" for f in faults.seen)
    assert sum(f != "ok" for f in faults.seen) - resets <= c["retries"] <= sum(f != "ok" for f in faults.seen)
    assert c["requests"] - c["retries"] <= len(reqs)  # (overlapping ranges are merged)


def test_latency_changes_nothing_but_time(faults, blob):
    faults.set(latency=0.05)
    reqs = [("blob.bin", [(i * 50_000, 20_000)]) for i in range(32)]
    s = store(faults, coalesce_gap="0")
    assert s.read_many(reqs) == [[blob[i * 50_000 : i * 50_000 + 20_000]] for i in range(32)]
    c = s.counters()
    assert c["requests"] == 32 and c["retries"] == 0 and c["wait_seconds"] > 0


def test_server_ignoring_range_gives_the_slice_of_the_whole_object(faults, blob):
    faults.set(then="ignore_range")
    s = store(faults)
    assert s.read("blob.bin", [(10, 1000), (SIZE - 5, -1)]) == [blob[10:1010], blob[-5:]]
    assert s.counters()["bytes"] == 2 * SIZE  # (two fetches, each answered with everything)
    with pytest.raises(OSError, match="past the end"):
        s.read("blob.bin", [(SIZE - 1, 2)])


def test_a_server_ignoring_range_on_a_huge_object_is_refused(nginx_server, faults):
    # 65 MiB answered whole to a 10-byte read: refused before it is all in memory
    nginx_server.put("huge/h.bin", b"\0" * (65 << 20))
    faults.set(then="ignore_range")
    s = _core.open_store(f"{faults.url}/huge", {})
    with pytest.raises(OSError, match=r"huge/h\.bin': the response is larger than the \d+ bytes expected"):
        s.read("h.bin", [(0, 10)])
    assert s.counters()["retries"] == 0 and s.counters()["bytes"] < 65 << 20


def test_ctrl_c_while_reads_hang(faults, nginx_server, tmp_path):
    # An evaluation whose reads hang (the proxy sends headers, then nothing; the store
    # would wait read_timeout=600 s) stops on SIGINT: KeyboardInterrupt within seconds.
    local = tmp_path / "hang.b2nd"
    blosc2.asarray(
        np.arange(400_000, dtype=np.float64).reshape(400, 1000),
        chunks=(100, 1000),
        blocks=(10, 1000),
        urlpath=str(local),
        mode="w",
    )
    nginx_server.put("faults/hang.b2nd", local.read_bytes())
    script = tmp_path / "hang.py"
    script.write_text(
        textwrap.dedent("""
        import sys
        import b2lazy as bl
        a = bl.open(sys.argv[1], storage_options={"read_timeout": "600"})
        print("opened", flush=True)
        sys.stdin.readline()
        try:
            bl.sum(a).compute()
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            raise
    """)
    )
    faults.set()
    p = subprocess.Popen(
        [sys.executable, str(script), f"{faults.url}/faults/hang.b2nd"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout.readline().strip() == "opened", p.stderr.read()
        faults.set(then="stall")
        p.stdin.write("go\n")
        p.stdin.flush()
        for _ in range(3000):  # until a read hangs at the proxy
            if faults.seen:
                break
            time.sleep(0.01)
        assert faults.seen, "no request reached the proxy"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)  # generous: it stops within about 0.1 s
    finally:
        if p.poll() is None:
            p.kill()
        faults.reset()
    assert "interrupted" in out, (out, err)
    assert p.returncode != 0 and "KeyboardInterrupt" in err, err
