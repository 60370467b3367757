"""nDCG_rel: trec_eval's ndcg_rel, nDCG averaged over the relevant documents (those of positive gain).

Follows trec_eval 9.0.4 m_ndcg_rel.c.  Each retrieved document of positive
gain at rank i adds nDCG at i (DCG of the ranking down to i over DCG of the
ideal down to i); each relevant document not retrieved adds the nDCG of the
whole ranking (its DCG over the whole ideal DCG); the sum is divided by the
relevant count (the ideal's length), and is 0 when not positive.  Gains as
in G (gain_walk.py), ``-m ndcg_rel.1=3,2=9`` being ``gains=``.  No cutoff;
no ir_measures name.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, check_finite, register
from .gain_walk import discounted, ideal, own_prefix, per_query_sum, positive_gain, prefix_at, row_gains
from .ndcg import read_gains
from .trec_names import gain_map_name


def ndcg_rel(r: Ranking, m, ctx) -> Values:
    gains = row_gains(r, m)
    iq, ipos, igain = ideal(r, m)
    ideal_terms, run_terms = discounted(igain, ipos), discounted(gains, r.rank)
    hit = gains > 0
    at_q, at_rank = r.row_query[hit], r.rank[hit]
    ndcg_at = own_prefix(r.row_query, run_terms)[hit] / prefix_at(iq, ipos, ideal_terms, at_q, at_rank)
    sums = per_query_sum(at_q, ndcg_at, r.n_queries)
    n_rel = np.bincount(iq, minlength=r.n_queries)
    unretrieved = n_rel - np.bincount(at_q, minlength=r.n_queries)
    dcg = per_query_sum(r.row_query, run_terms, r.n_queries)
    idcg = per_query_sum(iq, ideal_terms, r.n_queries)
    rest = np.zeros(r.n_queries, dtype=np.float64)  # (unretrieved x DCG) / ideal DCG, in m_ndcg_rel.c's order
    np.divide(unretrieved * dcg, idcg, out=rest, where=idcg > 0)
    sums += rest
    value = np.zeros(r.n_queries, dtype=np.float64)
    np.divide(sums, n_rel, out=value, where=sums > 0)
    check_finite(("value", value))  # huge gains= values can sum past a double (E_GAIN_OVERFLOW)
    return Values(value)


NO_REL = "nDCG_rel has no rel parameter (in {token}): relevant means a positive gain, as in trec_eval's ndcg_rel"

register(Family("nDCG_rel", ndcg_rel, rational=False, needs_cutoff=False, params=frozenset({"gains"}),
                description="trec_eval's ndcg_rel: nDCG averaged over the relevant (positive-gain) documents",
                takes_cutoff=False, defined=positive_gain, param_readers={"gains": read_gains},
                refused_params={"rel": NO_REL},
                tool_names={"trec_eval": gain_map_name("nDCG_rel", "ndcg_rel")},
                query_local=False))  # gain_walk: one cumulative float sum over every query
