"""zarr-python 3 codecs run by zquant: ``ScaleOffset``, ``CastValue`` and ``BitRound``.

They are ``ArrayArrayCodec``s whose constructor arguments and ``to_dict()``/``from_dict()``
JSON follow the codec specs, as zarr-python's built-ins do; they are registered through the
``zarr.codecs`` entry points under ``scale_offset``, ``cast_value`` and ``bitround``.
zarr-python picks between implementations of one name by its ``codecs.<name>``
configuration: :func:`zquant.use` sets it to these classes. They can also be passed
directly, for example ``filters=[ScaleOffset(...), CastValue(...)]``.

Each object is plain data (its configuration): it pickles and ships to dask workers. The
zquant chain it runs is built once per process for each (data type, fill value) it sees and
cached. The GIL is released while zquant encodes or decodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from zarr.abc.codec import ArrayArrayCodec
from zarr.core.dtype import get_data_type_from_json

from . import Chain, CodecError, _dtypes

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer

__all__ = ["BitRound", "CastValue", "ScaleOffset"]

Rounding = Literal[
    "nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"
]
OutOfRange = Literal["clamp", "wrap"]


@lru_cache(maxsize=1024)
def _chain(codec: str, data_type: str, fill: str) -> Chain:
    """The one-codec chain for a codec's JSON text on a data type and fill value."""
    return Chain(json.loads(data_type), [json.loads(codec)], json.loads(fill))


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


class _ZquantCodec(ArrayArrayCodec):
    """What the three codecs share: zquant's chain for a chunk spec, and the calls."""

    is_fixed_size = True

    def _chain_for(self, chunk_spec: ArraySpec) -> Chain:
        zdtype = chunk_spec.dtype
        data_type = zdtype.to_json(zarr_format=3)
        fill = zdtype.to_json_scalar(chunk_spec.fill_value, zarr_format=3)
        return _chain(_dtypes.dumps(self.to_dict()), _dtypes.dumps(data_type), _dtypes.dumps(fill))

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        """The encoded chunk spec: zquant's encoded data type and fill value."""
        chain = self._chain_for(chunk_spec)
        encoded = chain.encoded_data_type
        try:
            zdtype = get_data_type_from_json(encoded, zarr_format=3)
        except (TypeError, ValueError, KeyError) as e:
            raise CodecError(
                f"{self.to_dict()['name']}: zarr-python has no data type {encoded!r} "
                f"for the encoded chunks: {e}"
            ) from e
        fill = zdtype.from_json_scalar(chain.encoded_fill_value_json, zarr_format=3)
        return replace(chunk_spec, dtype=zdtype, fill_value=fill)

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        out = self._chain_for(chunk_spec).encode(chunk_array.as_ndarray_like())
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        out = self._chain_for(chunk_spec).decode(chunk_array.as_ndarray_like())
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)

    async def _encode_single(
        self, chunk_array: NDBuffer, chunk_spec: ArraySpec
    ) -> NDBuffer | None:
        return self._encode_sync(chunk_array, chunk_spec)

    async def _decode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return self._decode_sync(chunk_array, chunk_spec)

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        chain = self._chain_for(chunk_spec)
        size_in = _dtypes._zquant.dtype_info(_dtypes.data_type_name(chain.data_type))[0]
        size_out = _dtypes._zquant.dtype_info(
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
        Numbers, or strings (the exact JSON text, for example ``"0.1"`` or ``"NaN"``), in
        the array data type's fill-value encoding. Defaults 0 and 1.
    """

    offset: int | float | str
    scale: int | float | str

    def __init__(self, *, offset: int | float | str = 0, scale: int | float | str = 1) -> None:
        for name, v in (("offset", offset), ("scale", scale)):
            if isinstance(v, bool) or not isinstance(v, int | float | str):
                raise TypeError(f"scale_offset {name} must be a number or string, got {v!r}")
        object.__setattr__(self, "offset", _dtypes.fill_json(offset))
        object.__setattr__(self, "scale", _dtypes.fill_json(scale))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """From the codec's JSON object."""
        config = _parse_named(data, "scale_offset")
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
            return {"name": "scale_offset"}
        return {"name": "scale_offset", "configuration": config}


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
        The encoded data type: a Zarr v3 name, or a zarr-python ``ZDType``.
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
        object.__setattr__(self, "data_type", _dtypes.parse_data_type(data_type))
        object.__setattr__(self, "rounding", rounding)
        object.__setattr__(self, "out_of_range", out_of_range)
        object.__setattr__(self, "scalar_map", _scalar_map_json(scalar_map))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """From the codec's JSON object."""
        config = _parse_named(data, "cast_value")
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
            config["scalar_map"] = self.scalar_map
        return {"name": "cast_value", "configuration": config}

    def __hash__(self) -> int:
        return hash(_dtypes.dumps(self.to_dict()))


@dataclass(frozen=True)
class BitRound(_ZquantCodec):
    """``bitround``: round each float's mantissa to ``keepbits`` bits, to nearest with ties
    to even (integers: to ``keepbits`` significant bits).

    Parameters
    ----------
    keepbits
        The mantissa bits to keep, at least 1 and at most the type's.
    """

    keepbits: int

    def __init__(self, *, keepbits: int) -> None:
        if isinstance(keepbits, bool) or not isinstance(keepbits, int):
            raise TypeError(f"bitround keepbits must be an int, got {keepbits!r}")
        object.__setattr__(self, "keepbits", keepbits)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """From the codec's JSON object."""
        config = _parse_named(data, "bitround")
        unknown = set(config) - {"keepbits"}
        if unknown or "keepbits" not in config:
            raise CodecError(f"bitround: the configuration is {{'keepbits': int}}, got {config!r}")
        return cls(keepbits=config["keepbits"])

    def to_dict(self) -> dict[str, Any]:
        """The codec's JSON object."""
        return {"name": "bitround", "configuration": {"keepbits": self.keepbits}}
