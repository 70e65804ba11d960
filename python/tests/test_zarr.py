"""zquant.zarr's codecs inside zarr-python 3.4.2, bit for bit against zarr-python's built-in
scale_offset and cast_value (with cast-value-rs), and zquant.use()."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import zarr
import zarr.codecs
from zarr.codecs.cast_value import CastValue as ZarrCastValue
from zarr.codecs.scale_offset import ScaleOffset as ZarrScaleOffset

import zquant
from zquant.zarr import BitRound, CastValue, ScaleOffset


def data(shape=(256, 200), seed=0):
    rng = np.random.default_rng(seed)
    a = 270 + 60 * rng.random(shape)
    a[rng.random(shape) < 0.01] = np.nan
    return a


NAN0 = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}


def write(filters, a, fill=np.nan, dtype="float64"):
    store = zarr.storage.MemoryStore()
    z = zarr.create_array(store, shape=a.shape, chunks=(64, 50), dtype=dtype, filters=filters,
                          compressors=None, fill_value=fill)
    z[...] = a
    return store, z


def raw_chunks(store):
    import asyncio

    async def collect():
        out = {}
        async for k in store.list():
            if k.startswith("c/"):
                out[k] = (await store.get(k, zarr.core.buffer.default_buffer_prototype())).to_bytes()
        return out

    return asyncio.run(collect())


@pytest.mark.parametrize(
    "config",
    [
        ({"offset": 270, "scale": 200}, {"data_type": "uint16", "scalar_map": NAN0}),
        ({"offset": 300.5, "scale": 0.5}, {"data_type": "int8", "out_of_range": "clamp",
                                           "scalar_map": NAN0}),
        ({"offset": 0, "scale": 1}, {"data_type": "float32", "rounding": "towards-zero"}),
        ({"offset": 0.1, "scale": 3}, {"data_type": "float16",
                                          "rounding": "nearest-away"}),
    ],
)
def test_stores_are_byte_identical_to_zarr_builtins(config):
    so, cv = config
    a = data()
    theirs, _ = write([ZarrScaleOffset(**so), ZarrCastValue(**cv)], a)
    ours, _ = write([ScaleOffset(**so), CastValue(**cv)], a)
    if cv["data_type"] == "float16":
        # cast-value-rs 0.5.1 rounds float64 -> float16 twice (through float32): a value
        # just off a float16 midpoint can go the wrong way. Every difference must be one
        # where zquant's code is strictly nearer the value (the correctly rounded one).
        x = (a - np.float64(so["offset"])) * np.float64(so["scale"])
        mine = zquant.encode(x, [CastValue(**cv)])
        import cast_value_rs

        ref = cast_value_rs.cast_array(x, target_dtype=np.dtype("f2"),
                                       rounding_mode=cv["rounding"], out_of_range_mode=None,
                                       scalar_map_entries=None)
        d = (mine != ref) & ~(np.isnan(mine) & np.isnan(ref))
        assert np.all(np.abs(mine[d].astype(np.float64) - x[d])
                      < np.abs(ref[d].astype(np.float64) - x[d]))
        return
    assert raw_chunks(ours) == raw_chunks(theirs)
    # zarr.json written the same (the codec objects' JSON).
    mine = zarr.open_array(ours).metadata.to_dict()
    assert mine["codecs"][:2] == zarr.open_array(theirs).metadata.to_dict()["codecs"][:2]
    # Each reads the other's store.
    a_theirs = zarr.open_array(theirs)[...]
    zquant.use()
    try:
        z = zarr.open_array(theirs)
        assert isinstance(z.metadata.codecs[0], ScaleOffset)
        np.testing.assert_array_equal(z[...], a_theirs)
    finally:
        zquant.unuse()
    np.testing.assert_array_equal(zarr.open_array(ours)[...], a_theirs)


def test_integer_scale_offset_and_uint64_match_builtins():
    a = np.arange(10_000, dtype=np.uint64).reshape(100, 100) * 3 + 2**40
    theirs, _ = write([ZarrScaleOffset(offset=2**40, scale=2)], a, fill=2**40, dtype="uint64")
    ours, _ = write([ScaleOffset(offset=2**40, scale=2)], a, fill=2**40, dtype="uint64")
    assert raw_chunks(ours) == raw_chunks(theirs)


def test_codec_step_equals_builtin_step_on_one_chunk():
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.buffer.cpu import NDBuffer
    from zarr.core.dtype import Float64

    a = data((512, 512))
    spec = ArraySpec(shape=a.shape, dtype=Float64(), fill_value=np.float64("nan"),
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())
    buf = NDBuffer.from_numpy_array(a)
    for ours, theirs in [
        (ScaleOffset(offset=270, scale=200), ZarrScaleOffset(offset=270, scale=200)),
        (CastValue(data_type="int32", scalar_map=NAN0, out_of_range="clamp"),
         ZarrCastValue(data_type="int32", scalar_map=NAN0, out_of_range="clamp")),
    ]:
        x = ours._encode_sync(buf, spec).as_numpy_array()
        y = theirs._encode_sync(buf, spec).as_numpy_array()
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x.view(np.uint8), y.view(np.uint8))
        assert ours.resolve_metadata(spec).dtype == theirs.resolve_metadata(spec).dtype
        fo, ft = ours.resolve_metadata(spec).fill_value, theirs.resolve_metadata(spec).fill_value
        assert np.array_equal(np.asarray(fo), np.asarray(ft), equal_nan=True)
        enc_spec = ours.resolve_metadata(spec)
        xb = ours._decode_sync(NDBuffer.from_numpy_array(x), spec).as_numpy_array()
        yb = theirs._decode_sync(NDBuffer.from_numpy_array(y), spec).as_numpy_array()
        np.testing.assert_array_equal(xb, yb)
        del enc_spec


def test_bitround_v3_name_against_numcodecs():
    import numcodecs

    a = data().astype(np.float32)
    _, z = write([BitRound(keepbits=7)], a, dtype="float32")
    want = numcodecs.BitRound(keepbits=7).decode(numcodecs.BitRound(keepbits=7).encode(a))
    np.testing.assert_array_equal(z[...], want.reshape(a.shape))


def test_to_dict_from_dict_and_pickle():
    for c in [ScaleOffset(offset=1.5, scale="0.1"), ScaleOffset(),
              CastValue(data_type="uint8", rounding="towards-zero", out_of_range="wrap",
                        scalar_map={"encode": {"NaN": 0}}),
              BitRound(keepbits=3)]:
        d = c.to_dict()
        assert type(c).from_dict(d) == c
        assert pickle.loads(pickle.dumps(c)) == c
        assert hash(pickle.loads(pickle.dumps(c))) == hash(c)
    assert ScaleOffset().to_dict() == ZarrScaleOffset().to_dict()
    assert (CastValue(data_type="int16", scalar_map=NAN0).to_dict()
            == ZarrCastValue(data_type="int16", scalar_map=NAN0).to_dict()
            or True)  # zarr writes tuples: the same JSON once dumped
    import json
    assert json.dumps(CastValue(data_type="int16", scalar_map=NAN0).to_dict()) == json.dumps(
        ZarrCastValue(data_type="int16", scalar_map=NAN0).to_dict())


def test_entry_points_and_use():
    from zarr.registry import get_codec_class

    zquant.use()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert get_codec_class("scale_offset") is ScaleOffset
            assert get_codec_class("cast_value") is CastValue
            assert get_codec_class("bitround") is BitRound
        import numcodecs

        import zquant.numcodecs as zn
        assert type(numcodecs.get_codec({"id": "fixedscaleoffset", "offset": 0, "scale": 1,
                                         "dtype": "<f8"})) is zn.FixedScaleOffset
        assert type(numcodecs.get_codec({"id": "bitround", "keepbits": 3})) is zn.BitRound
        import os
        assert os.environ["ZARR_CODECS__BITROUND"] == "zquant.zarr.BitRound"
        # Registered by use() only: an environment setting would fail in a fresh process.
        assert "ZARR_CODECS__SCALE_OFFSET" not in os.environ
    finally:
        zquant.unuse()
    import os

    import numcodecs
    assert "ZARR_CODECS__BITROUND" not in os.environ
    assert type(numcodecs.get_codec({"id": "bitround", "keepbits": 3})) is numcodecs.BitRound
    assert zarr.config.get("codecs.scale_offset", None) is None
    # unuse() takes zquant's classes out of zarr's registry: zarr's own is the only one.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert get_codec_class("scale_offset") is ZarrScaleOffset


def test_errors_are_codec_errors():
    a = data()
    with pytest.raises(zquant.CodecError, match="out of range"):
        write([ScaleOffset(offset=270, scale=200), CastValue(data_type="uint8",
                                                             scalar_map=NAN0)], a)


def _spec(shape, fill=np.float64("nan")):
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.dtype import Float64

    return ArraySpec(shape=shape, dtype=Float64(), fill_value=fill,
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())


@pytest.mark.parametrize("mix", ["zquant+zarr", "zarr+zquant", "three zquant", "with transpose"])
def test_fused_runs_equal_the_codecs_one_by_one(mix):
    """Consecutive zquant codecs run as one chain (each returns a deferred buffer the next
    extends); next to zarr's own codecs, the deferred buffer is read like any other."""
    so, cv = {"offset": 270, "scale": 200}, {"data_type": "uint16", "scalar_map": NAN0}
    a = data((300, 130))
    theirs, _ = write([ZarrScaleOffset(**so), ZarrCastValue(**cv)], a)
    filters = {
        "zquant+zarr": [ScaleOffset(**so), ZarrCastValue(**cv)],
        "zarr+zquant": [ZarrScaleOffset(**so), CastValue(**cv)],
        # bitround with every float64 mantissa bit kept is the identity: the same bytes.
        "three zquant": [ScaleOffset(**so), BitRound(keepbits=52), CastValue(**cv)],
        "with transpose": [ScaleOffset(**so), zarr.codecs.TransposeCodec(order=(1, 0)),
                           CastValue(**cv)],
    }[mix]
    ours, z = write(filters, a)
    if mix == "with transpose":
        ref, _ = write([ZarrScaleOffset(**so), zarr.codecs.TransposeCodec(order=(1, 0)),
                        ZarrCastValue(**cv)], a)
        assert raw_chunks(ours) == raw_chunks(ref)
    else:
        assert raw_chunks(ours) == raw_chunks(theirs)
    np.testing.assert_array_equal(z[...], zarr.open_array(theirs)[...])


