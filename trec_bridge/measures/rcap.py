"""R_cap@k (BEIR's capped recall): relevant documents in the top k / min(all relevant judged, k).

BEIR's ``EvaluateRetrieval.evaluate_custom(..., "r_cap")``
(beir/retrieval/custom_metrics.py, ``recall_cap``) divides by the smaller
of the query's relevant documents and k, so a query with more relevant
documents than k can still reach 1 (plain R@k cannot).  Neither trec_eval
nor ir_measures nor ranx has it: it is not compared by the cross-check.
Defined, like R@k, on a query with a relevant document (BEIR divides by
zero on one without).
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register


def capped_recall(r: Ranking, m, ctx) -> Values:
    num = r.per_query_count(r.relevant_rows(ctx.rel, m.cutoff))
    den = np.minimum(r.relevant_count(ctx.rel), m.cutoff)
    return Values.of_ratio(num, den)


register(Family("R_cap", capped_recall, rational=True, needs_cutoff=True, params=frozenset({"rel"}),
                description="capped recall at k (BEIR): relevant in top k / min(all relevant judged, k)",
                tool_names={"trec_eval": "trec_eval has no capped recall (BEIR's R_cap@k)"}))
