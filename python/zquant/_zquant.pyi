"""Type stubs of the extension module ``zquant._zquant`` (the PyO3 layer, python/src/).

The one stub of the package: the Python modules carry their own annotations. python/ci.sh
checks this file against the built module with ``mypy.stubtest``.
"""

from collections.abc import Callable
from typing import final

import numpy as np
import numpy.typing as npt

__all__ = [
    "CodecError",
    "FillValueError",
    "RustChain",
    "check_configuration",
    "RustPackBits",
    "check_packbits_configuration",
    "codec_names",
    "PooledBuffer",
    "empty",
    "set_buffer_pool",
    "buffer_pool",
    "bit_counts",
    "bit_information",
    "keepbits",
    "finite_range",
    "fit_scale_offset",
    "plan_stats",
    "plan_stats_merge",
    "plan",
    "dtype_info",
    "dtype_names",
]

class CodecError(ValueError):
    """A codec, metadata or input error from zquant, with zquant's message."""

class FillValueError(CodecError):
    """The array's fill value is invalid for its data type or cannot be carried through a
    codec (the codecs' configuration itself is valid)."""

@final
class RustChain:
    """A zquant ``DynChain`` built from JSON texts; immutable, shared between threads."""

    def __new__(cls, data_type: str, fill_value: str, codecs: str) -> RustChain: ...
    @property
    def data_type(self) -> str: ...
    @property
    def encoded_data_type(self) -> str: ...
    @property
    def encoded_fill_value(self) -> str: ...
    @property
    def encoded_fill_words(self) -> list[int]: ...
    @property
    def codecs(self) -> str: ...
    @property
    def warnings(self) -> list[str]: ...
    def encode_into(
        self, src: npt.NDArray[np.unsignedinteger], shape: list[int], out: npt.NDArray[np.unsignedinteger]
    ) -> None: ...
    def run_strided_into(
        self,
        encode: bool,
        src: npt.NDArray[np.unsignedinteger],
        elements: int,
        out: npt.NDArray[np.unsignedinteger],
    ) -> None: ...
    def decode_into(
        self, src: npt.NDArray[np.unsignedinteger], shape: list[int], out: npt.NDArray[np.unsignedinteger]
    ) -> None: ...

@final
class RustPackBits:
    """zquant's ``packbits`` codec bound to a data type; immutable."""

    def __new__(cls, data_type: str, configuration: str) -> RustPackBits: ...
    @property
    def bits_per_element(self) -> int: ...
    @property
    def configuration(self) -> str: ...
    def encoded_len(self, elements: int) -> int: ...
    def encode_into(self, src: npt.NDArray[np.unsignedinteger], out: npt.NDArray[np.uint8]) -> None: ...
    def decode_into(self, src: npt.NDArray[np.uint8], out: npt.NDArray[np.unsignedinteger]) -> None: ...

@final
class PooledBuffer:
    """The owner (NumPy base object) of a buffer from zquant's buffer pool."""

def empty(nbytes: int) -> npt.NDArray[np.uint8]:
    """An uninitialized, 64-byte aligned ``uint8`` array of ``nbytes`` from the buffer pool."""

def set_buffer_pool(limit: int) -> int:
    """Set the buffer pool's limit in bytes (0: off); returns the previous limit."""

def buffer_pool() -> tuple[int, int, int]:
    """``(limit, bytes held, buffers held)`` of the buffer pool."""

def bit_counts(
    data_type: str,
    words: npt.NDArray[np.unsignedinteger],
    shape: list[int],
    axis: int,
    mask_nan: bool = True,
    masked_bits: int | None = None,
) -> tuple[int, npt.NDArray[np.uint64]]: ...
def bit_information(
    data_type: str, axis: int, pairs: int, counts: npt.NDArray[np.uint64], confidence: float
) -> npt.NDArray[np.float64]: ...
def keepbits(
    data_type: str, axis: int, pairs: int, counts: npt.NDArray[np.uint64], confidence: float, level: float
) -> int: ...
def finite_range(data_type: str, words: npt.NDArray[np.unsignedinteger]) -> tuple[float, float] | None: ...
def fit_scale_offset(
    source: str, target: str, lo: float, hi: float, max_abs_error: float, nan_sentinel: bool
) -> tuple[str, float]: ...
def check_configuration(name: str, configuration: str) -> None:
    """Raise ``CodecError`` unless the JSON text is a valid configuration of codec ``name``
    as far as it does not depend on the data type."""

def check_packbits_configuration(configuration: str) -> None:
    """Raise ``CodecError`` unless the JSON text is a valid ``packbits`` configuration."""
def plan_stats(
    data_type: str,
    words: npt.NDArray[np.unsignedinteger],
    shape: list[int],
    axis: int,
    information: bool = False,
    pairs_only: bool = False,
) -> str:
    """The planner's statistics of one chunk (JSON text); bit counts along ``axis`` when
    ``information``; ``pairs_only``: the bit pairs alone (a slab across a chunk edge)."""
def plan_stats_merge(a: str, b: str) -> str:
    """Two pieces' planner statistics (JSON text) merged."""
def plan(
    data_type: str,
    stats: str,
    samples: list[tuple[npt.NDArray[np.unsignedinteger], list[int]]],
    fill_value: object,
    target: str,
    options: str,
    size: Callable[[bytes], int],
) -> str:
    """The plan's JSON text: ``{"winner", "bound", "target", "abs_bound", "candidates"}``."""
def codec_names() -> list[tuple[str, str]]:
    """Every codec name zquant runs, with its kind (``"array_to_array"`` or
    ``"array_to_bytes"``): the Rust registry's names and aliases, then ``packbits``."""

def dtype_info(name: str) -> tuple[int, int, int, bool]: ...
def dtype_names() -> list[str]: ...
