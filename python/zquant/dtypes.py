"""zarr-python 3 data types for the Zarr v3 types zarr-python 3.4 lacks, backed by ml_dtypes.

``bfloat16``; the float8 family (``float8_e3m4``, ``float8_e4m3``, ``float8_e4m3b11fnuz``,
``float8_e4m3fnuz``, ``float8_e5m2``, ``float8_e5m2fnuz``, ``float8_e8m0fnu``);
``float6_e2m3fn``, ``float6_e3m2fn``, ``float4_e2m1fn``; ``int2``, ``int4``, ``uint2``,
``uint4``. Each is a :class:`zarr.core.dtype.ZDType` whose NumPy dtype is ml_dtypes' dtype of
the same name. They are registered through the ``zarr.data_type`` entry points, so after
``pip install "zquant[ml-dtypes]"`` ``zarr.create_array(..., dtype="float8_e4m3")`` and
``zarr.open_array`` of such an array work without importing zquant.

Fill values follow the data type specs (shared/specs/data-types): JSON numbers (rounded once,
exactly, to nearest-even), ``"NaN"``, ``"Infinity"``/``"-Infinity"`` where the type has them,
and ``"0x…"`` hex strings of the code (the only way to write a NaN other than the canonical
one). They are read and written by zquant's Rust fill-value code, the same that reads Zarr
metadata in Rust, so a fill value means the same code in both. zquant writes finite values
as the shortest decimal that reads back as the same code, ``-0.0`` for negative zero, the
canonical NaN as ``"NaN"`` and any other NaN as ``"0x…"``.

Layout under ``bytes``: one byte per element (two, in the codec's byte order, for
bfloat16), the sub-byte types in the low bits with the upper bits zero, as ml_dtypes writes
them (the specs allow any upper bits and ignore them on read).

Without ml_dtypes the entry points still load (zarr stays usable for every other type);
naming one of these types raises ``ModuleNotFoundError`` saying to install ml_dtypes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, ClassVar, Literal, Self, TypeGuard

import numpy as np
from zarr.core.dtype import ZDType
from zarr.core.dtype.common import HasEndianness, HasItemSize
from zarr.core.dtype.npy.common import (
    endianness_to_numpy_str,
    get_endianness_from_numpy_dtype,
)
from zarr.errors import DataTypeValidationError

from ._zquant import CodecError, RustChain

__all__ = [
    "BFloat16",
    "DATA_TYPES",
    "Float4E2M1FN",
    "Float6E2M3FN",
    "Float6E3M2FN",
    "Float8E3M4",
    "Float8E4M3",
    "Float8E4M3B11FNUZ",
    "Float8E4M3FNUZ",
    "Float8E5M2",
    "Float8E5M2FNUZ",
    "Float8E8M0FNU",
    "Int2",
    "Int4",
    "UInt2",
    "UInt4",
    "register",
]

ZarrFormat = Literal[2, 3]


def _ml_dtype(name: str) -> np.dtype[Any]:
    """ml_dtypes' NumPy dtype ``name``; ``ModuleNotFoundError`` without ml_dtypes."""
    try:
        import ml_dtypes
    except ImportError as e:
        raise ModuleNotFoundError(
            f"zquant.dtypes: the Zarr data type {name!r} is held in NumPy by ml_dtypes, "
            "which is not installed: pip install 'zquant[ml-dtypes]' (or ml_dtypes)",
            name="ml_dtypes",
        ) from e
    dt: np.dtype[Any] = np.dtype(getattr(ml_dtypes, name))
    return dt


def _float_text(x: float) -> str:
    """A float as JSON text of its exact value (so that rounding it to a narrow type rounds
    the float itself, whether or not the reader keeps decimal text exact)."""
    if x != x:
        return '"NaN"'
    if x in (float("inf"), float("-inf")):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    if x == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    sign, digits, exponent = Decimal(x).as_tuple()  # finite: the exponent is an int
    text = "".join(map(str, digits))
    return f"{'-' if sign else ''}{text}e{int(exponent)}"


