"""SetRelP: relevant retrieved / min(retrieved, relevant) (trec_eval's set_relative_P, ir_measures' SetRelP).

Follows trec_eval 9.0.4 m_set_rel_P.c: the set precision divided by the best
one a ranking of that length could reach; 0 when nothing is retrieved.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register


def set_relative_precision(r: Ranking, m, ctx) -> Values:
    rel_ret = r.per_query_count(r.relevant_rows(ctx.rel, None))
    return Values.of_ratio(rel_ret, np.minimum(r.retrieved, r.relevant_count(ctx.rel)))


register(Family("SetRelP", set_relative_precision, rational=True, needs_cutoff=False, params=frozenset({"rel"}),
                description="relative set precision: relevant retrieved / min(retrieved, relevant)",
                takes_cutoff=False, tool_names={"trec_eval": ("set_relative_P", None), "ir_measures": "SetRelP"}))
