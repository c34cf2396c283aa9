"""HttpStore (libcurl) against nginx on 127.0.0.1: ranges exact against the file's bytes,
missing objects, big reads, many reads in flight with the requests counted, HTTPS with a
self-signed certificate, and the read-only/no-listing errors."""

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from b2lazy import _core

from conftest import examples

SIZE = 3_000_017


@pytest.fixture(scope="module")
def blob(nginx_server):
    data = np.random.default_rng(39).integers(0, 256, SIZE, dtype=np.uint8).tobytes()
    nginx_server.put("http/blob.bin", data)
    nginx_server.put("http/empty.bin", b"")
    nginx_server.put("http/dir with space/a+b.bin", data[:1000])
    return data


def store(server, **options):
    return _core.open_store(f"{server.url}/http", options)


def test_ranges_exact(nginx_server, blob):
    s = store(nginx_server)
    parts = s.read("blob.bin", [(0, 10), (100, 5), (SIZE - 7, -1), (5, 0), (SIZE, 0), (0, -1)])
    assert parts == [blob[:10], blob[100:105], blob[-7:], b"", b"", blob]
    assert s.read("empty.bin", [(0, -1)]) == [b""]
    assert s.read("dir with space/a+b.bin", [(10, 20)]) == [blob[10:30]]  # keys are URL-encoded


@examples(40)
@given(st.lists(st.tuples(st.integers(0, SIZE - 1), st.integers(0, 300_000)), min_size=1, max_size=12))
def test_ranges_hypothesis(nginx_server, blob, ranges):
    ranges = [(o, min(n, SIZE - o)) for o, n in ranges]
    s = store(nginx_server, coalesce_gap="4096", coalesce_max="65536")
    assert s.read("blob.bin", ranges) == [blob[o : o + n] for o, n in ranges]


def test_missing_is_none(nginx_server, blob):
    s = store(nginx_server)
    assert s.read("nope.bin", [(0, 1)]) is None
    assert s.read("nope.bin", [(0, 0)]) is None
    assert s.stat("nope.bin") is None
    assert s.read_many([("nope.bin", [(0, 4)]), ("blob.bin", [(0, 4)])]) == [None, [blob[:4]]]


def test_past_the_end_is_an_error(nginx_server, blob):
    s = store(nginx_server)
    with pytest.raises(OSError, match=r"blob\.bin.*past the end of the object \(3000017 bytes\)"):
        s.read("blob.bin", [(SIZE - 5, 10)])
    with pytest.raises(OSError, match="past the end"):
        s.read("blob.bin", [(SIZE + 5, 1)])
    with pytest.raises(OSError, match="past the end"):
        s.read("blob.bin", [(SIZE + 1, 0)])


def test_stat(nginx_server, blob):
    info = store(nginx_server).stat("blob.bin")
    assert info["size"] == SIZE and info["key"] == "blob.bin" and info["version"]


