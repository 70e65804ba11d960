"""``zquant.zarr.PackBits`` (the ``packbits`` array->bytes codec) against a NumPy bit
reference written from the spec text, at the codec level and in whole zarr arrays."""

from __future__ import annotations

import asyncio
import pickle

import ml_dtypes
import numpy as np
import pytest
import zarr
from zarr.storage import MemoryStore

import zquant
from zquant.zarr import CastValue, PackBits, ScaleOffset

PADDINGS = ("none", "first_byte", "last_byte")


def _bits_of(name: str) -> tuple[int, bool, int]:
    """(N, signed, components) of a data type, as the spec reads them."""
    sizes = {"int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4,
             "float6_e2m3fn": 6, "float6_e3m2fn": 6}
    if name in sizes:
        return sizes[name], name.startswith("int"), 1
    dt = np.dtype(name)
    if dt.kind == "c":
        return dt.itemsize * 4, False, 2
    return dt.itemsize * 8, dt.kind == "i", 1


def reference_encode(codes: np.ndarray, f: int, last: int, padding: str) -> bytes:
    """Each component's bits f..=last, component i at bits [i*b, (i+1)*b), LSB first,
    padded with zeros to whole bytes; the padding count before or after."""
    codes = codes.astype(np.uint64).reshape(-1)
    shifts = np.arange(f, last + 1, dtype=np.uint64)
    bits = ((codes[:, None] >> shifts[None, :]) & np.uint64(1)).astype(np.uint8).reshape(-1)
    pad = (-bits.size) % 8
    data = np.packbits(np.concatenate([bits, np.zeros(pad, np.uint8)]), bitorder="little")
    out = data.tobytes()
    if padding == "first_byte":
        return bytes([pad]) + out
    if padding == "last_byte":
        return out + bytes([pad])
    return out


def reference_decode(data: bytes, m: int, n: int, signed: bool, f: int, last: int) -> np.ndarray:
    """Component codes: the b bits shifted to f, sign-extended to N bits when signed."""
    b = last - f + 1
    bits = np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little")[: m * b]
    bits = bits.reshape(m, b).astype(np.uint64)
    v = (bits << np.arange(f, last + 1, dtype=np.uint64)[None, :]).sum(axis=1, dtype=np.uint64)
    if signed and last + 1 < n:
        top = (v >> np.uint64(last)) & np.uint64(1)
        high = np.uint64(((1 << n) - 1) & ~((1 << (last + 1)) - 1))
        v = v | (top * high)
    return v


def _codes(a: np.ndarray, n: int) -> np.ndarray:
    """The components' N-bit codes of an array (storage words, masked)."""
    word = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
    comp = a.dtype.itemsize // (2 if a.dtype.kind == "c" else 1)
    w = np.ascontiguousarray(a).reshape(-1).view(word[comp]).astype(np.uint64)
    return w & np.uint64((1 << n) - 1 if n < 64 else 2**64 - 1)


def _check(a: np.ndarray, name: str, padding: str, f: int | None, last: int | None) -> None:
    n, signed, per = _bits_of(name)
    fb, lb = (f or 0), (n - 1 if last is None else last)
    codec = PackBits(padding_encoding=padding, first_bit=f, last_bit=last)
    codes = _codes(a, n)
    got = codec.encode_array(a, name)
    want = reference_encode(codes, fb, lb, padding)
    assert got.tobytes() == want, (name, padding, fb, lb, a.size)
    back = codec.decode_array(got.tobytes(), a.shape, name, a.dtype)
    body = want[1:] if padding == "first_byte" else want[:-1] if padding == "last_byte" else want
    expect = reference_decode(body, codes.size, n, signed, fb, lb)
    assert np.array_equal(_codes(back, n), expect), (name, padding, fb, lb)