def _is_ml_scalar(data: object) -> bool:
    """Whether ``data`` is a scalar of one of ml_dtypes' types (their dtypes' kind is "V",
    but "f" for float8_e5m2: the module tells)."""
    return isinstance(data, np.generic) and type(data).__module__ == "ml_dtypes"


@lru_cache(maxsize=4096)
def _code_of(name: str, text: str) -> int:
    """The code of the fill-value JSON ``text`` in type ``name`` (zquant's parser)."""
    return RustChain(json.dumps(name), text, "[]").encoded_fill_words[0]


@lru_cache(maxsize=4096)
def _json_of(name: str, code: int, digits: int) -> Any:
    """The fill-value JSON zquant writes for ``code`` of type ``name``."""
    chain = RustChain(json.dumps(name), json.dumps(f"0x{code:0{digits}x}"), "[]")
    return json.loads(chain.encoded_fill_value)


@dataclass(frozen=True, kw_only=True)
class _Narrow(ZDType[np.dtype[Any], Any], HasItemSize):
    """What the fifteen types share: the name, ml_dtypes' dtype, the JSON both ways and
    fill values through zquant's Rust fill-value code."""

    _zarr_v3_name: ClassVar[str]
    # Bits of the type in its storage (sub-byte types: the low ``_bits`` of one byte).
    _bits: ClassVar[int]
    _item_size: ClassVar[int]
    _is_float: ClassVar[bool]
    # Whether the type has a NaN (whose payload a code keeps), and infinities.
    _has_nan: ClassVar[bool] = False
    _has_inf: ClassVar[bool] = False

    @property
    def item_size(self) -> int:
        """Bytes per element in memory and under the ``bytes`` codec."""
        return self._item_size

    # -- the data type itself --------------------------------------------------------------

    @classmethod
    def _check_native_dtype(cls, dtype: Any) -> TypeGuard[np.dtype[Any]]:
        try:
            import ml_dtypes
        except ImportError:
            return False
        return isinstance(dtype, np.dtype) and dtype.type is getattr(ml_dtypes, cls._zarr_v3_name)

    @classmethod
    def from_native_dtype(cls, dtype: Any) -> Self:
        """The data type of ml_dtypes' dtype of the same name."""
        if cls._check_native_dtype(dtype):
            return cls._of_native(dtype)
        raise DataTypeValidationError(
            f"Invalid data type: {dtype}. Expected ml_dtypes.{cls._zarr_v3_name}"
        )

    @classmethod
    def _of_native(cls, dtype: np.dtype[Any]) -> Self:
        return cls()

    def to_native_dtype(self) -> np.dtype[Any]:
        """ml_dtypes' NumPy dtype (``ModuleNotFoundError`` without ml_dtypes)."""
        return _ml_dtype(self._zarr_v3_name)

    @classmethod
    def _check_json_v3(cls, data: Any) -> bool:
        # The specs' schema: the name, or {"name": ..., "configuration": {}} (no keys).
        if data == cls._zarr_v3_name:
            return True
        return (
            isinstance(data, dict)
            and data.get("name") == cls._zarr_v3_name
            and set(data) <= {"name", "configuration"}
            and data.get("configuration", {}) == {}
        )

    @classmethod
    def _from_json_v3(cls, data: Any) -> Self:
        if cls._check_json_v3(data):
            _ml_dtype(cls._zarr_v3_name)  # a clear error now, not a confusing one later
            return cls()
        raise DataTypeValidationError(
            f"Invalid JSON representation of {cls.__name__}. Got {data!r}, expected "
            f"{cls._zarr_v3_name!r}."
        )

    @classmethod
    def _from_json_v2(cls, data: Any) -> Self:
        raise DataTypeValidationError(
            f"{cls._zarr_v3_name} is a Zarr v3 data type; Zarr v2 has no name for it"
        )

    def to_json(self, zarr_format: ZarrFormat) -> Any:
        """The Zarr v3 name (Zarr v2 has none: ``ValueError``)."""
        if zarr_format == 3:
            return self._zarr_v3_name
        raise ValueError(
            f"{self._zarr_v3_name}: Zarr format {zarr_format} has no name for this data type; "
            "write the array with zarr_format=3"
        )

    # -- scalars ---------------------------------------------------------------------------

    def _check_scalar(self, data: object) -> bool:
        if isinstance(data, bool | np.bool_):
            return False
        if isinstance(data, int | float | str | np.integer | np.floating):
            return True
        # ml_dtypes' scalars; complex, time, bytes, ... are not numbers here.
        return _is_ml_scalar(data)

    def _text(self, data: Any) -> str:
        """``data`` (passed ``_check_scalar``) as fill-value JSON text for zquant."""
        if isinstance(data, str):
            return json.dumps(data)
        if _is_ml_scalar(data):
            if data.dtype.type is self.to_native_dtype().type and self._has_nan:
                code = int(np.asarray(data).view(f"u{data.dtype.itemsize}")[()])
                if np.isnan(data):
                    return json.dumps(f"0x{code:0{2 * self._item_size}x}")
            is_int = data.dtype.type.__name__.startswith(("int", "uint"))
            data = int(data) if is_int else float(data)
        if isinstance(data, int | np.integer):
            return str(int(data))
        return _float_text(float(data))

    def _code(self, data: Any, what: str) -> int:
        text = self._text(data)
        try:
            return _code_of(self._zarr_v3_name, text)
        except CodecError as e:
            raise CodecError(
                f"data type {self._zarr_v3_name}: {what} {data!r} rejected ({e}); it holds "
                f"{self._holds()}"
            ) from None

    def _holds(self) -> str:
        """What the type holds, for error messages."""
        import ml_dtypes

        native = _ml_dtype(self._zarr_v3_name)
        if not self._is_float:
            info = ml_dtypes.iinfo(native)
            return f"the integers {int(info.min)} to {int(info.max)}"
        top = float(ml_dtypes.finfo(native).max)
        if self._zarr_v3_name == "float8_e8m0fnu":
            text = f"the powers of two 2^-127 to {top:g} (no 0, no negative numbers)"
        else:
            text = f"numbers of magnitude up to {top:g}"
        specials = [s for s, has in (("NaN", self._has_nan), ("+-Infinity", self._has_inf)) if has]
        text += f", {' and '.join(specials)}" if specials else ", no NaN, no infinity"
        return text + ' (JSON: a number, "NaN"/"Infinity"/"-Infinity" where it has them, "0x…")'

    def _scalar(self, code: int) -> Any:
        # NumPy scalars are in native byte order whatever the data type's.
        word = np.dtype(f"u{self._item_size}")
        return np.array([code], dtype=word).view(_ml_dtype(self._zarr_v3_name))[0]

    def cast_scalar(self, data: object) -> Any:
        """``data`` as a scalar of this type: Python and NumPy numbers (rounded once to
        nearest-even), ml_dtypes scalars, or a fill-value JSON string (``"NaN"``, ``"0x…"``).

        ``TypeError`` for anything else; ``zquant.CodecError`` (a ``ValueError``) for a value
        the type cannot hold (an integer out of range, a NaN or infinity the type lacks, a
        finite type's overflow)."""
        if not self._check_scalar(data):
            raise TypeError(
                f"Cannot convert object {data!r} with type {type(data)} to a scalar of the "
                f"data type {self._zarr_v3_name}: expected a number, an ml_dtypes scalar or "
                'a fill-value string ("NaN", "Infinity", "0x…")'
            )
        return self._scalar(self._code(data, "value"))

    def default_scalar(self) -> Any:
        """0 (``float8_e8m0fnu``, which has no 0: 1.0, its code ``0x7f``)."""
        return self._scalar(0)

    def from_json_scalar(self, data: Any, *, zarr_format: ZarrFormat) -> Any:
        """A fill value from its JSON: a number, ``"NaN"``/``"Infinity"``/``"-Infinity"``
        where the type has them, or ``"0x…"`` (2 hex digits per byte)."""
        if isinstance(data, bool) or not isinstance(data, int | float | str):
            raise TypeError(
                f"{self._zarr_v3_name} fill value {data!r}: expected a JSON number or string"
            )
        return self._scalar(self._code(data, "fill value"))

    def to_json_scalar(self, data: object, *, zarr_format: ZarrFormat) -> Any:
        """The fill value's JSON, as zquant writes it."""
        scalar = self.cast_scalar(data)
        if not self._is_float:
            return int(scalar)
        code = int(np.asarray(scalar).view(f"u{self._item_size}")[()])
        return _json_of(self._zarr_v3_name, code, 2 * self._item_size)


