"""zquant.numcodecs against numcodecs 0.17.1: the same bytes, through use() too."""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path

import numcodecs
import numpy as np
import pytest

import zquant
import zquant.numcodecs as zn


def data(n=10_000, seed=0):
    rng = np.random.default_rng(seed)
    return 1000 + rng.random(n)


@pytest.mark.parametrize(
    "offset,scale,dtype,astype",
    [(1000, 10, "<f8", "|u1"), (1000, 10**3, "<f8", "<u2"), (1000.5, 100, "<f8", "<i2"),
     (1000, 0.5, "<f4", "<u2"), (0, 1, "<f8", "<f4"), (1000, 10, "<f8", "<i4")],
)
def test_fixedscaleoffset_bytes_equal_numcodecs(offset, scale, dtype, astype):
    a = data().astype(dtype).reshape(100, 100)
    ref = numcodecs.FixedScaleOffset(offset=offset, scale=scale, dtype=dtype, astype=astype)
    ours = zn.FixedScaleOffset(offset=offset, scale=scale, dtype=dtype, astype=astype)
    for x in (a, np.asfortranarray(a)):
        e_ref, e_ours = ref.encode(x), ours.encode(x)
        assert e_ours.dtype == e_ref.dtype and e_ours.shape == e_ref.shape
        assert e_ours.tobytes() == e_ref.tobytes()
        assert ours.decode(e_ours).tobytes() == ref.decode(e_ref).tobytes()
    assert ours.get_config() == ref.get_config()
    back = pickle.loads(pickle.dumps(ours))
    assert back.encode(a).tobytes() == ref.encode(a).tobytes()


@pytest.mark.parametrize("dtype,keepbits", [("f2", 3), ("f4", 7), ("f4", 1), ("f8", 20),
                                             ("f4", 23)])
def test_bitround_bytes_equal_numcodecs(dtype, keepbits):
    a = (data() - 1000).astype(dtype) * 77
    ref, ours = numcodecs.BitRound(keepbits=keepbits), zn.BitRound(keepbits=keepbits)
    e_ref, e_ours = ref.encode(a), ours.encode(a)
    assert e_ours.dtype == e_ref.dtype
    assert e_ours.tobytes() == e_ref.tobytes()
    assert ours.decode(e_ours).tobytes() == ref.decode(e_ref).tobytes()
    with pytest.raises(ValueError):
        zn.BitRound(keepbits=99).encode(a)


def test_v2_filters_and_v3_wrappers_run_on_zquant_after_use():
    import zarr

    a = data(200 * 100).reshape(200, 100)
    filters = [numcodecs.FixedScaleOffset(offset=1000, scale=100, dtype="<f8", astype="<u2")]
    stores = []
    for use in (False, True):
        if use:
            zquant.use()
        try:
            store = zarr.storage.MemoryStore()
            z = zarr.create_array(store, shape=a.shape, chunks=(50, 40), dtype="f8",
                                  filters=filters, compressors=None, zarr_format=2)
            z[...] = a
            if use:
                # The array's filter resolves to zquant's class now.
                assert type(zarr.open_array(store).metadata.filters[0]) is zn.FixedScaleOffset
            stores.append((store, zarr.open_array(store)[...]))
        finally:
            if use:
                zquant.unuse()
    np.testing.assert_array_equal(stores[0][1], stores[1][1])
    # numcodecs' round trips through use() are byte-identical.
    import asyncio

    async def chunks(store):
        from zarr.core.buffer import default_buffer_prototype
        return {k: (await store.get(k, default_buffer_prototype())).to_bytes()
                async for k in store.list() if not k.startswith(".z")}

    assert asyncio.run(chunks(stores[0][0])) == asyncio.run(chunks(stores[1][0]))


def test_keepbits_zero_as_numcodecs():
    """numcodecs' BitRound takes keepbits=0 (each value rounds to a power of two, ties to
    even), and so does zquant's under numcodecs' names (`keepbits-zero` in
    docs/spec-readings.md); the v3 name `bitround` refuses it at construction."""
    import numcodecs.bitround

    for dt in (np.float16, np.float32, np.float64):
        a = np.array([0, 1, 1.4, 1.5, 1.6, 3, -3, 6, 1e-3, -0.0, np.inf], dt)
        want = numcodecs.bitround.BitRound(keepbits=0).encode(a.copy())
        got = zn.BitRound(keepbits=0).encode(a.copy())
        np.testing.assert_array_equal(got, want)
    with pytest.raises(zquant.CodecError, match="numcodecs.bitround"):
        zquant.zarr.BitRound(keepbits=0)
    zquant.Chain("float32", [{"name": "numcodecs.bitround", "configuration": {"keepbits": 0}}])


