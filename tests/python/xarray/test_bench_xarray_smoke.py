"""bench/bench_xarray.py runs end to end on a tiny generated dataset (issue #38): every
workload on every engine gives a result equal to xarray on NumPy or a recorded failure, and
the JSON, markdown and plot are written. No timings are asserted."""

import importlib.util
import json
import os

import pytest

pytest.importorskip("xarray")
pytest.importorskip("dask")
pytest.importorskip("zarr")
pytest.importorskip("netCDF4")
pytest.importorskip("matplotlib")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "bench", "bench_xarray.py")


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_xarray", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_quick_in_process_all_workloads(tmp_path):
    bench = load_bench()
    out, png, md = tmp_path / "r.json", tmp_path / "x.png", tmp_path / "t.md"
    assert (
        bench.main(
            [
                "--quick",
                "--in-process",
                "--scratch",
                str(tmp_path),
                "--out",
                str(out),
                "--plot",
                str(png),
                "--md",
                str(md),
            ]
        )
        == 0
    )
    got = json.loads(out.read_text())
    assert set(got["results"]) == {"small.zarr", "small.nc"}
    for rows in got["results"].values():
        assert set(rows) == set(bench.WORKLOADS)
        for w, res in rows.items():
            assert set(res) == set(bench.ENGINES)
            assert "error" not in res["numpy"] and "error" not in res["dask"], (w, res)
            for e, r in res.items():
                if "error" in r or w == "open":
                    continue
                assert r["check"] in ("ok", "reference"), (w, e, r)  # a mismatch is a wrong value
        assert rows["coarsen"]["b2lazy"].get("check") == "ok", rows["coarsen"]  # runs on b2lazy, equal to NumPy's
    assert png.stat().st_size > 0
    assert "| workload |" in md.read_text()
    assert not [p for p in os.listdir(tmp_path) if p.startswith("bench-xarray-")]  # scratch removed
    merged = tmp_path / "m.md"  # --merge re-renders earlier results (datasets run separately)
    assert bench.main(["--merge", str(out), "--md", str(merged), "--scratch", str(tmp_path)]) == 0
    assert merged.read_text() == md.read_text()


def test_fresh_processes_and_failures_are_recorded(tmp_path):
    bench = load_bench()
    out = tmp_path / "r.json"
    assert (
        bench.main(
            [
                "--quick",
                "--only",
                "open",
                "covariance",
                "--engines",
                "numpy",
                "b2lazy",
                "--scratch",
                str(tmp_path),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())["results"]["small.zarr"]
    assert res["open"]["b2lazy"]["seconds"] > 0 and res["open"]["b2lazy"]["peak_mib"] >= 0
    assert res["covariance"]["b2lazy"].get("check", "error") in ("ok",) or "error" in res["covariance"]["b2lazy"]
    # a run that raises becomes "fails: ..." in the table, not an exception of the script
    failed = bench.run_fresh(
        {
            "path": str(tmp_path / "missing.zarr"),
            "backend": "zarr",
            "engine": "dask",
            "workload": "open",
            "scratch": str(tmp_path),
        },
        timeout=120,
    )
    assert "error" in failed and bench.cell(failed).startswith("fails: ")


def test_compare_finds_differences(tmp_path):
    import numpy as np

    bench = load_bench()
    ref = np.linspace(1, 2, 60, dtype="f4").reshape(3, 4, 5)
    np.save(tmp_path / "ref.npy", ref)
    cases = {
        "same": ref + np.float32(1e-6),
        "far": ref * 1.01,
        "shape": ref[:2],
        "nan": np.where(ref > 1.5, np.nan, ref),
    }
    for name, a in cases.items():
        np.save(tmp_path / f"{name}.npy", a)
    assert bench.compare(tmp_path / "same.npy", tmp_path / "ref.npy") == "ok"
    assert bench.compare(tmp_path / "far.npy", tmp_path / "ref.npy").startswith("mismatch: max")
    assert "shape" in bench.compare(tmp_path / "shape.npy", tmp_path / "ref.npy")
    assert "NaN" in bench.compare(tmp_path / "nan.npy", tmp_path / "ref.npy")
