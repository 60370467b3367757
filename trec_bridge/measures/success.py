"""Success@k (Hit@k): 1 if any relevant document is in the top k.  Not recall."""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register
from .trec_names import cutoff_name


def success(r: Ranking, m, ctx) -> Values:
    hits = r.per_query_count(r.relevant_rows(ctx.rel, m.cutoff))
    num = (hits > 0).astype(np.int64)
    den = np.ones(r.n_queries, dtype=np.int64)
    return Values.of_ratio(num, den)


register(Family("Success", success, rational=True, needs_cutoff=True, params=frozenset({"rel"}),
                description="1 if a relevant document is in the top k, else 0",
                # trec_eval's -m success without parameters is success_1, success_5, success_10 (m_success.c)
                tool_names={"trec_eval": [cutoff_name("Success", "success", defaults=(1, 5, 10))],
                            "ir_measures": "Success", "ranx": "hit_rate"}))
