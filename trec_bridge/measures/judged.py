"""Judged@k: share of the top k (or of the whole ranking when shorter) that has a judgment."""
from __future__ import annotations

import numpy as np

from .base import UNJUDGED, Family, Ranking, Values, ratio, register


def judged(r: Ranking, m, ctx) -> Values:
    in_cut = np.ones(len(r.rank), dtype=bool) if m.cutoff is None else r.rank <= m.cutoff
    num = r.per_query_count(in_cut & (r.grade != UNJUDGED))
    den = r.per_query_count(in_cut)
    return Values(ratio(num, den), num, den)


register(Family("Judged", judged, rational=True, needs_cutoff=False, params=frozenset(),
                description="judged documents in the top k / documents in the top k"))
