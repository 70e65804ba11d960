"""zquant's classes as drop-ins for zarr-python's and numcodecs' own, side by side: what
their test suites check (validation when the array is created, ``to_dict``/``from_dict``
and ``get_config``/``from_config`` round trips, the attributes users read, encode and
decode results), run against both implementations with the same calls."""

from __future__ import annotations

import subprocess
import sys
import warnings
from typing import Any

import numcodecs
import numcodecs.bitround
import numcodecs.fixedscaleoffset
import numpy as np
import pytest
import zarr
from zarr.codecs.cast_value import CastValue as ZarrCastValue
from zarr.codecs.scale_offset import ScaleOffset as ZarrScaleOffset
from zarr.storage import MemoryStore

import zquant
import zquant.numcodecs as zn
from zquant.zarr import BitRound, CastValue, ScaleOffset

IMPLS: dict[str, tuple[Any, Any]] = {
    "zquant": (ScaleOffset, CastValue),
    "zarr": (ZarrScaleOffset, ZarrCastValue),
}
NAN0 = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}


def create(filters: list[Any], dtype: str, fill: Any, store: MemoryStore) -> Any:
    return zarr.create_array(store, shape=(8,), chunks=(4,), dtype=dtype, fill_value=fill,
                             filters=filters)


# Each: (data type, fill value, the filters given the two classes). zarr-python refuses
# every one of them when the array is created; so must zquant, before zarr.json is written.
INVALID = {
    "offset-1.5-int32": ("int32", 0, lambda so, cv: [so(offset=1.5)]),
    "scale-0.5-int32": ("int32", 0, lambda so, cv: [so(scale=0.5)]),
    "offset-nan-int16": ("int16", 0, lambda so, cv: [so(offset="NaN")]),
    "scale-zero": ("float64", 0, lambda so, cv: [so(scale=0)]),
    "scalar-map-nan-key-int-source": (
        "int32", 0, lambda so, cv: [cv(data_type="int8", scalar_map={"encode": [["NaN", 0]]})]),
    "scalar-map-encode-value-not-integer": (
        "float64", 0, lambda so, cv: [cv(data_type="int8", scalar_map={"encode": [[1, 1.5]]})]),
    "scalar-map-encode-value-out-of-range": (
        "float64", 0, lambda so, cv: [cv(data_type="int8", scalar_map={"encode": [[1, 999]]})]),
    "fill-nan-into-uint8": ("float64", "NaN", lambda so, cv: [cv(data_type="uint8")]),
    "fill-300-into-uint8": ("float64", 300.0, lambda so, cv: [cv(data_type="uint8")]),
    # The fill value through the whole chain: 300 is fine for scale_offset, and its
    # encoding (300 - 0) * 2 = 600 does not fit cast_value's uint8.
    "fill-through-the-chain": (
        "float64", 300.0, lambda so, cv: [so(scale=2), cv(data_type="uint8")]),
    "wrap-into-float": (
        "float64", 0, lambda so, cv: [cv(data_type="float32", out_of_range="wrap")]),
    "complex-source": ("complex128", 0, lambda so, cv: [cv(data_type="float32")]),
}


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", INVALID)
def test_invalid_metadata_is_refused_at_creation(case: str, impl: str) -> None:
    dtype, fill, filters = INVALID[case]
    store = MemoryStore()
    with pytest.raises(ValueError) as info:
        create(filters(*IMPLS[impl]), dtype, fill, store)
    if impl == "zquant":
        assert isinstance(info.value, zquant.CodecError), repr(info.value)
    assert "zarr.json" not in store._store_dict


def test_sharding_inner_codecs_with_a_fill_value_only_the_array_has() -> None:
    """zarr's sharding codec checks its inner codecs with the data type's default fill
    value (0 here, which (0 - 270) * 1 cannot carry into uint8): the array's own fill
    value (270) is what counts, and the array works. (zarr-python 3.4.2's own cast_value
    fails here, on that default fill value: "Value -270 out of range [0, 255]".)"""
    so, cv = IMPLS["zquant"]
    store = MemoryStore()
    z = zarr.create_array(store, shape=(8,), chunks=(4,), shards=(8,), dtype="float64",
                          fill_value=270.0, filters=[so(offset=270), cv(data_type="uint8")])
    z[:4] = np.array([270, 271, 300, 280.4])
    np.testing.assert_array_equal(z[...], [270, 271, 300, 280, 270, 270, 270, 270])


def test_fill_value_error_is_the_fill_values_only() -> None:
    """The one error resolve_metadata tolerates (for sharding) is a FillValueError; a
    configuration error is never one, whatever its message says."""
    with pytest.raises(zquant.FillValueError):
        zquant.Chain("float64", [{"name": "cast_value", "configuration": {"data_type": "uint8"}}],
                     fill_value="NaN")
    with pytest.raises(zquant.CodecError) as info:
        zquant.Chain("int32", [{"name": "scale_offset", "configuration": {"scale": 0.5}}],
                     fill_value=0)
    assert not isinstance(info.value, zquant.FillValueError)
    assert "fill value" in str(info.value)  # the text that used to be matched


