"""Write the interop stores with zarr-python: one directory per case under OUT.

Each case directory holds:
  store/          the array, written by zarr-python (v3 or v2)
  source.bin      the values written, C order, little-endian
  expected.bin    what zarr-python reads back, C order, little-endian
  case.json       {"name", "zarr_format", "shape", "data_type" (v3 name)}

Usage: python make_stores.py OUT
"""

import json
import shutil
import sys
import warnings
from pathlib import Path

import ml_dtypes
import numcodecs
import numpy as np
import zarr

warnings.filterwarnings("ignore")  # numcodecs codecs "not in the Zarr v3 specification"

# zquant is installed in run.sh's venv for its data types (zquant.dtypes: bfloat16,
# float8_*, int4, ...), which also registers its own scale_offset and cast_value: run as a
# script, the stores are written by zarr-python's scale_offset and cast-value's cast_value
# (what zarr picks without zquant), pinned here. (The stores of zquant_cases() pass zquant's
# codec objects themselves.)
PEERS = {"codecs.cast_value": "cast_value.zarr_compat.v1.rust_codec.CastValueRustV1",
         "codecs.scale_offset": "zarr.codecs.scale_offset.ScaleOffset"}

SHAPE = (37, 53)  # neither dimension a multiple of the chunk size: partial edge chunks
CHUNKS = (8, 16)
SHARDS = (16, 32)

V3_NAMES = {
    "<f8": "float64", "<f4": "float32", "<f2": "float16",
    "<i2": "int16", "<u2": "uint16", "|u1": "uint8", "<i4": "int32",
}


def specials(dtype):
    """NaN, -0, +-Inf, subnormals, extremes of the type."""
    info = np.finfo(dtype)
    return np.array(
        [np.nan, -0.0, 0.0, np.inf, -np.inf, info.smallest_subnormal,
         -info.smallest_subnormal, info.tiny, info.tiny / 3, info.max, -info.max],
        dtype=dtype,
    )


def data(dtype, lo, hi, with_specials=True, seed=1):
    rng = np.random.default_rng(seed)
    a = rng.uniform(lo, hi, size=SHAPE).astype(dtype)
    # Round-ish values and exact ties too, so that the rounding mode matters.
    a.flat[100:200] = np.round(a.flat[100:200] * 2) / 2
    if with_specials:
        s = specials(dtype)
        a.flat[: len(s)] = s
        # The last element sits in the bottom-right (partial) edge chunk.
        a.flat[-1] = np.nan
        a.flat[-2] = -0.0
    return a


def so_cast(offset, scale, target, nan_code, rounding="nearest-even"):
    # Infinities into an integer type fail even with clamp (spec reading `inf-clamp`):
    # scalar_map sends them to the ends of the range.
    info = np.iinfo(target)
    top = info.max - 1 if nan_code == info.max else info.max
    bottom = info.min + 1 if nan_code == info.min else info.min
    return [
        {"name": "scale_offset", "configuration": {"offset": offset, "scale": scale}},
        {"name": "cast_value", "configuration": {
            "data_type": target, "rounding": rounding, "out_of_range": "clamp",
            "scalar_map": {
                "encode": [["NaN", nan_code], ["Infinity", top], ["-Infinity", bottom]],
                "decode": [[nan_code, "NaN"]]}}},
    ]


