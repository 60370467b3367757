"""nDCG@k: DCG over the top k / DCG of the ideal ranking of all judged grades, cut at k.

Gain and the grade floor come from the policy (exponential 2^g-1 in the strict
policy, linear g in trec_eval's); the discount is 1/log2(rank+1).  The ideal is
built from every judged grade of the query, retrieved or not.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, check_finite, register


def ndcg(r: Ranking, m, ctx) -> Values:
    in_cut = np.ones(len(r.rank), dtype=bool) if m.cutoff is None else r.rank <= m.cutoff
    useful = in_cut & (r.grade >= ctx.ideal_floor)
    rows = np.flatnonzero(useful)
    dcg = np.bincount(r.row_query[rows], weights=ctx.gain(r.grade[rows]) / np.log2(r.rank[rows] + 1.0),
                      minlength=r.n_queries)
    idcg = _ideal(r, m.cutoff, ctx)
    check_finite(("DCG", dcg), ("ideal DCG", idcg))  # 2^g-1 of high grades, or huge gains=, can sum past a double
    value = np.zeros(r.n_queries, dtype=np.float64)
    with np.errstate(over="ignore"):
        np.divide(dcg, idcg, out=value, where=idcg > 0)
    check_finite(("value", value))  # a tiny ideal under a gains= map
    return Values(value)


def _ideal(r: Ranking, cutoff: int | None, ctx) -> np.ndarray:
    keep = r.qrels_grade >= ctx.ideal_floor
    q = r.qrels_query[keep]
    gain = ctx.gain(r.qrels_grade[keep])
    order = np.lexsort((-gain, q))  # by query, gain descending (a gains= map need not follow the grades)
    q, gain = q[order], gain[order]
    starts = np.searchsorted(q, q, side="left")
    pos = np.arange(len(q)) - starts + 1  # ideal rank within the query
    if cutoff is not None:
        sel = pos <= cutoff
        q, gain, pos = q[sel], gain[sel], pos[sel]
    return np.bincount(q, weights=gain / np.log2(pos + 1.0), minlength=r.n_queries)


register(Family("nDCG", ndcg, rational=False, needs_cutoff=False, params=frozenset({"gain", "gains", "rel"}),
                description="normalised discounted cumulative gain, ideal from all judged grades"))