CONFIGS: dict[str, list[dict[str, Any]]] = {
    "scale_offset": [
        {"name": "scale_offset"},
        {"name": "scale_offset", "configuration": {"offset": 5}},
        {"name": "scale_offset", "configuration": {"scale": 0.1}},
        {"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}},
        {"name": "scale_offset", "configuration": {"offset": "NaN"}},
    ],
    "cast_value": [
        {"name": "cast_value", "configuration": {"data_type": "uint8"}},
        {"name": "cast_value", "configuration": {"data_type": "int16", "rounding": "towards-zero",
                                                 "out_of_range": "clamp"}},
        {"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "wrap",
                                                 "scalar_map": NAN0}},
    ],
}


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("name,config", [(n, c) for n, cs in CONFIGS.items() for c in cs])
def test_to_dict_from_dict_round_trip(impl: str, name: str, config: dict[str, Any]) -> None:
    cls = IMPLS[impl][0 if name == "scale_offset" else 1]
    out = cls.from_dict(config).to_dict()
    other = IMPLS["zarr" if impl == "zquant" else "zquant"][0 if name == "scale_offset" else 1]
    # The same JSON (pairs may be tuples or lists: the same JSON arrays).
    import json

    assert json.loads(json.dumps(out)) == config
    assert out == other.from_dict(config).to_dict()


@pytest.mark.parametrize("impl", IMPLS)
def test_attributes(impl: str) -> None:
    so, cv = IMPLS[impl]
    s = so(offset=5, scale=0.1)
    assert (s.offset, s.scale) == (5, 0.1)
    c = cv(data_type="int16", rounding="towards-zero", out_of_range="clamp")
    assert c.dtype.to_native_dtype() == np.dtype("int16")
    assert (c.rounding, c.out_of_range, c.scalar_map) == ("towards-zero", "clamp", None)
    from zarr.core.dtype import UInt8

    assert cv(data_type=UInt8()).dtype.to_native_dtype() == np.dtype("uint8")
    with pytest.raises(ValueError):
        cv(data_type="complex64")
    assert so().compute_encoded_size(100, None) == 100


@pytest.mark.parametrize(
    "dtype,fill,so_config,cv_config",
    [
        ("float64", 270.0, {"offset": 270, "scale": 4}, {"data_type": "uint8",
                                                         "out_of_range": "clamp"}),
        ("float32", "NaN", {"offset": 10, "scale": 100}, {"data_type": "int16",
                                                          "scalar_map": NAN0}),
        ("int32", 0, {"offset": 3, "scale": 2}, {"data_type": "int16",
                                                 "rounding": "towards-zero"}),
    ],
)
def test_same_chunks_and_values(dtype: str, fill: Any, so_config: dict[str, Any],
                                cv_config: dict[str, Any]) -> None:
    rng = np.random.default_rng(1)
    if dtype.startswith("int"):
        a = rng.integers(-1000, 1000, 64).astype(dtype)
    else:
        a = (rng.normal(280, 20, 64) if fill != "NaN" else rng.normal(0, 20, 64)).astype(dtype)
        if fill == "NaN":
            a[::7] = np.nan
    out = {}
    for impl, (so, cv) in IMPLS.items():
        store = MemoryStore()
        z = zarr.create_array(store, shape=a.shape, chunks=(16,), dtype=dtype, fill_value=fill,
                              filters=[so(**so_config), cv(**cv_config)])
        z[:] = a
        chunks = {k: v.to_bytes() for k, v in store._store_dict.items() if k.startswith("c/")}
        out[impl] = (chunks, z[...])
    assert out["zquant"][0] == out["zarr"][0]
    np.testing.assert_array_equal(out["zquant"][1], out["zarr"][1])


@pytest.mark.parametrize("impl", IMPLS)
def test_element_errors_are_value_errors(impl: str) -> None:
    so, _ = IMPLS[impl]
    z = zarr.create_array(MemoryStore(), shape=(4,), chunks=(2,), dtype="int8",
                          filters=[so(offset=-1, scale=100)])
    with pytest.raises(ValueError) as info:
        z[:] = np.array([0, 0, 5, 0], np.int8)
    if impl == "zquant":
        msg = str(info.value)
        assert "element 0 of a chunk of shape (2,)" in msg, msg


# numcodecs


@pytest.mark.parametrize("keepbits", [0, 1, 10, 23])
@pytest.mark.parametrize("cls", [numcodecs.bitround.BitRound, zn.BitRound])
def test_bitround_config_and_results(cls: Any, keepbits: int) -> None:
    codec = cls(keepbits=keepbits)
    assert codec.get_config() == {"id": "bitround", "keepbits": keepbits}
    config = codec.get_config()
    config.pop("id")
    again = type(codec).from_config(config)
    assert again.keepbits == keepbits
    a = np.random.default_rng(2).normal(size=200).astype(np.float32)
    want = numcodecs.bitround.BitRound(keepbits=keepbits).encode(a.copy())
    np.testing.assert_array_equal(codec.encode(a.copy()), want)
    np.testing.assert_array_equal(codec.decode(codec.encode(a.copy())), want.view(np.float32))


