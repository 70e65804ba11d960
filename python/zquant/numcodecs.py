"""numcodecs codecs run by zquant: ``FixedScaleOffset``, ``BitRound``, ``Quantize`` and
``AsType``.

Same ``codec_id``, arguments and ``get_config()`` as numcodecs' classes, and the same bytes
out where numcodecs is right (zquant's ``numcodecs.fixedscaleoffset`` reproduces NumPy 2's
arithmetic and casts; see docs/spec-readings.md for the readings). Like numcodecs,
``FixedScaleOffset`` returns a one-dimensional array in the input's memory order and
``BitRound`` returns the integer view of the rounded floats. :func:`zquant.use` registers
them under numcodecs' ids.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_ndarray, ensure_ndarray_like, ndarray_copy

from . import Chain, CodecError, _dtypes

__all__ = ["AsType", "BitRound", "FixedScaleOffset", "Quantize"]

_MANTISSA_BITS = {"float16": 10, "float32": 23, "float64": 52}


def _number(x: Any) -> int | float:
    """A Python number for JSON: ints stay ints (numcodecs' Python int semantics)."""
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise CodecError(f"fixedscaleoffset: offset and scale must be numbers, got {x!r}")
    return x


class FixedScaleOffset(Codec):
    """numcodecs' ``FixedScaleOffset`` run by zquant: ``astype(around((x - offset) *
    scale))`` to encode, ``dtype(y / scale + offset)`` to decode, as NumPy 2 computes them.

    Parameters
    ----------
    offset, scale
        Python numbers (an ``int`` and a ``float`` differ, as in numcodecs).
    dtype
        The decoded dtype.
    astype
        The encoded dtype (default ``dtype``).
    """

    codec_id = "fixedscaleoffset"

    def __init__(self, offset: Any, scale: Any, dtype: Any, astype: Any = None) -> None:
        self.offset = offset
        self.scale = scale
        self.dtype = np.dtype(dtype)
        self.astype = self.dtype if astype is None else np.dtype(astype)
        if self.dtype == np.dtype(object) or self.astype == np.dtype(object):
            raise ValueError("object arrays are not supported")
        native_dtype = self.dtype.newbyteorder("=")
        native_astype = self.astype.newbyteorder("=")
        config = {
            "offset": _number(offset),
            "scale": _number(scale),
            "dtype": native_dtype.str,
            "astype": native_astype.str,
        }
        self._chain = Chain(
            _dtypes.from_numpy(native_dtype),
            [{"name": "numcodecs.fixedscaleoffset", "configuration": config}],
        )

    def __getstate__(self) -> dict[str, Any]:
        return self.get_config()

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state.pop("id", None)
        self.__init__(**state)  # type: ignore[misc]

    def encode(self, buf: Any) -> np.ndarray[Any, Any]:
        """Encode: a one-dimensional array of ``astype``, in ``buf``'s memory order."""
        arr = ensure_ndarray(buf).view(self.dtype).reshape(-1, order="A")
        enc = self._chain.encode(arr)
        return enc if enc.dtype == self.astype else enc.astype(self.astype)

    def decode(self, buf: Any, out: Any = None) -> Any:
        """Decode: a one-dimensional array of ``dtype`` (or into ``out``)."""
        enc = ensure_ndarray(buf).view(self.astype).reshape(-1, order="A")
        dec = self._chain.decode(enc)
        if dec.dtype != self.dtype:
            dec = dec.astype(self.dtype)
        return ndarray_copy(dec, out)

    def get_config(self) -> dict[str, Any]:
        """numcodecs' configuration."""
        return {
            "id": self.codec_id,
            "scale": self.scale,
            "offset": self.offset,
            "dtype": self.dtype.str,
            "astype": self.astype.str,
        }

    def __repr__(self) -> str:
        r = f"{type(self).__name__}(scale={self.scale}, offset={self.offset}, dtype={self.dtype.str!r}"
        if self.astype != self.dtype:
            r += f", astype={self.astype.str!r}"
        return r + ")"


class BitRound(Codec):
    """numcodecs' ``BitRound`` run by zquant: keep ``keepbits`` mantissa bits of float16,
    float32 or float64, rounding to nearest with ties to even.

    Parameters
    ----------
    keepbits
        Mantissa bits to keep, from 0 to the type's.
    """

    codec_id = "bitround"

    def __init__(self, keepbits: int) -> None:
        if keepbits < 0:
            raise ValueError("keepbits must be zero or positive")
        self.keepbits = keepbits

    def _chain(self, dtype: np.dtype[Any]) -> Chain:
        """The chain for a (native) float dtype, built once per codec object and dtype."""
        chains = self.__dict__.setdefault("_chains", {})
        chain: Chain | None = chains.get(dtype)
        if chain is None:
            name = _dtypes.from_numpy(dtype)
            config = {"keepbits": self.keepbits}
            chain = Chain(name, [{"name": "numcodecs.bitround", "configuration": config}])
            chains[dtype] = chain
        return chain

    def __getstate__(self) -> dict[str, Any]:
        return {"keepbits": self.keepbits}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["keepbits"])  # type: ignore[misc]

    def encode(self, buf: Any) -> Any:
        """Round: the integer view of the rounded floats (``buf`` itself when every bit is
        kept), as numcodecs returns them."""
        a = ensure_ndarray_like(buf)
        if a.dtype.kind != "f" or a.dtype.itemsize > 8:
            raise TypeError("Only float arrays (16-64bit) can be bit-rounded")
        bits = _MANTISSA_BITS[str(a.dtype.newbyteorder("="))]
        if self.keepbits == bits:
            return a
        if self.keepbits > bits:
            raise ValueError("Keepbits too large for given dtype")
        rounded = self._chain(a.dtype.newbyteorder("=")).encode(a)
        if rounded.dtype != a.dtype:
            rounded = rounded.astype(a.dtype)
        return rounded.view(np.dtype(a.dtype.str.replace("f", "i")))

    def decode(self, buf: Any, out: Any = None) -> Any:
        """The floats again (a view of the integers), copied into ``out`` if given."""
        buf = ensure_ndarray_like(buf)
        data = buf.view(np.dtype(buf.dtype.str.replace("i", "f")))
        return ndarray_copy(data, out)


