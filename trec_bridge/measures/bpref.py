"""Bpref (Buckley & Voorhees 2004, trec_eval m_bpref.c): how many of the judged non-relevant documents rank
below each relevant one.

With R relevant and N judged non-relevant documents (grade in [0, rel)), a
relevant document retrieved after n judged non-relevant ones adds
1 - min(n, R) / min(N, R) (1 when n = 0); the sum is divided by R.
Unjudged documents and negative grades are skipped, as in trec_eval.  Exact:
one term (min(N, R) - min(n, R)) / (R * min(N, R)) per relevant row.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Terms, Values, register


def judged_nonrelevant_before(r: Ranking, rel: int) -> np.ndarray:
    """Per judged row: judged non-relevant rows (grade in [0, rel)) ranked above it in its query."""
    nonrel = ((r.grade >= 0) & (r.grade < rel)).astype(np.int64)
    before = np.cumsum(nonrel) - nonrel  # over all rows so far
    first = np.searchsorted(r.row_query, r.row_query, side="left")  # the query's first row
    return before - before[first]


def bpref(r: Ranking, m, ctx) -> Values:
    n_rel = r.relevant_count(ctx.rel)
    judged_nonrel = (r.qrels_grade >= 0) & (r.qrels_grade < ctx.rel)
    n_nonrel = np.bincount(r.qrels_query[judged_nonrel], minlength=r.n_queries).astype(np.int64)
    rows = np.flatnonzero(r.relevant_rows(ctx.rel, None))
    query = r.row_query[rows]
    before = judged_nonrelevant_before(r, ctx.rel)[rows]
    big_r = n_rel[query]
    floor = np.minimum(n_nonrel[query], big_r)  # min(N, R) >= 1 wherever before > 0
    seen = before > 0
    capped = np.minimum(before, big_r)
    num = np.where(seen, floor - capped, 1)
    den = np.where(seen, big_r * floor, big_r)
    # the double as m_bpref.c forms it: 1 - min(n, R) / min(N, R) (or 1) summed in rank order, then / R
    term = np.where(seen, 1.0 - capped / np.maximum(floor, 1), 1.0)
    value = np.zeros(r.n_queries, dtype=np.float64)
    np.divide(np.bincount(query, weights=term, minlength=r.n_queries), n_rel, out=value, where=n_rel > 0)
    return Values(value, Terms(query.astype(np.int64), num.astype(np.int64), den.astype(np.int64)))


register(Family("Bpref", bpref, rational=True, needs_cutoff=False, takes_cutoff=False, params=frozenset({"rel"}),
                description="binary preference: relevant documents ranked above judged non-relevant ones",
                tool_names={"trec_eval": ("bpref", None), "ir_measures": "Bpref"}))
