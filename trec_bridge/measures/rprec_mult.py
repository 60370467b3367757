"""RprecMult@m (trec_eval Rprec_mult): precision at m times R, R the query's relevant documents.

The rank is trec_eval 9.0.4's (m_Rprec_mult.c): n = (long)(m * R + 0.9), in
doubles; the value is relevant documents in the top n / n (a shorter ranking
is not padded), 0 when n is 0.  ir_measures has no such measure.
"""
from __future__ import annotations

from .base import Family, Ranking, Values, register
from .iprec import level_counts, level_name, read_fraction_level

DEFAULT_MULTIPLES = tuple(i / 5 for i in range(1, 11))  # trec_eval's 0.2, 0.4, ..., 2.0 (the same doubles)
LARGEST_MULTIPLE = 1000.0  # m * R stays far inside a C long


def rprec_mult(r: Ranking, m, ctx) -> Values:
    n = level_counts(m.cutoff, r.relevant_count(ctx.rel))
    return Values.of_ratio(r.relevant_in_top(ctx.rel, n), n)


def read_multiple(raw: str, token: str) -> float:
    return read_fraction_level(raw, token, what="multiple of R", upper=LARGEST_MULTIPLE)


register(Family("RprecMult", rprec_mult, rational=True, needs_cutoff=True, params=frozenset({"rel"}),
                cutoff_reader=read_multiple,
                description="precision at a multiple of R (RprecMult@2.0: at rank 2R)",
                tool_names={"trec_eval": level_name("RprecMult", "Rprec_mult", DEFAULT_MULTIPLES)}))
