"""bench/bench_remote.py --quick: a tiny array in every format, served by nginx behind the
latency proxy, read by every contender. Each cell either ran and matched NumPy or recorded
its error; the peers whose libraries are installed must run; bytes went over the wire."""

import importlib.util
import json
import os
import shutil

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "bench", "bench_remote.py")


def _installed(module):
    return importlib.util.find_spec(module) is not None


# The peers that must work when their libraries are here (b2lazy's remote drivers may not
# be built yet: its cells must run correctly or report an error, never give wrong values).
MUST_RUN = {
    "zarr-fsspec": _installed("zarr") and _installed("aiohttp"),
    "zarr-obstore": _installed("zarr") and _installed("obstore"),
    "dask": _installed("dask") and _installed("aiohttp"),
    "blosc2": _installed("blosc2") and _installed("aiohttp"),
}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    if not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")) or not shutil.which("openssl"):
        pytest.skip("nginx and openssl are needed (Debian: apt-get install nginx-light openssl)")
    spec = importlib.util.spec_from_file_location("bench_remote", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    d = tmp_path_factory.mktemp("bench-remote")
    out, png = d / "out.json", d / "plot.png"
    # 20 ms: the proxy's latency path too; in process: fresh interpreters cost seconds each
    assert bench.main(["--quick", "--in-process", "--latency", "20", "--out", str(out), "--plot", str(png)]) == 0
    with open(out) as f:
        return bench, json.load(f), png


def test_every_cell_matches_numpy_or_reports_its_error(quick_run):
    bench, got, _ = quick_run
    rows = got["results"]["20"]
    assert set(rows) == set(bench.ROWS)
    for row, cells in rows.items():
        expected = {f"{e} {f}" for e in bench.ENGINES for f in bench.READS[e]}
        assert set(cells) == expected, row
        for col, res in cells.items():
            engine = col.split()[0]
            if "error" in res:
                assert not MUST_RUN.get(engine), f"{row} {col}: {res['error']}"
                assert res["error"].strip(), (row, col)
                continue
            assert res["check"] == "ok", (row, col, res["check"])
            assert res["seconds"] > 0 and res["requests"] > 0, (row, col)
            assert res["fetched_mb"] > 0, (row, col)


def test_bytes_fetched_cover_what_the_slice_needs(quick_run):
    """The proxy's count is real: a reader fetching whole chunks gets at least the blocks the
    slice needs (nothing reads less than those)."""
    _, got, _ = quick_run
    needs = got["slice_needs"]
    for col, res in got["results"]["20"]["slice"].items():
        if "error" in res:
            continue
        fmt = col.split()[1]
        assert needs[fmt]["blocks_bytes"] <= needs[fmt]["chunks_bytes"]
        assert res["fetched_mb"] * 1e6 >= needs[fmt]["blocks_bytes"], col


def test_report_has_a_table_and_a_plot(quick_run):
    _, got, png = quick_run
    assert "### HTTP (nginx), 20 ms added per request" in got["markdown"]
    assert png.stat().st_size > 1000


def test_b2lazy_bodies_match_numpy_on_local_files(tmp_path):
    """The b2lazy column's code, on the same files read locally: right values on every row
    and format, whatever its remote drivers do yet (max_memory given, as --max-memory does)."""
    spec = importlib.util.spec_from_file_location("bench_remote", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ncols, shapes, step = bench.geometry(True)
    paths = bench.make_data(str(tmp_path / "data"), 1024, ncols, shapes, step)
    refs = bench.reference(paths, 1024, ncols, step, str(tmp_path))
    for fmt, (chunks, inner) in shapes.items():
        for row in bench.ROWS:
            got = tmp_path / "got.npy"
            res = bench.run_in_process(
                {
                    "engine": "b2lazy",
                    "row": row,
                    "url": paths[fmt],
                    "scratch": str(tmp_path),
                    "chunk_rows": chunks[0],
                    "write_chunks": list(inner or chunks),
                    "save": str(got),
                    "max_memory": 64 << 20,
                }
            )
            assert "error" not in res, (fmt, row, res)
            assert bench.compare(str(got), refs[row]) == "ok", (fmt, row)
