"""zquant.dtypes: the Zarr v3 data types zarr-python 3.4.2 lacks, as zarr-python ZDTypes over
ml_dtypes, checked against the data type specs (shared/specs/data-types): names, fill-value
JSON of every kind, the ``bytes`` layout of every code, hand-made stores, and zquant's
``CastValue`` writing them bit for bit as ``zquant.Chain``."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import zarr
import zarr.codecs
from zarr.core.dtype import data_type_registry, parse_dtype
from zarr.errors import DataTypeValidationError

import zquant
from zquant import dtypes as zd
from zquant.zarr import CastValue, ScaleOffset

NAMES = [
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
    "float4_e2m1fn", "int2", "int4", "uint2", "uint4",
]
BYTE_TYPES = [n for n in NAMES if n != "bfloat16"]
# Bits of each type (the rest of its byte is zero on write, ignored on read).
BITS = {"float6_e2m3fn": 6, "float6_e3m2fn": 6, "float4_e2m1fn": 4,
        "int2": 2, "int4": 4, "uint2": 2, "uint4": 4, "bfloat16": 16}
INTS = ["int2", "int4", "uint2", "uint4"]
FLOATS = [n for n in NAMES if n not in INTS]
# The specs' special values. "NaN" is the code each spec names; the infinities are the
# IEEE-style types' all-ones exponent with mantissa 0.
NAN = {"bfloat16": 0x7FC0, "float8_e3m4": 0x78, "float8_e4m3": 0x7C, "float8_e5m2": 0x7E,
       "float8_e4m3b11fnuz": 0x80, "float8_e4m3fnuz": 0x80, "float8_e5m2fnuz": 0x80,
       "float8_e8m0fnu": 0xFF}
INF = {"bfloat16": (0x7F80, 0xFF80), "float8_e3m4": (0x70, 0xF0),
       "float8_e4m3": (0x78, 0xF8), "float8_e5m2": (0x7C, 0xFC)}
# The sign bit of the types with a -0 (the fnuz types and e8m0fnu have none).
SIGN = {"bfloat16": 0x8000, "float8_e3m4": 0x80, "float8_e4m3": 0x80, "float8_e5m2": 0x80,
        "float6_e2m3fn": 0x20, "float6_e3m2fn": 0x20, "float4_e2m1fn": 0x08}
SIGNED = {"int2", "int4"}


def ml(name):
    return np.dtype(getattr(ml_dtypes, name))


def word(name):
    return np.dtype("u2") if name == "bfloat16" else np.dtype("u1")


def codes(name):
    """Every canonical code of a type (upper bits zero), as storage words."""
    return np.arange(1 << BITS.get(name, 8), dtype=word(name))


def code_of(x, name):
    return int(np.asarray(x, dtype=ml(name)).view(word(name))[()])


def chunk_bytes(store, key="c/0"):
    proto = zarr.core.buffer.default_buffer_prototype()
    import asyncio

    return asyncio.run(store.get(key, proto)).to_bytes()


def metadata(store):
    return json.loads(chunk_bytes(store, "zarr.json"))


# -- registration and the data type objects ---------------------------------------------------


def test_every_type_is_a_zarr_data_type_entry_point():
    eps = {e.name: e for e in entry_points(group="zarr.data_type") if e.value.startswith("zquant")}
    assert sorted(eps) == sorted(NAMES)
    for name, e in eps.items():
        assert e.load() is zd.DATA_TYPES[name]
        assert data_type_registry.get(name) is zd.DATA_TYPES[name]


def test_zarr_finds_them_without_importing_zquant(tmp_path):
    # A fresh interpreter: only zarr is imported; zarr loads zquant.dtypes by its entry point.
    code = (
        "import sys, zarr, numpy as np\n"
        f"z = zarr.create_array({str(tmp_path / 'a')!r}, shape=(4,), dtype='float8_e4m3',"
        " fill_value='NaN')\n"
        "z[:] = np.array([0.5, 1, 2, 448])\n"
        f"r = zarr.open_array({str(tmp_path / 'a')!r})\n"
        "print(r.dtype, r.metadata.data_type.to_json(3), r[:].astype(float).tolist())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["float8_e4m3", "float8_e4m3", "[0.5,", "1.0,", "2.0,", "inf]"]


@pytest.mark.parametrize("name", NAMES)
def test_data_type_json_and_native_dtype(name):
    cls = zd.DATA_TYPES[name]
    z = parse_dtype(name, zarr_format=3)
    assert type(z) is cls
    assert z.to_json(zarr_format=3) == name
    assert z.to_native_dtype() == ml(name)
    assert z.item_size == (2 if name == "bfloat16" else 1)
    # The native dtype (and its scalar type) matches this type and no built-in one.
    assert data_type_registry.match_dtype(ml(name)) == z
    assert parse_dtype(getattr(ml_dtypes, name), zarr_format=3) == z
    # The specs' schema: the name, or an object with the name and an empty configuration.
    assert cls.from_json({"name": name}, zarr_format=3) == z
    assert cls.from_json({"name": name, "configuration": {}}, zarr_format=3) == z
    for bad in ({"name": name, "configuration": {"x": 1}}, {"name": name, "extra": 1},
                name.upper(), "float16"):
        with pytest.raises(DataTypeValidationError):
            cls.from_json(bad, zarr_format=3)
    with pytest.raises(ValueError, match="zarr_format=3"):
        z.to_json(zarr_format=2)
    with pytest.raises(DataTypeValidationError):
        cls.from_json({"name": "|V1", "object_codec_id": None}, zarr_format=2)


def test_bfloat16_byte_order():
    big = zd.BFloat16(endianness="big")
    assert big.to_native_dtype() == ml("bfloat16").newbyteorder(">")
    assert zd.BFloat16.from_native_dtype(ml("bfloat16").newbyteorder(">")) == big
    assert zd.BFloat16.from_native_dtype(ml("bfloat16").newbyteorder("<")) == zd.BFloat16(
        endianness="little")


# -- every code through zarr ------------------------------------------------------------------


@pytest.mark.parametrize("compressors", [None, [zarr.codecs.ZstdCodec()]], ids=["bytes", "zstd"])
@pytest.mark.parametrize("name", NAMES)
def test_every_code_round_trips_bit_identical(name, compressors):
    # bfloat16's 65536 codes too, in both byte orders.
    endians = ["little", "big"] if name == "bfloat16" else [None]
    for endian in endians:
        c = codes(name)
        store = zarr.storage.MemoryStore()
        serializer = zarr.codecs.BytesCodec(endian=endian) if endian else "auto"
        z = zarr.create_array(store, shape=c.shape, chunks=c.shape, dtype=name,
                              serializer=serializer, compressors=compressors)
        z[:] = c.view(ml(name))
        back = zarr.open_array(store, mode="r")[:]
        assert back.dtype == ml(name)
        np.testing.assert_array_equal(back.view(word(name)), c)
        meta = metadata(store)
        assert meta["data_type"] == name
        if compressors is None:
            # The spec's `bytes` layout: a byte per element (two for bfloat16, in the
            # codec's byte order), sub-byte codes in the low bits, upper bits zero.
            raw = chunk_bytes(store)
            order = ">" if endian == "big" else "<"
            assert raw == c.astype(word(name).newbyteorder(order)).tobytes()
            bytes_codec = [x for x in meta["codecs"] if x["name"] == "bytes"][0]
            if name == "bfloat16":
                assert bytes_codec["configuration"]["endian"] == endian
            else:
                assert "configuration" not in bytes_codec


# -- fill values ----------------------------------------------------------------------------


def fill_cases(name):
    """(fill value given to zarr, the JSON zquant writes, the code) of each kind."""
    cases = []
    if name in INTS:
        lo = -(1 << (BITS[name] - 1)) if name in SIGNED else 0
        hi = (1 << (BITS[name] - 1)) - 1 if name in SIGNED else (1 << BITS[name]) - 1
        cases += [(0, 0, 0), (hi, hi, hi), (lo, lo, lo & ((1 << BITS[name]) - 1)),
                  (np.int8(1), 1, 1), (ml_dtypes.int4(1) if name == "int4" else 1, 1, 1)]
        return cases
    one = 1.0 if name != "float8_e8m0fnu" else 2.0
    if name == "float8_e8m0fnu":
        cases += [(2.0, 2.0, 0x80), (0.25, 0.25, 0x7D), (2.0**127, 2.0**127, 0xFE)]
    else:
        cases += [(0, 0.0, 0), (0.0, 0.0, 0), (1.5, 1.5, code_of(1.5, name)),
                  (-one, -one, code_of(-one, name)), (np.float32(1.5), 1.5, code_of(1.5, name))]
        # Not exactly representable: rounded once to nearest-even (ml_dtypes rounds the
        # same for these values).
        cases += [(1.3, float(ml(name).type(1.3)),
                   code_of(1.3, name))]
    if name in SIGN:
        cases += [(-0.0, -0.0, SIGN[name])]
    if name in NAN:
        digits = 4 if name == "bfloat16" else 2
        cases += [("NaN", "NaN", NAN[name]), (float("nan"), "NaN", NAN[name]),
                  (f"0x{NAN[name]:0{digits}x}", "NaN", NAN[name])]
        if name in INF:
            # A NaN other than the canonical one: only a hex string writes it.
            other = NAN[name] | 1
            cases += [(f"0x{other:0{digits}X}", f"0x{other:0{digits}x}", other),
                      (np.array([other], word(name)).view(ml(name))[0],
                       f"0x{other:0{digits}x}", other)]
    if name in INF:
        pos, neg = INF[name]
        cases += [("Infinity", "Infinity", pos), ("-Infinity", "-Infinity", neg),
                  (float("inf"), "Infinity", pos), (float("-inf"), "-Infinity", neg)]
    # A hex string of a number is written back as the number.
    hexed = 0x01 if name != "float8_e8m0fnu" else 0x7F
    value = float(np.array([hexed], word(name)).view(ml(name))[0])
    digits = 4 if name == "bfloat16" else 2
    cases += [(f"0x{hexed:0{digits}x}", value, hexed)]
    return cases


def same_json(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b and np.signbit(a) == np.signbit(b)
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("name", NAMES)
def test_fill_values_of_every_kind(name):
    for given, written, code in fill_cases(name):
        store = zarr.storage.MemoryStore()
        z = zarr.create_array(store, shape=(3,), chunks=(2,), dtype=name, fill_value=given)
        meta = metadata(store)
        assert same_json(meta["fill_value"], written), (name, given, meta["fill_value"], written)
        assert code_of(z.fill_value, name) == code, (name, given)
        # Read back: the same code, and the unwritten chunks are that code.
        r = zarr.open_array(store, mode="r")
        assert code_of(r.fill_value, name) == code
        assert (r[:].view(word(name)) == code).all()


def test_default_fill_value():
    for name in NAMES:
        z = zarr.create_array(zarr.storage.MemoryStore(), shape=(1,), dtype=name)
        expected = 0x7F if name == "float8_e8m0fnu" else 0
        assert code_of(z.fill_value, name) == expected, name


BAD = [
    ("float4_e2m1fn", "NaN"), ("float6_e2m3fn", "Infinity"), ("float6_e3m2fn", float("nan")),
    ("float8_e4m3fnuz", "Infinity"), ("float8_e5m2fnuz", float("-inf")),
    ("float8_e4m3b11fnuz", "-Infinity"), ("float8_e8m0fnu", "-Infinity"),
    ("float4_e2m1fn", 1000.0), ("float8_e4m3fnuz", 1e6),
    ("float8_e8m0fnu", 0), ("float8_e8m0fnu", -2.0),
    ("int4", 8), ("int4", -9), ("int2", 2), ("uint2", 4), ("uint4", -1), ("uint4", 16),
    ("int4", 1.5), ("int4", "NaN"),
    ("float8_e4m3", "nan"), ("float8_e4m3", "inf"), ("float8_e4m3", "0x7"),
    ("float8_e4m3", "0x007c"), ("bfloat16", "0x7fc"), ("float4_e2m1fn", "0x10"),
    ("int4", "0x10"), ("float8_e4m3", "1.5"),
]


@pytest.mark.parametrize(("name", "fill"), BAD)
def test_bad_fill_values_are_rejected_naming_the_type(name, fill):
    with pytest.raises((zquant.CodecError, TypeError)) as e:
        zarr.create_array(zarr.storage.MemoryStore(), shape=(2,), dtype=name, fill_value=fill)
    assert name in str(e.value)


@pytest.mark.parametrize("fill", [True, None, [1], {"a": 1}, 1 + 2j])
def test_fill_values_of_the_wrong_kind_are_type_errors(fill):
    z = parse_dtype("float8_e4m3", zarr_format=3)
    with pytest.raises(TypeError, match="float8_e4m3"):
        z.cast_scalar(fill)
    with pytest.raises(TypeError, match="float8_e4m3"):
        z.from_json_scalar(fill, zarr_format=3)


def test_a_bad_fill_value_in_a_store_names_the_type(tmp_path):
    write_store(tmp_path, "float4_e2m1fn", "NaN", b"")
    with pytest.raises(TypeError, match="Invalid fill_value") as e:
        zarr.open_array(tmp_path, mode="r")
    assert "float4_e2m1fn" in str(e.value.__cause__)


# -- stores written by hand -----------------------------------------------------------------


def write_store(path, data_type, fill, chunk, shape=(16,), codecs=None):
    meta = {
        "zarr_format": 3, "node_type": "array", "shape": list(shape),
        "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": codecs or [{"name": "bytes"}],
    }
    Path(path).mkdir(parents=True, exist_ok=True)
    (Path(path) / "zarr.json").write_text(json.dumps(meta))
    if chunk:
        (Path(path) / "c").mkdir(exist_ok=True)
        (Path(path) / "c" / "0").write_bytes(chunk)


@pytest.mark.parametrize("name", NAMES)
def test_open_a_hand_made_store(tmp_path, name):
    c = codes(name)[:16] if name != "bfloat16" else np.arange(0x3F80, 0x3F90, dtype="u2")
    fill = "NaN" if name in NAN else 0
    codecs = [{"name": "bytes", "configuration": {"endian": "big"}}] if name == "bfloat16" else None
    raw = c.astype(">u2").tobytes() if name == "bfloat16" else c.tobytes()
    write_store(tmp_path, {"name": name, "configuration": {}}, fill, raw, shape=c.shape,
                codecs=codecs)
    z = zarr.open_array(tmp_path, mode="r")
    assert z.dtype == ml(name)
    np.testing.assert_array_equal(z[:].view(word(name)), c)
    assert code_of(z.fill_value, name) == (NAN[name] if name in NAN else 0)
    # A missing chunk reads as the fill value.
    write_store(tmp_path / "empty", name, fill, b"", shape=c.shape, codecs=codecs)
    assert (zarr.open_array(tmp_path / "empty")[:].view(word(name)) == code_of(
        z.fill_value, name)).all()


@pytest.mark.parametrize("name", INTS)
def test_integers_ignore_the_upper_bits_on_read(tmp_path, name):
    # The spec: "the upper bits are ignored". ml_dtypes reads an integer from its low bits.
    every = np.arange(256, dtype=np.uint8)
    write_store(tmp_path, name, 0, every.tobytes(), shape=(256,))
    back = zarr.open_array(tmp_path)[:].astype(np.int64)
    low = every.astype(np.int64) & ((1 << BITS[name]) - 1)
    expected = (low ^ (1 << (BITS[name] - 1))) - (1 << (BITS[name] - 1)) if name in SIGNED else low
    np.testing.assert_array_equal(back, expected)


@pytest.mark.xfail(strict=True, reason="ml_dtypes reads float4/float6 bytes whose upper bits "
                   "are set as other numbers (zquant's codecs mask them); see docs/python.md")
@pytest.mark.parametrize("name", ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"])
def test_small_floats_ignore_the_upper_bits_on_read(tmp_path, name):
    every = np.arange(256, dtype=np.uint8)
    write_store(tmp_path, name, 0, every.tobytes(), shape=(256,))
    back = zarr.open_array(tmp_path)[:].astype(np.float64)
    low = (every & ((1 << BITS[name]) - 1)).view(ml(name)).astype(np.float64)
    np.testing.assert_array_equal(back, low)


@pytest.fixture
def zq():
    """zarr resolves scale_offset and cast_value (read from metadata) to zquant's classes."""
    zquant.use(environment=False)
    yield
    zquant.unuse()


