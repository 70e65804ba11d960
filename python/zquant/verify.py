"""Decoded values checked against a bound, a block at a time: every finite element within
it, NaN, infinities and the fill value kept where they were. Blocks' results merge, so an
array is checked chunk-parallel and never whole in one process.

Errors are computed in float64 and, where that rounding could decide the verdict (within
a relative 2^-40 of the bound), again exactly in rationals: a value exactly at the bound
passes, one a hair over it fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np

__all__ = ["Check", "check_block"]

Kind = Literal["max_abs_error", "max_rel_error", "exact"]
_NEAR = 1.0 - 2.0**-40


@dataclass(frozen=True)
class Check:
    """What a check found: elements checked, the largest absolute error over finite
    elements, how many elements broke the rule, and the first of them (its index in the
    whole array, its value and its decoded value)."""

    elements: int = 0
    max_abs_error: float = 0.0
    violations: int = 0
    first: tuple[tuple[int, ...], float, float] | None = None

    @property
    def ok(self) -> bool:
        """Whether every element kept the rule."""
        return self.violations == 0

    def merge(self, other: Check) -> Check:
        """Both checks as one (the first violation by index)."""
        firsts = [f for f in (self.first, other.first) if f is not None]
        return Check(
            self.elements + other.elements,
            max(self.max_abs_error, other.max_abs_error),
            self.violations + other.violations,
            min(firsts, key=lambda f: f[0]) if firsts else None,
        )


def _exactly_over(s: float, d: float, kind: Kind, bound: float) -> bool:
    err = abs(Fraction(d) - Fraction(s))
    if kind == "max_abs_error":
        return err > Fraction(bound)
    return err > Fraction(bound) * abs(Fraction(s))


def check_block(
    src: Any,
    dst: Any,
    kind: Kind,
    bound: float = 0.0,
    fill_value: Any = math.nan,
    offset: tuple[int, ...] | None = None,
) -> Check:
    """Check ``dst`` (decoded) against ``src`` (the original), elementwise.

    ``kind`` is ``"max_abs_error"`` (``|d - s| <= bound``), ``"max_rel_error"``
    (``|d - s| <= bound * |s|``) or ``"exact"`` (equal; NaN equal to NaN). For floats,
    NaN must decode as NaN, an infinity as itself, a finite value as a finite value, and
    an element equal to ``fill_value`` as the fill value. ``offset`` is the block's
    position in the whole array, for the index of the first violation.
    """
    s = np.asarray(src)
    d = np.asarray(dst)
    if s.shape != d.shape:
        raise ValueError(f"check: shapes differ, {s.shape} and {d.shape}")
    offset = offset or (0,) * s.ndim
    if s.dtype.kind not in "fcV" or kind == "exact":
        if s.dtype.kind in "fcV":
            s64, d64 = s.astype(np.float64), d.astype(np.float64)
            bad = ~((s64 == d64) | (np.isnan(s64) & np.isnan(d64)))
            err = np.where(np.isfinite(s64) & np.isfinite(d64), np.abs(d64 - s64), 0.0)
            worst = float(err.max(initial=0.0))
        else:
            bad = s != d
            worst = 0.0
        return _result(s, d, bad, worst, offset)
    s64 = s.astype(np.float64)
    d64 = d.astype(np.float64)
    finite = np.isfinite(s64)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(d64 - s64)
    limit = bound if kind == "max_abs_error" else bound * np.abs(s64)
    ok_finite = finite & np.isfinite(d64)
    bad = finite & ~np.isfinite(d64)
    # Where float64 rounding of the error could decide, decide exactly.
    over = ok_finite & (err > limit * _NEAR)
    for index in zip(*np.nonzero(over), strict=True):
        if not _exactly_over(float(s64[index]), float(d64[index]), kind, bound):
            over[index] = False
    bad |= over
    # Non-finite values are kept: NaN as NaN, an infinity as itself.
    nan = np.isnan(s64)
    bad |= nan & ~np.isnan(d64)
    bad |= np.isinf(s64) & (d64 != s64)
    fill = float(np.asarray(fill_value, dtype=np.float64))
    if not math.isnan(fill):
        bad |= (s64 == fill) & (d64 != fill)
    worst = float(np.where(ok_finite, err, 0.0).max(initial=0.0))
    return _result(s64, d64, bad, worst, offset)


def _result(
    s: np.ndarray[Any, Any],
    d: np.ndarray[Any, Any],
    bad: np.ndarray[Any, Any],
    worst: float,
    offset: tuple[int, ...],
) -> Check:
    count = int(np.count_nonzero(bad))
    first = None
    if count:
        local = tuple(int(i) for i in np.argwhere(bad)[0])
        index = tuple(o + i for o, i in zip(offset, local, strict=True))
        first = (index, _scalar(s[local]), _scalar(d[local]))
    return Check(int(s.size), worst, count, first)


def _scalar(x: Any) -> Any:
    try:
        return float(x)
    except (TypeError, ValueError):
        return str(x)
