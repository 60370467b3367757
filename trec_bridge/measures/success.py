"""Success@k (Hit@k): 1 if any relevant document is in the top k.  Not recall."""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register


def success(r: Ranking, m, ctx) -> Values:
    hits = r.per_query_count(r.relevant_rows(ctx.rel, m.cutoff))
    num = (hits > 0).astype(np.int64)
    den = np.ones(r.n_queries, dtype=np.int64)
    return Values.of_ratio(num, den)


register(Family("Success", success, rational=True, needs_cutoff=True, params=frozenset({"rel"}),
                description="1 if a relevant document is in the top k, else 0",
                tool_names={"trec_eval": (None, "success"), "ir_measures": "Success", "ranx": "hit_rate"}))
