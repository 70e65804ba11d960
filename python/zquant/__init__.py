"""zquant: Zarr's lossy codecs (``scale_offset``, ``cast_value``, ``bitround``, and numcodecs'
``fixedscaleoffset`` and ``bitround``), correctly rounded, run by the zquant Rust library.

The core is :class:`Chain`: a list of codec JSON objects bound to a data type and fill value,
with ``encode``/``decode`` over NumPy arrays of any layout. Around it:

- :mod:`zquant.zarr`: zarr-python 3 codecs (``ScaleOffset``, ``CastValue``, ``BitRound``);
- :mod:`zquant.numcodecs`: numcodecs codecs (``FixedScaleOffset``, ``BitRound``, ``Quantize``,
  ``AsType``);
- :mod:`zquant.choose`: keepbits and scale/offset from the data (NumPy, xarray, dask);
- :func:`use`: make zarr-python and numcodecs resolve those names to zquant's classes.

Errors are :class:`CodecError` (a ``ValueError``) with zquant's message;
:class:`FillValueError`, a ``CodecError``, when the array's fill value is what fails.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import Any, TypedDict

import numpy as np

from . import _dtypes, _registry, _zquant
from ._zquant import CodecError, FillValueError, RustChain, empty

# A direction's plan: source dtype, destination dtype, their word dtypes, the Rust call,
# the source's Zarr data type JSON, whether it encodes.
_Plan = tuple[Any, Any, Any, Any, Any, Any, bool]

__all__ = ["Chain", "CodecError", "FillValueError", "encode", "set_buffer_pool", "unuse", "use"]

# The submodules load on first use (PEP 562): ``import zquant`` imports neither zarr nor
# numcodecs nor xarray, and ``zquant.choose.keepbits(a)`` works without importing
# ``zquant.choose`` first.
_SUBMODULES = ("choose", "dtypes", "numcodecs", "zarr")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})

__version__ = "0.2.0"


def _codec_json(codec: Any) -> dict[str, Any]:
    """A codec object's Zarr v3 JSON: a dict as is, ``to_dict()`` of a zarr-python codec,
    or ``numcodecs.<id>`` with its configuration for a numcodecs codec."""
    if isinstance(codec, dict):
        return codec
    to_dict = getattr(codec, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    get_config = getattr(codec, "get_config", None)
    if callable(get_config):
        config = dict(get_config())
        codec_id = config.pop("id")
        return {"name": f"numcodecs.{codec_id}", "configuration": config}
    raise CodecError(f"not a codec (a JSON dict, a zarr codec or a numcodecs codec): {codec!r}")


class Chain:
    """Codecs bound to a data type and a fill value, run by zquant.

    Parameters
    ----------
    data_type
        The decoded data type: a Zarr v3 name (``"float64"``, ``"bfloat16"``), its JSON
        object (time types), a NumPy dtype-like, or a zarr-python ``ZDType``.
    codecs
        The array->array codecs, in encoding order: Zarr v3 codec JSON dicts, or codec
        objects (``zquant.zarr``/zarr-python codecs, numcodecs codecs).
    fill_value
        The array's fill value (a number, NumPy scalar or its Zarr JSON); ``None`` is 0,
        zarr's default. It must encode through the codecs, as in a Zarr array.

    Building validates everything (names, keys, data types, the fill value through each
    codec) and raises :class:`CodecError` naming the codec and the field.

    Examples
    --------
    >>> import numpy as np, zquant
    >>> chain = zquant.Chain("float64", [
    ...     {"name": "scale_offset", "configuration": {"offset": 270, "scale": 4}},
    ...     {"name": "cast_value", "configuration": {"data_type": "uint8"}}],
    ...     fill_value=270)
    >>> chain.encode(np.array([273.15, 280.4]))
    array([13, 42], dtype=uint8)
    """

    __slots__ = ("_codecs", "_data_type", "_dec_plan", "_enc_plan", "_enc_type", "_fill", "_rust")

    def __init__(
        self,
        data_type: Any,
        codecs: Iterable[Any],
        fill_value: Any = None,
    ) -> None:
        self._data_type = _dtypes.parse_data_type(data_type)
        self._codecs = [_codec_json(c) for c in codecs]
        self._fill = (
            _dtypes.zero_fill(self._data_type)
            if fill_value is None
            else _dtypes.fill_json(fill_value)
        )
        try:
            self._rust = RustChain(
                _dtypes.dumps(self._data_type),
                _dtypes.dumps(self._fill),
                _dtypes.dumps(self._codecs),
            )
        except CodecError as e:
            if fill_value is None and "fill value" in str(e):
                raise CodecError(
                    f"{e} (the default fill value is 0, as zarr's: pass fill_value=, for "
                    "example a value in the data's range, or NaN with a cast_value scalar_map)"
                ) from None
            raise
        self._enc_type = json.loads(self._rust.encoded_data_type)
        self._enc_plan: _Plan | None = None
        self._dec_plan: _Plan | None = None

    # Plain data: pickles as its arguments, and rebuilds its Rust chain where it lands.
    def __reduce__(self) -> tuple[Any, ...]:
        return (Chain, (self._data_type, self._codecs, self._fill))

    def __repr__(self) -> str:
        return f"Chain({self._data_type!r}, {self._codecs!r}, fill_value={self._fill!r})"

    @property
    def data_type(self) -> Any:
        """The decoded data type's Zarr JSON (a name, or an object for time types)."""
        return self._data_type

    @property
    def codecs(self) -> list[dict[str, Any]]:
        """The codecs' JSON, as given."""
        return list(self._codecs)

    @property
    def encoded_data_type(self) -> Any:
        """The data type after the last codec: its Zarr JSON (a name for all but time
        types)."""
        return self._enc_type

    @property
    def encoded_fill_value_json(self) -> Any:
        """The fill value after the last codec, in Zarr's fill-value JSON."""
        return json.loads(self._rust.encoded_fill_value)

    @property
    def encoded_fill_value(self) -> Any:
        """The fill value after the last codec, as a NumPy scalar of the encoded dtype."""
        dt = _dtypes.to_numpy(self.encoded_data_type)
        return _dtypes.scalar_from_words(
            self._rust.encoded_fill_words, dt, _dtypes.word_dtype(self.encoded_data_type)
        )

    @property
    def dtype(self) -> np.dtype[Any]:
        """The decoded NumPy dtype."""
        return _dtypes.to_numpy(self._data_type)

    @property
    def encoded_dtype(self) -> np.dtype[Any]:
        """The encoded NumPy dtype."""
        return _dtypes.to_numpy(self.encoded_data_type)

    @property
    def warnings(self) -> list[str]:
        """What in the metadata is valid but likely unintended (zquant's findings)."""
        return list(self._rust.warnings)

    def encode(self, array: Any) -> np.ndarray[Any, Any]:
        """Encode ``array`` (of the chain's data type; any layout or byte order) through
        every codec. Returns a new array of the encoded dtype and the same shape, in C
        order (F order for an F-contiguous input, which is run in memory order uncopied).

        Raises :class:`CodecError` with the first element a codec cannot encode (its index
        and value, and the rule).
        """
        return self._run(array, encode=True)

    def decode(self, array: Any) -> np.ndarray[Any, Any]:
        """Decode ``array`` (of the encoded data type; any layout or byte order) back to the
        chain's data type. Returns a new array of the same shape, in C order (F order for
        an F-contiguous input)."""
        return self._run(array, encode=False)

    def _plan(self, encode: bool) -> _Plan:
        """What a call in one direction needs, computed once: the source and destination
        dtypes, their storage-word dtypes, and the Rust entry point."""
        src_type = self._data_type if encode else self._enc_type
        dst_type = self._enc_type if encode else self._data_type
        plan = (
            _dtypes.to_numpy(src_type),
            _dtypes.to_numpy(dst_type),
            _dtypes.word_dtype(src_type),
            _dtypes.word_dtype(dst_type),
            self._rust.encode_into if encode else self._rust.decode_into,
            src_type,
            encode,
        )
        if encode:
            self._enc_plan = plan
        else:
            self._dec_plan = plan
        return plan

    def _run(self, array: Any, *, encode: bool) -> np.ndarray[Any, Any]:
        plan = self._enc_plan if encode else self._dec_plan
        if plan is None:
            plan = self._plan(encode)
        src_dt, dst_dt, src_words, dst_words, run, _, _ = plan
        a = array if type(array) is np.ndarray else np.asarray(array)
        if a.dtype == src_dt and a.flags.c_contiguous and a.flags.aligned:
            # The common case (a chunk): no copy in, the output from the buffer pool.
            out = empty(a.size * dst_dt.itemsize).view(dst_dt).reshape(a.shape)
            run(a.reshape(-1).view(src_words), a.shape, out.reshape(-1).view(dst_words))
            return out
        return self._run_any(a, plan)

    def _run_any(self, a: np.ndarray[Any, Any], plan: _Plan) -> np.ndarray[Any, Any]:
        """``_run`` for any other layout or byte order."""
        src_dt, dst_dt, src_words, dst_words, run, src_type, _ = plan
        if a.dtype != src_dt and a.dtype.newbyteorder("=") != src_dt:
            raise CodecError(
                f"expected an array of {_dtypes.data_type_name(src_type)} ({src_dt}), "
                f"got {a.dtype}"
            )
        a = _dtypes.native(a)
        if not a.flags.c_contiguous and a.flags.f_contiguous and a.flags.aligned and a.ndim > 1:
            # Elementwise codecs: run the F-ordered memory as the transposed C array, and
            # return the same shape. On an error, rerun in C order for its C-order index.
            out_t = empty(a.size * dst_dt.itemsize).view(dst_dt).reshape(a.shape[::-1])
            try:
                run(
                    _dtypes.words_of(a.T, src_words),
                    a.T.shape,
                    _dtypes.words_of(out_t, dst_words),
                )
                return out_t.T
            except CodecError:
                pass
        if (
            not a.flags.c_contiguous
            and a.flags.aligned
            and a.ndim >= 1
            and a.size
            and a.strides[-1] == a.dtype.itemsize
        ):
            # Rows contiguous (a chunk of a larger array): Rust gathers the rows a block at
            # a time, with no copy of the input. On an error, the path below reruns it for
            # the element's position.
            out = empty(a.size * dst_dt.itemsize).view(dst_dt).reshape(a.shape)
            try:
                self._rust.run_strided_into(
                    plan[6], a.view(src_words), a.size, out.reshape(-1).view(dst_words)
                )
                return out
            except CodecError:
                pass
        if a.flags.c_contiguous and a.flags.aligned:
            c = a
        else:
            # Strided (a chunk of a larger array) or unaligned: one copy, into a pooled
            # buffer (released as soon as the call returns).
            c = empty(a.size * a.dtype.itemsize).view(a.dtype).reshape(a.shape)
            np.copyto(c, a)
        out = empty(a.size * dst_dt.itemsize).view(dst_dt).reshape(a.shape)
        run(_dtypes.words_of(c, src_words), c.shape, _dtypes.words_of(out, dst_words))
        return out


