"""R@k: distinct relevant documents in the top k / all relevant judged documents."""
from __future__ import annotations

from .base import Family, Ranking, Values, register


def recall(r: Ranking, m, ctx) -> Values:
    num = r.per_query_count(r.relevant_rows(ctx.rel, m.cutoff))
    den = r.relevant_count(ctx.rel)
    return Values.of_ratio(num, den)


register(Family("R", recall, rational=True, needs_cutoff=True, params=frozenset({"rel"}),
                description="recall at k: relevant in top k / all relevant judged",
                tool_names={"trec_eval": (None, "recall"), "ir_measures": "R", "ranx": "recall"}))
