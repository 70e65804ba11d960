"""Zarr data type names <-> NumPy dtypes, and arrays as storage words.

The Rust side sees an array as one-dimensional, C-contiguous storage words (uint8, uint16,
uint32 or uint64, native byte order) plus its shape; this module makes that view without
copying whenever the array allows it.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from . import _zquant

JSON = Any

# Zarr v3 names NumPy itself has.
_NUMPY_NAMES: dict[str, str] = {
    "int8": "i1",
    "int16": "i2",
    "int32": "i4",
    "int64": "i8",
    "uint8": "u1",
    "uint16": "u2",
    "uint32": "u4",
    "uint64": "u8",
    "float16": "f2",
    "float32": "f4",
    "float64": "f8",
    "complex64": "c8",
    "complex128": "c16",
}

# Zarr v3 names ml_dtypes has, under the same name.
_ML_DTYPES_NAMES = (
    "bfloat16",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "int2",
    "int4",
    "uint2",
    "uint4",
)

_TIME = {"numpy.datetime64": "M8", "numpy.timedelta64": "m8"}


def _ml_dtypes() -> Any:
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes


def data_type_name(data_type: JSON) -> str:
    """The Zarr name of a data type's JSON (a name, or an object with a name)."""
    if isinstance(data_type, dict):
        return str(data_type.get("name"))
    return str(data_type)


def to_numpy(data_type: JSON) -> np.dtype[Any]:
    """The NumPy dtype of a Zarr v3 data type (its JSON: a name or a named object).

    Raises ``zquant.CodecError`` for a type NumPy cannot hold: the small floats, bfloat16
    and the sub-byte integers need ``ml_dtypes``; the complex types of small floats have no
    NumPy dtype.
    """
    name = data_type_name(data_type)
    if name in _NUMPY_NAMES:
        return np.dtype(_NUMPY_NAMES[name])
    if name in _TIME:
        config = data_type.get("configuration", {}) if isinstance(data_type, dict) else {}
        unit = config.get("unit", "generic")
        factor = int(config.get("scale_factor", 1))
        if unit == "generic":
            return np.dtype(_TIME[name])
        return np.dtype(f"{_TIME[name]}[{factor if factor != 1 else ''}{unit}]")
    if name in _ML_DTYPES_NAMES:
        ml = _ml_dtypes()
        if ml is None:
            raise _zquant.CodecError(
                f"data type {name} has no NumPy dtype without ml_dtypes: "
                "pip install ml_dtypes (or zquant[ml-dtypes])"
            )
        dt: np.dtype[Any] = np.dtype(getattr(ml, name))
        return dt
    raise _zquant.CodecError(
        f"data type {name!r} has no NumPy (or ml_dtypes) dtype: zquant runs it from Rust, "
        "but it cannot be held in a NumPy array"
    )


def from_numpy(dtype: Any) -> JSON:
    """The Zarr v3 data type JSON of a NumPy dtype (or anything ``np.dtype`` accepts)."""
    dt = np.dtype(dtype)
    if dt.kind in "Mm":
        unit, factor = np.datetime_data(dt)
        name = "numpy.datetime64" if dt.kind == "M" else "numpy.timedelta64"
        return {"name": name, "configuration": {"unit": unit, "scale_factor": int(factor)}}
    native = dt.newbyteorder("=") if dt.byteorder not in "=|" else dt
    for name, code in _NUMPY_NAMES.items():
        if native == np.dtype(code):
            return name
    ml = _ml_dtypes()
    if ml is not None:
        for name in _ML_DTYPES_NAMES:
            if native == np.dtype(getattr(ml, name)):
                return name
    raise _zquant.CodecError(f"NumPy dtype {dt} is not a Zarr data type zquant implements")


def parse_data_type(data_type: Any) -> JSON:
    """A Zarr data type JSON from a Zarr name, a Zarr JSON object, or a NumPy dtype-like."""
    if isinstance(data_type, dict):
        return data_type
    if isinstance(data_type, str) and data_type in _zquant.dtype_names():
        return data_type
    if hasattr(data_type, "to_json") and hasattr(data_type, "to_native_dtype"):
        # A zarr-python ZDType.
        return data_type.to_json(zarr_format=3)
    try:
        return from_numpy(data_type)
    except TypeError as e:
        raise _zquant.CodecError(
            f"data type {data_type!r} is not one zquant's codecs take (fixed-size integer, "
            "floating-point, complex and time types: a Zarr v3 name, its JSON, a NumPy "
            "dtype or a zarr-python ZDType)"
        ) from e


def word_dtype(data_type: JSON) -> np.dtype[Any]:
    """The unsigned integer dtype of a data type's storage words."""
    _, bits, _, _ = _zquant.dtype_info(data_type_name(data_type))
    return np.dtype(f"u{bits // 8}")


def fill_json(value: Any) -> JSON:
    """A fill value (Python or NumPy scalar, or already its Zarr JSON) as Zarr JSON."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.datetime64 | np.timedelta64):
        return int(value.astype(np.int64))
    if isinstance(value, np.generic):
        if value.dtype.kind in "iub":
            value = value.item()
        elif value.dtype.kind == "c":
            value = complex(value)
        else:
            value = float(value)
    if isinstance(value, bool):
        raise _zquant.CodecError(f"fill value {value!r}: booleans are not a zquant data type")
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, complex):
        return [fill_json(value.real), fill_json(value.imag)]
    if isinstance(value, list | tuple):
        return [fill_json(v) for v in value]
    return value


def zero_fill(data_type: JSON) -> JSON:
    """The fill value 0 of a data type, as Zarr JSON."""
    name = data_type_name(data_type)
    if name.startswith("complex"):
        return [0.0, 0.0]
    return 0


def dumps(value: JSON) -> str:
    """JSON text of metadata (no bare NaN: Zarr writes non-finite numbers as strings)."""
    return json.dumps(value, allow_nan=False)


def native(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``a`` in native byte order: a view when it already is, else one copy."""
    if a.dtype.byteorder in "=|":
        return a
    return a.astype(a.dtype.newbyteorder("="))


def contiguous(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``a`` C-contiguous and aligned (arrays received over a network, as dask workers get
    them, can be unaligned): ``a`` itself when it already is, else one copy."""
    return np.require(a, requirements=["C_CONTIGUOUS", "ALIGNED"])


def words_of(a: np.ndarray[Any, Any], words: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The storage words of a C-contiguous, native array: a view, one-dimensional."""
    return a.reshape(-1).view(words)


def scalar_from_words(words: list[int], dtype: np.dtype[Any], word: np.dtype[Any]) -> Any:
    """The NumPy scalar of ``dtype`` whose storage words are ``words``."""
    return np.array(words, dtype=word).view(dtype)[0]
