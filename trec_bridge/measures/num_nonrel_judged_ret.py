"""NumNonRelJudgedRet (trec_eval num_nonrel_judged_ret): retrieved documents judged non-relevant; summed.

Judged non-relevant is a grade in [0, rel): a negative grade counts as
unjudged, as in trec_eval (form_res_rels.c marks it RELVALUE_UNJUDGED).
"""
from __future__ import annotations

from .base import Family, Ranking, Values, everywhere, register


def num_nonrel_judged_ret(r: Ranking, m, ctx) -> Values:
    return Values.of_counts(r.per_query_count((r.grade >= 0) & (r.grade < ctx.rel)))


register(Family("NumNonRelJudgedRet", num_nonrel_judged_ret, rational=True, needs_cutoff=False, takes_cutoff=False,
                aggregate="sum", integer=True, params=frozenset({"rel"}), defined=everywhere,
                description="retrieved documents judged non-relevant (summed over queries)",
                tool_names={"trec_eval": ("num_nonrel_judged_ret", None)}))