def test_big_read_is_split_and_exact(nginx_server, blob):
    s = store(nginx_server, coalesce_max=str(256 << 10))
    assert s.read("blob.bin", [(1, SIZE - 1)]) == [blob[1:]]
    # ~2.9 MB in parts of at most 256 KiB, in parallel
    assert s.counters()["requests"] == -(-(SIZE - 1) // (256 << 10))
    assert s.counters()["bytes"] == SIZE - 1


def test_many_in_flight_counted_and_coalesced(nginx_server, blob):
    # 200 ranges of 1000 bytes, 10000 apart: without coalescing one request each ...
    reqs = [("blob.bin", [(i * 10_000, 1000)]) for i in range(200)]
    s = store(nginx_server, coalesce_gap="0")
    got = s.read_many(reqs)
    assert got == [[blob[o : o + n] for o, n in r] for _, r in reqs]
    c = s.counters()
    assert c["requests"] == 200 and c["bytes"] == 200_000 and c["retries"] == 0
    assert c["wait_seconds"] > 0
    # ... with a gap threshold of 16 KiB, merged requests of at most 512 KiB and gaps of any
    # share of what is read (coalesce_waste): 4 requests
    s = store(nginx_server, coalesce_gap=str(16 << 10), coalesce_max=str(512 << 10), coalesce_waste="100")
    assert s.read_many(reqs) == got
    assert s.counters()["requests"] == 4
    # ... by default the gaps read stay within 20% of what is asked: 9000-byte gaps are not
    s = store(nginx_server, coalesce_gap=str(16 << 10))
    assert s.read_many(reqs) == got
    assert s.counters()["requests"] == 200 and s.counters()["bytes"] == 200_000


def test_adjacent_ranges_of_one_read_are_one_request(nginx_server, blob):
    s = store(nginx_server)
    ranges = [(i * 4096, 4096) for i in range(64)]
    assert s.read("blob.bin", ranges) == [blob[o : o + n] for o, n in ranges]
    assert s.counters()["requests"] == 1
    assert s.counters()["bytes"] == 64 * 4096


def test_concurrency_one_still_reads_everything(nginx_server, blob):
    s = _core.open_store(f"{nginx_server.url}/http", {"coalesce_gap": "0"}, concurrency=1)
    reqs = [("blob.bin", [(i * 1000, 10)]) for i in range(50)]
    assert s.read_many(reqs) == [[blob[i * 1000 : i * 1000 + 10]] for i in range(50)]


def test_root_is_the_object(nginx_server, blob):
    s = _core.open_store(f"{nginx_server.url}/http/blob.bin", {})
    assert s.read("", [(7, 3)]) == [blob[7:10]]
    assert s.stat("")["size"] == SIZE


def test_https_with_self_signed_certificate(nginx_server, blob):
    url = f"{nginx_server.https_url}/http"
    with pytest.raises(OSError, match=r"https://127\.0\.0\.1:\d+/http/blob\.bin.*(certificate|SSL)"):
        _core.open_store(url, {}, max_retries=0).read("blob.bin", [(0, 1)])
    s = _core.open_store(url, {"ca_file": nginx_server.ca_file})
    reqs = [("blob.bin", [(i * 50_000, 20_000)]) for i in range(40)]
    assert s.read_many(reqs) == [[blob[i * 50_000 : i * 50_000 + 20_000]] for i in range(40)]
    assert s.read("blob.bin", [(0, -1)]) == [blob]
    s = _core.open_store(url, {"verify": False})
    assert s.read("blob.bin", [(5, 5)]) == [blob[5:10]]


def test_headers_option_is_sent(nginx_server, blob):
    # nginx's /bearer-bucket/ wants this header
    nginx_server.put("bearer-bucket/x.bin", b"secret bytes")
    with pytest.raises(OSError, match=r"bearer-bucket/x\.bin': HTTP 401"):
        _core.open_store(f"{nginx_server.url}/bearer-bucket", {}).read("x.bin", [(0, 6)])
    s = _core.open_store(f"{nginx_server.url}/bearer-bucket", {"headers": {"Authorization": "Bearer good-token"}})
    assert s.read("x.bin", [(0, 6)]) == [b"secret"]


def test_read_only_and_no_listing(nginx_server, blob):
    s = store(nginx_server)
    with pytest.raises(OSError, match="HTTP has no listing"):
        s.list("")
    with pytest.raises(OSError, match="read-only"):
        s.write("x.bin", b"abc")
    with pytest.raises(OSError, match="read-only"):
        s.remove("blob.bin")
    assert not os.path.exists(nginx_server.root / "http" / "x.bin")


def test_refused_connection_names_the_url(blob):
    from remote_servers import free_port

    url = f"http://127.0.0.1:{free_port()}/nothing"
    s = _core.open_store(url, {"retry_backoff": "0.001", "retry_backoff_max": "0.01"}, max_retries=2)
    with pytest.raises(OSError, match=r"127\.0\.0\.1:\d+/nothing/a\.bin.*after 3 attempts"):
        s.read("a.bin", [(0, 1)])
    assert s.counters()["requests"] == 3 and s.counters()["retries"] == 2


def test_bad_options_are_errors(nginx_server):
    with pytest.raises(OSError, match="verify"):
        _core.open_store(nginx_server.url, {"verify": "maybe"})
    with pytest.raises(OSError, match="coalesce_gap"):
        _core.open_store(nginx_server.url, {"coalesce_gap": "-3"})
    with pytest.raises(ValueError, match="unknown URL scheme 'nosuchproto'"):
        _core.open_store("nosuchproto://x/y", {})


def test_one_store_from_many_threads(nginx_server, blob):
    from concurrent.futures import ThreadPoolExecutor

    s = store(nginx_server, coalesce_gap="0")

    def work(i):
        o = (i * 7919) % (SIZE - 5000)
        return s.read("blob.bin", [(o, 5000)]) == [blob[o : o + 5000]]

    with ThreadPoolExecutor(8) as ex:
        assert all(ex.map(work, range(400)))
    assert s.counters()["requests"] == 400


def test_a_forked_child_reads_with_its_own_engine(nginx_server, blob):
    import multiprocessing as mp

    s = store(nginx_server)
    assert s.read("blob.bin", [(0, 10)]) == [blob[:10]]  # the parent's I/O thread runs
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_read, args=(f"{nginx_server.url}/http", q))
    p.start()
    got = q.get(timeout=60)
    p.join(60)
    assert got == blob[100:200] and p.exitcode == 0


