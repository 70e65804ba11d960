"""A small climate-like dataset for `zquant quantize` (the CLI test and python/ci.sh):
temperature, precipitation with 60% exact zeros, SST with NaN over land (float64), and an
int8 mask, chunked 2 x 12 x 18, written as a Zarr v3 store.

    python small_dataset.py PATH
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def make() -> Any:
    """The dataset (xarray, in memory)."""
    import xarray as xr

    rng = np.random.default_rng(11)
    shape = (4, 24, 36)
    y = np.linspace(0, 3, shape[1])[None, :, None]
    x = np.linspace(0, 6, shape[2])[None, None, :]
    t2m = 280 + 15 * np.sin(y) * np.cos(x) + 0.3 * rng.standard_normal(shape)
    tp = np.where(rng.random(shape) < 0.6, 0.0, rng.exponential(2.0, shape))
    sst = 290 + 5 * np.cos(y + x) + 0.01 * rng.standard_normal(shape)
    sst[:, :8] = np.nan
    return xr.Dataset(
        {
            "t2m": (("time", "lat", "lon"), t2m.astype(np.float32)),
            "tp": (("time", "lat", "lon"), tp.astype(np.float32)),
            "sst": (("time", "lat", "lon"), sst.astype(np.float64)),
            "land": (("lat", "lon"), (rng.random(shape[1:]) < 0.3).astype(np.int8)),
        },
        coords={
            "time": np.arange(shape[0]),
            "lat": np.linspace(-60, 60, shape[1]),
            "lon": np.linspace(0, 350, shape[2]),
        },
    )


def write(path: str) -> Any:
    """The dataset written to ``path`` (Zarr v3, chunks 2 x 12 x 18); returns it."""
    import warnings

    ds = make()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Cc]onsolidated metadata.*")
        ds.chunk({"time": 2, "lat": 12, "lon": 18}).to_zarr(path, zarr_format=3, mode="w")
    return ds


if __name__ == "__main__":
    write(sys.argv[1])
