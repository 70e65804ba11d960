"""zquant.choose.plan and plan_dataset: the returned codecs, run for real by zarr-python
(written to a store and read back), keep every element within the stated bound on
generated fields (NaN, exact zeros, heavy tails, constants, subnormals, huge and tiny
ranges, float16, float32 and float64); NaN stays NaN; bad targets raise zquant.CodecError.

The bound is checked exactly, in rationals, independently of zquant."""

from __future__ import annotations

import json
from collections.abc import Iterator
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import zquant
import zquant.choose as choose
from zquant import _zquant
from zquant.plans import Candidates, DatasetPlan, Plan

zarr = pytest.importorskip("zarr")


@pytest.fixture(autouse=True)
def _zquant_classes_registered() -> Iterator[None]:
    """zquant's ``scale_offset``/``cast_value`` registered with zarr (installing zquant does
    not, and another test module's ``unuse()`` takes them out), so that a configuration
    naming them, as these tests set, resolves."""
    import zarr.registry

    import zquant.zarr

    zarr.registry.register_codec("scale_offset", zquant.zarr.ScaleOffset)
    zarr.registry.register_codec("cast_value", zquant.zarr.CastValue)
    yield
    # zarr has no unregister: its registry is a dict per name, keyed by class path.
    for name, cls in (("scale_offset", "ScaleOffset"), ("cast_value", "CastValue")):
        registered = zarr.registry._codec_registries.get(name)
        if registered is not None:
            registered.pop(f"zquant.zarr.{cls}", None)
needs_planner = pytest.mark.skipif(
    not hasattr(_zquant, "plan"), reason="the extension has no planner (zquant::plan binding)"
)

PROPERTY = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# zarr-python's own classes for the names it has built in: a plan for plain zarr-python
# must read back through them as it does through zquant's.
ZARR_BUILTINS = {
    "codecs.scale_offset": "zarr.codecs.scale_offset.ScaleOffset",
    "codecs.cast_value": "zarr.codecs.cast_value.CastValue",
}


# -- generated fields ---------------------------------------------------------------------

@st.composite
def fields(draw: st.DrawFn) -> np.ndarray:
    dtype = np.dtype(draw(st.sampled_from(["float16", "float32", "float64"])))
    shape = draw(st.sampled_from([(1,), (7,), (64,), (300,), (5, 9), (12, 40), (3, 8, 11)]))
    n = math.prod(shape)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["smooth", "noise", "heavy", "constant", "subnormal",
                                 "positive", "mixed"]))
    if kind == "smooth":
        x = np.cumsum(rng.standard_normal(n)) + 50 * np.sin(np.linspace(0, 6, n))
    elif kind == "noise":
        x = rng.standard_normal(n)
    elif kind == "heavy":
        x = rng.standard_cauchy(n) * rng.exponential(1, n) ** 3
    elif kind == "constant":
        x = np.full(n, draw(st.sampled_from([0.0, 1.0, -273.15, 1e10, 3e-7])))
    elif kind == "subnormal":
        tiny = np.finfo(dtype).smallest_subnormal
        x = rng.integers(-1000, 1000, n) * float(tiny)
    elif kind == "positive":
        x = np.maximum(0, rng.standard_normal(n)) ** 2
    else:
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-5, 6, n)
    # Huge and tiny ranges: the same shape scaled by a power of ten the type can hold.
    top = {2: 3, 4: 30, 8: 290}[dtype.itemsize]
    scale = 10.0 ** draw(st.integers(-top, top)) if kind not in ("subnormal",) else 1.0
    with np.errstate(over="ignore", under="ignore"):
        x = (x * scale).astype(dtype)
    assume(np.all(np.isfinite(x)))
    if draw(st.booleans()):
        x[rng.random(n) < draw(st.sampled_from([0.01, 0.3]))] = 0
    if draw(st.booleans()):
        x[rng.random(n) < draw(st.sampled_from([0.05, 0.3, 1.0]))] = np.nan
    return x.reshape(shape)


