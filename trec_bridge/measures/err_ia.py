"""ERR_IA@k: intent-aware expected reciprocal rank with collection-independent normalisation (ndeval's ERR-IA,
ir_measures' ERR_IA through its pyndeval provider).

Per intent, ERR with binary grades: a reader stops at a document relevant to
the intent with probability alpha = 1/2, so the document's weight for intent s
is (1 - alpha)^c / rank, c being the documents above it relevant to s
(measures/intent.py); ndeval drops the common factor alpha.  The sum over the
top k and the intents is divided by the "ideal ideal" |S| sum_{i<=k}
(1 - alpha)^(i-1) / i, the value of a ranking whose every document is
relevant to every intent, so the measure is in [0, 1].  alpha is fixed at 1/2
(ir_measures has no parameter for it).

ERR_IA@1 is refused: ndeval leaves its first position unnormalised (it
prints the number of intents the first document covers, up to |S|), so
ir_measures' ERR_IA@1 is not this measure at k = 1 (docs/policy.md §5).  The
value is kept as a double: its exact terms outgrow 64-bit integers
(lcm(1..k) 2^k) beyond k of about 20.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInput
from ..messages import quote
from .base import Family, Ranking, Values, register
from .intent import (COMMON_DEFAULTS, COMMON_PARAMS, COMMON_READERS, DEFAULT_ALPHA, entries, has_intent, intents,
                     novelty, powers, read_cutoff)

UNDERFLOW = 1100  # (1/2)^(i-1) is 0 as a double beyond this position: the normaliser's later terms add nothing


def err_ia(r: Ranking, m, ctx) -> Values:
    e = entries(r, m, ctx.rel)
    num = np.bincount(e.query, weights=novelty(e, DEFAULT_ALPHA) / e.rank, minlength=r.n_queries)
    depth = min(m.cutoff, UNDERFLOW)
    ideal_ideal = float(np.sum(powers(1.0 - DEFAULT_ALPHA, depth) / np.arange(1, depth + 1)))
    out = np.zeros(r.n_queries, dtype=np.float64)
    s = intents(r, ctx.rel)
    np.divide(num, s * ideal_ideal, out=out, where=s > 0)
    return Values(out)


def read_err_ia_cutoff(raw: str, token: str) -> int:
    k = read_cutoff(raw, token)
    if k == 1:
        raise InvalidInput("E_CUTOFF", f"ERR_IA@1 has no agreed value (in {quote(token)}): ndeval, ir_measures' "
                           "provider, leaves position 1 unnormalised (it prints the number of intents the first "
                           "document covers, above 1 for two); ask for P_IA@1, or ERR_IA@2 and beyond")
    return k


register(Family("ERR_IA", err_ia, rational=False, needs_cutoff=True, params=COMMON_PARAMS,
                description="intent-aware ERR in the top k (stop probability 1/2 per intent), over the ideal of "
                            "every document relevant to every intent",
                defined=has_intent, tool_names={"ir_measures": "ERR_IA"}, param_readers=COMMON_READERS,
                param_defaults=COMMON_DEFAULTS, cutoff_reader=read_err_ia_cutoff, subtopics=True))
