"""The scorer's floats are the exact rationals correctly rounded, whether proved in long double or summed exactly."""
from __future__ import annotations

import pickle
import random
from fractions import Fraction

import numpy as np
import pytest

from trec_bridge.measures.base import Terms, Values
from trec_bridge.measures.rounding import EXTENDED, long_sums, settled, settled_ratio
from trec_bridge.scorer import MeanResult


def _values(per_query: list[list[tuple[int, int]]]) -> Values:
    q = [i for i, terms in enumerate(per_query) for _ in terms]
    num = [n for terms in per_query for n, _ in terms]
    den = [d for terms in per_query for _, d in terms]
    arr = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
    return Values(np.zeros(len(per_query)), Terms(arr(q), arr(num), arr(den)))


def _exact(terms: list[tuple[int, int]]) -> Fraction:
    return sum((Fraction(n, d) for n, d in terms), Fraction(0))


def _random_queries(rng: random.Random, n: int) -> list[list[tuple[int, int]]]:
    out = []
    for _ in range(n):
        r = rng.randint(1, 150)  # AP's shape: k / (rank * R), ranks rising
        ranks = sorted(rng.sample(range(1, 1001), rng.randint(0, min(r, 60))))
        out.append([(k + 1, rank * r) for k, rank in enumerate(ranks)])
    return out


def test_rounded_equals_the_exact_value_correctly_rounded():
    rng = random.Random(7)
    queries = _random_queries(rng, 300)
    got = _values(queries).rounded()
    assert got.tolist() == [float(_exact(t)) for t in queries]


# 1 + 2**-53 is the midpoint between 1 and the next double (ties to even: 1.0); a hair above, the next double
MIDPOINT_CASES = [
    [(1, 1), (1, 1 << 53)],
    [(1, 1), (1, 1 << 53), (1, 3 << 60)],
    [(1, 1), (1, 1 << 53), (-1, 3 << 60)],
    [(1, 3), (1, 3), (1, 3)],
]


@pytest.mark.parametrize("terms", MIDPOINT_CASES)
def test_sums_at_or_near_a_rounding_boundary_are_rounded_exactly(terms):
    assert _values([terms]).rounded().tolist() == [float(_exact(terms))]
    v = _values([terms])
    assert v.rounded_mean(np.array([True]), 1) == float(_exact(terms))


def test_the_boundary_itself_is_never_settled_in_long_double():
    num, den = np.array([1, 1], dtype=np.int64), np.array([1, 1 << 53], dtype=np.int64)
    sums, bounds = long_sums(num, den, np.array([0]))
    assert not settled(sums, bounds)[1].any()
    assert settled_ratio(sums, bounds, 1) is None


@pytest.mark.skipif(not EXTENDED, reason="long double is no wider than a double here: every sum is exact")
def test_most_sums_are_settled_without_big_integers():
    queries = [t for t in _random_queries(random.Random(3), 200) if len(t) > 1]
    v = _values(queries)
    _, sums, bounds = v._long_sums(compensated=True)
    assert settled(sums, bounds)[1].mean() > 0.97  # added pairwise with exact errors: about 1 in 200 left
    _, sums, bounds = v._long_sums()  # added one after the other: the cheap first try
    assert settled(sums, bounds)[1].mean() > 0.6


def test_fixed_point_sums_are_correctly_rounded_or_refused():
    """256-bit fixed point gives the correctly rounded double, or None near a boundary (never a wrong double)."""
    from trec_bridge.measures.rounding import fixed_point_sum

    rng = random.Random(19)
    cases = [t for t in _random_queries(rng, 300) if t] + MIDPOINT_CASES
    cases += [[(-n, d) if i % 3 else (n, d) for i, (n, d) in enumerate(t)] for t in cases[:100]]  # signs mixed
    answered = 0
    for terms in cases:
        got = fixed_point_sum([n for n, _ in terms], [d for _, d in terms])
        assert got is None or got == float(_exact(terms)), terms
        answered += got is not None
    assert answered >= len(cases) - len(MIDPOINT_CASES)
    assert fixed_point_sum([1, 1], [1, 1 << 53]) is None  # the midpoint 1 + 2^-53 itself: left to exact sums


def test_a_mean_of_few_terms_is_the_one_the_long_double_proof_gives(monkeypatch):
    """A measure of EXACT_TERMS terms or fewer takes its mean from the exact total at once: the same double."""
    from trec_bridge.measures import base

    rng = random.Random(5)
    cases = [[[(rng.randint(-3, 40), rng.randint(1, 10**rng.randint(1, 12))) for _ in range(rng.randint(0, 4))]
              for _ in range(rng.randint(1, 12))] for _ in range(200)] + [[t] for t in MIDPOINT_CASES]
    for queries in cases:
        counted = np.array([rng.random() < 0.8 for _ in queries])
        divisor = max(int(counted.sum()), 1)
        want = float(sum((_exact(t) for t, c in zip(queries, counted) if c), Fraction(0)) / divisor)
        assert len(_values(queries).terms.den) <= base.EXACT_TERMS
        fast = _values(queries).rounded_mean(counted, divisor)
        monkeypatch.setattr(base, "EXACT_TERMS", -1)  # the proof in long double (then the exact total)
        proved = _values(queries).rounded_mean(counted, divisor)
        monkeypatch.undo()
        assert fast == proved == want, queries


