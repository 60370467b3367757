"""Correctly rounded doubles of exact sums of fractions, proved in extended precision where it can be.

A rational measure's value (and its mean) is an exact sum of ``num/den``
terms, and what reports show is that rational correctly rounded to a double.
Exact integer arithmetic gives it, at the cost of big integers (an AP over
1,000 ranks has a common denominator of hundreds of digits).  Here the terms
are first summed in long double (a 64-bit significand on x86, 11 bits more
than a double) together with a rigorous bound on the error of that sum; when
the whole interval ``sum +- bound`` lies strictly inside the rounding
interval of one double (between the midpoints to its neighbours), that double
*is* the correctly rounded exact value.  Only the sums that fall within the
bound of a midpoint (about one in ten) are left to exact arithmetic.  On a
platform whose long double is no wider than a double nothing is ever settled
here, and every value is computed exactly, as before.

The bound: each term ``num/den`` is one rounded division of exactly held
integers (relative error <= u, the unit roundoff), and adding m terms in any
order errs by at most (m - 1) u times the sum of their magnitudes; so the
sum errs by at most m u S (S: the sum of the magnitudes), taken twice for
the rounding of S and of the bound itself.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

LONG = np.longdouble
EXTENDED = np.finfo(LONG).nmant >= 63  # an x87 long double (or wider): 11+ bits beyond a double
_U = LONG(np.finfo(LONG).eps) / 2


def long_sums(num: np.ndarray, den: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Long-double sums of num/den over the non-empty segments beginning at ``starts``, and a bound on each error."""
    if len(starts) == 0:
        return np.zeros(0, dtype=LONG), np.zeros(0, dtype=LONG)
    terms = num.astype(LONG) / den.astype(LONG)
    sums = np.add.reduceat(terms, starts)
    counts = np.diff(np.append(starts, len(terms))).astype(LONG)
    return sums, 2 * counts * _U * np.add.reduceat(np.abs(terms), starts)


def settled(approx: np.ndarray, bound: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The double nearest each ``approx``, and where it is proved to be the exact value correctly rounded
    (the exact value lies within ``bound`` of ``approx``).

    The midpoints between a double and its neighbours are held exactly in a
    long double (they need 54 bits); the differences to them are exact too
    (two nearby long doubles), so the test itself adds no error.
    """
    nearest = approx.astype(np.float64)
    if not EXTENDED:
        return nearest, np.zeros(len(nearest), dtype=bool)
    mid = nearest.astype(LONG)
    with np.errstate(invalid="ignore", over="ignore"):
        below = (np.nextafter(nearest, -np.inf).astype(LONG) + mid) / 2
        above = (np.nextafter(nearest, np.inf).astype(LONG) + mid) / 2
        ok = (approx - below > bound) & (above - approx > bound) & np.isfinite(nearest)
    return nearest, ok


def settled_ratio(sums: np.ndarray, bounds: np.ndarray, divisor: int) -> float | None:
    """The correctly rounded double of (exact total) / ``divisor``, where the exact total lies within
    ``sum(bounds)`` of ``sum(sums)``; None when that interval straddles a rounding boundary.

    The long-double sums are added exactly (each split into two doubles, a
    dyadic rational), so only the bounds stand between this and the exact
    mean; the test is done in rationals, a handful of operations.
    """
    if not EXTENDED:
        return None
    total, slack = _dyadic_sum(sums), _dyadic_sum(bounds)
    nearest = float(total / divisor)
    if not np.isfinite(nearest):
        return None
    below = (Fraction(float(np.nextafter(nearest, -np.inf))) + Fraction(nearest)) / 2
    above = (Fraction(float(np.nextafter(nearest, np.inf))) + Fraction(nearest)) / 2
    if below < (total - slack) / divisor and (total + slack) / divisor < above:
        return nearest
    return None


def _dyadic_sum(values: np.ndarray) -> Fraction:
    """The exact sum of long doubles: each is a double plus the (exactly representable) double remainder."""
    high = values.astype(np.float64)
    low = (values - high.astype(LONG)).astype(np.float64)
    ratios = [x.as_integer_ratio() for x in (*high.tolist(), *low.tolist()) if x]
    if not ratios:
        return Fraction(0)
    top = max(d.bit_length() for _, d in ratios)  # denominators are powers of two: shift, never divide
    return Fraction(sum(n << (top - d.bit_length()) for n, d in ratios), 1 << (top - 1))
