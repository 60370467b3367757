"""Rprec: relevant documents in the top R / R, where R is the query's number of relevant judged documents.

A ranking shorter than R is not padded: R still divides (trec_eval m_Rprec.c).
"""
from __future__ import annotations

from .base import Family, Ranking, Values, register


def r_precision(r: Ranking, m, ctx) -> Values:
    n_rel = r.relevant_count(ctx.rel)
    return Values.of_ratio(r.relevant_in_top(ctx.rel, n_rel), n_rel)


register(Family("Rprec", r_precision, rational=True, needs_cutoff=False, takes_cutoff=False,
                params=frozenset({"rel"}), description="precision at rank R (R = relevant judged documents)",
                tool_names={"trec_eval": ("Rprec", None), "ir_measures": "Rprec"}))