@st.composite
def targets(draw: st.DrawFn, x: np.ndarray) -> dict[str, float]:
    finite = x[np.isfinite(x)].astype(np.float64)
    if draw(st.booleans()):
        return {"max_rel_error": 10.0 ** draw(st.floats(-6, -0.5))}
    top = float(np.max(np.abs(finite))) if finite.size else 1.0
    top = top if top > 0 else 1.0
    bound = top * 10.0 ** draw(st.floats(-7, 0.5))
    assume(math.isfinite(bound) and bound > 0)
    return {"max_abs_error": bound}


# -- helpers ------------------------------------------------------------------------------

def write_and_read(x: np.ndarray, p: Plan, chunks: tuple[int, ...] | None = None,
                   builtins: bool = False) -> np.ndarray:
    """``x`` written by zarr-python through the plan's codecs and read back (through
    zarr-python's built-in classes when ``builtins``)."""
    store = zarr.storage.MemoryStore()
    arr = zarr.create_array(
        store=store,
        shape=x.shape,
        chunks=chunks or x.shape,
        dtype=x.dtype,
        filters=p.filters,
        serializer=p.serializer if p.serializer is not None else "auto",
        compressors=p.compressors,
        fill_value=p.fill_value,
        zarr_format=3,
    )
    arr[...] = x
    config = ZARR_BUILTINS if builtins else {
        "codecs.scale_offset": "zquant.zarr.ScaleOffset",
        "codecs.cast_value": "zquant.zarr.CastValue",
    }
    with zarr.config.set(config), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(store=store, mode="r")[...]


def assert_within(x: np.ndarray, back: np.ndarray, kind: str, bound: float) -> None:
    """Every finite element within the bound, exactly; NaN stays NaN."""
    assert back.dtype == x.dtype and back.shape == x.shape
    nan = np.isnan(x)
    np.testing.assert_array_equal(np.isnan(back), nan, err_msg="NaN positions moved")
    b = Fraction(bound)
    for index in zip(*np.nonzero(~nan), strict=True):
        v, w = x[index], back[index]
        assert np.isfinite(w), f"{v!r} at {index} read back as {w!r}"
        err = abs(Fraction(float(w)) - Fraction(float(v)))
        limit = b if kind == "max_abs_error" else b * abs(Fraction(float(v)))
        assert err <= limit, f"{v!r} at {index} read back as {w!r}: error {float(err)!r} > {kind} {bound!r}"


# -- properties ---------------------------------------------------------------------------

@needs_planner
@PROPERTY
@given(data=st.data(), x=fields(), readers=st.sampled_from(["zarr-python", "zarr-python+zarrs", "any"]))
def test_plan_meets_its_bound_when_run_by_zarr(data: st.DataObject, x: np.ndarray,
                                                readers: str) -> None:
    target = data.draw(targets(x))
    ((kind, asked),) = target.items()
    try:
        p = choose.plan(x, readers=readers, **target)
    except zquant.CodecError as e:
        # Only a target no candidate can meet may fail, and it says what can be had.
        assert "smallest" in str(e), e
        event("no lossy chain meets the target")
        return
    event(f"winner: {p.winner.name.split()[0]}")
    assert p.bound <= asked
    assert p.bound_kind == kind
    assert sum(c.winner for c in p.candidates) == 1
    if readers.startswith("zarr-python"):
        assert "zarr-python" in p.readers, p.candidates
    if readers.endswith("zarrs"):
        assert "zarrs" in p.readers, p.candidates
    back = write_and_read(x, p)
    assert_within(x, back, kind, p.bound)
    # What users test for stays exact: zeros read back as zeros.
    assert np.all(back[x == 0] == 0), back[x == 0]
    if "zarr-python" in p.readers:
        # Plain zarr-python, with its own classes, reads the same values.
        np.testing.assert_array_equal(write_and_read(x, p, builtins=True), back)


@needs_planner
@PROPERTY
@given(x=fields())
def test_information_target_plans_within_its_bound(x: np.ndarray) -> None:
    assume(np.count_nonzero(~np.isnan(x)) >= 2)
    try:
        p = choose.plan(x, inflevel=0.99, axis=0)
    except zquant.CodecError as e:
        assert "pair" in str(e) or "smallest" in str(e), e
        return
    back = write_and_read(x, p)
    assert_within(x, back, p.bound_kind, p.bound)