def set_buffer_pool(limit: int) -> int:
    """Set how many bytes of released output buffers zquant keeps for reuse (default 64
    MiB; 0 turns the pool off). Returns the previous limit.

    Outputs of 64 KiB or more (encoded and decoded chunks) come from this pool: a fresh
    multi-megabyte buffer costs a page fault per 4 KiB page on first write, more than
    encoding it. A buffer returns to the pool when the last array viewing it is gone.
    """
    return _zquant.set_buffer_pool(limit)


def encode(array: Any, codecs: Sequence[Any], fill_value: Any = None) -> np.ndarray[Any, Any]:
    """Encode ``array`` through ``codecs``, taking the data type from the array.

    ``zquant.encode(a, codecs)`` is ``zquant.Chain(a.dtype, codecs, fill_value).encode(a)``.
    """
    a = np.asarray(array)
    return Chain(a.dtype, codecs, fill_value).encode(a)


# --------------------------------------------------------------------------------------
# use(): zquant's classes for zarr-python's and numcodecs' names.

# The names come from the Rust registry, each with its class (zquant._registry). What use()
# changed, for unuse() to restore: zarr's `codecs.<name>` settings, the environment
# variables, numcodecs' registry entries, and the names registered with zarr.
class _Saved(TypedDict):
    zarr: dict[str, Any]
    env: dict[str, str | None]
    numcodecs: dict[str, Any]
    registered: dict[str, str]