@dataclass(frozen=True, kw_only=True)
class _SmallFloat(_Narrow):
    """A one-byte float (the float8 family, float6, float4)."""

    _bits: ClassVar[int] = 8
    _item_size: ClassVar[int] = 1
    _is_float: ClassVar[bool] = True
    _has_nan: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class _SubByteInt(_Narrow):
    """An integer in the low bits of one byte."""

    _item_size: ClassVar[int] = 1
    _is_float: ClassVar[bool] = False

    def _check_scalar(self, data: object) -> bool:
        if isinstance(data, float | np.floating | str):
            return False
        return super()._check_scalar(data)


@dataclass(frozen=True, kw_only=True)
class BFloat16(_Narrow, HasEndianness):
    """``bfloat16``: float32's top 16 bits; two bytes under ``bytes``, in its byte order."""

    _zarr_v3_name: ClassVar[str] = "bfloat16"
    _has_inf: ClassVar[bool] = True
    _bits: ClassVar[int] = 16
    _item_size: ClassVar[int] = 2
    _is_float: ClassVar[bool] = True
    _has_nan: ClassVar[bool] = True

    @classmethod
    def _of_native(cls, dtype: np.dtype[Any]) -> Self:
        return cls(endianness=get_endianness_from_numpy_dtype(dtype))

    def to_native_dtype(self) -> np.dtype[Any]:
        """ml_dtypes' bfloat16, in this data type's byte order."""
        return _ml_dtype("bfloat16").newbyteorder(endianness_to_numpy_str(self.endianness))


