"""zarr-python 3 codecs run by zquant: ``ScaleOffset``, ``CastValue`` and ``BitRound``
(array->array), and ``PackBits`` (array->bytes).

They are ``ArrayArrayCodec``s whose constructor arguments and ``to_dict()``/``from_dict()``
JSON follow the codec specs, as zarr-python's built-ins do. ``bitround`` and ``packbits``,
which zarr-python lacks, are registered through the ``zarr.codecs`` entry points;
``scale_offset`` and ``cast_value`` only by :func:`zquant.use`, which also sets zarr's
``codecs.<name>`` configuration to these classes. They can also be passed directly, for
example ``filters=[ScaleOffset(...), CastValue(...)]``.

Each object is plain data (its configuration): it pickles and ships to dask workers. The
zquant chain it runs is built once per process for each (data type, fill value) it sees and
cached. The GIL is released while zquant encodes or decodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec
from zarr.core.buffer.cpu import NDBuffer as CpuNDBuffer
from zarr.core.dtype import get_data_type_from_json

from . import Chain, CodecError, _dtypes, _zquant
from ._zquant import FillValueError
from . import dtypes as _narrow_dtypes

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer

__all__ = ["BitRound", "CastValue", "PackBits", "ScaleOffset"]

# cast_value's encoded types (float8_e4m3, uint4, ...) that zarr-python lacks: zquant.dtypes.
_narrow_dtypes.register()

Rounding = Literal[
    "nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"
]
OutOfRange = Literal["clamp", "wrap"]


def _parse_named(data: dict[str, Any], name: str) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("name") != name:
        raise CodecError(f"{name}: expected a codec object named {name!r}, got {data!r}")
    unknown = set(data) - {"name", "configuration"}
    if unknown:
        raise CodecError(f"{name}: unknown keys {sorted(unknown)} in {data!r}")
    config = data.get("configuration") or {}
    if not isinstance(config, dict):
        raise CodecError(f"{name}: configuration must be an object, got {config!r}")
    return dict(config)


def _check_supported(codec: str, takes: str, dtype: Any) -> None:
    """Refuse a zarr data type zquant has no such type for (``string``, ``bytes``,
    structured types), naming the codec: it is a data type, one the codec does not take."""
    json = dtype.to_json(zarr_format=3) if hasattr(dtype, "to_json") else dtype
    if isinstance(json, str) and json not in _zquant.dtype_names():
        raise CodecError(f"{codec}: data type {json!r} is not supported: {codec} takes {takes}")


def _fill_key(fill: Any) -> Any:
    """A fill value as a dict key that treats NaN as equal to itself."""
    if isinstance(fill, np.generic | np.ndarray):
        return (fill.dtype.str, fill.tobytes())
    return (type(fill), repr(fill))


def _same(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    """Whether two (data type, fill value) pairs of chunk specs are the same."""
    return (a[0] is b[0] or a[0] == b[0]) and (
        a[1] is b[1] or _fill_key(a[1]) == _fill_key(b[1])
    )


class _Bound:
    """One codec bound to a chunk spec's data type and fill value: its zquant chain, the
    encoded data type and fill value as zarr objects (resolved on first use), and the
    chains of the runs of zquant codecs that start with it."""

    __slots__ = ("chain", "codec", "dtype", "fill", "fused", "out")

    def __init__(self, codec: _ZquantCodec, dtype: Any, fill: Any) -> None:
        self.codec = codec
        self.dtype = dtype
        self.fill = fill
        self.chain = self._build(())
        self.out: tuple[Any, Any] | None = None
        # id()s of the following codecs -> (those codecs, kept alive so the ids stay
        # theirs; the chain).
        self.fused: dict[tuple[int, ...], tuple[tuple[_ZquantCodec, ...], Chain]] = {}

    def _build(self, rest: tuple[_ZquantCodec, ...]) -> Chain:
        return Chain(
            self.dtype.to_json(zarr_format=3),
            [c.to_dict() for c in (self.codec, *rest)],
            self.dtype.to_json_scalar(self.fill, zarr_format=3),
        )

    def chain_with(self, rest: tuple[_ZquantCodec, ...]) -> Chain:
        """The chain of this codec followed by ``rest`` (encoding order), bound here."""
        if not rest:
            return self.chain
        key = tuple(map(id, rest))
        hit = self.fused.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], rest, strict=True)):
            return hit[1]
        chain = self._build(rest)
        if len(self.fused) > 64:
            self.fused.clear()
        self.fused[key] = (rest, chain)
        return chain

    def resolved(self) -> tuple[Any, Any]:
        """The encoded chunk spec's (ZDType, fill value)."""
        if self.out is None:
            encoded = self.chain.encoded_data_type
            try:
                zdtype = get_data_type_from_json(encoded, zarr_format=3)
            except (TypeError, ValueError, KeyError) as e:
                raise CodecError(
                    f"{self.codec.to_dict()['name']}: zarr-python has no data type "
                    f"{encoded!r} for the encoded chunks: {e}"
                ) from e
            fill = zdtype.from_json_scalar(self.chain.encoded_fill_value_json, zarr_format=3)
            self.out = (zdtype, fill)
        return self.out

    def resolved_or_none(self) -> tuple[Any, Any] | None:
        if self.out is not None:
            return self.out
        try:
            return self.resolved()
        except CodecError:
            return None