def test_errors():
    with pytest.raises(zquant.CodecError):
        zn.FixedScaleOffset(offset="x", scale=1, dtype="<f8")
    with pytest.raises(TypeError):
        zn.BitRound(keepbits=3).encode(np.arange(5))


# --- Quantize and AsType ---------------------------------------------------------------

_VECTORS = (Path(__file__).resolve().parents[2] / "tests" / "data"
            / "numcodecs_quantize_astype" / "vectors.json")


def _le(hexstr, dtype):
    return np.frombuffer(bytes.fromhex(hexstr), np.dtype(dtype).newbyteorder("<"))


@pytest.mark.skipif(not _VECTORS.exists(), reason="run from the repository")
def test_quantize_astype_vectors():
    """Every case of the Rust suite's vectors (numcodecs' scalar loops), through the Python
    classes built from numcodecs' get_config."""
    vectors = json.loads(_VECTORS.read_text())
    classes = {"quantize": zn.Quantize, "astype": zn.AsType}
    cases = vectors["cases"] + vectors["complex"] + vectors["bool"]
    assert len(cases) == 414 + 50 + 26
    for case in cases:
        config = dict(case["get_config"])
        codec = classes[config.pop("id")](**config)
        assert codec.get_config() == case["get_config"]
        src = codec.dtype if case["codec"] == "quantize" else codec.decode_dtype
        enc_dt = codec.astype if case["codec"] == "quantize" else codec.encode_dtype
        e = case["encode"]
        with warnings.catch_warnings():
            # numcodecs (NumPy) and zquant both warn when the imaginary part is dropped.
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            # NumPy's own casts (bool) warn of NaN and overflow; numcodecs' too.
            warnings.simplefilter("ignore", RuntimeWarning)
            got = codec.encode(_le(e["input"], src).astype(src))
        assert got.dtype == np.dtype(e["output_dtype"])
        assert got.astype(got.dtype.newbyteorder("<")).tobytes().hex() == e["output"], config
        if "decode" in case:
            d = case["decode"]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                got = codec.decode(_le(d["input"], enc_dt).astype(enc_dt))
            assert got.astype(got.dtype.newbyteorder("<")).tobytes().hex() == d["output"], config


@pytest.mark.parametrize("dtype", ["<f2", "<f4", "<f8", ">f8"])
@pytest.mark.parametrize("astype", [None, "<f2", "<f4", "<f8"])
@pytest.mark.parametrize("digits", [-1, 0, 2, 7, 15])
def test_quantize_bytes_equal_numcodecs(dtype, astype, digits):
    a = ((data() - 1000.5) * 300).astype(dtype).reshape(100, 100)
    a.flat[:5] = [np.nan, -0.0, np.inf, -np.inf, 1e-30]
    ref = numcodecs.Quantize(digits=digits, dtype=dtype, astype=astype)
    ours = zn.Quantize(digits=digits, dtype=dtype, astype=astype)
    with np.errstate(all="ignore"):
        for x in (a, np.asfortranarray(a)):
            e_ref, e_ours = ref.encode(x), ours.encode(x)
            assert e_ours.dtype == e_ref.dtype and e_ours.shape == e_ref.shape
            assert e_ours.tobytes() == e_ref.tobytes()
            assert ours.decode(e_ours).tobytes() == ref.decode(e_ref).tobytes()
    assert ours.get_config() == ref.get_config() and repr(ours) == repr(ref)
    back = pickle.loads(pickle.dumps(ours))
    with np.errstate(all="ignore"):
        assert back.encode(a).tobytes() == ref.encode(a).tobytes()


_NUMERIC = ["|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8"]


@pytest.mark.parametrize("decode_dtype", _NUMERIC)
@pytest.mark.parametrize("encode_dtype", _NUMERIC)
def test_astype_bytes_equal_numcodecs(encode_dtype, decode_dtype):
    # In range of both types (NaN and out-of-range casts: the vectors test).
    a = (data(1000) - 1000) * 100
    if np.dtype(decode_dtype).kind == "u" or np.dtype(encode_dtype).kind == "u":
        a = np.abs(a)
    a = a.astype(decode_dtype)
    ref = numcodecs.AsType(encode_dtype=encode_dtype, decode_dtype=decode_dtype)
    ours = zn.AsType(encode_dtype=encode_dtype, decode_dtype=decode_dtype)
    with np.errstate(all="ignore"):
        e_ref, e_ours = ref.encode(a), ours.encode(a)
        assert e_ours.dtype == e_ref.dtype and e_ours.tobytes() == e_ref.tobytes()
        assert ours.decode(e_ours).tobytes() == ref.decode(e_ref).tobytes()
    assert ours.get_config() == ref.get_config() and repr(ours) == repr(ref)


