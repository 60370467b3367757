"""AP and AP@k: mean over the query's relevant documents of the precision at their rank.

Vectorised over the relevant rows only: the k-th relevant row of a query
contributes k / rank.  Exact values are those contributions as integer
terms k / (rank * relevant count), summed only when a fraction is asked for.
Variants (variants.py, never the default): ``den=retrieved`` divides by the
relevant documents retrieved (in the top k) instead of all relevant ones;
``relevant=`` changes what counts as relevant.
"""
from __future__ import annotations

import numpy as np

from . import variants
from .base import Family, Ranking, Terms, Values, register, variant_context


def average_precision(r: Ranking, m, ctx) -> Values:
    mask = r.relevant_rows(ctx.rel, m.cutoff)
    rows = np.flatnonzero(mask)
    query = r.row_query[rows]  # grouped by query, rank ascending inside
    hits_at = np.arange(1, len(rows) + 1) - np.searchsorted(query, query, side="left")  # k-th relevant row: k
    rank = r.rank[rows]
    sums = np.bincount(query, weights=hits_at / rank, minlength=r.n_queries)
    n_rel = r.relevant_count(ctx.rel)
    if variants.variant(m, "den") == "retrieved":
        n_rel = r.per_query_count(mask)
    value = np.zeros(r.n_queries, dtype=np.float64)
    np.divide(sums, n_rel, out=value, where=n_rel != 0)
    # exact: each relevant row adds hits / (rank * relevant count); a relevant row implies n_rel > 0
    return Values(value, Terms(query.astype(np.int64), hits_at.astype(np.int64), rank * n_rel[query]))


register(Family("AP", average_precision, rational=True, needs_cutoff=False, params=frozenset({"rel"}) | variants.params("AP"),
                description="average precision over all relevant judged documents",
                context=variant_context, param_readers=variants.readers("AP"),
                tool_names={"trec_eval": ("map", "map_cut"), "ir_measures": "AP", "ranx": "map"}))