def test_small_floats_upper_bits_through_cast_value_are_ignored(tmp_path, zq):
    # Read through zquant's cast_value (float32 <- float4_e2m1fn), the upper bits are masked.
    every = np.arange(256, dtype=np.uint8)
    write_store(tmp_path, "float32", 0.0, every.tobytes(), shape=(256,),
                codecs=[{"name": "cast_value", "configuration": {"data_type": "float4_e2m1fn"}},
                        {"name": "bytes"}])
    r = zarr.open_array(tmp_path)
    assert isinstance(r.metadata.codecs[0], CastValue)
    back = r[:]
    low = (every & 0xF).view(ml("float4_e2m1fn")).astype(np.float32)
    np.testing.assert_array_equal(back.view(np.uint32), low.view(np.uint32))


# -- zquant's codecs to these types -----------------------------------------------------------


def field(n=4096, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * 2).astype(np.float32)


def cast_targets():
    out = []
    for name in NAMES:
        if name in INTS:
            out.append((name, {"data_type": name, "out_of_range": "clamp"}, 0))
        elif name == "float8_e8m0fnu":
            out.append((name, {"data_type": name, "out_of_range": "clamp"}, 1.0))
        elif name in ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e4m3fnuz",
                      "float8_e4m3b11fnuz", "float8_e5m2fnuz"):
            out.append((name, {"data_type": name, "out_of_range": "clamp"}, 0.0))
        else:
            out.append((name, {"data_type": name}, 0.0))
    return out


