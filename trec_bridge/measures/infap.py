"""infAP: inferred AP (Yilmaz & Aslam, CIKM 2006), as trec_eval 9.0.4 computes it (m_infap.c).

The judgments are read as a sample of a pool.  A ranked document with no
judgment at all is *outside the pool*: it is skipped, but still takes its
rank.  A document judged with a negative grade (the -1 convention) is *in
the pool but not judged*.  The k-th relevant document at rank r > 1, with
``nonrel`` judged non-relevant and ``unjudged`` pooled-but-unjudged documents
above it, adds

    1/r + (k-1 + nonrel + unjudged)/r · (k-1 + ε)/(k-1 + nonrel + 2ε),  ε = 1e-5

(the expected precision at r: the pooled share above it, times the relevant
share among the judged ones); at rank 1 it adds 1.  The sum is divided by
the relevant judged documents.  No cutoff.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register
from .gain_walk import group_offsets, per_query_sum

EPSILON = 0.00001  # trec_eval's INFAP_EPSILON


def inferred_ap(r: Ranking, m, ctx) -> Values:
    relevant = r.relevant_rows(ctx.rel, None)
    nonrel_above = _count_above(r, (r.grade >= 0) & ~relevant)
    unjudged_above = _count_above(r, r.grade < 0)
    rows = np.flatnonzero(relevant)
    query = r.row_query[rows]
    earlier = np.arange(len(rows)) - group_offsets(query)[query]  # k - 1
    rank = r.rank[rows].astype(np.float64)
    nonrel, unjudged = nonrel_above[rows], unjudged_above[rows]
    above = rank - 1.0  # m_infap.c's j; each term formed in its order of operations, so its double is the C one's
    with np.errstate(divide="ignore", invalid="ignore"):  # rank 1 adds 1 (below), whatever these give there
        pooled_share = (above / rank) * ((earlier + nonrel + unjudged) / above)
    judged_precision = (earlier + EPSILON) / (earlier + nonrel + 2 * EPSILON)
    terms = np.where(rank == 1, 1.0, 1.0 / rank + pooled_share * judged_precision)
    sums = per_query_sum(query, terms, r.n_queries)
    n_rel = r.relevant_count(ctx.rel)
    value = np.zeros(r.n_queries, dtype=np.float64)
    np.divide(sums, n_rel, out=value, where=n_rel > 0)
    return Values(value)


def _count_above(r: Ranking, mask: np.ndarray) -> np.ndarray:
    """Per judged row: how many rows of its query ranked above it satisfy ``mask``."""
    before = np.cumsum(mask) - mask  # rows before this one, over every query
    return before - before[group_offsets(r.row_query)[r.row_query]]


register(Family("infAP", inferred_ap, rational=False, needs_cutoff=False, params=frozenset({"rel"}),
                description="inferred AP: unjudged documents outside the pool skipped, negative grades pooled "
                            "but unjudged",
                takes_cutoff=False, tool_names={"trec_eval": ("infAP", None), "ir_measures": "infAP"}))