def test_deferred_buffer_is_an_ndbuffer_and_errors_surface_on_read():
    from zarr.core.buffer.cpu import NDBuffer

    spec = _spec((4, 5))
    so = ScaleOffset(offset=270, scale=200)
    cv = CastValue(data_type="uint8", scalar_map=NAN0)
    a = data((4, 5))
    out = cv._encode_sync(so._encode_sync(NDBuffer.from_numpy_array(a), spec),
                          so.resolve_metadata(spec))
    assert isinstance(out, NDBuffer)
    with pytest.raises(zquant.CodecError, match="out of range"):
        out.as_numpy_array()
    ok = so._encode_sync(NDBuffer.from_numpy_array(a), spec)
    assert ok.shape == (4, 5) and ok.dtype == np.float64
    np.testing.assert_array_equal(ok[1:3].as_numpy_array(), ((a - 270) * 200)[1:3])


def test_bitround_decode_returns_the_chunk_and_zarr_copies_before_writing():
    from zarr.core.buffer.cpu import NDBuffer

    buf = NDBuffer.from_numpy_array(data((8, 8)))
    assert BitRound(keepbits=5)._decode_sync(buf, _spec((8, 8))) is buf
    # A partial write reads, merges and rewrites a chunk: the stored chunk is untouched
    # until then, and the result equals numcodecs' bitround.
    a = data((64, 64))
    store, z = write([BitRound(keepbits=5)], a)
    z[3:7, 3:7] = 1.0
    ref = a.copy()
    ref[3:7, 3:7] = 1.0
    import numcodecs
    want = numcodecs.BitRound(5).decode(numcodecs.BitRound(5).encode(ref))
    np.testing.assert_array_equal(z[...], want.reshape(ref.shape))


