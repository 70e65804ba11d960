"""Choose codec parameters from the data: keepbits for ``bitround`` by the data's real
information (Klöwer et al. 2021, as BitInformation.jl and xbitinfo compute it), and
``scale``/``offset`` for ``scale_offset`` + ``cast_value`` by an absolute-error bound.

``a`` may be a NumPy array, an ``xarray.DataArray`` (its data is used) or a dask array. A
dask array is computed chunk by chunk, never whole in one process: bit information is a
function of per-chunk pair counts summed together (zquant's mergeable ``BitCounts``), and
the pairs across chunk edges along the axis are counted from the two-slice slabs at each
edge, so the result equals the whole array's exactly. The finite range is the min and max
of per-chunk ranges.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from . import _dtypes, _zquant

__all__ = ["bitinformation", "fit_scale_offset", "keepbits"]


def _data(a: Any) -> Any:
    """The array behind an xarray object, else ``a``. An xarray ``Dataset`` holds several
    arrays: the caller picks one."""
    data_vars = getattr(a, "data_vars", None)
    if data_vars is not None and hasattr(a, "dims"):
        names = list(data_vars)
        example = f"ds[{names[0]!r}]" if names else 'ds["name"]'
        raise _zquant.CodecError(
            f"expected an array or an xarray DataArray, got a Dataset (variables {names}): "
            f"pass a variable, for example {example}"
        )
    data = getattr(a, "data", None)
    if data is not None and hasattr(a, "dims") and hasattr(a, "coords"):
        return data
    return a


def _is_dask(a: Any) -> bool:
    return type(a).__module__.startswith("dask.") and hasattr(a, "map_blocks")


def _resolve_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise _zquant.CodecError(
            f"bit information: axis {axis} is out of range for an array of {ndim} dimensions"
        )
    return axis % ndim


def _chunk_counts(block: np.ndarray[Any, Any], name: str, axis: int) -> np.ndarray[Any, Any]:
    """One chunk's counts: ``[pairs, a[64], b[64], both[64]]`` as 193 uint64 values, with
    the chunk's dimensions kept (for dask's block layout)."""
    c = _dtypes.contiguous(_dtypes.native(np.asarray(block)))
    words = _dtypes.words_of(c, _dtypes.word_dtype(name))
    pairs, counts = _zquant.bit_counts(name, words, list(c.shape), axis)
    out = np.empty(193, dtype=np.uint64)
    out[0] = pairs
    out[1:] = counts.reshape(-1)
    return out.reshape((1,) * (block.ndim - 1) + (193,))


def _counts(a: Any, axis: int) -> tuple[str, int, int, np.ndarray[Any, Any]]:
    """``(zarr name, axis, pairs, counts[192])`` of ``a``'s neighbours along ``axis``."""
    a = _data(a)
    name = _dtypes.data_type_name(_dtypes.from_numpy(a.dtype))
    ndim = len(a.shape)
    axis = _resolve_axis(axis, ndim)
    if not _is_dask(a):
        total = _chunk_counts(np.asarray(a), name, axis).reshape(-1)
        return name, axis, int(total[0]), np.ascontiguousarray(total[1:])
    import dask
    import dask.array as da

    last = a.ndim - 1

    def per_block(block: np.ndarray[Any, Any]) -> tuple[Any, Any, Any]:
        # A block of the array with the axis moved last: its counts, and its first and
        # last slices along the axis (for the pairs across its edges).
        b = np.asarray(block)
        return _chunk_counts(b, name, last).reshape(-1), b[..., :1].copy(), b[..., -1:].copy()

    # Counting is along `axis`: move it last. Each chunk is read by exactly one task (its
    # counts and its two edge slices), so a stored or generated array is made once and
    # a chunk is never held for another task.
    moved = da.moveaxis(a, axis, -1)
    grid = moved.to_delayed()
    done = dask.compute(*[dask.delayed(per_block)(b) for b in grid.ravel()])
    results = np.empty(grid.shape, dtype=object)
    for index, r in zip(np.ndindex(grid.shape), done, strict=True):
        results[index] = r
    total = np.sum(np.stack([r[0] for r in done]), axis=0, dtype=np.uint64)
    # The pairs across each chunk edge along the axis: the last slice before the edge and
    # the first after it, as one two-element slab along the axis (chunks of no width along
    # it are stepped over: the elements either side of them are neighbours).
    for row in np.ndindex(grid.shape[:-1]):
        before = None
        for j in range(grid.shape[-1]):
            _, first, end = results[(*row, j)]
            if first.shape[-1] == 0:
                continue
            if before is not None:
                slab = np.concatenate([before, first], axis=-1)
                total += _chunk_counts(slab, name, last).reshape(-1)
            before = end
    return name, axis, int(total[0]), np.ascontiguousarray(total[1:])