_ELEMENT = re.compile(r" at element (\[[0-9, ]*\]|[0-9]+)")


def _run(chain: Chain, chunk: Any, encode: bool) -> Any:
    """Encode or decode one chunk. zarr does not tell a codec which chunk it runs, so an
    element error names the element "of a chunk of shape S"."""
    try:
        return chain.encode(chunk) if encode else chain.decode(chunk)
    except CodecError as e:
        shape = tuple(np.shape(chunk))
        msg = _ELEMENT.sub(lambda m: f"{m.group(0)} of a chunk of shape {shape}", str(e), 1)
        raise CodecError(msg) from None


class _Pending(CpuNDBuffer):
    """A chunk whose zquant codecs have not run yet: the input array, the first codec's
    bound chain (in encoding order) and the codecs after it, the direction, and the chunk
    spec the data is in now.

    Consecutive zquant codecs in a zarr pipeline (``ScaleOffset`` then ``CastValue``) are
    called one by one; each returns a ``_Pending`` that the next one extends, so the run of
    codecs becomes one zquant chain: one pass over the chunk, no intermediate array. The
    chain runs when anything reads the buffer (``_data``, through which every ``NDBuffer``
    method goes), so to everything else this is a plain CPU ``NDBuffer``.
    """

    _zq_src: Any = None
    _zq_spec: tuple[Any, Any]  # set by _make, with the other _zq_ fields

    def __init__(self, array: Any) -> None:  # as NDBuffer's own methods build one
        self.__dict__["_zq_value"] = array

    @classmethod
    def _make(
        cls,
        src: Any,
        bound: _Bound,
        rest: tuple[_ZquantCodec, ...],
        encode: bool,
        spec: tuple[Any, Any],
    ) -> _Pending:
        p = cls.__new__(cls)
        p.__dict__.update(
            _zq_value=None, _zq_src=src, _zq_bound=bound, _zq_rest=rest, _zq_encode=encode,
            _zq_spec=spec,
        )
        return p

    def _zq_open(self, encode: bool) -> bool:
        """Whether the codecs have not run yet, in direction ``encode``."""
        d = self.__dict__
        return d.get("_zq_value") is None and self._zq_src is not None and d["_zq_encode"] == encode

    @property
    def _data(self) -> Any:
        d = self.__dict__
        value = d.get("_zq_value")
        if value is None:
            chain = d["_zq_bound"].chain_with(d["_zq_rest"])
            src = d["_zq_src"]
            value = _run(chain, src, d["_zq_encode"])
            d["_zq_value"] = value
            d["_zq_src"] = None
        return value

    @_data.setter
    def _data(self, value: Any) -> None:
        self.__dict__["_zq_value"] = value


