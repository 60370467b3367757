"""RelativeP@k (trec_eval relative_P): relevant documents in the top k / min(k, R).

Precision relative to the best possible at k: precision up to R, recall
after it (m_rel_P.c).  ir_measures has no such measure.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register


def relative_precision(r: Ranking, m, ctx) -> Values:
    num = r.per_query_count(r.relevant_rows(ctx.rel, m.cutoff))
    return Values.of_ratio(num, np.minimum(r.relevant_count(ctx.rel), m.cutoff))


register(Family("RelativeP", relative_precision, rational=True, needs_cutoff=True, params=frozenset({"rel"}),
                description="relevant in top k / min(k, relevant judged)",
                tool_names={"trec_eval": (None, "relative_P")}))
