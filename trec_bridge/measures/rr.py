"""RR@k: 1 / rank of the first relevant document within the top k, else 0.

Rows are sorted by (query, rank), so the first relevant row of a query is its
first occurrence in the masked row list: no per-document loop.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register


def reciprocal_rank(r: Ranking, m, ctx) -> Values:
    mask = r.relevant_rows(ctx.rel, m.cutoff)
    queries = r.row_query[mask]
    ranks = r.rank[mask]
    first_q, first_at = np.unique(queries, return_index=True)
    num = np.zeros(r.n_queries, dtype=np.int64)
    den = np.zeros(r.n_queries, dtype=np.int64)
    num[first_q] = 1
    den[first_q] = ranks[first_at]
    return Values.of_ratio(num, den)


register(Family("RR", reciprocal_rank, rational=True, needs_cutoff=False, params=frozenset({"rel"}),
                description="reciprocal rank of the first relevant document in the top k"))