@dataclass(frozen=True, kw_only=True)
class Float8E3M4(_SmallFloat):
    """``float8_e3m4``: IEEE-style, bias 3, with ±Infinity and NaN (``"NaN"`` is 0x78)."""

    _zarr_v3_name: ClassVar[str] = "float8_e3m4"
    _has_inf: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class Float8E4M3(_SmallFloat):
    """``float8_e4m3``: IEEE-style, bias 7, with ±Infinity and NaN (``"NaN"`` is 0x7c)."""

    _zarr_v3_name: ClassVar[str] = "float8_e4m3"
    _has_inf: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class Float8E4M3B11FNUZ(_SmallFloat):
    """``float8_e4m3b11fnuz``: bias 11, no infinity, NaN only 0x80, no -0."""

    _zarr_v3_name: ClassVar[str] = "float8_e4m3b11fnuz"


@dataclass(frozen=True, kw_only=True)
class Float8E4M3FNUZ(_SmallFloat):
    """``float8_e4m3fnuz``: bias 8, no infinity, NaN only 0x80, no -0."""

    _zarr_v3_name: ClassVar[str] = "float8_e4m3fnuz"


@dataclass(frozen=True, kw_only=True)
class Float8E5M2(_SmallFloat):
    """``float8_e5m2``: IEEE-style, bias 15, with ±Infinity and NaN (``"NaN"`` is 0x7e)."""

    _zarr_v3_name: ClassVar[str] = "float8_e5m2"
    _has_inf: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class Float8E5M2FNUZ(_SmallFloat):
    """``float8_e5m2fnuz``: bias 16, no infinity, NaN only 0x80, no -0."""

    _zarr_v3_name: ClassVar[str] = "float8_e5m2fnuz"


