"""Utility: trec_eval's set utility, a weighted count of the contingency table of the whole ranking.

Follows trec_eval 9.0.4 m_utility.c: with A relevant documents retrieved out
of n retrieved and R relevant judged, utility = a·A + b·(n − A) + c·(R − A)
(+ d·(N + A − n − R) for a collection of N documents), the coefficients a, b,
c, d being trec_eval's p1..p4 (``-m utility.1,-1,0,0``, the default).  The fourth needs the collection size (trec_eval's -N, which
defaults to 0 and which trec-bridge does not take), so d must be 0.  A query
without a ranked document (missing, or an empty ranking) scores 0, as
trec_eval -c scores a missing query.  Coefficients are read as the decimals
written, so the value is exact.  The summary is the mean, as trec_eval's.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import InvalidInput
from ..messages import quote
from .base import Family, Measure, Ranking, Terms, Values, _num, register
from .trec_names import TrecEvalName

DEFAULTS = {"a": 1.0, "b": -1.0, "c": 0.0, "d": 0.0}  # trec_eval's default coefficients
COEFFICIENT_LIMIT = 2 ** 20  # numerator and denominator of each coefficient: the sums stay inside int64


def utility(r: Ranking, m, ctx) -> Values:
    rel_ret = r.per_query_count(r.relevant_rows(ctx.rel, None))
    cells = (rel_ret, r.retrieved - rel_ret, r.relevant_count(ctx.rel) - rel_ret)
    coefficients = [Fraction(repr(float(m.param(name, DEFAULTS[name])))) for name in "abc"]
    common = math.lcm(*(c.denominator for c in coefficients))
    scaled = [c.numerator * (common // c.denominator) for c in coefficients]
    ranked = r.retrieved > 0
    if common >= COEFFICIENT_LIMIT or any(abs(k) >= COEFFICIENT_LIMIT for k in scaled):  # int64 could overflow
        value = sum(float(c) * cell for c, cell in zip(coefficients, cells))
        return Values(np.where(ranked, value, 0.0))
    num = np.where(ranked, sum(k * cell for k, cell in zip(scaled, cells)), 0).astype(np.int64)
    q = np.flatnonzero(num != 0).astype(np.int64)
    return Values(num / common, Terms(q, num[q], np.full(len(q), common, dtype=np.int64)))


def read_coefficient(value, token: str) -> float:
    """A coefficient: a number whose decimal has numerator and denominator below 2^20 (0.5, -2, 1.25)."""
    number = not isinstance(value, bool) and isinstance(value, (int, float))
    if not number or not -COEFFICIENT_LIMIT < value < COEFFICIENT_LIMIT:  # nan fails the comparison
        raise InvalidInput("E_MEASURE_PARAM", f"utility coefficients are numbers between -2^20 and 2^20, got "
                           f"{quote(value)} (in {quote(token)})")
    exact = Fraction(repr(float(value)))
    if exact.denominator >= COEFFICIENT_LIMIT:
        raise InvalidInput("E_MEASURE_PARAM", f"utility coefficient {quote(value)} has too many decimals (in {quote(token)})")
    return float(value)


def read_d(value, token: str) -> float:
    """The fourth coefficient weighs the non-relevant documents not retrieved, which needs the collection size."""
    if read_coefficient(value, token) != 0:
        raise InvalidInput("E_MEASURE_PARAM", f"Utility's d (trec_eval's fourth coefficient) needs the collection "
                           f"size, trec_eval's -N, which trec-bridge does not take: only d=0 (in {quote(token)})")
    return 0.0


def _to_measures(text: str | None) -> list:
    """``-m utility`` is 1,-1,0,0; ``-m utility.2,-1,0,0`` gives the four coefficients, as trec_eval reads them."""
    if text is None:
        return [Measure("Utility")]
    values = [float(v) for v in text.split(",")]
    if len(values) != 4:
        raise ValueError(f"utility takes 4 coefficients, got {text!r}")
    read_d(values[3], f"-m utility.{text}")
    given = {name: read_coefficient(v, f"-m utility.{text}") for name, v in zip("abcd", values)}
    return [Measure("Utility", extra=tuple(sorted(given.items())))]


def _spell(m):
    if m.family != "Utility":
        return None
    if not m.extra:
        return None, "utility"
    text = ",".join(_num(float(m.param(name, DEFAULTS[name]))) for name in "abcd")
    return text, f"utility_{text}"


register(Family("Utility", utility, rational=True, needs_cutoff=False, params=frozenset({"rel", "a", "b", "c", "d"}),
                description="trec_eval's set utility a·relevant retrieved + b·non-relevant retrieved + "
                            "c·relevant not retrieved (default 1, -1, 0)",
                takes_cutoff=False,
                param_readers={"a": read_coefficient, "b": read_coefficient, "c": read_coefficient, "d": read_d},
                tool_names={"trec_eval": TrecEvalName("utility", _to_measures, _spell)}))
