"""StRecall@k: subtopic recall (ndeval's strec, ir_measures' StRecall through its pyndeval provider).

The share of a query's intents S covered by the top k: a subtopic is covered
when some document in the top k is relevant to it.  Exact (one fraction a
query).  Definitions of relevance and intents: measures/intent.py.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register
from .intent import entries, has_intent, intents, read_cutoff


def strecall(r: Ranking, m, ctx) -> Values:
    e = entries(r, m, ctx.rel)
    covered = np.bincount(e.query[e.seen == 0], minlength=r.n_queries).astype(np.int64)  # each intent's first document
    return Values.of_ratio(covered, intents(r, ctx.rel))


register(Family("StRecall", strecall, rational=True, needs_cutoff=True, params=frozenset({"rel"}),
                description="subtopic recall: intents covered by the top k / intents", defined=has_intent,
                tool_names={"ir_measures": "StRecall"}, cutoff_reader=read_cutoff, subtopics=True))
