"""SetP: relevant retrieved / retrieved, over the whole ranking (trec_eval's set_P, ir_measures' SetP).

Follows trec_eval 9.0.4 m_set_P.c: no cutoff, the ranking is not padded, an
empty ranking scores 0 (0/0 is taken as 0, the value of a missing query).
"""
from __future__ import annotations

from .base import Family, Ranking, Values, register


def set_precision(r: Ranking, m, ctx) -> Values:
    rel_ret = r.per_query_count(r.relevant_rows(ctx.rel, None))
    return Values.of_ratio(rel_ret, r.retrieved)


RELATIVE = ("SetP takes no relative= here (in {token}): ir_measures' SetP(relative=True) is written SetRelP, "
            "ir_measures' own name for it (trec_eval's set_relative_P)")

register(Family("SetP", set_precision, rational=True, needs_cutoff=False, params=frozenset({"rel"}),
                description="set precision: relevant retrieved / retrieved (the whole ranking)",
                takes_cutoff=False, refused_params={"relative": RELATIVE},
                tool_names={"trec_eval": ("set_P", None), "ir_measures": "SetP"}))
