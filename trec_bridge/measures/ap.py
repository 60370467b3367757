"""AP and AP@k: mean over the query's relevant documents of the precision at their rank.

Vectorised: within-query hit counts come from one global cumulative sum
minus the count before each query's first row.  The exact value (a sum of
fractions) is built only when the report asks for it.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .base import Family, Ranking, Values, register


def average_precision(r: Ranking, m, ctx) -> Values:
    mask = r.relevant_rows(ctx.rel, m.cutoff)
    cum = np.cumsum(mask, dtype=np.int64)
    before = np.concatenate(([0], cum))[r.offsets[:-1]]  # hits before each query's first row
    hits_at = cum - before[r.row_query]
    rows = np.flatnonzero(mask)
    prec = hits_at[rows] / r.rank[rows]
    sums = np.bincount(r.row_query[rows], weights=prec, minlength=r.n_queries)
    n_rel = r.relevant_count(ctx.rel)
    value = np.zeros(r.n_queries, dtype=np.float64)
    np.divide(sums, n_rel, out=value, where=n_rel != 0)
    hit_rows_of = _group(r.row_query[rows], rows, r.n_queries)

    def exact(i: int) -> Fraction:
        if n_rel[i] == 0:
            return Fraction(0)
        total = sum((Fraction(int(hits_at[j]), int(r.rank[j])) for j in hit_rows_of(i)), Fraction(0))
        return total / int(n_rel[i])

    return Values(value, exact=exact)


def _group(keys: np.ndarray, rows: np.ndarray, n: int):
    starts = np.searchsorted(keys, np.arange(n + 1))
    return lambda i: rows[starts[i]:starts[i + 1]]


register(Family("AP", average_precision, rational=True, needs_cutoff=False, params=frozenset({"rel"}),
                description="average precision over all relevant judged documents"))