def test_astype_other_types_are_numpy_casts():
    ours = zn.AsType(encode_dtype="|b1", decode_dtype="<c16")
    a = np.array([0, 1 + 1j, 2j])
    assert ours.encode(a).tobytes() == a.astype("|b1").tobytes()


def test_astype_complex_runs_in_zquant_and_warns_like_numcodecs():
    ours = zn.AsType(encode_dtype="<f4", decode_dtype="<c16")
    ref = numcodecs.AsType(encode_dtype="<f4", decode_dtype="<c16")
    assert ours._chain is not None
    a = np.array([1.5 + 2j, np.nan - 1j, -0.0 + 0j, 1e300 + 1e300j])
    with pytest.warns(np.exceptions.ComplexWarning):
        got = ours.encode(a)
    with pytest.warns(np.exceptions.ComplexWarning), np.errstate(over="ignore"):
        want = ref.encode(a)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    assert ours.decode(got).tobytes() == ref.decode(want).tobytes()


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_quantize_astype_through_use_are_byte_identical(zarr_format):
    import asyncio

    import zarr
    from zarr.core.buffer import default_buffer_prototype

    a = ((data(120 * 50) - 1000) * 50).reshape(120, 50)
    a[0, :3] = [np.nan, -0.0, np.inf]
    filters = [numcodecs.Quantize(digits=2, dtype="<f8"),
               numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")]
    if zarr_format == 3:
        import zarr.codecs.numcodecs as zcn
        filters = [zcn.Quantize(digits=2, dtype="<f8"),
                   zcn.AsType(encode_dtype="<f4", decode_dtype="<f8")]

    async def chunks(store):
        return {k: (await store.get(k, default_buffer_prototype())).to_bytes()
                async for k in store.list() if "zarr" not in k and not k.startswith(".z")}

    results = []
    for use in (False, True):
        if use:
            zquant.use()
        try:
            store = zarr.storage.MemoryStore()
            z = zarr.create_array(store, shape=a.shape, chunks=(50, 20), dtype="f8",
                                  filters=filters, compressors=None, fill_value=np.nan,
                                  zarr_format=zarr_format)
            z[...] = a
            back = zarr.open_array(store)[...]
            if use and zarr_format == 2:
                assert type(zarr.open_array(store).metadata.filters[0]) is zn.Quantize
            results.append((asyncio.run(chunks(store)), back))
        finally:
            if use:
                zquant.unuse()
    assert results[0][0] == results[1][0]
    assert results[0][1].tobytes() == results[1][1].tobytes()


def test_quantize_errors():
    with pytest.raises(ValueError, match="floating point"):
        zn.Quantize(digits=2, dtype="<i4")
    with pytest.raises(zquant.CodecError, match="digits"):
        zn.Quantize(digits=400, dtype="<f8")
    with pytest.raises(zquant.CodecError, match="digits"):
        zn.Quantize(digits=2.5, dtype="<f8")


@pytest.mark.parametrize("astype", ["<f2", "<f4", "<f8"])
def test_quantize_every_float16_equals_numcodecs(astype):
    """Every float16 bit pattern (NaNs with payloads, subnormals, infinities), every digits
    -1..=15: numcodecs' vector loops and zquant agree bit for bit."""
    a = np.arange(1 << 16, dtype=np.uint16).view("<f2")
    for digits in range(-1, 16):
        ref = numcodecs.Quantize(digits=digits, dtype="<f2", astype=astype)
        ours = zn.Quantize(digits=digits, dtype="<f2", astype=astype)
        with np.errstate(all="ignore"):
            e_ref, e_ours = ref.encode(a), ours.encode(a)
            assert e_ours.tobytes() == e_ref.tobytes(), digits
            assert ours.decode(e_ours).tobytes() == ref.decode(e_ref).tobytes(), digits


@pytest.mark.parametrize("source", ["<f2", "|i1", "|u1", "<i2", "<u2"])
def test_astype_every_16_bit_pattern_equals_numcodecs(source):
    """Every value of the types of at most 16 bits into each of the eleven types."""
    n = 1 << (8 * np.dtype(source).itemsize)
    a = np.arange(n, dtype=f"<u{np.dtype(source).itemsize}").view(source)
    for target in _NUMERIC:
        ref = numcodecs.AsType(encode_dtype=target, decode_dtype=source)
        ours = zn.AsType(encode_dtype=target, decode_dtype=source)
        with np.errstate(all="ignore"):
            assert ours.encode(a).tobytes() == ref.encode(a).tobytes(), target
