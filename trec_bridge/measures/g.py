"""G: trec_eval's normalised gain, each gained document discounted by how far the ranking lags the ideal.

Follows trec_eval 9.0.4 m_G.c.  At rank i, the ranking has gathered
``results(i)`` (the sum of the gains down to i) and the ideal "costs"
``cost(i)`` = the sum over ideal positions 1..i of max(ideal gain, 1) (an
ideal past its end costs 1 per rank).  A document of non-zero gain g at rank
i adds g / log2(2 + cost(i) - results(i)); the sum is divided by the total
ideal gain.  Gains: the grade, or ``gains={grade: gain}`` (trec_eval's
``-m G.1=3,2=9``); see gain_walk.py.  No cutoff; no ir_measures name.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, check_finite, register
from .gain_walk import ideal, own_prefix, per_query_sum, positive_gain, prefix_at, row_gains
from .ndcg import read_gains
from .trec_names import gain_map_name


def normalised_gain(r: Ranking, m, ctx) -> Values:
    gains = row_gains(r, m)
    iq, ipos, igain = ideal(r, m)
    total_ideal = per_query_sum(iq, igain, r.n_queries)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # huge gains: refused just below
        cost = r.rank + prefix_at(iq, ipos, np.maximum(igain - 1.0, 0.0), r.row_query, r.rank)
        gathered = own_prefix(r.row_query, gains)
        hit = gains != 0
        terms = gains[hit] / np.log2(2.0 + cost[hit] - gathered[hit])
        sums = per_query_sum(r.row_query[hit], terms, r.n_queries)
        value = np.zeros(r.n_queries, dtype=np.float64)
        np.divide(sums, total_ideal, out=value, where=total_ideal > 0)
    check_finite(("value", value))  # huge gains= values can sum past a double (E_GAIN_OVERFLOW)
    return Values(value)


NO_REL = "G has no rel parameter (in {token}): its gains do not depend on a relevance threshold (trec_eval's -l does not touch G)"

register(Family("G", normalised_gain, rational=False, needs_cutoff=False, params=frozenset({"gains"}),
                description="trec_eval's normalised gain G (gain = grade unless gains= maps it)",
                takes_cutoff=False, defined=positive_gain, param_readers={"gains": read_gains},
                refused_params={"rel": NO_REL},
                tool_names={"trec_eval": gain_map_name("G", "G")},
                query_local=False))  # gain_walk: one cumulative float sum over every query
