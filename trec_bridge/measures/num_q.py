"""NumQ (trec_eval num_q): 1 per query, summed: the number of queries the summary covers."""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, everywhere, register


def num_q(r: Ranking, m, ctx) -> Values:
    return Values.of_counts(np.ones(r.n_queries, dtype=np.int64))


register(Family("NumQ", num_q, rational=True, needs_cutoff=False, takes_cutoff=False, aggregate="sum", integer=True,
                description="number of queries (1 per query, summed)", defined=everywhere,
                tool_names={"trec_eval": ("num_q", None), "ir_measures": "NumQ"}))