_saved: _Saved | None = None


def _env_key(name: str) -> str:
    return "ZARR_CODECS__" + name.upper()


def use(*, environment: bool = True) -> None:
    """Make zarr-python and numcodecs run zquant's codecs from now on.

    - zarr-python: ``scale_offset``, ``cast_value``, ``bitround`` and ``packbits`` resolve
      to :mod:`zquant.zarr`'s classes. ``scale_offset`` and ``cast_value``, which
      zarr-python implements too, are registered now (zquant has no entry points for them,
      so that merely installing zquant changes nothing); then zarr's configuration
      ``codecs.<name> = "zquant.zarr.<Class>"`` is set (``zarr.config.set``), the documented
      way to pick between several implementations of one name, so lookups do not warn.
    - numcodecs: the ids ``fixedscaleoffset``, ``bitround``, ``quantize`` and ``astype`` are
      registered to :mod:`zquant.numcodecs`'s classes (``numcodecs.registry.register_codec``).
      zarr's v3 ``numcodecs.*`` wrappers of those ids and Zarr v2 filters then run on zquant.
    - With ``environment=True`` (the default), the settings for the names zquant's entry
      points provide (``bitround``, ``packbits``) are also put in ``os.environ``
      (``ZARR_CODECS__BITROUND=zquant.zarr.BitRound``), which zarr reads at import. Not
      for ``scale_offset`` and ``cast_value``: zquant registers those in ``use()`` only,
      and a process that names an unregistered class in its configuration fails on every
      lookup. Processes started afterwards (dask workers of a ``LocalCluster``,
      ``multiprocessing``) call ``zquant.use()`` themselves, for example
      ``client.run(zquant.use)``; until then they run zarr-python's own ``scale_offset``
      and ``cast_value`` (the same bytes, other error messages) and numcodecs' classes.

    Undo with :func:`unuse`, which restores what was there before.
    """
    global _saved
    import zarr
    import zarr.registry

    saved: _Saved = {"zarr": {}, "env": {}, "numcodecs": {}, "registered": {}}
    classes = _registry.zarr_map()
    paths = {name: _registry.class_path(cls) for name, cls in classes.items()}
    # scale_offset and cast_value have no zquant entry point (zarr-python has its own, and
    # two implementations of a name make zarr warn and pick either): they are registered
    # here, and unuse() takes them out again.
    for name in _registry.REGISTERED_BY_USE:
        if paths[name] not in zarr.registry._codec_registries.get(name, ()):
            zarr.registry.register_codec(name, classes[name])
            saved["registered"][name] = paths[name]
    for name, path in paths.items():
        saved["zarr"][name] = zarr.config.get(f"codecs.{name}", None)
        if environment and name not in _registry.REGISTERED_BY_USE:
            saved["env"][name] = os.environ.get(_env_key(name))
            os.environ[_env_key(name)] = path
    zarr.config.set({f"codecs.{name}": path for name, path in paths.items()})
    try:
        import numcodecs.registry as registry

        numcodecs_classes = _registry.numcodecs_map()
        for codec_id in numcodecs_classes:
            saved["numcodecs"][codec_id] = registry.codec_registry.get(codec_id)
        for codec_id, cls in numcodecs_classes.items():
            registry.register_codec(cls, codec_id)
    except ImportError:
        pass
    if _saved is None:
        _saved = saved


def unuse() -> None:
    """Undo :func:`use`: zarr's ``codecs.<name>`` settings, the environment variables and
    numcodecs' registry entries go back to what they were before the first ``use()``."""
    global _saved
    if _saved is None:
        return
    import zarr
    import zarr.registry

    for name, before in _saved["zarr"].items():
        if before is None:
            codecs = zarr.config.get("codecs", {})
            codecs.pop(name, None)
            zarr.config.set({"codecs": codecs})
        else:
            zarr.config.set({f"codecs.{name}": before})
    for name, path in _saved["registered"].items():
        # zarr has no unregister: its registry is a dict per name, keyed by class path.
        registered = zarr.registry._codec_registries.get(name)
        if registered is not None:
            registered.pop(path, None)
    for name, before in _saved["env"].items():
        if before is None:
            os.environ.pop(_env_key(name), None)
        else:
            os.environ[_env_key(name)] = before
    if _saved["numcodecs"]:
        import numcodecs.registry as registry

        for codec_id, cls in _saved["numcodecs"].items():
            if cls is None:
                registry.codec_registry.pop(codec_id, None)
            else:
                registry.register_codec(cls, codec_id)
    _saved = None