def _child_read(url, q):
    q.put(_core.open_store(url, {}).read("blob.bin", [(100, 100)])[0])


def test_connections_are_reused_and_https_is_http2(nginx_server, blob):
    import uuid

    tag = uuid.uuid4().hex  # this test's requests in nginx's log, by key
    nginx_server.put(f"http/{tag}.bin", blob[:100_000])
    s = _core.open_store(f"{nginx_server.url}/http", {"coalesce_gap": "0"}, concurrency=4)
    for _ in range(10):
        s.read_many([(f"{tag}.bin", [(i * 1000, 10)]) for i in range(20)])
    log = [r for r in nginx_server.access_log() if tag in r["uri"]]
    assert len(log) == 200 and all(r["protocol"] == "HTTP/1.1" for r in log)
    assert len({r["connection"] for r in log}) <= 8  # 200 requests over a few kept-alive connections
    tls = _core.open_store(f"{nginx_server.https_url}/http", {"ca_file": nginx_server.ca_file, "coalesce_gap": "0"})
    tls.read_many([(f"{tag}.bin", [(i * 1000, 10)]) for i in range(50)])
    tls.read_many([(f"{tag}.bin", [(i * 1000, 10)]) for i in range(50)])
    log = [r for r in nginx_server.access_log() if tag in r["uri"] and r["protocol"] != "HTTP/1.1"]
    assert len(log) == 100 and all(r["protocol"] == "HTTP/2.0" for r in log)
    assert len({r["connection"] for r in log}) <= 2  # multiplexed on one TLS connection


def test_root_with_a_query_string(nginx_server, blob):
    # a presigned URL's query follows the key's path (nginx ignores it)
    s = _core.open_store(f"{nginx_server.url}/http/?X-Amz-Signature=abc&X-Amz-Expires=60", {})
    assert s.read("blob.bin", [(3, 4)]) == [blob[3:7]]
    s = _core.open_store(f"{nginx_server.url}/http/blob.bin?sig=1", {})
    assert s.read("", [(3, 4)]) == [blob[3:7]]
    assert "sig" not in s.root
    with pytest.raises(OSError) as e:
        s.read("", [(SIZE, 1)])
    assert "sig=1" not in str(e.value)


def test_stat_without_head(nginx_server, blob):
    nginx_server.put("no-head/x.bin", blob[:12345])
    nginx_server.put("no-head/empty.bin", b"")
    s = _core.open_store(f"{nginx_server.url}/no-head", {})
    assert s.stat("x.bin")["size"] == 12345
    assert s.stat("empty.bin")["size"] == 0
    assert s.stat("missing.bin") is None
    assert s.read("x.bin", [(0, -1)]) == [blob[:12345]]


def test_suffix_ranges(nginx_server, faults, blob):
    # (-N, N): the object's last N bytes in one request ("Range: bytes=-N"), as a shard
    # index at the end is read without asking the shard's size first.
    s = store(nginx_server)
    assert s.read("blob.bin", [(-16, 16)]) == [blob[-16:]]
    assert s.read("blob.bin", [(-16, 16), (0, 4), (-SIZE, SIZE)]) == [blob[-16:], blob[:4], blob]
    assert s.read("nope.bin", [(-16, 16)]) is None
    with pytest.raises(OSError, match=r"blob\.bin.*its last 3000018 bytes asked, it has 3000017"):
        s.read("blob.bin", [(-SIZE - 1, SIZE + 1)])
    before = s.counters()["requests"]
    s.read("blob.bin", [(-100, 100)])
    assert s.counters()["requests"] == before + 1  # no HEAD first
    # A server that ignores Range answers the whole object: its tail is taken.
    faults.set(["ignore_range"])
    p = _core.open_store(f"{faults.url}/http")
    assert p.read("blob.bin", [(-16, 16)]) == [blob[-16:]]
    assert faults.seen == ["ignore_range"]
