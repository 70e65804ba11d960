"""zquant.numcodecs against numcodecs 0.17.1: the same bytes, through use() too."""

from __future__ import annotations

import pickle

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
