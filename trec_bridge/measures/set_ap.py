"""SetAP: set precision × set recall = relevant retrieved² / (retrieved × relevant).

trec_eval's set_map (9.0.4 m_set_map.c, "unranked set map"), ir_measures'
SetAP: the precision of every relevant retrieved document is taken as the set
precision, that of every relevant document not retrieved as 0.
"""
from __future__ import annotations

from .base import Family, Ranking, Values, register


def set_average_precision(r: Ranking, m, ctx) -> Values:
    rel_ret = r.per_query_count(r.relevant_rows(ctx.rel, None))
    return Values.of_ratio(rel_ret * rel_ret, r.retrieved * r.relevant_count(ctx.rel))


register(Family("SetAP", set_average_precision, rational=True, needs_cutoff=False, params=frozenset({"rel"}),
                description="unranked set AP: relevant retrieved² / (retrieved × relevant)",
                takes_cutoff=False, tool_names={"trec_eval": ("set_map", None), "ir_measures": "SetAP"}))
