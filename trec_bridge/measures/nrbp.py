"""NRBP: novelty- and rank-biased precision with collection-independent normalisation (Clarke et al. 2009;
ndeval's NRBP, ir_measures' NRBP through its pyndeval provider).

A reader goes on to the next position with probability beta (RBP's
persistence) and values a document by its novelty gain (1 - alpha)^c for each
intent it is relevant to (measures/intent.py): NRBP = (1 - (1 - alpha) beta)
/ |S| sum_i beta^(i-1) gain_i over the whole ranking (ndeval's NRBP takes no
cutoff).  The factor makes a ranking whose every document is relevant to every
intent score 1.  Powers of beta are formed as ndeval forms them, by repeated
multiplication; the value is kept as a double.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register
from .intent import DEFAULT_ALPHA, DEFAULT_BETA, entries, has_intent, intents, novelty, powers, read_probability


def nrbp(r: Ranking, m, ctx) -> Values:
    alpha, beta = m.param("alpha", DEFAULT_ALPHA), m.param("beta", DEFAULT_BETA)
    e = entries(r, m, ctx.rel)
    decay = powers(beta, int(e.rank.max()) if len(e.rank) else 1)
    total = np.bincount(e.query, weights=novelty(e, alpha) * decay[e.rank - 1], minlength=r.n_queries)
    out = np.zeros(r.n_queries, dtype=np.float64)
    s = intents(r, ctx.rel)
    np.divide(total * (1 - (1 - alpha) * beta), s, out=out, where=s > 0)
    return Values(out)


register(Family("NRBP", nrbp, rational=False, needs_cutoff=False, takes_cutoff=False,
                params=frozenset({"rel", "alpha", "beta"}),
                description="novelty- and rank-biased precision (redundancy alpha, persistence beta, both 0.5)",
                defined=has_intent, tool_names={"ir_measures": "NRBP"},
                param_readers={"alpha": read_probability("alpha"), "beta": read_probability("beta")},
                param_defaults={"alpha": DEFAULT_ALPHA, "beta": DEFAULT_BETA}, subtopics=True))
