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
integers (relative error <= u, the unit roundoff), so the terms err by at
most u S together (S: the sum of their magnitudes).  Added one after the
other, m terms err by (m - 1) u S more: the bound m u S, taken twice for the
rounding of S and of the bound itself, leaves about one AP in ten unsettled.
Those are added again pairwise with each addition's rounding error recovered
exactly (``_pairwise``), so the sum adds only its final rounding, u |sum|,
and a negligible part of the order of u^2: the bound 2u (S + |sum|), taken
twice, which leaves about one in 200 to fixed point and exact arithmetic.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

LONG = np.longdouble
EXTENDED = np.finfo(LONG).nmant >= 63  # an x87 long double (or wider): 11+ bits beyond a double
_U = LONG(np.finfo(LONG).eps) / 2


def long_sums(num: np.ndarray, den: np.ndarray, starts: np.ndarray, compensated: bool = True
              ) -> tuple[np.ndarray, np.ndarray]:
    """Long-double sums of num/den over the non-empty segments beginning at ``starts``, and a bound on each error.

    ``compensated``: the terms are added pairwise with their rounding errors kept (``_pairwise``), so the sum
    errs by the terms' own divisions (u S), the final rounding (u |sum|) and nothing of the order of the number
    of terms: the bound 2u (S + |sum|), taken twice for the rounding of the bound and of S.  Otherwise they are
    added one after the other (one numpy call, several times cheaper): the bound m u S, taken twice, which
    settles nine sums in ten of a hundred terms (``base.Values`` tries that first).
    """
    if len(starts) == 0:
        return np.zeros(0, dtype=LONG), np.zeros(0, dtype=LONG)
    terms = num.astype(LONG) / den.astype(LONG)
    magnitudes = np.add.reduceat(np.abs(terms), starts)
    lengths = np.diff(np.append(starts, len(terms)))
    if not compensated:
        return np.add.reduceat(terms, starts), 2 * lengths.astype(LONG) * _U * magnitudes
    sums = _pairwise(terms, starts, lengths)
    return sums, 4 * _U * (magnitudes + np.abs(sums))


def _pairwise(terms: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each segment's sum: its terms added in pairs, level by level (all segments at once), each addition's
    rounding error found exactly (Knuth's TwoSum) and the errors added back at the end.

    The pairs' sums and the errors are exactly the sum of the terms; the errors of one level add up to at most
    u times the magnitudes S, so all of them to L u S over L levels, and adding them as doubles errs by a
    fraction 2^-53 L k of that: with the final addition, the result is within u S + 2u |sum| of the terms' sum
    (for k L < 2^52 terms and levels).
    """
    segment = np.repeat(np.arange(len(starts)), lengths)
    pos = np.arange(len(terms)) - np.repeat(starts, lengths)  # position inside the segment
    length, values = lengths.copy(), terms.copy()
    errors = np.zeros(len(starts), dtype=np.float64)
    while len(values) > len(starts):
        even = (pos & 1) == 0
        left = np.flatnonzero(even & (pos + 1 < length[segment]))
        a, b = values[left], values[left + 1]
        total = a + b
        b_part = total - a
        errors += np.bincount(segment[left], weights=((a - (total - b_part)) + (b - b_part)).astype(np.float64),
                              minlength=len(starts))
        values[left] = total
        values, segment, pos = values[even], segment[even], pos[even] // 2
        length = (length + 1) // 2
    return values + errors.astype(LONG)


def fixed_point_sum(nums: list[int], dens: list[int]) -> float | None:
    """The correctly rounded double of sum(num/den) (den > 0) from 256-bit fixed point, or None when that cannot
    tell it.

    Each term is floored to a multiple of 2^-256 (one division of a small big integer), so the exact sum lies in
    [S, S + m] 2^-256 for m terms; rounding is monotone, so when both ends round to one double, that double is
    the sum's.  None only within m 2^-256 of a rounding boundary: far cheaper than the common denominator of the
    terms (``base.exact_sum``: an AP over 1,000 ranks has one of hundreds of digits), which is then left to settle.
    """
    total = sum((n << _FIXED_BITS) // d for n, d in zip(nums, dens))
    low, high = total / _FIXED_ONE, (total + len(nums)) / _FIXED_ONE  # int division: correctly rounded
    return low if low == high else None


_FIXED_BITS = 256
_FIXED_ONE = 1 << _FIXED_BITS


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
    """The exact sum of (finite) long doubles: each is a double plus the (exactly representable) double remainder.

    Each double is an integer of 53 bits times a power of two (``np.frexp``); those of one exponent are added as
    int64 in numpy, at most ``_CHUNK`` at a time (no overflow), and only the few sums of distinct exponents are
    shifted and added as Python integers.
    """
    high = values.astype(np.float64)
    low = (values - high.astype(LONG)).astype(np.float64)
    parts = np.concatenate([high, low])
    parts = parts[parts != 0]
    if not len(parts):
        return Fraction(0)
    mantissa, exponent = np.frexp(parts)  # part = mantissa * 2**exponent, 0.5 <= |mantissa| < 1
    whole = np.ldexp(mantissa, 53).astype(np.int64)  # exact: a double's 53 bits
    order = np.argsort(exponent, kind="stable")
    exponent, whole = exponent[order], whole[order]
    cut = np.empty(len(exponent), dtype=bool)
    cut[0] = True
    np.not_equal(exponent[1:], exponent[:-1], out=cut[1:])
    cut[::_CHUNK] = True
    starts = np.flatnonzero(cut)
    sums, exps = np.add.reduceat(whole, starts).tolist(), exponent[starts].tolist()
    lowest = min(exps)
    total = sum(n << (e - lowest) for n, e in zip(sums, exps))
    shift = lowest - 53
    return Fraction(total << shift) if shift >= 0 else Fraction(total, 1 << -shift)


_CHUNK = 512  # 512 integers below 2**53 add up below 2**62
