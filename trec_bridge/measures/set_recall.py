"""SetR: relevant retrieved / relevant, over the whole ranking (trec_eval's set_recall, ir_measures' SetR).

Follows trec_eval 9.0.4 m_set_recall.c; R@k without the cutoff.
"""
from __future__ import annotations

from .base import Family, Ranking, Values, register


def set_recall(r: Ranking, m, ctx) -> Values:
    rel_ret = r.per_query_count(r.relevant_rows(ctx.rel, None))
    return Values.of_ratio(rel_ret, r.relevant_count(ctx.rel))


register(Family("SetR", set_recall, rational=True, needs_cutoff=False, params=frozenset({"rel"}),
                description="set recall: relevant retrieved / relevant judged (the whole ranking)",
                takes_cutoff=False, tool_names={"trec_eval": ("set_recall", None), "ir_measures": "SetR"}))
