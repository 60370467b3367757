"""P@k: relevant documents in the top k / k (a shorter ranking is not padded, k still divides)."""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register


def precision(r: Ranking, m, ctx) -> Values:
    num = r.per_query_count(r.relevant_rows(ctx.rel, m.cutoff))
    den = np.full(r.n_queries, m.cutoff, dtype=np.int64)
    return Values.of_ratio(num, den)


register(Family("P", precision, rational=True, needs_cutoff=True, params=frozenset({"rel"}),
                description="precision at k: relevant in top k / k",
                tool_names={"trec_eval": (None, "P"), "ir_measures": "P", "ranx": "precision"}))
