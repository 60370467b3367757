"""P@k: relevant documents in the top k / k (a shorter ranking is not padded, k still divides).

Variants (variants.py, never the default): ``den=retrieved`` divides by the
ranking's length when it is shorter than k; ``relevant=`` changes what counts.
"""
from __future__ import annotations

import numpy as np

from . import variants
from .base import Family, Ranking, Values, register, variant_context


def precision(r: Ranking, m, ctx) -> Values:
    num = r.per_query_count(r.relevant_rows(ctx.rel, m.cutoff))
    den = np.full(r.n_queries, m.cutoff, dtype=np.int64)
    if variants.variant(m, "den") == "retrieved":
        den = r.in_cut(m.cutoff)
    return Values.of_ratio(num, den)


register(Family("P", precision, rational=True, needs_cutoff=True, params=frozenset({"rel"}) | variants.params("P"),
                description="precision at k: relevant in top k / k",
                context=variant_context, param_readers=variants.readers("P"),
                tool_names={"trec_eval": (None, "P"), "ir_measures": "P", "ranx": "precision"}))
