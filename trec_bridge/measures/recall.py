"""R@k: distinct relevant documents in the top k / all relevant judged documents.

Variants (variants.py, never the default): ``den=min_k`` divides by
min(relevant, k), ``den=k`` by k; ``relevant=`` changes what counts as relevant.
"""
from __future__ import annotations

import numpy as np

from . import variants
from .base import Family, Ranking, Values, register, variant_context


def recall(r: Ranking, m, ctx) -> Values:
    num = r.per_query_count(r.relevant_rows(ctx.rel, m.cutoff))
    den = r.relevant_count(ctx.rel)
    chosen = variants.variant(m, "den")
    if chosen == "min_k":
        den = np.minimum(den, m.cutoff)
    elif chosen == "k":
        den = np.where(den > 0, m.cutoff, 0)  # still undefined (null) where nothing is relevant
    return Values.of_ratio(num, den)


register(Family("R", recall, rational=True, needs_cutoff=True, params=frozenset({"rel"}) | variants.params("R"),
                description="recall at k: relevant in top k / all relevant judged",
                context=variant_context, param_readers=variants.readers("R"),
                tool_names={"trec_eval": (None, "recall"), "ir_measures": "R", "ranx": "recall"}))
