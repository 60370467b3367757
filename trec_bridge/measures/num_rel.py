"""NumRel (trec_eval num_rel): relevant judged documents of the query (grade >= rel), retrieved or not; summed."""
from __future__ import annotations

from .base import Family, Ranking, Values, everywhere, register


def num_rel(r: Ranking, m, ctx) -> Values:
    return Values.of_counts(r.relevant_count(ctx.rel))


register(Family("NumRel", num_rel, rational=True, needs_cutoff=False, takes_cutoff=False, aggregate="sum",
                integer=True, params=frozenset({"rel"}), defined=everywhere,
                description="relevant judged documents (summed over queries)",
                tool_names={"trec_eval": ("num_rel", None), "ir_measures": "NumRel"}))