ZSTD = [{"name": "zstd", "configuration": {"level": 3, "checksum": False}}]
GZIP = [{"name": "gzip", "configuration": {"level": 5}}]
BLOSC = [{"name": "blosc", "configuration": {
    "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}]
LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}
BIG = {"name": "bytes", "configuration": {"endian": "big"}}


def v3_cases():
    f8 = data("<f8", -20.0, 20.0)
    f4 = data("<f4", -20.0, 20.0)
    f4_small = data("<f4", -600.0, 600.0)  # within float16's range apart from the specials
    u8 = so_cast(-10, 10, "uint8", 255)
    u16 = so_cast(-20, 1000, "uint16", 65535)
    i16 = so_cast(0, 1000, "int16", -32768)
    yield "so_u8", f8, u8, LITTLE, [], None, "NaN"
    yield "so_u8_zstd", f8, u8, LITTLE, ZSTD, None, "NaN"
    yield "so_u8_blosc_sharded", f8, u8, LITTLE, BLOSC, SHARDS, "NaN"
    yield "so_u16_big", f8, u16, BIG, [], None, "NaN"
    yield "so_u16_big_gzip", f8, u16, BIG, GZIP, None, 1.5
    yield "so_i16", f8, i16, LITTLE, [], None, 0.0
    yield "so_i16_sharded_zstd", f8, i16, LITTLE, ZSTD, SHARDS, "NaN"
    yield "so_i16_towards_zero", f8, so_cast(0, 1000, "int16", -32768, "towards-zero"), LITTLE, [], None, "NaN"
    cast16 = [{"name": "cast_value", "configuration": {
        "data_type": "float16", "rounding": "nearest-even", "out_of_range": "clamp"}}]
    yield "cast_f32_f16", f4_small, cast16, LITTLE, [], None, "NaN"
    yield "cast_f32_f16_big_zstd", f4_small, cast16, BIG, ZSTD, None, -0.0
    br = [{"name": "numcodecs.bitround", "configuration": {"keepbits": 7}}]
    yield "bitround_f32", f4, br, LITTLE, [], None, "NaN"
    yield "bitround_f64_sharded", f8, [{"name": "numcodecs.bitround",
                                        "configuration": {"keepbits": 12}}], LITTLE, ZSTD, SHARDS, 0.0
    fso = [{"name": "numcodecs.fixedscaleoffset", "configuration": {
        "offset": 0.1, "scale": 1000, "dtype": "<f8", "astype": "<i2"}}]
    finite = data("<f8", -20.0, 20.0, with_specials=False)
    finite.flat[0] = -0.0
    finite.flat[1] = 5e-324
    yield "fso_f8_i2", finite, fso, LITTLE, [], None, 0.0
    yield "fso_f8_i2_blosc_big", finite, fso, BIG, BLOSC, None, 0.0


def quantize_astype_cases():
    """numcodecs.quantize and numcodecs.astype in v3 arrays (zarr-python's numcodecs
    wrappers), with and without compressors, sharded, big-endian."""
    f8 = data("<f8", -20.0, 20.0, seed=5)
    f4 = data("<f4", -20.0, 20.0, seed=6)
    q = lambda d, dt: [{"name": "numcodecs.quantize", "configuration": {"digits": d, "dtype": dt}}]
    yield "quantize_f8", f8, q(3, "<f8"), LITTLE, [], None, "NaN"
    yield "quantize_f8_zstd", f8, q(-1, "<f8"), LITTLE, ZSTD, None, 0.0
    yield "quantize_f4_blosc_big", f4, q(2, "<f4"), BIG, BLOSC, None, -0.0
    yield "quantize_f4_sharded", f4, q(5, "<f4"), LITTLE, ZSTD, SHARDS, "NaN"
    at = lambda enc, dec: [{"name": "numcodecs.astype",
                            "configuration": {"encode_dtype": enc, "decode_dtype": dec}}]
    yield "astype_f8_f4", f8, at("<f4", "<f8"), LITTLE, [], None, "NaN"
    yield "astype_f8_f2_gzip_big", data("<f8", -600.0, 600.0, seed=7), at("<f2", "<f8"), BIG, GZIP, None, 1.5
    # NaN and +-Inf into int16 (NumPy's C cast: 0 and -32768 after the low bits).
    yield "astype_f8_i2_zstd", f8, at("<i2", "<f8"), LITTLE, ZSTD, None, 0.0
    i4 = np.random.default_rng(8).integers(-300, 300, size=SHAPE).astype("<i4")
    yield "astype_i4_u1_sharded", i4, at("|u1", "<i4"), LITTLE, BLOSC, SHARDS, 0.0
    yield "astype_i4_f2", i4, at("<f2", "<i4"), LITTLE, [], None, 0.0

def spec_example_cases():
    """The three examples of the scale_offset spec (shared/specs/codecs/scale_offset), their
    array->array codecs verbatim, on data in the ranges the spec gives. The spec writes the
    serializer as the bare name "bytes", which zarr-python 3.4's API does not take (it wants a
    codec object or dict): it is {"name": "bytes", "configuration": {"endian": "little"}}."""
    rng = np.random.default_rng(7)
    f4 = rng.uniform(-50.0, 50.0, size=SHAPE).astype("<f4")
    yield "spec_f32_scale_offset", f4, [
        {"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}}], LITTLE, [], None, 0.0
    # uint16 values in [1000, 1255]: the fill value must be one the chain carries (0 is not:
    # 0 - 1000 leaves uint16), so it is 1000.
    u2 = rng.integers(1000, 1256, size=SHAPE).astype("<u2")
    yield "spec_u16_range_reduction", u2, [
        {"name": "scale_offset", "configuration": {"offset": 1000}},
        {"name": "cast_value", "configuration": {"data_type": "uint8"}}], LITTLE, [], None, 1000
    f8 = rng.uniform(0.0, 2540.0, size=SHAPE).astype("<f8")
    f8.flat[::97] = np.nan
    f8.flat[1] = 0.0
    f8.flat[2] = 2540.0
    yield "spec_f64_u8_nan", f8, SPEC_NAN_U8, LITTLE, [], None, "NaN"


SPEC_NAN_U8 = [
    {"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}},
    {"name": "cast_value", "configuration": {
        "data_type": "uint8", "rounding": "nearest-even",
        "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}},
]


def nan_code_0_cases():
    """Stores whose NaN code is 0: 0.0 does not survive cast_value's round trip (0 decodes to
    NaN), so a codec bound with any fill value other than the array's fails (issue 22)."""
    cast_u8 = [{"name": "cast_value", "configuration": {
        "data_type": "uint8", "rounding": "nearest-even", "out_of_range": "clamp",
        "scalar_map": {"encode": [["NaN", 0], ["Infinity", 255], ["-Infinity", 1]],
                       "decode": [[0, "NaN"]]}}}]
    near = data("<f8", 1.0, 250.0)
    yield "nan0_cast_u8", near, cast_u8, LITTLE, [], None, "NaN"
    far = data("<f8", 250.0, 310.0)
    so = so_cast(249.75, 4, "uint8", 0)
    yield "nan0_so_u8", far, so, LITTLE, [], None, "NaN"
    yield "nan0_so_u8_zstd", far, so, LITTLE, ZSTD, None, "NaN"
    yield "nan0_so_u8_sharded", far, so, LITTLE, ZSTD, SHARDS, "NaN"
    yield "nan0_so_u8_inside_shards", far, [], ("shard", so + [LITTLE] + ZSTD), [], None, "NaN"
    yield "nan0_so_u8_split_shards", far, so[:1], ("shard", so[1:] + [LITTLE]), [], None, "NaN"
    yield "nan0_so_u8_missing", far, so, LITTLE, [], "missing", "NaN"
    yield "nan0_so_u8_big_gzip", far, so, BIG, GZIP, None, "NaN"
    f4 = data("<f4", -600.0, 600.0)
    cast16 = [
        {"name": "scale_offset", "configuration": {"offset": 2731.5, "scale": 1}},
        {"name": "cast_value", "configuration": {
            "data_type": "float16", "rounding": "nearest-even", "out_of_range": "clamp"}}]
    # 0.0 - 2731.5 is not a float16 (it rounds to 2732): zarrs' dummy fill failed here too.
    yield "so_f32_f16", f4 - 2731.5, cast16, LITTLE, [], None, "NaN"
    # A fill value that encodes onto a scalar_map key: -999 -> (-999 - 249.75) * 4 = -4995,
    # mapped to code 0 and back.
    onto_key = [so[0], {"name": "cast_value", "configuration": {
        "data_type": "uint8", "rounding": "nearest-even", "out_of_range": "clamp",
        "scalar_map": {"encode": [[-4995.0, 0], ["NaN", 255], ["Infinity", 254], ["-Infinity", 1]],
                       "decode": [[0, -4995.0], [255, "NaN"]]}}}]
    yield "fill_onto_scalar_map_key", far, onto_key, LITTLE, ZSTD, None, -999.0
    yield "spec_f64_u8_nan_sharded", far - 250.0, SPEC_NAN_U8_CLAMP, LITTLE, [], SHARDS, "NaN"


def codec_cases():
    """The other codecs zarr-python writes around these ones: numcodecs' zlib, bz2, shuffle,
    adler32 and fletcher32 as v3 codecs, crc32c, and the chunk key encodings."""
    import zarr.codecs.numcodecs as nc
    far = data("<f8", 250.0, 310.0)
    so = so_cast(249.75, 4, "uint8", 0)
    u16 = so_cast(-20, 1000, "uint16", 65535)
    f8 = data("<f8", -20.0, 20.0)
    yield "nan0_so_u8_zlib", far, so, LITTLE, [nc.Zlib(level=1)], None, "NaN"
    yield "nan0_so_u8_bz2", far, so, LITTLE, [nc.BZ2(level=1)], None, "NaN"
    yield "so_u16_shuffle_zstd", f8, u16, LITTLE, [nc.Shuffle(elementsize=2), *ZSTD], None, "NaN"
    yield "so_u16_adler32", f8, u16, LITTLE, [nc.Adler32()], None, "NaN"
    yield "so_u16_fletcher32_big", f8, u16, BIG, [nc.Fletcher32()], None, "NaN"
    yield "so_u16_crc32c", f8, u16, LITTLE, [{"name": "crc32c"}], None, "NaN"
    yield "cke_dot_nan0", far, so, LITTLE, [], None, "NaN"
    yield "cke_v2_nan0", far, so, LITTLE, ZSTD, None, "NaN"
    yield "cke_v2_slash", f8, u16, LITTLE, [], None, 1.25
    # A fill value that cast_value's spec forbids ("If the fill value cannot survive a
    # round-trip cast, implementations MUST treat this as an error"): 1e300 -> (1e300 + 20) *
    # 1000 clamps to 65535, which decodes to NaN. zarr-python with cast-value writes it;
    # zquant rejects it (check.py's KNOWN).
    yield "fill_fails_round_trip", f8, u16, LITTLE, [], None, 1e300
    # An integer source: int32 shifted and narrowed to int8, fill value on the shifted zero.
    i4 = np.random.default_rng(9).integers(-1120, -880, size=SHAPE).astype("<i4")
    yield "i32_so_cast_i8", i4, [
        {"name": "scale_offset", "configuration": {"offset": -1000}},
        {"name": "cast_value", "configuration": {"data_type": "int8"}}], LITTLE, [], None, -1000


CHUNK_KEY_ENCODINGS = {
    "cke_dot_nan0": {"name": "default", "separator": "."},
    "cke_v2_nan0": {"name": "v2", "separator": "."},
    "cke_v2_slash": {"name": "v2", "separator": "/"},
}


SPEC_NAN_U8_CLAMP = [SPEC_NAN_U8[0], {"name": "cast_value", "configuration": {
    **SPEC_NAN_U8[1]["configuration"], "out_of_range": "clamp",
    "scalar_map": {"encode": [["NaN", 0], ["Infinity", 255], ["-Infinity", 1]],
                   "decode": [[0, "NaN"]]}}}]


def v2_cases():
    finite = data("<f8", -20.0, 20.0, with_specials=False, seed=2)
    finite.flat[0] = -0.0
    finite.flat[1] = 5e-324
    fso = numcodecs.FixedScaleOffset(offset=0.1, scale=1000, dtype="<f8", astype="<i2")
    yield "v2_fso", "<f8", finite, [fso], None, "C"
    yield "v2_fso_zstd", "<f8", finite, [fso], numcodecs.Zstd(level=3), "C"
    yield "v2_fso_blosc_F", "<f8", finite, [fso], numcodecs.Blosc(cname="zstd", clevel=3), "F"
    fso_be = numcodecs.FixedScaleOffset(offset=0.1, scale=1000, dtype=">f8", astype=">i2")
    yield "v2_fso_big", ">f8", finite, [fso_be], None, "C"
    yield "v2_bitround", "<f4", data("<f4", -20.0, 20.0, seed=3), [numcodecs.BitRound(keepbits=5)], None, "C"
    # numcodecs' zlib (the v2 default of many writers) and bz2 compressors.
    yield "v2_fso_zlib", "<f8", finite, [fso], numcodecs.Zlib(level=1), "C"
    yield "v2_fso_bz2", "<f8", finite, [fso], numcodecs.BZ2(level=9), "C"
    yield "v2_bitround_zlib_F", "<f4", data("<f4", -20.0, 20.0, seed=4), [numcodecs.BitRound(keepbits=9)], numcodecs.Zlib(level=5), "F"

    # numcodecs' Quantize and AsType as v2 filters.
    f8 = data("<f8", -20.0, 20.0, seed=9)
    quant = numcodecs.Quantize(digits=2, dtype="<f8")
    yield "v2_quantize", "<f8", f8, [quant], None, "C"
    yield "v2_quantize_f4_zstd", "<f8", f8, [numcodecs.Quantize(digits=3, dtype="<f8", astype="<f4")], numcodecs.Zstd(level=3), "C"
    yield "v2_quantize_big_blosc_F", ">f8", f8, [numcodecs.Quantize(digits=1, dtype=">f8")], numcodecs.Blosc(cname="lz4", clevel=5), "F"
    yield "v2_astype_f8_f4", "<f8", f8, [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")], None, "C"
    yield "v2_astype_f8_i2_zlib", "<f8", f8, [numcodecs.AsType(encode_dtype="<i2", decode_dtype="<f8")], numcodecs.Zlib(level=1), "C"
    yield "v2_astype_big", ">f4", data("<f4", -20.0, 20.0, seed=10), [numcodecs.AsType(encode_dtype=">i2", decode_dtype=">f4")], None, "C"
    yield "v2_quantize_astype", "<f8", f8, [quant, numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")], numcodecs.Zstd(level=1), "C"


NARROW = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
          "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
          "float4_e2m1fn", "int2", "int4", "uint2", "uint4"]
NARROW_BITS = {"float6_e2m3fn": 6, "float6_e3m2fn": 6, "float4_e2m1fn": 4, "int2": 2, "int4": 4,
               "uint2": 2, "uint4": 4}
# A fill value of each kind the type has: "NaN", a hex string (a NaN other than the
# canonical one where the type has one), -0.0, +-Infinity, numbers.
NARROW_FILLS = {
    "bfloat16": ("NaN", "0xffc1", "-Infinity"), "float8_e3m4": ("NaN", "0x79", -0.0),
    "float8_e4m3": ("NaN", "0x7d", "Infinity"), "float8_e4m3b11fnuz": ("NaN", 1.5, "0x01"),
    "float8_e4m3fnuz": ("NaN", -2.0, 0.0), "float8_e5m2": ("NaN", "-Infinity", "0xfe"),
    "float8_e5m2fnuz": ("NaN", 0.25, -1.0), "float8_e8m0fnu": ("NaN", 0.5, "0x7f"),
    "float6_e2m3fn": (1.5, -0.0, "0x3f"), "float6_e3m2fn": (-28.0, 0.0625, "0x20"),
    "float4_e2m1fn": (-6.0, -0.0, "0x01"), "int2": (-2, 1, 0), "int4": (-8, 7, -1),
    "uint2": (3, 0, 1), "uint4": (15, 0, 9),
}


def narrow_source(name):
    """Every code of the type, cyclically in C order (bfloat16: random codes and its
    specials), as the type's ml_dtypes dtype."""
    n = SHAPE[0] * SHAPE[1]
    if name == "bfloat16":
        codes = np.random.default_rng(5).integers(0, 1 << 16, n).astype("<u2")
        codes[:8] = [0x7FC0, 0xFFC1, 0x7F80, 0xFF80, 0x8000, 0x0001, 0x7F7F, 0x0080]
    else:
        codes = (np.arange(n) % (1 << NARROW_BITS.get(name, 8))).astype("u1")
    return codes.view(getattr(ml_dtypes, name)).reshape(SHAPE)


def narrow_cases():
    """Arrays of the narrow types (zquant.dtypes in zarr-python): `bytes` alone; with zstd
    and sharding; bfloat16 big-endian with gzip; a store with missing chunks."""
    for name in NARROW:
        bytes_codec = LITTLE if name == "bfloat16" else {"name": "bytes"}
        fills = NARROW_FILLS[name]
        src = narrow_source(name)
        yield f"dt_{name}", src, [], bytes_codec, [], None, fills[0]
        yield f"dt_{name}_zstd_sharded", src, [], bytes_codec, ZSTD, SHARDS, fills[1]
        yield f"dt_{name}_missing", src, [], bytes_codec, [], "missing", fills[2]
    yield "dt_bfloat16_big_gzip", narrow_source("bfloat16"), [], BIG, GZIP, None, "NaN"
    # The same fill values spelled "0x…" (an equivalent spelling the specs allow, which
    # zquant writes only for a NaN other than the canonical one): zarrs without its
    # `microfloat` feature reads only this form (docs/zarr.md), and both must keep reading.
    for name in NARROW[1:11]:
        yield (f"dt_{name}_hexfill", narrow_source(name), [], {"name": "bytes"}, ZSTD, None,
               NARROW_FILLS[name][0])


def zquant_cases():
    """float32 stored as the narrow types by zquant's codecs in zarr-python (zquant.zarr):
    cast_value to float8_e4m3 and to float4_e2m1fn (clamped), scale_offset + cast_value to
    uint4 with zstd. Read back in check.py with zquant's codecs."""
    from zquant.zarr import CastValue, ScaleOffset

    rng = np.random.default_rng(11)
    f4 = (rng.standard_normal(SHAPE) * 3).astype("<f4")
    yield ("zq_cast_f32_float8_e4m3", f4, [CastValue(data_type="float8_e4m3")], LITTLE, [], None,
           "NaN")
    yield "zq_cast_f32_float4_e2m1fn_zstd", f4, [
        CastValue(data_type="float4_e2m1fn", out_of_range="clamp")], LITTLE, ZSTD, None, 0.0
    field = np.linspace(10.0, 20.0, SHAPE[0] * SHAPE[1], dtype="<f4").reshape(SHAPE)
    yield "zq_so_f32_uint4_zstd", field, [
        ScaleOffset(offset=10, scale=1.5), CastValue(data_type="uint4")], LITTLE, ZSTD, None, 10.0


def le_bytes(a):
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def fill_of(dtype, fill):
    """A case's fill value as zarr-python takes it: a NumPy scalar of the array's type for
    NumPy's types; for the narrow types the value or its JSON string, which zquant.dtypes
    reads in the spec's encoding."""
    if dtype.type.__module__ == "ml_dtypes":
        return fill
    return np.dtype(dtype).type(float(fill))


def save(case_dir, name, fmt, source, arr):
    expected = arr[...]
    (case_dir / "source.bin").write_bytes(le_bytes(source))
    (case_dir / "expected.bin").write_bytes(le_bytes(expected))
    # The narrow types' dtypes are ml_dtypes' of the same name.
    dt = V3_NAMES.get(source.dtype.newbyteorder("<").str) or source.dtype.name
    case = {"name": name, "zarr_format": fmt, "shape": list(SHAPE), "data_type": dt}
    if name.startswith("zq_"):
        case["codecs"] = "zquant"  # read back with zquant's codecs (check.py)
    (case_dir / "case.json").write_text(json.dumps(case))


def main(out):
    out = Path(out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cases = [*v3_cases(), *quantize_astype_cases(), *spec_example_cases(), *nan_code_0_cases(),
             *codec_cases(), *narrow_cases(), *zquant_cases()]
    for name, source, filters, serializer, compressors, shards, fill in cases:
        case_dir = out / name
        case_dir.mkdir()
        chunks, missing = CHUNKS, shards == "missing"
        if missing:
            shards = None
        if isinstance(serializer, tuple):  # ("shard", inner codecs): sharding as the serializer
            serializer = zarr.codecs.ShardingCodec(chunk_shape=CHUNKS, codecs=serializer[1])
            chunks = SHARDS
        arr = zarr.create_array(
            store=str(case_dir / "store"), shape=SHAPE, chunks=chunks, shards=shards,
            dtype=source.dtype, filters=filters, serializer=serializer,
            compressors=compressors, fill_value=fill_of(source.dtype, fill),
            chunk_key_encoding=CHUNK_KEY_ENCODINGS.get(name), zarr_format=3)
        if missing:
            # The chunks below row 16 are never written: they read as the fill value.
            arr[:16, :] = source[:16]
            source = source.copy()
            source[16:] = arr.fill_value
        else:
            arr[...] = source
        if name.endswith("_hexfill"):
            meta_path = case_dir / "store" / "zarr.json"
            meta = json.loads(meta_path.read_text())
            meta["fill_value"] = f"0x{int(np.asarray(arr.fill_value).view('u1')):02x}"
            meta_path.write_text(json.dumps(meta, indent=2))
        save(case_dir, name, 3, source, arr)
    for name, dtype, source, filters, compressor, order in v2_cases():
        case_dir = out / name
        case_dir.mkdir()
        arr = zarr.create_array(
            store=str(case_dir / "store"), shape=SHAPE, chunks=CHUNKS, dtype=dtype,
            filters=filters, compressors=compressor, fill_value=0.0, order=order,
            zarr_format=2)
        arr[...] = source.astype(dtype)
        save(case_dir, name, 2, source, arr)
    print(f"wrote {len(list(out.iterdir()))} stores with zarr {zarr.__version__}, "
          f"numcodecs {numcodecs.__version__}, numpy {np.__version__}")


if __name__ == "__main__":
    with zarr.config.set(PEERS):
        main(sys.argv[1])