class _ZquantCodec(ArrayArrayCodec):
    """What the three codecs share: zquant's chain for a chunk spec, and the calls."""

    # The codec's Zarr v3 name, one of zquant's registry (``zquant._registry``): a class of
    # this module with a ``codec_name`` is the one ``zquant.use()`` maps that name to.
    codec_name: ClassVar[str]

    is_fixed_size = True
    # The data types the codec takes, for the message on one zquant does not know.
    _takes = "fixed-size integer and floating-point data types"

    # The per-process cache of bound chains is not part of the codec's data: it is left
    # out of pickles and equality (the dataclass fields are the configuration).
    def _zq_cache(self) -> dict[Any, Any]:
        cache = self.__dict__.get("_zq")
        if cache is None:
            cache = {}
            object.__setattr__(self, "_zq", cache)
        return cache

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_zq")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _bound(self, chunk_spec: ArraySpec) -> _Bound:
        dtype, fill = chunk_spec.dtype, chunk_spec.fill_value
        last: _Bound | None = self.__dict__.get("_zq_last")
        if last is not None and last.dtype is dtype and last.fill is fill:
            return last
        cache = self._zq_cache()
        key = (dtype, _fill_key(fill))
        bound = cache.get(key)
        if bound is None:
            bound = _Bound(self, dtype, fill)
            if len(cache) > 64:
                cache.clear()
            cache[key] = bound
        object.__setattr__(self, "_zq_last", bound)
        return bound

    def _chain_for(self, chunk_spec: ArraySpec) -> Chain:
        return self._bound(chunk_spec).chain

    def validate(self, *, shape: Any, dtype: Any, chunk_grid: Any) -> None:
        """Bind the configuration to the array's data type: every rule that depends on it
        (``scale``/``offset`` and ``scalar_map`` entries in the data type, supported types,
        bit widths) fails here, before zarr writes metadata. The fill value is checked by
        :meth:`evolve_from_array_spec`, which zarr calls with it."""
        _check_supported(self._codec_name(), self._takes, dtype)
        try:
            Chain(
                dtype.to_json(zarr_format=3),
                [self.to_dict()],
                dtype.to_json_scalar(dtype.default_scalar(), zarr_format=3),
            )
        except FillValueError:
            pass

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        """Bind to the chunk spec zarr builds the array with, its fill value included: a
        fill value this codec cannot encode (NaN into an integer without a ``scalar_map``,
        300 into ``uint8`` without ``out_of_range``) raises :class:`zquant.CodecError`
        before anything is written, as the cast_value spec asks ("SHOULD validate ... at
        metadata construction time"). zarr threads the encoded spec to the next codec, so
        the fill value is checked through the whole chain."""
        _check_supported(self._codec_name(), self._takes, array_spec.dtype)
        self._bound(array_spec)
        return self

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        """The encoded chunk spec: zquant's encoded data type and fill value.

        One case is not an error: zarr's sharding codec checks its inner codecs with the
        data type's default scalar, not the array's fill value (which
        :meth:`evolve_from_array_spec` has checked). A fill value the codecs cannot carry
        (:class:`zquant.FillValueError`, never a configuration error) then gives the encoded
        type's default scalar, as a representation.
        """
        try:
            dtype, fill = self._bound(chunk_spec).resolved()
        except FillValueError:
            dtype = self._encoded_zdtype(chunk_spec.dtype)
            fill = dtype.default_scalar()
        return replace(chunk_spec, dtype=dtype, fill_value=fill)

    def _codec_name(self) -> str:
        return self.codec_name

    def _encoded_zdtype(self, dtype: Any) -> Any:
        """The encoded ZDType, without a fill value: the same for all but cast_value."""
        return dtype

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        bound = self._bound(chunk_spec)
        if chunk_spec.prototype.nd_buffer is CpuNDBuffer:
            out = bound.resolved_or_none()
            if out is not None:
                if (
                    type(chunk_array) is _Pending
                    and chunk_array._zq_open(True)
                    and _same(chunk_array._zq_spec, (bound.dtype, bound.fill))
                ):
                    d = chunk_array.__dict__
                    return _Pending._make(
                        d["_zq_src"], d["_zq_bound"], (*d["_zq_rest"], self), True, out
                    )
                return _Pending._make(chunk_array.as_ndarray_like(), bound, (), True, out)
        out_array = _run(bound.chain, chunk_array.as_ndarray_like(), True)
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out_array)

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        bound = self._bound(chunk_spec)
        if chunk_spec.prototype.nd_buffer is CpuNDBuffer:
            spec = (bound.dtype, bound.fill)
            if type(chunk_array) is _Pending and chunk_array._zq_open(False):
                out = bound.resolved_or_none()
                if out is not None and _same(chunk_array._zq_spec, out):
                    d = chunk_array.__dict__
                    rest = (d["_zq_bound"].codec, *d["_zq_rest"])
                    return _Pending._make(d["_zq_src"], bound, rest, False, spec)
            return _Pending._make(chunk_array.as_ndarray_like(), bound, (), False, spec)
        out_array = _run(bound.chain, chunk_array.as_ndarray_like(), False)
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out_array)

    async def _encode_single(
        self, chunk_array: NDBuffer, chunk_spec: ArraySpec
    ) -> NDBuffer | None:
        return self._encode_sync(chunk_array, chunk_spec)

    async def _decode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return self._decode_sync(chunk_array, chunk_spec)

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        """The encoded size of ``input_byte_length`` bytes of the chunk's elements."""
        _check_supported(self._codec_name(), self._takes, chunk_spec.dtype)
        chain = self._chain_for(chunk_spec)
        size_in = _zquant.dtype_info(_dtypes.data_type_name(chain.data_type))[0]
        size_out = _zquant.dtype_info(
            _dtypes.data_type_name(chain.encoded_data_type)
        )[0]
        return input_byte_length // size_in * size_out