@pytest.mark.parametrize("compressors", [None, [zarr.codecs.ZstdCodec()]], ids=["bytes", "zstd"])
@pytest.mark.parametrize(("name", "config", "fill"), cast_targets(), ids=NAMES)
def test_cast_value_to_every_type_is_bit_for_bit_the_chain(name, config, fill, compressors, zq):
    a = field()
    if name == "float8_e8m0fnu":
        a = np.abs(a) + np.float32(0.01)
    chain = zquant.Chain("float32", [{"name": "cast_value", "configuration": config}], fill)
    store = zarr.storage.MemoryStore()
    z = zarr.create_array(store, shape=a.shape, chunks=(1024,), dtype="float32",
                          filters=[CastValue(**config)], compressors=compressors,
                          fill_value=fill)
    z[:] = a
    enc = chain.encode(a)
    assert enc.dtype == ml(name)
    if compressors is None:
        assert chunk_bytes(store) == enc[:1024].tobytes()
    r = zarr.open_array(store, mode="r")
    assert isinstance(r.metadata.codecs[0], CastValue)
    back = r[:]
    np.testing.assert_array_equal(back.view(np.uint32), chain.decode(enc).view(np.uint32))


def test_scale_offset_to_uint4_with_zstd(zq):
    a = np.linspace(10, 20, 10000, dtype=np.float32)
    filters = [ScaleOffset(offset=10, scale=1.5), CastValue(data_type="uint4")]
    chain = zquant.Chain("float32", filters, 10)
    store = zarr.storage.MemoryStore()
    z = zarr.create_array(store, shape=a.shape, chunks=(4096,), dtype="float32",
                          filters=filters, compressors=[zarr.codecs.ZstdCodec()],
                          fill_value=10)
    z[:] = a
    back = zarr.open_array(store, mode="r")[:]
    np.testing.assert_array_equal(back, chain.decode(chain.encode(a)))
    assert np.abs(back - a).max() <= 1 / 3 + 1e-6
    meta = metadata(store)
    assert [c["name"] for c in meta["codecs"]] == ["scale_offset", "cast_value", "bytes", "zstd"]