def test_pickle_leaves_the_bound_chains_out():
    so = ScaleOffset(offset=270, scale=200)
    write([so, CastValue(data_type="uint16", scalar_map=NAN0)], data())
    assert "_zq" in so.__dict__
    back = pickle.loads(pickle.dumps(so))
    assert back == so and not any(k.startswith("_zq") for k in back.__dict__)
    _, z = write([back, CastValue(data_type="uint16", scalar_map=NAN0)], data())
    assert z[...].shape == data().shape


def test_sharded_with_a_nan_code_0_writes_as_builtins():
    """zarr's sharding codec validates its inner codecs with the data type's default fill
    (0.0 here, which decodes as NaN): that representation must not fail the array."""
    so, cv = {"offset": 249.75, "scale": 4}, {"data_type": "uint8", "out_of_range": "clamp",
                                              "scalar_map": NAN0}
    a = 250 + 60 * np.random.default_rng(3).random((64, 64))
    outs = []
    for f in ([ScaleOffset(**so), CastValue(**cv)], [ZarrScaleOffset(**so), ZarrCastValue(**cv)]):
        store = zarr.storage.MemoryStore()
        z = zarr.create_array(store, shape=a.shape, chunks=(16, 16), shards=(32, 32),
                              dtype="float64", filters=f, compressors=None, fill_value=np.nan)
        z[...] = a
        outs.append((raw_chunks(store), z[...]))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


def test_zarrs_sync_fused_codec_pipeline_writes_the_same_bytes():
    """zarr 3.4's opt-in synchronous FusedCodecPipeline (a thread pool over chunks) calls
    the sync methods: the same stores."""
    so, cv = {"offset": 270, "scale": 200}, {"data_type": "uint16", "scalar_map": NAN0}
    a = data((300, 130))
    theirs, _ = write([ZarrScaleOffset(**so), ZarrCastValue(**cv)], a)
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.FusedCodecPipeline"}):
        ours, z = write([ScaleOffset(**so), CastValue(**cv)], a)
        assert type(z._async_array.codec_pipeline).__name__ == "FusedCodecPipeline"
        back = z[...]
    assert raw_chunks(ours) == raw_chunks(theirs)
    np.testing.assert_array_equal(back, zarr.open_array(theirs)[...])
