"""`zquant quantize` end to end: a small dataset planned, written on a dask LocalCluster of
two worker processes, read back and checked; the report's JSON has exactly the agreed
keys, and its numbers agree with an independent read of the store."""

from __future__ import annotations

import json
import math
from importlib.metadata import entry_points

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("distributed")
zarr = pytest.importorskip("zarr")

from zquant import _zquant  # noqa: E402
from zquant.cli import main  # noqa: E402

needs_planner = pytest.mark.skipif(
    not hasattr(_zquant, "plan"), reason="the extension has no planner (zquant::plan binding)"
)

KEYS = {"codecs", "bound", "max_abs_error", "bytes_before", "bytes_after", "ratio", "seconds"}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    from small_dataset import write

    path = tmp_path_factory.mktemp("src") / "src.zarr"
    return write(str(path)), str(path)


@needs_planner
def test_quantize_end_to_end(source, tmp_path, capsys):
    ds, src = source
    dst = str(tmp_path / "dst.zarr")
    figure = tmp_path / "plan.png"
    args = ["quantize", src, dst, "--max-abs-error", "t2m=0.05", "--max-abs-error", "tp=0.1",
            "--max-rel-error", "sst=0.0001"]
    try:
        import matplotlib  # noqa: F401

        args += ["--figure", str(figure)]
    except ImportError:
        figure = None
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "| t2m |" in out and "candidate" in out
    report = json.loads((tmp_path / "dst.zarr.report.json").read_text())
    assert set(report) == {"variables"}
    assert set(report["variables"]) == {"t2m", "tp", "sst", "land"}
    for v in report["variables"].values():
        assert set(v) == KEYS
        assert v["bytes_after"] > 0 and math.isclose(v["ratio"], v["bytes_before"] / v["bytes_after"])
        assert v["seconds"] >= 0
    (tmp_path / "dst.zarr.report.md").read_text().index("| sst |")
    if figure is not None:
        assert figure.stat().st_size > 0

    import zquant

    zquant.use()
    try:
        back = xr.open_zarr(dst, zarr_format=3).compute()
    finally:
        zquant.unuse()
    asked = {"t2m": ("max_abs_error", 0.05), "tp": ("max_abs_error", 0.1),
             "sst": ("max_rel_error", 0.0001)}
    for name, (kind, target) in asked.items():
        v = report["variables"][name]
        assert 0 < v["bound"] <= target
        a = ds[name].values.astype(np.float64)
        b = back[name].values.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        assert np.all(b[a == 0] == 0), f"{name}: zeros must read back as zeros"
        ok = ~np.isnan(a)
        err = np.abs(b[ok] - a[ok])
        assert err.max() == v["max_abs_error"]
        limit = v["bound"] if kind == "max_abs_error" else v["bound"] * np.abs(a[ok])
        assert np.all(err <= limit * (1 + 1e-12)), name
        assert v["codecs"] == list(
            zarr.open_array(f"{dst}/{name}").metadata.to_dict()["codecs"])
    np.testing.assert_array_equal(back.land.values, ds.land.values)
    assert report["variables"]["land"]["bound"] == 0
    for name in ("t2m", "tp", "sst"):
        if back[name].attrs.get("quantization"):
            assert back[back[name].attrs["quantization"]].attrs["algorithm"] == "bitround"


@needs_planner
def test_dry_run_writes_nothing(source, tmp_path, capsys):
    _, src = source
    dst = tmp_path / "dry.zarr"
    assert main(["quantize", src, str(dst), "--max-abs-error", "0.5", "--chunks", "lat=24",
                 "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "t2m:" in out and "nothing written" in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, match", [
    (["--max-abs-error", "t2m=x"], "VAR=NUMBER"),
    (["--max-abs-error", "0.1", "--chunks", "lat"], "DIM=N"),
    (["--max-abs-error", "t2m=0.1", "--max-abs-error", "t2m=0.2"], "twice"),
    ([], "give a target"),
])
def test_bad_arguments(source, tmp_path, capsys, args, match):
    _, src = source
    assert main(["quantize", src, str(tmp_path / "x.zarr"), *args]) == 2
    assert match in capsys.readouterr().err


def test_console_script_is_declared():
    scripts = entry_points(group="console_scripts", name="zquant")
    if not scripts:
        pytest.skip("zquant is not installed (an in-place import has no entry points)")
    assert next(iter(scripts)).value == "zquant.cli:main"
