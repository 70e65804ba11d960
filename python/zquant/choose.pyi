from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .plans import DatasetPlan as DatasetPlan
from .plans import Plan as Plan

SAMPLE_ELEMENTS: int

def bitinformation(a: Any, axis: int = -1, confidence: float = 0.99) -> np.ndarray[Any, np.dtype[np.float64]]: ...
def keepbits(a: Any, level: float = 0.99, axis: int = -1) -> int: ...
def fit_scale_offset(a: Any, data_type: Any, max_abs_error: float, nan_sentinel: bool = False) -> list[Any]: ...
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
    sample_elements: int = ...,
    lossless_fallback: bool = False,
) -> Plan: ...
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
    sample_elements: int = ...,
    lossless_fallback: bool = False,
    progress: Callable[[Iterable[str]], Iterable[str]] | None = None,
) -> DatasetPlan: ...