@needs_planner
def test_dask_statistics_equal_the_whole_arrays() -> None:
    """Chunk-parallel statistics (with the bit pairs across chunk edges) merge to the
    whole array's, for every axis."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(3)
    x = (250 + np.cumsum(rng.standard_normal((30, 47)), axis=1)).astype(np.float32)
    x[4, 5] = np.nan
    x[7, :3] = 0
    d = da.from_array(x, chunks=((10, 0, 20), (5, 0, 1, 17, 0, 24)))
    for axis in (0, 1):
        for target in ({"inflevel": 0.99}, {"max_abs_error": 0.5}):
            whole = choose.plan(x, axis=axis, **target).stats
            parts = choose.plan(d, axis=axis, **target).stats
            assert parts == whole, (axis, target)


@needs_planner
def test_dask_chunks_are_read_once() -> None:
    """Statistics and the sample come from one read of each chunk."""
    import threading

    import dask
    import dask.array as da

    made: list[tuple[int, int]] = []
    lock = threading.Lock()

    def block(block_info=None):
        (y0, _), (x0, _) = block_info[None]["array-location"]
        with lock:
            made.append((y0, x0))
        rng = np.random.default_rng([y0, x0])
        return (250 + rng.random((32, 40))).astype(np.float32)

    a = da.map_blocks(block, chunks=((32,) * 3, (40,) * 4), dtype=np.float32)
    with dask.config.set(scheduler="threads"):
        p = choose.plan(a, max_abs_error=0.01, sample_elements=3000)
    assert sorted(made) == sorted(set(made)) and len(made) == 12
    back = write_and_read(a.compute(), p, chunks=(32, 40))
    assert_within(a.compute(), back, "max_abs_error", p.bound)


@needs_planner
def test_xarray_dataarray_and_encoding(tmp_path) -> None:
    xr = pytest.importorskip("xarray")
    rng = np.random.default_rng(5)
    t = (280 + 10 * rng.standard_normal((4, 20, 30))).astype(np.float32)
    t[:, :5] = np.nan
    ds = xr.Dataset({"t": (("time", "y", "x"), t)})
    p = choose.plan(ds.t, max_abs_error=0.05)
    enc = p.encoding
    assert set(enc) <= {"filters", "compressors", "serializer", "fill_value"}
    assert np.isnan(enc["fill_value"]) and enc["compressors"][-1].to_dict()["name"] == "zstd"
    ds.to_zarr(tmp_path / "t.zarr", zarr_format=3, mode="w", encoding={"t": enc})
    with zarr.config.set({"codecs.scale_offset": "zquant.zarr.ScaleOffset",
                          "codecs.cast_value": "zquant.zarr.CastValue"}):
        back = xr.open_zarr(tmp_path / "t.zarr", zarr_format=3).t.values
    assert_within(t, back, "max_abs_error", p.bound)
    meta = json.loads((tmp_path / "t.zarr" / "t" / "zarr.json").read_text())
    assert meta["codecs"] == p.codecs


@needs_planner
def test_plan_dataset_encoding_goes_into_to_zarr(tmp_path) -> None:
    xr = pytest.importorskip("xarray")
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(6)
    t = (280 + 10 * rng.standard_normal((4, 20, 30))).astype(np.float32)
    tp = (np.maximum(0, rng.standard_normal((4, 20, 30))) ** 2).astype(np.float64)
    ds = xr.Dataset({
        "t2m": (("time", "y", "x"), da.from_array(t, chunks=(2, 10, 15))),
        "tp": (("time", "y", "x"), da.from_array(tp, chunks=(2, 10, 15))),
        "land": (("y", "x"), (rng.random((20, 30)) > 0.5).astype(np.int8)),
    })
    plans = choose.plan_dataset(ds, max_abs_error={"t2m": 0.05}, max_rel_error={"tp": 0.01})
    assert isinstance(plans, DatasetPlan)
    assert set(plans) == {"t2m", "tp"} and plans.lossless == ("land",)
    assert plans["t2m"].target == {"max_abs_error": 0.05}
    out = plans.annotate(ds)
    out.to_zarr(tmp_path / "d.zarr", zarr_format=3, mode="w", encoding=plans.encoding)
    with zarr.config.set({"codecs.scale_offset": "zquant.zarr.ScaleOffset",
                          "codecs.cast_value": "zquant.zarr.CastValue"}):
        back = xr.open_zarr(tmp_path / "d.zarr", zarr_format=3).compute()
    assert_within(t, back.t2m.values, "max_abs_error", plans["t2m"].bound)
    assert_within(tp, back.tp.values, "max_rel_error", plans["tp"].bound)
    np.testing.assert_array_equal(back.land.values, ds.land.values)
    # One number for every float variable; a variable's own entry beats it.
    both = choose.plan_dataset(ds, max_abs_error=0.1, max_rel_error={"tp": 0.01})
    assert both["t2m"].target == {"max_abs_error": 0.1}
    assert both["tp"].target == {"max_rel_error": 0.01}


# -- errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    ({}, "exactly one target"),
    ({"max_abs_error": 0.1, "max_rel_error": 0.1}, "exactly one target"),
    ({"max_abs_error": 0.1, "inflevel": 0.99}, "exactly one target"),
    ({"max_abs_error": 0}, "positive and finite"),
    ({"max_abs_error": -1.0}, "positive and finite"),
    ({"max_abs_error": math.inf}, "positive and finite"),
    ({"max_rel_error": math.nan}, "positive and finite"),
    ({"max_abs_error": True}, "number"),
    ({"max_abs_error": "0.1"}, "number"),
    ({"inflevel": 1.5}, "inflevel"),
    ({"max_abs_error": 0.1, "readers": "zarrs-python"}, "readers"),
    ({"max_abs_error": 0.1, "headroom": -0.1}, "headroom"),
])
def test_bad_targets_raise(kwargs, match) -> None:
    with pytest.raises(zquant.CodecError, match=match):
        choose.plan(np.linspace(0, 1, 50), **kwargs)


def test_a_dataset_is_for_plan_dataset() -> None:
    xr = pytest.importorskip("xarray")
    ds = xr.Dataset({"t": ("x", np.linspace(0, 1, 10))})
    with pytest.raises(zquant.CodecError, match="plan_dataset"):
        choose.plan(ds, max_abs_error=0.1)
    with pytest.raises(zquant.CodecError, match="give a target"):
        choose.plan_dataset(ds)
    with pytest.raises(zquant.CodecError, match="not data variables"):
        choose.plan_dataset(ds, max_abs_error={"q": 0.1})
    with pytest.raises(zquant.CodecError, match="two targets"):
        choose.plan_dataset(ds, max_abs_error={"t": 0.1}, max_rel_error={"t": 0.1})
    with pytest.raises(zquant.CodecError, match="for every variable"):
        choose.plan_dataset(ds, max_abs_error=0.1, max_rel_error=0.1)
    ds["n"] = ("x", np.arange(10))
    with pytest.raises(zquant.CodecError, match="not a float type"):
        choose.plan_dataset(ds, max_abs_error={"n": 0.1})
    with pytest.raises(zquant.CodecError, match="^t: plan: max_abs_error must be positive"):
        choose.plan_dataset(ds, max_abs_error={"t": -1})


# -- the plan's forms (a planner JSON written out, so every branch is seen) ----------------

PLANNED = {
    "winner": 1,
    "bound": 0.03125,
    "candidates": [
        {"name": "none", "filters": [], "serializer": None, "bound": 0.0,
         "sample_bytes": 4000, "ratio": 1.0, "readers": ["zarr-python", "zquant"],
         "ruled_out": None},
        {"name": "bitround", "filters": [{"name": "numcodecs.bitround",
                                          "configuration": {"keepbits": 9}}],
         "serializer": None, "bound": 0.03125, "sample_bytes": 1500, "ratio": 2.667,
         "readers": ["zarr-python", "zquant"], "ruled_out": None},
        {"name": "scale_offset+packbits",
         "filters": [{"name": "scale_offset", "configuration": {"offset": 280, "scale": 10}},
                     {"name": "cast_value", "configuration": {"data_type": "uint16"}}],
         "serializer": {"name": "packbits", "configuration": {"padding_encoding": "none",
                                                              "last_bit": 11}},
         "bound": 0.05, "sample_bytes": 1200, "ratio": 3.3, "readers": ["zquant"],
         "ruled_out": "read by zquant only (readers='any' allows it)"},
    ],
}


def make_plan(winner: int = 1) -> Plan:
    return Plan(json.dumps(dict(PLANNED, winner=winner)), data_type="float32",
                fill_value="NaN", target={"max_abs_error": 0.05},
                compressors=[{"name": "zstd", "configuration": {"level": 3}}])


def test_plan_forms() -> None:
    p = make_plan()
    assert p.bound == 0.03125 and p.keepbits == 9 and p.serializer is None
    assert [f.to_dict() for f in p.filters] == [PLANNED["candidates"][1]["filters"][0]]
    assert p.codecs[-1]["name"] == "zstd" and p.codecs[-2]["name"] == "bytes"
    assert isinstance(p.candidates, Candidates) and len(p.candidates) == 3
    text = repr(p.candidates)
    assert "bitround" in text and "read by zquant only" in text
    assert "numcodecs.bitround(keepbits=9)" in p.candidates.to_markdown()
    html = p._repr_html_()
    assert html.count("<tr") == 4 and 'font-weight:bold' in html
    assert "| * | bitround |" in p.candidates.to_markdown()
    assert json.loads(json.dumps(p.to_json()))["candidates"] == PLANNED["candidates"]
    packed = make_plan(winner=2)
    assert type(packed.serializer).__name__ == "PackBits" and packed.keepbits is None
    assert packed.encoding["serializer"].to_dict()["configuration"]["last_bit"] == 11
    with pytest.raises(zquant.CodecError, match="winner"):
        make_plan(winner=5)


def test_cf_attributes_for_bitround() -> None:
    xr = pytest.importorskip("xarray")
    ds = xr.Dataset({"t": ("x", np.linspace(270, 290, 10, dtype=np.float32)),
                     "q": ("x", np.linspace(0, 1, 10, dtype=np.float32))})
    plans = DatasetPlan({"t": make_plan(1), "q": make_plan(2)})
    assert plans.attrs == {"t": {"quantization": "quantization_info", "quantization_nsb": 9}}
    out = plans.annotate(ds)
    assert out.t.attrs["quantization"] == "quantization_info"
    assert out.t.attrs["quantization_nsb"] == 9
    assert out.quantization_info.shape == ()
    info = out.quantization_info.attrs
    assert info["algorithm"] == "bitround" and "version" in info["implementation"]
    assert info["implementation"].startswith("numcodecs version")
    assert "quantization" not in out.q.attrs and not ds.t.attrs  # ds itself unchanged
    zquant.use()
    try:
        info = plans.annotate(ds).quantization_info.attrs
        assert info["implementation"] == f"zquant version {zquant.__version__} (numcodecs.bitround)"
    finally:
        zquant.unuse()
    assert DatasetPlan({"q": make_plan(2)}).annotate(ds) is ds


@needs_planner
def test_packbits_wins_without_a_compressor_and_reads_back() -> None:
    """With no compressor the stored bytes are the codes' own: 12-bit codes packed beat
    uint16, for readers that have packbits; plain zarr-python's plan never packs."""
    x = np.linspace(-20, 20, 3000)
    anyone = choose.plan(x, max_abs_error=0.005, readers="any", compressors=[])
    assert anyone.compressors == []
    assert anyone.serializer is not None and anyone.serializer.to_dict()["name"] == "packbits"
    assert "zarr-python" not in anyone.readers
    assert_within(x, write_and_read(x, anyone), "max_abs_error", anyone.bound)
    plain = choose.plan(x, max_abs_error=0.005, compressors=[])
    assert plain.serializer is None and "zarr-python" in plain.readers
    assert plain.winner.sample_bytes >= anyone.winner.sample_bytes


@needs_planner
def test_headroom_keeps_the_bound_for_data_beyond_todays_range() -> None:
    today = np.linspace(0, 10, 500)
    p = choose.plan(today, max_abs_error=0.01, headroom=0.5)
    later = np.linspace(-4.5, 14.5, 500)  # within half the range below and above
    assert_within(later, write_and_read(later, p), "max_abs_error", p.bound)
