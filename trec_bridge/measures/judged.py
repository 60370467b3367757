"""Judged@k: share of the top k (or of the whole ranking when shorter) that has a judgment."""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register


def judged(r: Ranking, m, ctx) -> Values:
    in_cut = np.ones(len(r.rank), dtype=bool) if m.cutoff is None else r.rank <= m.cutoff
    num = r.per_query_count(in_cut)  # the ranking's rows are its judged rows
    den = r.in_cut(m.cutoff).astype(np.int64)
    return Values.of_ratio(num, den)


register(Family("Judged", judged, rational=True, needs_cutoff=False, params=frozenset(),
                description="judged documents in the top k / documents in the top k",
                tool_names={"trec_eval": "trec_eval has no judged-fraction measure", "ir_measures": "Judged"}))
