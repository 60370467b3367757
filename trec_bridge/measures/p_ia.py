"""P_IA@k: intent-aware precision (ndeval's P-IA, ir_measures' P_IA through its pyndeval provider).

The mean over a query's intents S of precision at k for that intent: each of
the top k documents counts once per intent it is relevant to, so
P_IA@k = (sum of those counts) / (k |S|).  A ranking shorter than k still
divides by k, as P@k does.  No novelty discount.  Exact (one fraction a
query).  Definitions of relevance, intents and ``judged_only``: measures/intent.py.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register
from .intent import COMMON_DEFAULTS, COMMON_PARAMS, COMMON_READERS, entries, has_intent, intents, read_cutoff


def p_ia(r: Ranking, m, ctx) -> Values:
    e = entries(r, m, ctx.rel)
    num = np.bincount(e.query, minlength=r.n_queries).astype(np.int64)
    return Values.of_ratio(num, m.cutoff * intents(r, ctx.rel))


register(Family("P_IA", p_ia, rational=True, needs_cutoff=True, params=COMMON_PARAMS,
                description="intent-aware precision: relevant (document, intent) pairs in the top k / (k x intents)",
                defined=has_intent, tool_names={"ir_measures": "P_IA"}, param_readers=COMMON_READERS,
                param_defaults=COMMON_DEFAULTS, cutoff_reader=read_cutoff, subtopics=True))