@dataclass(frozen=True)
class ScaleOffset(_ZquantCodec):
    """``scale_offset``: encode ``(x - offset) * scale``, decode ``x / scale + offset``, in
    the array's data type, every operation correctly rounded (floats) or checked
    (integers).

    Parameters
    ----------
    offset, scale
        Numbers, or the strings of the array data type's fill-value encoding (``"NaN"``,
        ``"Infinity"``, ``"-Infinity"``, hex codes such as ``"0x7fc00000"``). Decimal
        strings such as ``"0.1"`` are not that encoding and are refused when the codec is
        bound to the array. Defaults 0 and 1.
    """

    codec_name: ClassVar[str] = "scale_offset"

    offset: int | float | str
    scale: int | float | str

    def __init__(self, *, offset: int | float | str = 0, scale: int | float | str = 1) -> None:
        for name, v in (("offset", offset), ("scale", scale)):
            if isinstance(v, bool) or not isinstance(v, int | float | str):
                raise TypeError(f"scale_offset {name} must be a number or string, got {v!r}")
        object.__setattr__(self, "offset", _dtypes.fill_json(offset))
        object.__setattr__(self, "scale", _dtypes.fill_json(scale))

    def compute_encoded_size(
        self,
        input_byte_length: int,
        chunk_spec: ArraySpec | None = None,
        *,
        _chunk_spec: ArraySpec | None = None,
    ) -> int:
        """``input_byte_length``: scale_offset keeps the data type. ``_chunk_spec`` is the
        name zarr-python's own ``ScaleOffset`` gives the (unused) spec."""
        return input_byte_length

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """From the codec's JSON object."""
        config = _parse_named(data, cls.codec_name)
        unknown = set(config) - {"offset", "scale"}
        if unknown:
            raise CodecError(f"scale_offset: unknown configuration keys {sorted(unknown)}")
        return cls(**config)

    def to_dict(self) -> dict[str, Any]:
        """The codec's JSON object (defaults left out, as zarr-python writes it)."""
        config: dict[str, Any] = {}
        if self.offset != 0:
            config["offset"] = self.offset
        if self.scale != 1:
            config["scale"] = self.scale
        if not config:
            return {"name": self.codec_name}
        return {"name": self.codec_name, "configuration": config}


def _scalar_map_json(scalar_map: Any) -> dict[str, list[list[Any]]] | None:
    """A scalar_map as its JSON form ``{"encode": [[from, to], ...], "decode": ...}``, from
    that form or zarr-python's normalized one (a dict per direction)."""
    if scalar_map is None:
        return None
    if not isinstance(scalar_map, dict):
        raise CodecError(f"cast_value: scalar_map must be an object, got {scalar_map!r}")
    out: dict[str, list[list[Any]]] = {}
    for direction, entries in scalar_map.items():
        if entries is None:
            continue
        pairs = entries.items() if isinstance(entries, dict) else entries
        out[direction] = [[_dtypes.fill_json(k), _dtypes.fill_json(v)] for k, v in pairs]
    return out


