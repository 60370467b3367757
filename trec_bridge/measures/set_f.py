"""SetF: trec_eval's set_F, (β+1)·P·R / (β·P + R) over the whole ranking (ir_measures' SetF(beta=…)).

Follows trec_eval 9.0.4 m_set_F.c.  β is trec_eval's parameter x, "the
relative importance of R to P" (default 1), used as written, *not squared*
(van Rijsbergen's F_β would take β²): SetF(beta=0.5) is ``-m set_F.0.5``.
With a relevant documents retrieved out of n retrieved and R relevant, the
value is (β+1)·a / (β·R + n), 0 when a = 0.  β is read as the decimal the
user wrote (0.5 = 1/2), so the value is exact; a β whose decimal needs a
huge denominator is computed in floats instead.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import InvalidInput
from ..messages import quote
from .base import Family, Measure, Ranking, Values, _num, register, ratio
from .trec_names import TrecEvalName

EXACT_LIMIT = 2 ** 20  # β = p/q with p, q below this: (p+q)·a and p·R + q·n stay far inside int64


def set_f(r: Ranking, m, ctx) -> Values:
    rel_ret = r.per_query_count(r.relevant_rows(ctx.rel, None))
    n_rel, n_ret = r.relevant_count(ctx.rel), r.retrieved
    beta = Fraction(repr(float(m.param("beta", 1.0))))
    x = float(beta)
    # the double as m_set_F.c forms it: P = a/n, R = a/R, (x+1)·P·R / (x·P + R), 0 when a = 0
    precision, recall = ratio(rel_ret, n_ret), ratio(rel_ret, n_rel)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(rel_ret > 0, (x + 1.0) * precision * recall / (x * precision + recall), 0.0)
    if beta.numerator < EXACT_LIMIT and beta.denominator < EXACT_LIMIT:
        p, q = beta.numerator, beta.denominator
        return Values(value, Values.of_ratio((p + q) * rel_ret, p * n_rel + q * n_ret).terms)
    return Values(value)


def read_beta(value, token: str) -> float:
    """β: a finite number >= 0 (trec_eval's x); kept as a float, as ir_measures keeps it."""
    number = not isinstance(value, bool) and isinstance(value, (int, float))
    if not number or not 0 <= value <= 2 ** 53:  # nan fails the comparison, a huge int never becomes a float
        raise InvalidInput("E_MEASURE_PARAM", f"beta must be a finite number >= 0, got {quote(value)} (in {quote(token)})")
    return float(value)


def _to_measures(text: str | None) -> list:
    """``-m set_F`` is β = 1; ``-m set_F.0.5,2`` computes the first β only, as trec_eval 9.0.4 does."""
    if text is None:
        return [Measure("SetF")]
    return [Measure("SetF", extra=(("beta", float(text.split(",")[0])),))]


def _spell(m):
    if m.family != "SetF":
        return None
    beta = m.param("beta")
    if beta is None:
        return None, "set_F"
    text = _num(beta)
    return text, f"set_F_{text}"


register(Family("SetF", set_f, rational=True, needs_cutoff=False, params=frozenset({"rel", "beta"}),
                description="set F: (β+1)·P·R / (β·P + R) over the whole ranking, β as trec_eval's x (default 1)",
                takes_cutoff=False, param_readers={"beta": read_beta},
                tool_names={"trec_eval": TrecEvalName("set_F", _to_measures, _spell), "ir_measures": "SetF"}))
