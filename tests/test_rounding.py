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
    _, sums, bounds = v._long_sums()
    assert settled(sums, bounds)[1].mean() > 0.6


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