def _digits(digits: Any) -> int:
    """numcodecs' ``digits`` as the integer zquant's configuration takes (an integral float
    computes the same scale in numcodecs)."""
    if isinstance(digits, float | np.floating) and float(digits).is_integer():
        return int(digits)
    try:
        return operator.index(digits)
    except TypeError:
        raise CodecError(f"quantize: digits must be an integer, got {digits!r}") from None


class Quantize(Codec):
    """numcodecs' ``Quantize`` run by zquant: ``astype(around(scale * x) / scale)`` with
    ``scale`` the power of two numcodecs derives from ``digits``, as NumPy 2 computes it;
    decoding casts back to ``dtype``.

    Parameters
    ----------
    digits
        Decimal digits to keep (from -308 to 307, where numcodecs can compute its scale).
    dtype
        The decoded float dtype.
    astype
        The encoded float dtype (default ``dtype``).
    """

    codec_id = "quantize"

    def __init__(self, digits: Any, dtype: Any, astype: Any = None) -> None:
        self.digits = digits
        self.dtype = np.dtype(dtype)
        self.astype = self.dtype if astype is None else np.dtype(astype)
        if self.dtype.kind != "f" or self.astype.kind != "f":
            raise ValueError("only floating point data types are supported")
        native_dtype = self.dtype.newbyteorder("=")
        config = {
            "digits": _digits(digits),
            "dtype": native_dtype.str,
            "astype": self.astype.newbyteorder("=").str,
        }
        self._chain = Chain(
            _dtypes.from_numpy(native_dtype),
            [{"name": "numcodecs.quantize", "configuration": config}],
        )

    def __getstate__(self) -> dict[str, Any]:
        return self.get_config()

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state.pop("id", None)
        self.__init__(**state)  # type: ignore[misc]

    def encode(self, buf: Any) -> np.ndarray[Any, Any]:
        """Encode: an array of ``astype`` of ``buf``'s shape."""
        arr = ensure_ndarray(buf).view(self.dtype)
        enc = self._chain.encode(arr)
        return enc if enc.dtype == self.astype else enc.astype(self.astype)

    def decode(self, buf: Any, out: Any = None) -> Any:
        """Decode: the cast back to ``dtype`` (or into ``out``)."""
        enc = ensure_ndarray(buf).view(self.astype)
        dec = self._chain.decode(enc)
        if dec.dtype != self.dtype:
            dec = dec.astype(self.dtype)
        return ndarray_copy(dec, out)

    def get_config(self) -> dict[str, Any]:
        """numcodecs' configuration."""
        return {
            "id": self.codec_id,
            "digits": self.digits,
            "dtype": self.dtype.str,
            "astype": self.astype.str,
        }

    def __repr__(self) -> str:
        r = f"{type(self).__name__}(digits={self.digits}, dtype={self.dtype.str!r}"
        if self.astype != self.dtype:
            r += f", astype={self.astype.str!r}"
        return r + ")"