def test_an_array_of_these_types_through_cast_value(zq):
    # The array itself is float8_e4m3; cast_value widens it to float16 and back exactly.
    c = codes("float8_e4m3")
    finite = c[~np.isnan(c.view(ml("float8_e4m3")).astype(np.float32))]
    store = zarr.storage.MemoryStore()
    # (A one-byte array's default serializer has no endian: float16 chunks need one.)
    z = zarr.create_array(store, shape=finite.shape, dtype="float8_e4m3",
                          filters=[CastValue(data_type="float16")], compressors=None,
                          serializer=zarr.codecs.BytesCodec(endian="little"))
    z[:] = finite.view(ml("float8_e4m3"))
    np.testing.assert_array_equal(zarr.open_array(store)[:].view(np.uint8), finite)
    assert np.frombuffer(chunk_bytes(store), "<f2").astype(np.float32).tolist() == finite.view(
        ml("float8_e4m3")).astype(np.float32).tolist()


def run_python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_without_ml_dtypes_zarr_works_and_naming_a_type_says_what_to_install():
    # ml_dtypes hidden: the entry points load (other types work), naming a type raises
    # ModuleNotFoundError with the fix; zquant.zarr's cast_value to it says the same.
    out = run_python(
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import numpy as np, zarr\n"
        "z = zarr.create_array(zarr.storage.MemoryStore(), shape=(2,), dtype='float32')\n"
        "z[:] = 1; assert (z[:] == 1).all()\n"
        "for make in (lambda: zarr.create_array(zarr.storage.MemoryStore(), shape=(2,),"
        " dtype='float8_e4m3'),\n"
        "             lambda: zarr.create_array(zarr.storage.MemoryStore(), shape=(2,),"
        " dtype='float32', filters=[__import__('zquant.zarr').zarr.CastValue("
        "data_type='uint4')])):\n"
        "    try:\n"
        "        make()\n"
        "    except ModuleNotFoundError as e:\n"
        "        print('ModuleNotFoundError:', e)\n"
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 2, out.stdout
    for line, name in zip(lines, ["float8_e4m3", "uint4"], strict=True):
        assert line.startswith("ModuleNotFoundError:") and name in line, line
        assert "pip install 'zquant[ml-dtypes]'" in line


def test_zquant_zarr_registers_the_types_without_the_entry_points():
    # zquant on the path without its entry points (not installed): importing zquant.zarr
    # registers the types, so cast_value resolves its encoded chunk spec.
    out = run_python(
        "import importlib.metadata as md\n"
        "real = md.entry_points\n"
        "md.entry_points = lambda **kw: md.EntryPoints(e for e in real(**kw)"
        " if not e.value.startswith('zquant'))\n"
        "import numpy as np, zarr\n"
        "from zarr.core.dtype import data_type_registry\n"
        "try:\n"
        "    data_type_registry.get('uint4')\n"
        "except KeyError:\n"
        "    print('absent')\n"
        "from zquant.zarr import CastValue\n"
        "z = zarr.create_array(zarr.storage.MemoryStore(), shape=(4,), dtype='float32',"
        " filters=[CastValue(data_type='uint4')], fill_value=0)\n"
        "z[:] = np.array([0, 1.4, 2.6, 15]); print(z[:].tolist())\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["absent", "[0.0, 1.0, 3.0, 15.0]"]


def test_a_float_fill_value_is_rounded_from_its_exact_value():
    # A bfloat16 tie whose shortest repr is not the tie itself: 2^-100 (1 + 2^-8) lies
    # exactly between the codes 0x0d80 (2^-100) and 0x0d81; ties go to the even code. The
    # next float up rounds up.
    z = parse_dtype("bfloat16", zarr_format=3)
    tie = 2.0**-100 * (1 + 2.0**-8)
    assert repr(tie) != str(__import__("decimal").Decimal(tie))
    assert code_of(z.cast_scalar(tie), "bfloat16") == 0x0D80
    assert code_of(z.cast_scalar(np.nextafter(tie, 1.0)), "bfloat16") == 0x0D81
    assert code_of(z.cast_scalar(-tie), "bfloat16") == 0x8D80
    # From JSON (zarr parses zarr.json's numbers to floats first) the same.
    assert code_of(z.from_json_scalar(tie, zarr_format=3), "bfloat16") == 0x0D80