@pytest.mark.skipif(not EXTENDED, reason="long double is no wider than a double here")
def test_pairwise_sums_recover_every_rounding_error():
    """4,096 terms of full long-double precision whose sum nearly cancels: added pairwise alone, each of the 4,095
    additions' rounding errors would stay (about 2^-57 in all); with them recovered the sum is the exact one to
    within its own last bit (2^-64 here)."""
    from trec_bridge.measures.rounding import LONG, _U, _dyadic_sum, _pairwise

    rng = np.random.default_rng(17)
    terms = (rng.random(4096).astype(LONG) * 4 - 2) * (1 + rng.random(4096).astype(LONG) * LONG(2) ** -40)
    terms[-1] -= np.sum(terms[:-1]).astype(np.float64) - 0.5  # the whole sum near 0.5
    got = _pairwise(terms, np.array([0]), np.array([len(terms)]))
    exact = sum((_dyadic_sum(terms[i:i + 1]) for i in range(len(terms))), Fraction(0))
    assert abs(_dyadic_sum(got) - exact) <= 2 * _dyadic_sum(np.array([_U])) * abs(exact)


@pytest.mark.skipif(not EXTENDED, reason="long double is no wider than a double here")
def test_the_error_bound_holds_for_long_and_mixed_sign_segments():
    """The bound long_sums gives contains the exact sum, whatever the segment's length (1 to 3,000 terms, so up
    to 12 pairwise levels) and the terms' signs and magnitudes."""
    from trec_bridge.measures.rounding import _dyadic_sum

    rng = np.random.default_rng(13)
    lengths = np.concatenate([[1, 2, 3, 3000, 1025], rng.integers(1, 70, 60)])
    num = rng.integers(-(1 << 40), 1 << 40, int(lengths.sum()))
    den = rng.integers(1, 1 << 50, int(lengths.sum()))
    starts = np.cumsum(lengths) - lengths
    for compensated in (True, False):
        sums, bounds = long_sums(num, den, starts, compensated)
        for i, (a, n) in enumerate(zip(starts.tolist(), lengths.tolist())):
            exact = sum((Fraction(int(p), int(q)) for p, q in zip(num[a:a + n], den[a:a + n])), Fraction(0))
            assert abs(_dyadic_sum(sums[i:i + 1]) - exact) <= _dyadic_sum(bounds[i:i + 1]), (compensated, i)


def test_means_are_the_exact_mean_correctly_rounded_and_exact_is_computed_on_read():
    rng = random.Random(11)
    queries = _random_queries(rng, 200)
    counted = np.array([rng.random() < 0.9 for _ in queries])
    v = _values(queries)
    total = sum((_exact(t) for t, c in zip(queries, counted) if c), Fraction(0))
    eligible = int(counted.sum())
    assert v.rounded_mean(counted, eligible) == float(total / eligible)
    calls = []
    mean = MeanResult(1.5, lambda: calls.append(1) or Fraction(3, 2), 2)
    assert not calls and mean.exact == Fraction(3, 2) and mean.exact == Fraction(3, 2) and calls == [1]
    assert pickle.loads(pickle.dumps(mean)) == MeanResult(1.5, Fraction(3, 2), 2)


@pytest.mark.skipif(not EXTENDED, reason="long double is no wider than a double here")
def test_long_doubles_are_added_exactly():
    from trec_bridge.measures.rounding import LONG, _dyadic_sum

    rng = np.random.default_rng(5)
    values = (rng.random(50).astype(LONG) / LONG(3)) * np.array([1, -1] * 25, dtype=LONG)
    values[7] = 0
    want = Fraction(0)
    for v in values:
        high = float(v)
        want += Fraction(high) + Fraction(float(v - LONG(high)))
    assert _dyadic_sum(values) == want and want.denominator & (want.denominator - 1) == 0


@pytest.mark.skipif(not EXTENDED, reason="long double is no wider than a double here")
def test_many_long_doubles_of_any_magnitude_are_added_exactly():
    """More terms of one exponent than an int64 sum can hold at once, magnitudes from 2^-1070 to 2^1000."""
    from trec_bridge.measures.rounding import LONG, _dyadic_sum

    rng = np.random.default_rng(9)
    values = rng.random(3000).astype(LONG) / LONG(7) + LONG(0.5)  # one exponent: 3000 > 512 terms
    values[:300] *= np.ldexp(np.ones(300, dtype=LONG), rng.integers(-1070, 1000, 300))
    values[300:400] = -values[300:400]
    want = Fraction(0)
    for v in values:
        high = float(v)
        want += Fraction(high) + Fraction(float(v - LONG(high)))
    assert _dyadic_sum(values) == want