@dataclass(frozen=True)
class CastValue(_ZquantCodec):
    """``cast_value``: convert each value to ``data_type`` and back, correctly rounded.

    Parameters
    ----------
    data_type
        The encoded data type: a Zarr v3 name, or a zarr-python ``ZDType``. The types
        zarr-python lacks (``float8_e4m3``, ``float4_e2m1fn``, ``uint4``, ``bfloat16``, ...)
        are :mod:`zquant.dtypes`' and need ml_dtypes.
    rounding
        ``"nearest-even"`` (default), ``"towards-zero"``, ``"towards-positive"``,
        ``"towards-negative"`` or ``"nearest-away"``.
    out_of_range
        ``None`` (an out-of-range value is an error), ``"clamp"`` or ``"wrap"``.
    scalar_map
        ``{"encode": [[from, to], ...], "decode": [[from, to], ...]}``, for example NaN
        stored as a code: ``{"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}``.
        zarr-python's form (a dict per direction) is accepted too.
    """

    codec_name: ClassVar[str] = "cast_value"

    data_type: Any
    rounding: Rounding
    out_of_range: OutOfRange | None
    scalar_map: dict[str, list[list[Any]]] | None

    def __init__(
        self,
        *,
        data_type: Any,
        rounding: Rounding = "nearest-even",
        out_of_range: OutOfRange | None = None,
        scalar_map: Any = None,
    ) -> None:
        if isinstance(data_type, str) and data_type not in _zquant.dtype_names():
            _check_supported("cast_value", self._takes, data_type)
        object.__setattr__(self, "data_type", _dtypes.parse_data_type(data_type))
        object.__setattr__(self, "rounding", rounding)
        object.__setattr__(self, "out_of_range", out_of_range)
        object.__setattr__(self, "scalar_map", _scalar_map_json(scalar_map))
        # The rules that do not depend on the source type (the target's kind, rounding and
        # out_of_range names, wrap into a float, the scalar_map's shape) are the Rust core's.
        _zquant.check_configuration(
            "cast_value", _dtypes.dumps(self.to_dict()["configuration"])
        )

    @property
    def dtype(self) -> Any:
        """The encoded data type as a zarr-python ``ZDType`` (zarr-python's ``CastValue``
        attribute); :attr:`data_type` is its Zarr JSON."""
        return get_data_type_from_json(self.data_type, zarr_format=3)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """From the codec's JSON object."""
        config = _parse_named(data, cls.codec_name)
        unknown = set(config) - {"data_type", "rounding", "out_of_range", "scalar_map"}
        if unknown:
            raise CodecError(f"cast_value: unknown configuration keys {sorted(unknown)}")
        if "data_type" not in config:
            raise CodecError("cast_value: the configuration needs a data_type")
        return cls(**config)

    def to_dict(self) -> dict[str, Any]:
        """The codec's JSON object (defaults left out, as zarr-python writes it)."""
        config: dict[str, Any] = {"data_type": self.data_type}
        if self.rounding != "nearest-even":
            config["rounding"] = self.rounding
        if self.out_of_range is not None:
            config["out_of_range"] = self.out_of_range
        if self.scalar_map is not None:
            # Pairs as tuples, as zarr-python's CastValue writes them (the same JSON).
            config["scalar_map"] = {
                d: [(k, v) for k, v in pairs] for d, pairs in self.scalar_map.items()
            }
        return {"name": self.codec_name, "configuration": config}

    def __hash__(self) -> int:
        return hash(_dtypes.dumps(self.to_dict()))

    def _encoded_zdtype(self, dtype: Any) -> Any:
        return get_data_type_from_json(self.data_type, zarr_format=3)


