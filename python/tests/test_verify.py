"""zquant.verify.check_block, the read-back check of `zquant quantize`: exact at the bound,
NaN, infinities and fill values where they were, merged over blocks."""

from __future__ import annotations

import numpy as np

from zquant.verify import Check, check_block


def test_exactly_at_the_bound_passes_a_hair_over_fails():
    x = np.array([0.1, 0.2, 0.3])
    bound = 0.05
    at = x + bound  # rounded: may land a hair either side of the exact bound
    c = check_block(x, at, "max_abs_error", bound)
    exact_over = [abs(float(np.float64(a)) - float(v)) for a, v in zip(at, x, strict=True)]
    from fractions import Fraction

    want = sum(Fraction(a) - Fraction(v) > Fraction(bound) for a, v in zip(at, x, strict=True))
    assert c.violations == want and c.elements == 3
    assert c.max_abs_error == max(exact_over)
    over = np.nextafter(x + 2 * bound, np.inf)
    c = check_block(x, over, "max_abs_error", bound, offset=(10,))
    assert c.violations == 3 and c.first == ((10,), 0.1, float(over[0]))


def test_relative_bound_and_zeros():
    x = np.array([0.0, 1.0, -4.0], dtype=np.float32)
    ok = np.array([0.0, 1.0009765625, -4.00390625], dtype=np.float32)
    assert check_block(x, ok, "max_rel_error", 2.0**-10).ok
    bad = np.array([1e-30, 1.0, -4.0], dtype=np.float32)
    c = check_block(x, bad, "max_rel_error", 0.5)
    assert c.violations == 1 and c.first[0] == (0,)


def test_non_finite_values_and_fill_are_kept():
    x = np.array([np.nan, np.inf, -np.inf, 5.0, 1.0])
    assert check_block(x, x.copy(), "max_abs_error", 0.1).ok
    for i, wrong in ((0, 0.0), (1, np.nan), (2, np.inf), (3, np.nan)):
        y = x.copy()
        y[i] = wrong
        assert check_block(x, y, "max_abs_error", 0.1).violations == 1, i
    # A fill value (here 5) must read back as itself, whatever the bound.
    y = x.copy()
    y[3] = 5.05
    assert check_block(x, y, "max_abs_error", 0.1).ok
    assert not check_block(x, y, "max_abs_error", 0.1, fill_value=5.0).ok


def test_exact_kind_and_merge():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    b = a.copy()
    b[1, 2] = 0
    c = check_block(a, b, "exact", offset=(4, 0))
    assert c.violations == 1 and c.first == ((5, 2), 5.0, 0.0)
    f = np.array([np.nan, 1.0])
    assert check_block(f, f.copy(), "exact").ok
    merged = Check(3, 0.5, 0, None).merge(c).merge(Check(2, 0.1, 1, ((9, 9), 1.0, 2.0)))
    assert merged == Check(11, 0.5, 2, ((5, 2), 5.0, 0.0))