def bitinformation(a: Any, axis: int = -1, confidence: float = 0.99) -> np.ndarray[Any, Any]:
    """The real information (bits) of each bit position of ``a``'s elements, most
    significant first (for floats: sign, exponent bits, mantissa bits), from neighbours
    along ``axis``; NaN masked, insignificant information (at ``confidence``) set to 0.

    Raises ``zquant.CodecError`` for an axis ``a`` lacks, a confidence outside (0, 1), or
    no pair of adjacent non-NaN elements.
    """
    name, ax, pairs, counts = _counts(a, axis)
    return _zquant.bit_information(name, ax, pairs, counts, confidence)


def keepbits(a: Any, level: float = 0.99, axis: int = -1) -> int:
    """The mantissa bits ``bitround`` must keep to preserve ``level`` of ``a``'s real
    information along ``axis`` (xbitinfo's ``get_keepbits``, clamped to 1..mantissa bits).
    """
    name, ax, pairs, counts = _counts(a, axis)
    return int(_zquant.keepbits(name, ax, pairs, counts, 0.99, level))


def _finite_range(a: Any, name: str) -> tuple[float, float] | None:
    def one(block: np.ndarray[Any, Any]) -> tuple[float, float] | None:
        c = _dtypes.contiguous(_dtypes.native(np.asarray(block)))
        return _zquant.finite_range(name, _dtypes.words_of(c, _dtypes.word_dtype(name)))

    if not _is_dask(a):
        return one(np.asarray(a))
    import dask

    ranges = dask.compute(*[dask.delayed(one)(b) for b in a.to_delayed().ravel()])
    found = [r for r in ranges if r is not None]
    if not found:
        return None
    return min(r[0] for r in found), max(r[1] for r in found)


def fit_scale_offset(
    a: Any, data_type: Any, max_abs_error: float, nan_sentinel: bool = False
) -> list[Any]:
    """``[ScaleOffset, CastValue]`` (``zquant.zarr`` codec objects, ready for
    ``filters=``) storing ``a``'s finite range in the integer ``data_type`` with
    ``|decode(encode(x)) - x| <= max_abs_error`` for every value of ``a``'s type in that
    range (a bound proven with the codecs' own arithmetic).

    With ``nan_sentinel``, the target's largest code is kept out of the range and stands for
    NaN (a ``scalar_map``). Raises ``zquant.CodecError`` when the target has too few codes
    for the bound (with the best bound it allows), or ``a`` has no finite value.
    """
    from . import zarr as zq_zarr

    a = _data(a)
    source = _dtypes.data_type_name(_dtypes.from_numpy(a.dtype))
    target = _dtypes.data_type_name(_dtypes.parse_data_type(data_type))
    r = _finite_range(a, source)
    if r is None:
        raise _zquant.CodecError("scale_offset fit: the array has no finite value")
    codecs_text, _bound = _zquant.fit_scale_offset(
        source, target, r[0], r[1], float(max_abs_error), bool(nan_sentinel)
    )
    so, cv = json.loads(codecs_text)
    return [zq_zarr.ScaleOffset.from_dict(so), zq_zarr.CastValue.from_dict(cv)]