def _is_numpy_number(dt: np.dtype[Any]) -> bool:
    """Whether ``dt`` is one of int8..int64, uint8..uint64, float16/32/64."""
    return (dt.kind in "iu" and dt.itemsize <= 8) or (dt.kind == "f" and dt.itemsize in (2, 4, 8))


def _is_astype_type(dt: np.dtype[Any]) -> bool:
    """Whether zquant's ``numcodecs.astype`` casts ``dt``: a NumPy number or complex64/128."""
    return _is_numpy_number(dt) or (dt.kind == "c" and dt.itemsize in (8, 16))


def _warn_if_complex_to_real(src: np.dtype[Any], dst: np.dtype[Any]) -> None:
    """NumPy's ``ComplexWarning`` for a cast that drops the imaginary part, as numcodecs'
    ``astype`` gives it."""
    if src.kind == "c" and dst.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=3)


class AsType(Codec):
    """numcodecs' ``AsType`` run by zquant: NumPy's cast from ``decode_dtype`` to
    ``encode_dtype`` and back (on x86-64, the scalar loop's values for NaN and out-of-range
    float -> integer casts; see docs/spec-readings.md).

    Parameters
    ----------
    encode_dtype
        The encoded dtype.
    decode_dtype
        The decoded dtype.
    """

    codec_id = "astype"

    def __init__(self, encode_dtype: Any, decode_dtype: Any) -> None:
        self.encode_dtype = np.dtype(encode_dtype)
        self.decode_dtype = np.dtype(decode_dtype)
        native_decode = self.decode_dtype.newbyteorder("=")
        config = {
            "encode_dtype": self.encode_dtype.newbyteorder("=").str,
            "decode_dtype": native_decode.str,
        }
        # zquant casts between NumPy's eleven numeric types and complex64/128; any other
        # pair (bool, datetime, ...) is NumPy's own cast, as in numcodecs.
        self._chain: Chain | None = None
        if all(_is_astype_type(d) for d in (self.encode_dtype, self.decode_dtype)):
            self._chain = Chain(
                _dtypes.from_numpy(native_decode),
                [{"name": "numcodecs.astype", "configuration": config}],
            )

    def __getstate__(self) -> dict[str, Any]:
        return self.get_config()

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state.pop("id", None)
        self.__init__(**state)  # type: ignore[misc]

    def encode(self, buf: Any) -> np.ndarray[Any, Any]:
        """Encode: an array of ``encode_dtype`` of ``buf``'s shape."""
        arr: np.ndarray[Any, Any] = ensure_ndarray(buf).view(self.decode_dtype)
        if self._chain is None:
            return arr.astype(self.encode_dtype)
        _warn_if_complex_to_real(self.decode_dtype, self.encode_dtype)
        enc = self._chain.encode(arr)
        return enc if enc.dtype == self.encode_dtype else enc.astype(self.encode_dtype)

    def decode(self, buf: Any, out: Any = None) -> Any:
        """Decode: an array of ``decode_dtype`` (or into ``out``)."""
        enc = ensure_ndarray(buf).view(self.encode_dtype)
        if self._chain is None:
            dec = enc.astype(self.decode_dtype)
        else:
            _warn_if_complex_to_real(self.encode_dtype, self.decode_dtype)
            dec = self._chain.decode(enc)
            if dec.dtype != self.decode_dtype:
                dec = dec.astype(self.decode_dtype)
        return ndarray_copy(dec, out)

    def get_config(self) -> dict[str, Any]:
        """numcodecs' configuration."""
        return {
            "id": self.codec_id,
            "encode_dtype": self.encode_dtype.str,
            "decode_dtype": self.decode_dtype.str,
        }

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(encode_dtype={self.encode_dtype.str!r}, "
            f"decode_dtype={self.decode_dtype.str!r})"
        )