ML_TYPES = ["int2", "uint2", "int4", "uint4", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"]


@pytest.mark.parametrize("name", ML_TYPES)
def test_every_code_of_ml_dtypes_types_at_every_tail(name):
    n, _, _ = _bits_of(name)
    codes = np.arange(1 << n, dtype=np.uint8)
    every = codes.view(getattr(ml_dtypes, name))
    for padding in PADDINGS:
        _check(every, name, padding, None, None)
        for length in range(0, 20):
            a = np.resize(every, length)
            _check(a, name, padding, None, None)
        for f in range(n):
            for last in range(f, n):
                _check(np.resize(every, 13), name, padding, f, last)


@pytest.mark.parametrize("name", ["uint8", "int8", "uint16", "int16", "int32", "uint64",
                                  "float32", "float64", "complex64", "complex128"])
def test_numpy_types_against_the_reference(name):
    rng = np.random.default_rng(7)
    n, _, _ = _bits_of(name)
    dt = np.dtype(name)
    for length in (0, 1, 7, 8, 9, 63, 200):
        raw = rng.integers(0, 256, size=length * dt.itemsize, dtype=np.uint8)
        a = raw.view(dt)
        for padding in PADDINGS:
            _check(a, name, padding, None, None)
            f = int(rng.integers(0, n))
            last = int(rng.integers(f, n))
            _check(a, name, padding, f, last)
    # A strided input is gathered; the result is the C-order packing.
    b = np.arange(64, dtype=np.uint16).reshape(8, 8)[:, ::2]
    codec = PackBits(last_bit=11)
    assert codec.encode_array(b, "uint16").tobytes() == reference_encode(
        np.ascontiguousarray(b).reshape(-1), 0, 11, "none")


def test_int16_sign_extension():
    codec = PackBits(last_bit=11)
    a = np.array([-1, -2048, 2047, -3], dtype=np.int16)
    packed = codec.encode_array(a, "int16")
    assert packed.tobytes() == bytes([0xFF, 0x0F, 0x80, 0xFF, 0xD7, 0xFF])
    assert np.array_equal(codec.decode_array(packed, (4,), "int16"), a)


def test_configuration_and_pickling():
    codec = PackBits(padding_encoding="last_byte", last_bit=11)
    d = codec.to_dict()
    assert d == {"name": "packbits",
                 "configuration": {"padding_encoding": "last_byte", "last_bit": 11}}
    assert PackBits.from_dict(d) == codec
    codec.encode_array(np.zeros(3, np.uint16), "uint16")  # fills the per-process cache
    again = pickle.loads(pickle.dumps(codec))
    assert again == codec and "_zq" not in again.__dict__
    with pytest.raises(zquant.CodecError, match="start_bit"):
        PackBits.from_dict({"name": "packbits", "configuration": {"start_bit": 1}})
    with pytest.raises(zquant.CodecError, match="less than first_bit"):
        PackBits(first_bit=3, last_bit=2)
    with pytest.raises(zquant.CodecError, match="padding_encoding"):
        PackBits(padding_encoding="start_byte")  # type: ignore[arg-type]
    # The configuration is checked by the Rust core's one parser, at construction.
    with pytest.raises(zquant.CodecError, match="first_bit.*non-negative integer"):
        PackBits(first_bit=True)  # type: ignore[arg-type]
    with pytest.raises(zquant.CodecError, match="last_bit.*non-negative integer"):
        PackBits(last_bit=-1)
    with pytest.raises(zquant.CodecError, match="last_bit.*at most 63"):
        PackBits(last_bit=64)
    with pytest.raises(zquant.CodecError, match="first_bit.*not JSON"):
        PackBits(first_bit=object())  # type: ignore[arg-type]
    with pytest.raises(zquant.CodecError, match="beyond the 8 bits of uint8"):
        PackBits(last_bit=8).encode_array(np.zeros(2, np.uint8), "uint8")
    with pytest.raises(zquant.CodecError, match="expected 3 bytes"):
        PackBits().decode_array(b"\x00\x00", (5,), "uint4")
    with pytest.raises(zquant.CodecError, match="padding"):
        PackBits(padding_encoding="first_byte").decode_array(b"\x00\x00\x00\x00", (5,), "uint4")


def _array(dtype, serializer, shape=(37, 11), chunks=(8, 4), filters=(), fill=0, compressors=None):
    return zarr.create_array(store=MemoryStore(), shape=shape, chunks=chunks, dtype=dtype,
                             serializer=serializer, filters=list(filters), fill_value=fill,
                             compressors=compressors)


def _stored(arr):
    """The stored chunk bytes of an array in a MemoryStore, by key."""
    store = arr.store
    return {k: v.to_bytes() for k, v in store._store_dict.items() if "/c/" in "/" + k}


def test_whole_uint16_array_with_last_bit_11():
    codec = PackBits(last_bit=11)
    rng = np.random.default_rng(1)
    values = rng.integers(0, 1 << 16, size=(37, 11), dtype=np.uint16)
    arr = _array("uint16", codec)
    arr[:] = values
    assert np.array_equal(arr[:], values & 0x0FFF)
    # Every stored chunk is the reference packing of its (fill-padded) chunk.
    for key, data in _stored(arr).items():
        i, j = (int(x) for x in key.split("/")[-2:])
        chunk = np.zeros((8, 4), np.uint16)
        part = values[i * 8:(i + 1) * 8, j * 4:(j + 1) * 4]
        chunk[: part.shape[0], : part.shape[1]] = part
        assert data == reference_encode(chunk.reshape(-1), 0, 11, "none"), key
    meta = arr.metadata.to_dict()
    assert meta["codecs"][0] == codec.to_dict()


def test_whole_uint8_and_int16_arrays_with_bit_ranges():
    values = np.arange(200, dtype=np.uint8).reshape(20, 10)
    arr = _array("uint8", PackBits(first_bit=2, last_bit=5, padding_encoding="first_byte"),
                 shape=(20, 10), chunks=(7, 3))
    arr[:] = values
    assert np.array_equal(arr[:], values & 0b0011_1100)
    signed = np.arange(-100, 100, dtype=np.int16).reshape(20, 10)
    arr = _array("int16", PackBits(last_bit=7), shape=(20, 10), chunks=(7, 3))
    arr[:] = signed
    assert np.array_equal(arr[:], signed)


def test_sync_path_and_encoded_size():
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.buffer.cpu import NDBuffer
    from zarr.core.dtype import parse_data_type

    spec = ArraySpec(shape=(5,), dtype=parse_data_type("uint16", zarr_format=3),
                     fill_value=np.uint16(0), config=ArrayConfig.from_dict({}),
                     prototype=default_buffer_prototype())
    codec = PackBits(padding_encoding="last_byte", last_bit=11)
    a = np.array([1, 2, 3, 4095, 7], dtype=np.uint16)
    buf = codec._encode_sync(NDBuffer.from_numpy_array(a), spec)
    assert buf is not None and buf.to_bytes() == reference_encode(a, 0, 11, "last_byte")
    assert codec.compute_encoded_size(10, spec) == len(buf.to_bytes()) == 9
    back = codec._decode_sync(buf, spec).as_numpy_array()
    assert np.array_equal(back, a)
    back = asyncio.run(codec._decode_single(buf, spec)).as_numpy_array()
    assert np.array_equal(back, a)


def test_quantize_to_12_bit_codes_end_to_end():
    field = np.linspace(-20.0, 20.0, 37 * 11).reshape(37, 11)
    filters = [ScaleOffset(offset=-20, scale=100),
               CastValue(data_type="uint16", out_of_range="clamp")]
    arr = _array("float64", PackBits(last_bit=11), filters=filters, fill=-20.0,
                 compressors=[zarr.codecs.ZstdCodec(level=1)])
    arr[:] = field
    back = arr[:]
    assert np.max(np.abs(back - field)) <= 0.005 + 1e-12
    unpacked = _array("float64", "auto", filters=filters, fill=-20.0)
    unpacked[:] = field
    assert np.array_equal(unpacked[:], back)


@pytest.mark.parametrize("name", ML_TYPES)
def test_whole_sub_byte_arrays(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    try:
        from zarr.core.dtype import parse_data_type
        parse_data_type(dtype, zarr_format=3)
    except Exception as e:  # noqa: BLE001 - zarr raises several types for unknown dtypes
        pytest.skip(f"zarr-python has no {name} data type ({e}); zquant's data types add it")
    n, _, _ = _bits_of(name)
    values = np.resize(np.arange(1 << n, dtype=np.uint8), 37 * 11).reshape(37, 11).view(dtype)
    arr = _array(dtype, PackBits(padding_encoding="last_byte"))
    arr[:] = values
    assert np.array_equal(arr[:].view(np.uint8) & ((1 << n) - 1), values.view(np.uint8))
