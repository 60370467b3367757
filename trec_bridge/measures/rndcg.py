"""RnDCG: trec_eval's Rndcg, nDCG averaged at the R-levels, where the ideal's gain changes.

Follows trec_eval 9.0.4 m_Rndcg.c.  With the ideal's positive gains in
decreasing order (5 of gain 3, then 3 of gain 2, then 10 of gain 1), the
R-levels are the positions where the gain drops: 5, 8 and 18 (the last is
the ideal's length).  The value is the mean of nDCG at each R-level p (DCG
of the ranking's top p — the whole ranking when shorter — over the ideal's
top p), plus, when the ranking is at least two longer than the ideal, the
nDCG of the whole ranking (trec_eval's "implied R-level at num_retrieved";
one longer adds nothing).  0 for a query without a relevant document at the
threshold (trec_eval's only use of ``-l`` here).  Gains as in G.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, check_finite, has_relevant, register
from .gain_walk import discounted, ideal, per_query_sum, positive_gain, prefix_at, row_gains
from .ndcg import read_gains
from .trec_names import gain_map_name


def r_levels(iq: np.ndarray, ipos: np.ndarray, igain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(query, p) of every R-level: before each ideal entry whose gain differs from the one above, and the end."""
    drop = np.flatnonzero((ipos > 1) & (igain != np.r_[np.nan, igain[:-1]]))
    last = np.flatnonzero(np.r_[iq[1:] != iq[:-1], True]) if len(iq) else np.zeros(0, dtype=np.int64)
    q = np.concatenate((iq[drop], iq[last]))
    p = np.concatenate((ipos[drop] - 1, ipos[last]))
    return q, p


def rndcg(r: Ranking, m, ctx) -> Values:
    gains = row_gains(r, m)
    iq, ipos, igain = ideal(r, m)
    ideal_terms, run_terms = discounted(igain, ipos), discounted(gains, r.rank)
    lq, lp = r_levels(iq, ipos, igain)
    at_level = prefix_at(r.row_query, r.rank, run_terms, lq, lp) / prefix_at(iq, ipos, ideal_terms, lq, lp)
    sums = per_query_sum(lq, at_level, r.n_queries)
    counts = np.bincount(lq, minlength=r.n_queries).astype(np.float64)
    n_ideal = np.bincount(iq, minlength=r.n_queries)
    beyond = (n_ideal > 0) & (r.retrieved >= n_ideal + 2)  # the implied R-level at the ranking's end
    dcg = per_query_sum(r.row_query, run_terms, r.n_queries)
    idcg = per_query_sum(iq, ideal_terms, r.n_queries)
    sums[beyond] += dcg[beyond] / idcg[beyond]
    counts[beyond] += 1
    value = np.zeros(r.n_queries, dtype=np.float64)
    np.divide(sums, counts, out=value, where=(counts > 0) & (r.relevant_count(ctx.rel) > 0))
    check_finite(("value", value))  # huge gains= values can sum past a double (E_GAIN_OVERFLOW)
    return Values(value)


def defined(r: Ranking, m, ctx) -> np.ndarray:
    """A relevant document at the threshold (trec_eval's num_rel) and a positive gain (an R-level to average)."""
    return has_relevant(r, m, ctx) & positive_gain(r, m, ctx)


register(Family("RnDCG", rndcg, rational=False, needs_cutoff=False, params=frozenset({"rel", "gains"}),
                description="trec_eval's Rndcg: nDCG averaged at the R-levels of the ideal ranking",
                takes_cutoff=False, defined=defined, param_readers={"gains": read_gains},
                tool_names={"trec_eval": gain_map_name("RnDCG", "Rndcg")},
                query_local=False))  # gain_walk: one cumulative float sum over every query
