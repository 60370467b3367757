"""NumRelRet (trec_eval num_rel_ret, ir_measures NumRet(rel=k)): relevant documents retrieved; summed."""
from __future__ import annotations

from .base import Family, Ranking, Values, everywhere, register


def num_rel_ret(r: Ranking, m, ctx) -> Values:
    return Values.of_counts(r.per_query_count(r.relevant_rows(ctx.rel, None)))


register(Family("NumRelRet", num_rel_ret, rational=True, needs_cutoff=False, takes_cutoff=False, aggregate="sum",
                integer=True, params=frozenset({"rel"}), defined=everywhere,
                description="relevant documents retrieved (summed over queries)",
                tool_names={"trec_eval": ("num_rel_ret", None), "ir_measures": "NumRelRet"}))
