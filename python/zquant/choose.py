"""Choose codecs from the data: :func:`plan` (and :func:`plan_dataset`), the chain that
stores an array smallest while every element stays within a stated error; keepbits for
``bitround`` by the data's real information (Klöwer et al. 2021, as BitInformation.jl and
xbitinfo compute it); and ``scale``/``offset`` for ``scale_offset`` + ``cast_value`` by an
absolute-error bound.

``a`` may be a NumPy array, an ``xarray.DataArray`` (its data is used) or a dask array. A
dask array is computed chunk by chunk, never whole in one process: bit information is a
function of per-chunk pair counts summed together (zquant's mergeable ``BitCounts``), and
the pairs across chunk edges along the axis are counted from the two-slice slabs at each
edge, so the result equals the whole array's exactly. The finite range is the min and max
of per-chunk ranges. The planner's statistics are merged the same way, and its sample is a
bounded set of chunks spread over the array, read by the same tasks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from . import _dtypes, _zquant
from .plans import DatasetPlan, Plan, codec_json, codec_object

__all__ = [
    "DatasetPlan",
    "Plan",
    "bitinformation",
    "fit_scale_offset",
    "keepbits",
    "plan",
    "plan_dataset",
]


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


# --------------------------------------------------------------------------------------
# plan(): the chain that stores an array smallest within a stated error.

#: The sample's size in elements, by default: the candidates are encoded and compressed on
#: a set of chunks spread over the array holding at most this many elements.
SAMPLE_ELEMENTS = 1 << 20
_READERS = ("zarr-python", "zarrs", "zarr-python+zarrs", "any")
_TARGET_KEYS = ("max_abs_error", "max_rel_error", "inflevel")


def _target(max_abs_error: Any, max_rel_error: Any, inflevel: Any) -> dict[str, float]:
    """The planner's target JSON from the keyword arguments; exactly one must be given, a
    number that is positive and finite (an information level at most 1)."""
    given = [
        (k, v)
        for k, v in (
            ("max_abs_error", max_abs_error),
            ("max_rel_error", max_rel_error),
            ("inflevel", inflevel),
        )
        if v is not None
    ]
    if len(given) != 1:
        got = "none" if not given else " and ".join(k for k, _ in given)
        raise _zquant.CodecError(
            "plan: give exactly one target, max_abs_error=, max_rel_error= or inflevel= "
            f"(got {got})"
        )
    ((kind, value),) = given
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise _zquant.CodecError(f"plan: {kind} must be a number, got {value!r}")
    x = float(value)
    if not (math.isfinite(x) and x > 0):
        raise _zquant.CodecError(
            f"plan: {kind} must be positive and finite, got {value!r} (a bound of 0 is "
            "lossless: store the array without filters)"
        )
    if kind == "inflevel" and x > 1:
        raise _zquant.CodecError(
            f"plan: inflevel is the fraction of the real information kept, in (0, 1]; got {value!r}"
        )
    return {kind: x}


def _compressors(compressors: Any) -> list[Any]:
    """The compressors as zarr-python codec objects: zarr's zstd at level 3 by default; one
    codec or a list of codec objects or their JSON."""
    if compressors is None:
        import zarr.codecs

        return [zarr.codecs.ZstdCodec(level=3)]
    if isinstance(compressors, dict) or hasattr(compressors, "to_dict"):
        compressors = [compressors]
    return [codec_object(c) for c in compressors]


def _size_of(compressors: Sequence[Any], dtype: np.dtype[Any]) -> Callable[[bytes], int]:
    """The size of serialized chunk bytes after ``compressors``, run by zarr-python as it
    runs them on an array of ``dtype`` (each evolved from that array's spec, as zarr does
    at array creation: blosc takes its type size from it)."""
    if not compressors:
        return len
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.dtype import get_data_type_from_native_dtype
    from zarr.core.sync import sync

    prototype = default_buffer_prototype()
    zdtype = get_data_type_from_native_dtype(dtype)
    spec = ArraySpec(
        shape=(1,),
        dtype=zdtype,
        fill_value=zdtype.default_scalar(),
        config=ArrayConfig.from_dict({}),
        prototype=prototype,
    )
    evolved = [c.evolve_from_array_spec(spec) for c in compressors]

    def size(data: bytes) -> int:
        buf: Any = prototype.buffer.from_bytes(data if isinstance(data, bytes) else bytes(data))
        for c in evolved:
            encode_sync = getattr(c, "_encode_sync", None)
            out = encode_sync(buf, spec) if encode_sync else sync(c._encode_single(buf, spec))
            if out is None:
                raise _zquant.CodecError(f"plan: compressor {c!r} returned no bytes")
            buf = out
        return len(buf)

    return size


def _crop_shape(shape: Sequence[int], cap: int) -> tuple[int, ...]:
    """``shape`` cut down from its leading axes to at most ``cap`` elements (whole rows of
    the trailing axes kept where they fit, so the sample keeps the data's structure)."""
    out = list(shape)
    cap = max(1, cap)
    for d in range(len(out)):
        if math.prod(out) <= cap:
            break
        rest = math.prod(out[d + 1 :])
        out[d] = max(1, min(out[d], cap // rest)) if rest <= cap else 1
    return tuple(out)


def _crop(block: np.ndarray[Any, Any], cap: int) -> np.ndarray[Any, Any]:
    if block.size <= cap:
        return block
    return block[tuple(slice(0, n) for n in _crop_shape(block.shape, cap))]


def _regular_chunks(shape: Sequence[int], chunk: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Dask-style chunk sizes of ``shape`` cut in chunks of ``chunk``."""
    out = []
    for n, c in zip(shape, chunk, strict=True):
        c = max(1, int(c))
        sizes = [c] * (n // c) + ([n % c] if n % c else [])
        out.append(tuple(sizes) if sizes else (0,))
    return tuple(out)


def _sample_blocks(
    chunks: Sequence[Sequence[int]], budget: int
) -> tuple[list[tuple[int, ...]], int]:
    """The block indices of a sample spread evenly over the grid (in C order, so along
    every axis), at most ``budget`` elements in all, and the cap on each block's elements
    (a block larger than its share is cut down by :func:`_crop`)."""
    grid = tuple(len(c) for c in chunks)
    blocks = []
    largest = 0
    for index in np.ndindex(grid):
        n = math.prod(chunks[d][i] for d, i in enumerate(index))
        if n:
            blocks.append(index)
            largest = max(largest, n)
    if not blocks:
        return [], 0
    k = max(1, min(len(blocks), budget // largest))
    picks = [blocks[int((j + 0.5) * len(blocks) / k)] for j in range(k)]
    return picks, max(1, budget // k)


def _chunk_hint(a: Any, ndim: int) -> tuple[int, ...] | None:
    """The chunk shape an xarray variable records in its encoding (from its store), if any."""
    enc = getattr(a, "encoding", None)
    if not isinstance(enc, Mapping):
        return None
    chunks = enc.get("chunks")
    if isinstance(chunks, tuple | list) and len(chunks) == ndim:
        if all(isinstance(c, int | np.integer) and c > 0 for c in chunks):
            return tuple(int(c) for c in chunks)
    return None


def _words(block: np.ndarray[Any, Any], name: str) -> tuple[np.ndarray[Any, Any], list[int]]:
    c = _dtypes.contiguous(_dtypes.native(np.asarray(block)))
    return _dtypes.words_of(c, _dtypes.word_dtype(name)), list(c.shape)


def _block_stats(block: np.ndarray[Any, Any], name: str, axis: int, information: bool) -> str:
    words, shape = _words(block, name)
    return str(_zquant.plan_stats(name, words, shape, axis, information))


def _edge_stats(slab: np.ndarray[Any, Any], name: str, axis: int) -> str:
    """The bit pairs across one chunk edge (a two-slice slab along ``axis``), alone: merged
    into the chunks' statistics, they make the counts the whole array's."""
    words, shape = _words(slab, name)
    return str(_zquant.plan_stats(name, words, shape, axis, True, True))


def _merge(stats: Sequence[str]) -> str:
    """Statistics merged pairwise, as a balanced tree (the texts stay small)."""
    items = list(stats)
    if not items:
        raise _zquant.CodecError("plan: the array has no elements")
    while len(items) > 1:
        merged = [
            _zquant.plan_stats_merge(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)
        ]
        if len(items) % 2:
            merged.append(items[-1])
        items = merged
    return str(items[0])


Samples = list[tuple[np.ndarray[Any, Any], list[int]]]


def _numpy_inputs(
    a: np.ndarray[Any, Any], name: str, axis: int, information: bool, budget: int,
    hint: tuple[int, ...] | None,
) -> tuple[str, Samples]:
    """Statistics of the whole array, and a sample of its chunks (the store's chunks when
    known, else pieces of about an eighth of the budget) spread over it."""
    stats = _block_stats(a, name, axis, information)
    chunk = hint or _crop_shape(a.shape, max(1, budget // 8))
    chunks = _regular_chunks(a.shape, chunk)
    picks, cap = _sample_blocks(chunks, budget)
    starts = [np.concatenate([[0], np.cumsum(c)]) for c in chunks]
    samples = []
    for index in picks:
        region = tuple(
            slice(int(starts[d][i]), int(starts[d][i + 1])) for d, i in enumerate(index)
        )
        samples.append(_words(_crop(a[region], cap), name))
    return stats, samples


def _dask_inputs(
    a: Any, name: str, axis: int, information: bool, budget: int
) -> tuple[str, Samples]:
    """Statistics merged from every chunk's, and a sample of chunks spread over the array;
    each chunk read by exactly one task, which returns its statistics, its sample (if it
    is one) and, for an information target, its first and last slices along ``axis``."""
    import dask

    picks, cap = _sample_blocks(a.chunks, budget)
    wanted = set(picks)

    def per_block(block: Any, sample: bool) -> tuple[Any, ...]:
        b = np.asarray(block)
        if b.size == 0:
            return None, None, None, None
        stats = _block_stats(b, name, axis, information)
        first = np.take(b, [0], axis=axis) if information else None
        last = np.take(b, [-1], axis=axis) if information else None
        return stats, first, last, (_crop(b, cap).copy() if sample else None)

    grid = a.to_delayed()
    indices = list(np.ndindex(grid.shape))
    done = dask.compute(*[dask.delayed(per_block)(grid[i], i in wanted) for i in indices])
    results = dict(zip(indices, done, strict=True))
    stats = [r[0] for r in done if r[0] is not None]
    if information:
        # The pairs across each chunk edge along the axis: the last slice before the edge
        # and the first after it (empty chunks stepped over: the elements either side of
        # them are neighbours).
        others = [n for d, n in enumerate(grid.shape) if d != axis]
        for rest in np.ndindex(tuple(others)):
            before = None
            for j in range(grid.shape[axis]):
                index = (*rest[:axis], j, *rest[axis:])
                _, first, end, _ = results[index]
                if first is None:
                    continue
                if before is not None:
                    slab = np.concatenate([before, first], axis=axis)
                    stats.append(_edge_stats(slab, name, axis))
                before = end
    samples = [_words(results[i][3], name) for i in picks]
    return _merge(stats), samples


def plan(
    a: Any,
    *,
    max_abs_error: float | None = None,
    max_rel_error: float | None = None,
    inflevel: float | None = None,
    compressors: Any = None,
    headroom: float = 0.0,
    readers: str = "zarr-python",
    axis: int = -1,
    fill_value: Any = None,
    sample_elements: int = SAMPLE_ELEMENTS,
    lossless_fallback: bool = False,
) -> Plan:
    """The chain that stores ``a`` smallest while every element stays within the target,
    weighed among bitround, scale_offset + cast_value to the narrowest integer (packed
    when its width is not 8, 16 or 32 bits), a cast to a narrower float, scale_offset +
    bitround, and no lossy codec at all.

    Parameters
    ----------
    a
        A float NumPy array, ``xarray.DataArray`` or dask array. A dask array is read
        chunk-parallel, never whole in one process.
    max_abs_error, max_rel_error, inflevel
        The target, exactly one: a pointwise absolute error ``|x' - x| <= e``, a pointwise
        relative error ``|x' - x| <= r |x|``, or the fraction of the real information to
        keep (xbitinfo's rule, with the bound it implies reported).
    compressors
        The compressors the stored sizes are measured with (zarr codec objects or JSON);
        zarr's zstd at level 3 by default.
    headroom
        The fraction of the data's range kept free above and below, so that an archive
        can grow with data beyond today's range.
    readers
        ``"zarr-python"`` (the default): only chains plain zarr-python reads with its
        built-in codecs; ``"zarrs"``: chains zarrs reads with zquant's codecs registered
        (not ``numcodecs.delta``); ``"zarr-python+zarrs"``: both; ``"any"``: every chain
        zquant weighs.
    axis
        The axis whose neighbours the information is counted along.
    fill_value
        The array's fill value (NaN, zarr and xarray's default for floats, if ``None``).
    sample_elements
        The most elements the candidates are encoded and compressed on.
    lossless_fallback
        When no lossy chain meets the target, plan the lossless baseline instead of
        raising.

    Raises ``zquant.CodecError`` for no target or two, a bound that is not positive and
    finite, a Dataset (use :func:`plan_dataset`), or a target no lossy chain meets (with
    the smallest bound any gives) unless ``lossless_fallback``.
    """
    if hasattr(a, "data_vars"):
        raise _zquant.CodecError(
            "plan: this is a Dataset, several variables: use "
            "zquant.choose.plan_dataset(ds, max_abs_error={name: bound, ...}) for it, or "
            "plan(ds[name], ...) for one variable"
        )
    target = _target(max_abs_error, max_rel_error, inflevel)
    if readers not in _READERS:
        raise _zquant.CodecError(
            f"plan: readers must be one of {', '.join(map(repr, _READERS))}, got {readers!r}"
        )
    if isinstance(headroom, bool) or not (
        isinstance(headroom, int | float | np.integer | np.floating)
        and math.isfinite(headroom)
        and headroom >= 0
    ):
        raise _zquant.CodecError(f"plan: headroom must be a finite number >= 0, got {headroom!r}")
    budget = int(sample_elements)
    if budget < 1:
        raise _zquant.CodecError(f"plan: sample_elements must be at least 1, got {sample_elements!r}")
    hint = _chunk_hint(a, len(getattr(a, "shape", ())))
    data = _data(a)
    if not hasattr(data, "dtype"):
        data = np.asarray(data)
    name = _dtypes.data_type_name(_dtypes.from_numpy(data.dtype))
    ax = _resolve_axis(axis, max(1, data.ndim))
    comps = _compressors(compressors)
    information = "inflevel" in target
    if _is_dask(data):
        stats, samples = _dask_inputs(data, name, ax, information, budget)
    else:
        array = np.asarray(data)
        if array.ndim == 0:
            array = array.reshape(1)
        stats, samples = _numpy_inputs(array, name, ax, information, budget, hint)
    fill = _dtypes.fill_json(math.nan if fill_value is None else fill_value)
    options = {
        "headroom": float(headroom),
        "readers": readers,
        "sample_elements": budget,
        "lossless_fallback": bool(lossless_fallback),
    }
    planned = _zquant.plan(
        name,
        stats,
        samples,
        fill,
        json.dumps(target),
        json.dumps(options),
        _size_of(comps, data.dtype),
    )
    return Plan(
        planned,
        data_type=name,
        fill_value=fill,
        target=target,
        compressors=comps,
        stats=stats,
    )


def _per_variable(
    kind: str, spec: Any, names: Sequence[str]
) -> tuple[dict[str, Any], Any]:
    """A target argument of :func:`plan_dataset` as (per-variable values, value for every
    variable); names it gives that the Dataset lacks raise."""
    if spec is None:
        return {}, None
    if isinstance(spec, Mapping):
        unknown = sorted(set(map(str, spec)) - set(names))
        if unknown:
            raise _zquant.CodecError(
                f"plan_dataset: {kind} names {', '.join(unknown)}, not data variables of "
                f"the Dataset (it has {', '.join(names) or 'none'})"
            )
        return {str(k): v for k, v in spec.items()}, None
    return {}, spec


def plan_dataset(
    ds: Any,
    *,
    max_abs_error: Any = None,
    max_rel_error: Any = None,
    inflevel: Any = None,
    compressors: Any = None,
    headroom: float = 0.0,
    readers: str = "zarr-python",
    axis: int = -1,
    sample_elements: int = SAMPLE_ELEMENTS,
    lossless_fallback: bool = False,
    progress: Callable[[Iterable[str]], Iterable[str]] | None = None,
) -> DatasetPlan:
    """A :func:`plan` for each data variable of the xarray Dataset ``ds``.

    Each target is one number for every float variable, or a dict ``{name: value}``; a
    variable's own entry beats a number given for all (``max_abs_error=0.1,
    max_rel_error={"tp": 0.01}`` plans ``tp`` by its relative error and the rest by 0.1).
    A variable no target names, or not of a float type, is stored losslessly (the
    compressors alone). ``plan_dataset(ds, ...).encoding`` goes straight into
    ``ds.to_zarr(store, zarr_format=3, encoding=...)``; ``.annotate(ds)`` adds the CF
    attributes of BitRound quantization. ``progress`` wraps the iteration over the
    variable names (``tqdm``, for example).

    Raises ``zquant.CodecError`` when no target is given, a variable gets two, a name is
    not a data variable, a named variable is not of a float type, or a target cannot be
    met (naming the variable).
    """
    if not hasattr(ds, "data_vars"):
        raise _zquant.CodecError(
            "plan_dataset: expected an xarray Dataset; use zquant.choose.plan for one array"
        )
    names = [str(n) for n in ds.data_vars]
    specs = {
        kind: _per_variable(kind, spec, names)
        for kind, spec in (
            ("max_abs_error", max_abs_error),
            ("max_rel_error", max_rel_error),
            ("inflevel", inflevel),
        )
    }
    if all(not own and every is None for own, every in specs.values()):
        raise _zquant.CodecError(
            "plan_dataset: give a target: max_abs_error=, max_rel_error= or inflevel= (one "
            "number for every variable, or {name: value})"
        )
    comps = _compressors(compressors)
    plans: dict[str, Plan] = {}
    lossless: list[str] = []
    for name in progress(names) if progress is not None else names:
        var = ds[name]
        is_float = np.dtype(var.dtype).kind == "f" or _is_narrow_float(var.dtype)
        own = {k: own[name] for k, (own, _) in specs.items() if name in own}
        if len(own) > 1:
            raise _zquant.CodecError(
                f"plan_dataset: {name} has two targets, {' and '.join(own)}: give it one"
            )
        if not own:
            every = {k: v for k, (_, v) in specs.items() if v is not None}
            if len(every) > 1:
                raise _zquant.CodecError(
                    f"plan_dataset: {' and '.join(every)} are each given for every variable: "
                    "give one for all, and others per variable ({name: value})"
                )
            if not every or not is_float:
                lossless.append(name)
                continue
            own = every
        if not is_float:
            raise _zquant.CodecError(
                f"plan_dataset: {name} is {var.dtype}, not a float type; the planner's "
                "targets are for floats (leave it out and it is stored losslessly)"
            )
        try:
            plans[name] = plan(
                var,
                compressors=comps,
                headroom=headroom,
                readers=readers,
                axis=axis,
                sample_elements=sample_elements,
                lossless_fallback=lossless_fallback,
                **own,
            )
        except _zquant.CodecError as e:
            raise _zquant.CodecError(f"{name}: {e}") from None
    return DatasetPlan(plans, lossless, comps)


def _is_narrow_float(dtype: Any) -> bool:
    """Whether ``dtype`` is one of ml_dtypes' floats (bfloat16, float8_*), which NumPy
    reports as kind ``V``."""
    try:
        name = _dtypes.data_type_name(_dtypes.from_numpy(dtype))
    except (_zquant.CodecError, TypeError, ValueError):
        return False
    return name.startswith(("bfloat", "float"))
