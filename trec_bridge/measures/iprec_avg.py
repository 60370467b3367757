"""AvgIPrec (trec_eval 11pt_avg): the mean of IPrec at the 11 recall levels 0.0, 0.1, ..., 1.0.

ir_measures has no such measure and "11pt_avg" is not a name a measure
string can start with, hence AvgIPrec.  trec_eval's ``-m 11pt_avg.0.2,0.5,0.8``
(other levels) is not offered.  Exact: the 11 fractions, each divided by 11;
the double is trec_eval's, bit for bit (its sum from the top level down,
divided by 11: a z-score against a deviation of 0 compares it exactly).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInput
from .base import Family, Measure, Ranking, Terms, Values, register
from .iprec import DEFAULT_LEVELS, interpolated
from .trec_names import TrecEvalName


def avg_iprec(r: Ranking, m, ctx) -> Values:
    levels = interpolated(r, ctx.rel, list(DEFAULT_LEVELS))
    num = np.concatenate([n for n, _ in levels])
    den = np.concatenate([d for _, d in levels]) * len(levels)
    query = np.tile(np.arange(r.n_queries, dtype=np.int64), len(levels))
    keep = num != 0
    order = np.argsort(query[keep], kind="stable")
    terms = Terms(query[keep][order], num[keep][order], den[keep][order])
    total = np.zeros(r.n_queries)
    for n, d in reversed(levels):  # m_11pt_avg.c's double: each level's n/d added from 1.0 down to 0.0, then / 11
        total += n / d
    return Values(total / len(levels), terms)


def _to_measures(text: str | None) -> list:
    if text is not None:
        raise InvalidInput("E_MEASURE_PARAM", f"11pt_avg.{text}: only trec_eval's 11 default recall levels are offered "
                           f"(AvgIPrec); ask for the levels one by one as iprec_at_recall.{text}")
    return [Measure("AvgIPrec")]


def _spell(m):
    return (None, "11pt_avg") if m.family == "AvgIPrec" else None


register(Family("AvgIPrec", avg_iprec, rational=True, needs_cutoff=False, takes_cutoff=False,
                params=frozenset({"rel"}),
                description="interpolated precision averaged over the recall levels 0.0, 0.1, ..., 1.0",
                tool_names={"trec_eval": TrecEvalName("11pt_avg", _to_measures, _spell)}))
