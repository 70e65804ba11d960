"""zquant.choose on NumPy, xarray and dask, and the issue's end-to-end test: an xarray
Dataset backed by dask, written on a LocalCluster of 2 worker processes with zquant
filters chosen by zquant.choose over the same dask arrays, read back within the bound."""

from __future__ import annotations

import numpy as np
import pytest

import zquant
import zquant.choose as choose
from zquant.zarr import BitRound, CastValue, ScaleOffset


def field(shape=(180, 360), seed=0):
    rng = np.random.default_rng(seed)
    y, x = np.meshgrid(np.linspace(0, 6, shape[0]), np.linspace(0, 12, shape[1]), indexing="ij")
    return (280 + 20 * np.sin(y) * np.cos(x) + 0.01 * rng.standard_normal(shape))


def test_dask_counts_equal_whole_array():
    da = pytest.importorskip("dask.array")
    a = field().astype(np.float32)
    a[5, 7] = np.nan
    d = da.from_array(a, chunks=(50, 70))
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(choose.bitinformation(d, axis=axis),
                                      choose.bitinformation(a, axis=axis))
        assert choose.keepbits(d, axis=axis) == choose.keepbits(a, axis=axis)
    info = choose.bitinformation(a)
    assert info.shape == (32,) and info.dtype == np.float64
    assert 1 <= choose.keepbits(a, level=0.99) <= choose.keepbits(a, level=0.9999) <= 23


def test_fit_scale_offset_meets_the_bound():
    a = field()
    a[0, 0] = np.nan
    codecs = choose.fit_scale_offset(a, "uint16", 0.005, nan_sentinel=True)
    assert isinstance(codecs[0], ScaleOffset) and isinstance(codecs[1], CastValue)
    chain = zquant.Chain("float64", codecs, fill_value=np.nan)
    back = chain.decode(chain.encode(a))
    ok = ~np.isnan(a)
    assert np.isnan(back[0, 0])
    assert np.max(np.abs(back[ok] - a[ok])) <= 0.005
    with pytest.raises(zquant.CodecError, match="cannot be met"):
        choose.fit_scale_offset(a, "uint8", 1e-6)


def test_errors():
    with pytest.raises(zquant.CodecError, match="axis"):
        choose.keepbits(field(), axis=5)
    with pytest.raises(zquant.CodecError, match="no pair"):
        choose.keepbits(np.full((4, 4), np.nan))


def test_xarray_dask_local_cluster_round_trip(tmp_path):
    xr = pytest.importorskip("xarray")
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    import zarr

    t = da.from_array(field((240, 360)), chunks=(60, 90))
    q = da.from_array(field((240, 360), seed=1).astype(np.float32) / 280, chunks=(60, 90))
    ds = xr.Dataset({"t": (("y", "x"), t), "q": (("y", "x"), q)})
    store = str(tmp_path / "out.zarr")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        # Chosen over the dask arrays, chunk-parallel on the cluster.
        bound = 0.01
        t_filters = choose.fit_scale_offset(ds.t, "uint16", bound, nan_sentinel=True)
        k = choose.keepbits(ds.q, level=0.99)
        encoding = {
            "t": {"filters": t_filters, "compressors": [zarr.codecs.ZstdCodec(level=3)],
                  "fill_value": np.nan},
            "q": {"filters": [BitRound(keepbits=k)],
                  "compressors": [zarr.codecs.ZstdCodec(level=3)]},
        }
        ds.to_zarr(store, zarr_format=3, encoding=encoding, mode="w")
        back = xr.open_zarr(store, zarr_format=3).compute()
    t_np, q_np = t.compute(), q.compute()
    assert np.max(np.abs(back.t.values - t_np)) <= bound
    # bitround to k mantissa bits: relative error at most 2^-(k+1).
    rel = np.abs(back.q.values - q_np) / np.abs(q_np)
    assert np.max(rel) <= 2.0 ** -(k + 1)
    # The same as zquant alone, value for value.
    want = zquant.Chain("float32", [BitRound(keepbits=k)]).encode(q_np)
    np.testing.assert_array_equal(back.q.values, want)


def test_dask_chunks_are_made_once():
    """The slabs across chunk edges read the chunks' own tasks: no chunk is made (read,
    generated) twice, which for a stored array would read it twice."""
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
        k = choose.keepbits(a)
        whole = a.compute()
    assert k == choose.keepbits(whole)
    assert len(made) == 2 * 12 and len(set(made)) == 12  # once for keepbits, once for whole


def test_dask_uneven_and_empty_chunks_equal_whole_array():
    import dask.array as da

    rng = np.random.default_rng(9)
    x = (250 + np.cumsum(rng.standard_normal((30, 47)), axis=1)).astype(np.float32)
    a = da.from_array(x, chunks=((10, 0, 20), (5, 0, 1, 17, 0, 24)))
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(choose.bitinformation(a, axis=axis),
                                      choose.bitinformation(x, axis=axis))
