"""binG: trec_eval's binary G, the mean over relevant documents of 1 / log2(2 + non-relevant ranked above it).

Follows trec_eval 9.0.4 m_binG.c: the k-th relevant document at rank r has
r - k documents above it that are not relevant (judged or not) and adds
1 / log2(2 + r - k); the sum is divided by all relevant judged documents,
so an unretrieved relevant document adds 0.  No cutoff; no ir_measures name.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register
from .gain_walk import group_offsets, per_query_sum


def bin_g(r: Ranking, m, ctx) -> Values:
    rows = np.flatnonzero(r.relevant_rows(ctx.rel, None))
    query = r.row_query[rows]  # grouped by query, rank ascending inside
    kth = np.arange(1, len(rows) + 1) - group_offsets(query)[query]
    above = r.rank[rows] - kth  # documents above that are not relevant
    sums = per_query_sum(query, 1.0 / np.log2(2.0 + above), r.n_queries)
    n_rel = r.relevant_count(ctx.rel)
    value = np.zeros(r.n_queries, dtype=np.float64)
    np.divide(sums, n_rel, out=value, where=n_rel > 0)
    return Values(value)


register(Family("binG", bin_g, rational=False, needs_cutoff=False, params=frozenset({"rel"}),
                description="binary G: mean over relevant documents of 1/log2(2 + non-relevant above)",
                takes_cutoff=False, tool_names={"trec_eval": ("binG", None)}))