@dataclass(frozen=True, kw_only=True)
class Float8E8M0FNU(_SmallFloat):
    """``float8_e8m0fnu``: powers of two 2^(e-127), no sign, no 0, NaN 0xff.

    Its default scalar is 1.0 (code 0x7f): the type has no 0."""

    _zarr_v3_name: ClassVar[str] = "float8_e8m0fnu"

    def default_scalar(self) -> Any:
        """1.0 (code 0x7f): the type has no 0."""
        return self._scalar(0x7F)


@dataclass(frozen=True, kw_only=True)
class Float6E2M3FN(_SmallFloat):
    """``float6_e2m3fn``: 6 bits (sign, 2 exponent bits, bias 1, 3 mantissa bits), no
    infinity, no NaN; the low 6 bits of a byte."""

    _zarr_v3_name: ClassVar[str] = "float6_e2m3fn"
    _bits: ClassVar[int] = 6
    _has_nan: ClassVar[bool] = False


@dataclass(frozen=True, kw_only=True)
class Float6E3M2FN(_SmallFloat):
    """``float6_e3m2fn``: 6 bits (sign, 3 exponent bits, bias 3, 2 mantissa bits), no
    infinity, no NaN; the low 6 bits of a byte."""

    _zarr_v3_name: ClassVar[str] = "float6_e3m2fn"
    _bits: ClassVar[int] = 6
    _has_nan: ClassVar[bool] = False


@dataclass(frozen=True, kw_only=True)
class Float4E2M1FN(_SmallFloat):
    """``float4_e2m1fn``: 4 bits (sign, 2 exponent bits, bias 1, 1 mantissa bit), no
    infinity, no NaN; the low 4 bits of a byte."""

    _zarr_v3_name: ClassVar[str] = "float4_e2m1fn"
    _bits: ClassVar[int] = 4
    _has_nan: ClassVar[bool] = False


@dataclass(frozen=True, kw_only=True)
class Int2(_SubByteInt):
    """``int2``: a signed integer in [-2, 1], the low 2 bits of a byte."""

    _zarr_v3_name: ClassVar[str] = "int2"
    _bits: ClassVar[int] = 2


@dataclass(frozen=True, kw_only=True)
class Int4(_SubByteInt):
    """``int4``: a signed integer in [-8, 7], the low 4 bits of a byte."""

    _zarr_v3_name: ClassVar[str] = "int4"
    _bits: ClassVar[int] = 4


@dataclass(frozen=True, kw_only=True)
class UInt2(_SubByteInt):
    """``uint2``: an unsigned integer in [0, 3], the low 2 bits of a byte."""

    _zarr_v3_name: ClassVar[str] = "uint2"
    _bits: ClassVar[int] = 2


@dataclass(frozen=True, kw_only=True)
class UInt4(_SubByteInt):
    """``uint4``: an unsigned integer in [0, 15], the low 4 bits of a byte."""

    _zarr_v3_name: ClassVar[str] = "uint4"
    _bits: ClassVar[int] = 4


#: Every data type of this module, by its Zarr v3 name.
DATA_TYPES: dict[str, type[_Narrow]] = {
    cls._zarr_v3_name: cls
    for cls in (
        BFloat16,
        Float8E3M4,
        Float8E4M3,
        Float8E4M3B11FNUZ,
        Float8E4M3FNUZ,
        Float8E5M2,
        Float8E5M2FNUZ,
        Float8E8M0FNU,
        Float6E2M3FN,
        Float6E3M2FN,
        Float4E2M1FN,
        Int2,
        Int4,
        UInt2,
        UInt4,
    )
}


def register() -> None:
    """Register every data type of this module with zarr-python's data type registry
    (idempotent). The ``zarr.data_type`` entry points do this when zquant is installed;
    ``zquant.zarr`` calls it too, so that its codecs resolve these types however zquant was
    put on the path."""
    from zarr.core.dtype import data_type_registry

    for name, cls in DATA_TYPES.items():
        data_type_registry.register(name, cls)