@pytest.mark.parametrize("cls", [numcodecs.bitround.BitRound, zn.BitRound])
def test_bitround_refusals(cls: Any) -> None:
    with pytest.raises(ValueError):
        cls(keepbits=-1)
    with pytest.raises(ValueError):
        cls(keepbits=24).encode(np.ones(2, np.float32))


@pytest.mark.parametrize("cls", [numcodecs.fixedscaleoffset.FixedScaleOffset,
                                 zn.FixedScaleOffset])
def test_fixedscaleoffset_config_and_results(cls: Any) -> None:
    codec = cls(offset=1000, scale=10, dtype="<f8", astype="<u2")
    config = codec.get_config()
    assert config == {"id": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f8",
                      "astype": "<u2"}
    assert type(codec).from_config({k: v for k, v in config.items() if k != "id"}).get_config() \
        == config
    a = np.linspace(1000, 1001, 50)
    ref = numcodecs.fixedscaleoffset.FixedScaleOffset(offset=1000, scale=10, dtype="<f8",
                                                      astype="<u2")
    np.testing.assert_array_equal(codec.encode(a), ref.encode(a))
    np.testing.assert_array_equal(codec.decode(codec.encode(a)), ref.decode(ref.encode(a)))


def test_v2_bitround_keepbits_zero_after_use() -> None:
    """An existing v2 array whose filter has keepbits 0 is written and read after use()."""
    store = MemoryStore()
    a = np.array([1.4, 1.6, -3.0, 0.3])
    z = zarr.create_array(store, shape=(4,), chunks=(4,), dtype="float64", zarr_format=2,
                          filters=[numcodecs.BitRound(keepbits=0)], compressors=None)
    z[:] = a
    want = z[...]
    zquant.use()
    try:
        z = zarr.open_array(store, mode="r+")
        filters = getattr(z.metadata, "filters", None)  # a v2 array's
        assert filters is not None and type(filters[0]) is zn.BitRound
        z[:] = a
        np.testing.assert_array_equal(z[...], want)
    finally:
        zquant.unuse()


# The names users type, and what installing zquant does to zarr


def run_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True).stdout


def test_submodules_load_lazily() -> None:
    out = run_python(
        "import sys, numpy as np, zquant\n"
        "print('zarr' in sys.modules, 'numcodecs' in sys.modules)\n"
        "print(zquant.choose.keepbits(np.linspace(0, 1, 1000)) >= 1)\n"
        "print(zquant.zarr.ScaleOffset.__name__, zquant.numcodecs.BitRound.__name__)\n"
    )
    assert out.split("\n")[:3] == ["False False", "True", "ScaleOffset BitRound"]
    with pytest.raises(AttributeError):
        getattr(zquant, "no_such_module")  # noqa: B009


def test_installing_zquant_leaves_zarr_as_it_was() -> None:
    """Without use(), zarr opens a scale_offset array with its own class and no warning;
    zquant's entry points name only what zarr-python lacks."""
    from importlib.metadata import distribution

    names = {e.name for e in distribution("zquant").entry_points if e.group == "zarr.codecs"}
    assert names == {"bitround", "packbits"}
    out = run_python(
        "import warnings, numpy as np, zarr\n"
        "from zarr.codecs.scale_offset import ScaleOffset\n"
        "from zarr.storage import MemoryStore\n"
        "warnings.simplefilter('error')\n"
        "s = MemoryStore()\n"
        "z = zarr.create_array(s, shape=(4,), dtype='float64', filters=[ScaleOffset(offset=1)])\n"
        "z[:] = 1.5\n"
        "z = zarr.open_array(s)\n"
        "print(type(z.metadata.codecs[0]).__module__, z[0])\n"
    )
    assert out.strip() == "zarr.codecs.scale_offset 1.5"


def test_unuse_leaves_one_scale_offset() -> None:
    from zarr.registry import get_codec_class

    zquant.use()
    assert get_codec_class("scale_offset") is ScaleOffset
    zquant.unuse()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert get_codec_class("scale_offset") is ZarrScaleOffset


def test_fit_scale_offset_on_a_dataset_says_to_pass_a_variable() -> None:
    xr = pytest.importorskip("xarray")
    ds = xr.Dataset({"t": ("x", np.linspace(0, 1, 10))})
    with pytest.raises(zquant.CodecError, match=r"ds\[\"t\"\]|a variable"):
        zquant.choose.fit_scale_offset(ds, "uint8", 0.01)


def test_bitround_v3_name_refuses_keepbits_zero_at_construction() -> None:
    with pytest.raises(zquant.CodecError, match="at least 1"):
        BitRound(keepbits=0)
    assert zn.BitRound(keepbits=0).keepbits == 0