@dataclass(frozen=True)
class BitRound(_ZquantCodec):
    """``bitround``: round each float's mantissa to ``keepbits`` bits, to nearest with ties
    to even (integers: to ``keepbits`` significant bits).

    Parameters
    ----------
    keepbits
        The mantissa bits to keep, at least 1 (the ``bitround`` README; 0 is
        ``numcodecs.bitround``'s) and at most the type's.
    """

    codec_name: ClassVar[str] = "bitround"

    keepbits: int
    _takes = "fixed-size integer, floating-point, complex and time data types"

    def __init__(self, *, keepbits: int) -> None:
        if isinstance(keepbits, bool) or not isinstance(keepbits, int):
            raise TypeError(f"bitround keepbits must be an int, got {keepbits!r}")
        # The rule (at least 1 under this name) is the Rust core's; so is the check against
        # the data type's mantissa width, when the codec is bound to an array.
        _zquant.check_configuration("bitround", _dtypes.dumps({"keepbits": keepbits}))
        object.__setattr__(self, "keepbits", keepbits)

    def compute_encoded_size(
        self, input_byte_length: int, chunk_spec: ArraySpec | None = None
    ) -> int:
        """``input_byte_length``: bitround keeps the data type."""
        return input_byte_length

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """From the codec's JSON object."""
        config = _parse_named(data, cls.codec_name)
        unknown = set(config) - {"keepbits"}
        if unknown or "keepbits" not in config:
            raise CodecError(f"bitround: the configuration is {{'keepbits': int}}, got {config!r}")
        return cls(keepbits=config["keepbits"])

    def to_dict(self) -> dict[str, Any]:
        """The codec's JSON object."""
        return {"name": self.codec_name, "configuration": {"keepbits": self.keepbits}}

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        """bitround's decode is the identity: the chunk itself, not a copy (as numcodecs'
        ``BitRound.decode`` returns a view). zarr copies a decoded chunk before it writes
        into it."""
        self._bound(chunk_spec)  # the spec is checked as for any other codec
        return chunk_array


PaddingEncoding = Literal["none", "first_byte", "last_byte"]


class _BoundPackBits:
    """``packbits`` bound to one data type: zquant's codec and the NumPy views."""

    __slots__ = ("dtype", "per", "rust", "word")

    def __init__(self, codec: PackBits, data_type: Any) -> None:
        name = _dtypes.data_type_name(_dtypes.parse_data_type(data_type))
        self.rust = _zquant.RustPackBits(name, _dtypes.dumps(codec._configuration()))
        self.word = _dtypes.word_dtype(name)
        self.per = _zquant.dtype_info(name)[2]
        self.dtype = data_type


@dataclass(frozen=True)
class PackBits(ArrayBytesCodec):
    """``packbits``: each element's ``last_bit - first_bit + 1`` bits (per component of a
    complex type) packed into a bit sequence, least significant bit first, padded to whole
    bytes; decoding sign-extends signed integers. zquant's Rust kernels do the packing.

    Parameters
    ----------
    padding_encoding
        ``"none"`` (default), ``"first_byte"`` or ``"last_byte"``: where the count of
        padding bits is stored, if anywhere.
    first_bit, last_bit
        The bits of each component kept (from the least significant, inclusive); ``None``
        is 0 and ``N - 1``, ``N`` the component's bits (4 for ``int4``, 16 for ``uint16``).
    """

    codec_name: ClassVar[str] = "packbits"
    is_fixed_size = True

    padding_encoding: PaddingEncoding
    first_bit: int | None
    last_bit: int | None

    def __init__(
        self,
        *,
        padding_encoding: PaddingEncoding = "none",
        first_bit: int | None = None,
        last_bit: int | None = None,
    ) -> None:
        config: dict[str, Any] = {"padding_encoding": padding_encoding}
        for name, v in (("first_bit", first_bit), ("last_bit", last_bit)):
            if v is not None:
                config[name] = v
        for name, v in config.items():
            try:
                _dtypes.dumps(v)
            except (TypeError, ValueError) as e:
                raise CodecError(f"packbits: `{name}`: {v!r} is not JSON ({e})") from e
        # Every rule (the padding names, the bit indices, last_bit >= first_bit) is the Rust
        # core's, stated once in zquant::zarr::packbits::parse_configuration.
        _zquant.check_packbits_configuration(_dtypes.dumps(config))
        object.__setattr__(self, "padding_encoding", padding_encoding)
        object.__setattr__(self, "first_bit", first_bit)
        object.__setattr__(self, "last_bit", last_bit)

    def _configuration(self) -> dict[str, Any]:
        config: dict[str, Any] = {"padding_encoding": self.padding_encoding}
        if self.first_bit is not None:
            config["first_bit"] = self.first_bit
        if self.last_bit is not None:
            config["last_bit"] = self.last_bit
        return config

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """From the codec's JSON object (the README's keys; schema.json's ``start_bit``,
        ``end_bit``, ``start_byte`` and ``end_byte`` are not read, as in zarrs)."""
        config = _parse_named(data, cls.codec_name)
        unknown = set(config) - {"padding_encoding", "first_bit", "last_bit"}
        if unknown:
            raise CodecError(
                f"packbits: unknown configuration keys {sorted(unknown)} (the keys are "
                "padding_encoding, first_bit and last_bit)"
            )
        return cls(**config)

    def to_dict(self) -> dict[str, Any]:
        """The codec's JSON object."""
        return {"name": self.codec_name, "configuration": self._configuration()}

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_zq")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _bound(self, data_type: Any) -> _BoundPackBits:
        last: _BoundPackBits | None = self.__dict__.get("_zq_last")
        if last is not None and last.dtype is data_type:
            return last
        cache = self.__dict__.get("_zq")
        if cache is None:
            cache = {}
            object.__setattr__(self, "_zq", cache)
        key = _dtypes.dumps(_dtypes.parse_data_type(data_type))
        bound = cache.get(key)
        if bound is None:
            bound = _BoundPackBits(self, data_type)
            cache[key] = bound
        object.__setattr__(self, "_zq_last", bound)
        return bound

    def validate(self, *, shape: Any, dtype: Any, chunk_grid: Any) -> None:
        """Bind to the array's data type: a bit range beyond it fails here, at creation."""
        self._bound(dtype)

    def encode_array(self, array: Any, data_type: Any) -> np.ndarray[Any, Any]:
        """Pack ``array`` (any layout; C order is the packing order) of ``data_type`` (a
        Zarr name or JSON, a NumPy dtype-like or a ``ZDType``) to ``uint8`` bytes. A
        C-contiguous, native array is read in place."""
        bound = self._bound(data_type)
        a = _dtypes.contiguous(_dtypes.native(np.asarray(array)))
        words = _dtypes.words_of(a, bound.word)
        out = np.empty(bound.rust.encoded_len(words.size // bound.per), dtype=np.uint8)
        bound.rust.encode_into(words, out)
        return out

    def decode_array(
        self, data: Any, shape: tuple[int, ...], data_type: Any, dtype: Any = None
    ) -> np.ndarray[Any, Any]:
        """Unpack ``data`` (bytes-like or ``uint8`` array) to an array of ``shape``; its
        NumPy dtype is ``dtype`` if given, else the one of ``data_type``."""
        bound = self._bound(data_type)
        src = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data
        src = _dtypes.contiguous(src.reshape(-1).view(np.uint8))
        n = int(np.prod(shape, dtype=np.int64))
        out = np.empty(n * bound.per, dtype=bound.word)
        bound.rust.decode_into(src, out)
        target = np.dtype(dtype) if dtype is not None else _dtypes.to_numpy(
            _dtypes.parse_data_type(data_type)
        )
        return out.view(target).reshape(shape)

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        out = self.encode_array(chunk_array.as_ndarray_like(), chunk_spec.dtype)
        return chunk_spec.prototype.buffer.from_array_like(out)

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        a = self.decode_array(
            chunk_bytes.as_array_like(),
            tuple(chunk_spec.shape),
            chunk_spec.dtype,
            chunk_spec.dtype.to_native_dtype(),
        )
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(a)

    async def _encode_single(
        self, chunk_array: NDBuffer, chunk_spec: ArraySpec
    ) -> Buffer | None:
        return self._encode_sync(chunk_array, chunk_spec)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        return self._decode_sync(chunk_bytes, chunk_spec)

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        """The packed size of ``input_byte_length`` bytes of the chunk's elements."""
        bound = self._bound(chunk_spec.dtype)
        size = _zquant.dtype_info(
            _dtypes.data_type_name(_dtypes.parse_data_type(chunk_spec.dtype))
        )[0]
        return int(bound.rust.encoded_len(input_byte_length // size))
