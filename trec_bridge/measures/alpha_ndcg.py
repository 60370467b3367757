"""alpha_nDCG@k: novelty-aware nDCG (Clarke et al. 2008; ndeval's alpha-nDCG, ir_measures' alpha_nDCG through its
pyndeval provider).

alpha-DCG@k = sum over the top k of gain_i / log2(i + 1), a document's gain
being the sum of (1 - alpha)^c over the intents it is relevant to, c the
documents above it relevant to the same intent (measures/intent.py).
alpha_nDCG@k divides it by the alpha-DCG@k of the ideal ranking of the
query's judged documents.  Finding that ideal is NP-hard; like ndeval we take
the greedy one: at each position the document of largest gain given those
already placed, equal gains broken by the larger document ID (bytes, ndeval's
strcmp), the gains compared as ndeval adds them (intent by intent in their
order of first appearance, repeated products), so the same ideal is found.
A ranking with no gain scores 0.  Irrational (the log discount): a double.

The greedy walk advances every query at once, one position a step, and
stops at k or when no query has a document of positive gain left.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Ranking, Values, register
from .intent import (COMMON_DEFAULTS, COMMON_PARAMS, COMMON_READERS, DEFAULT_ALPHA, entries, has_intent, novelty,
                     read_cutoff, read_probability, relevant_judgments)


def alpha_ndcg(r: Ranking, m, ctx) -> Values:
    alpha = m.param("alpha", DEFAULT_ALPHA)
    e = entries(r, m, ctx.rel)
    dcg = np.bincount(e.query, weights=novelty(e, alpha) * discount(e.rank), minlength=r.n_queries)
    ideal = ideal_dcg(r, ctx.rel, alpha, m.cutoff)
    out = np.zeros(r.n_queries, dtype=np.float64)
    np.divide(dcg, ideal, out=out, where=dcg > 0)  # ndeval: no gain, no value to normalise (0)
    return Values(out)


def discount(rank: np.ndarray) -> np.ndarray:
    """1 / log2(rank + 1), written as ndeval computes it: log(2) / log(rank + 1)."""
    return np.log(2.0) / np.log(rank + 1.0)


def ideal_dcg(r: Ranking, rel: int, alpha: float, k: int) -> np.ndarray:
    """The greedy ideal's alpha-DCG@k per query, over the query's judged documents with a relevant intent."""
    owner, subtopic = relevant_judgments(r, r.qrels_pair, rel)
    order = np.lexsort((subtopic, owner))  # a document's intents in subtopic order: ndeval's order of addition
    owner, subtopic = owner[order], subtopic[order]
    cand, owner = np.unique(owner, return_inverse=True)  # candidates: judged documents relevant to some intent
    query = r.qrels_query[cand]
    doc = r.subtopics.doc_order[r.qrels_pair[cand]]
    width = int(subtopic.max()) + 1 if len(subtopic) else 1
    _, intent = np.unique(query[owner] * width + subtopic, return_inverse=True)  # the (query, intent) of each entry
    gain = np.ones(int(intent.max()) + 1 if len(intent) else 0, dtype=np.float64)
    by_query = np.argsort(query, kind="stable")
    starts = np.flatnonzero(np.r_[True, query[by_query][1:] != query[by_query][:-1]]) if len(cand) else by_query
    lengths = np.diff(np.r_[starts, len(cand)])
    queries = query[by_query][starts]
    out = np.zeros(r.n_queries, dtype=np.float64)
    placed = np.zeros(len(cand), dtype=bool)
    for position in range(1, k + 1):
        score = np.bincount(owner, weights=gain[intent], minlength=len(cand))
        score[placed] = -1.0
        chosen, best = _best(score[by_query], doc[by_query], starts, lengths)
        if not len(chosen) or best.max() <= 0:
            break  # every remaining document adds nothing (ndeval would place them at no gain)
        live = best > 0
        out[queries[live]] += best[live] * discount(np.float64(position))
        picked = by_query[chosen[live]]
        placed[picked] = True
        gain[intent[np.isin(owner, picked)]] *= 1.0 - alpha
    return out


def _best(score: np.ndarray, doc: np.ndarray, starts: np.ndarray, lengths: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """Per query (candidates grouped by query): the position of its largest score, equal scores to the larger
    document ID, and that score."""
    if not len(starts):
        return starts, np.zeros(0)
    best = np.maximum.reduceat(score, starts)
    tied = score == np.repeat(best, lengths)
    top_doc = np.maximum.reduceat(np.where(tied, doc, -1), starts)
    chosen = np.flatnonzero(tied & (doc == np.repeat(top_doc, lengths)))  # one per query: IDs differ in a query
    return chosen, best


register(Family("alpha_nDCG", alpha_ndcg, rational=False, needs_cutoff=True, params=COMMON_PARAMS | {"alpha"},
                description="novelty-discounted nDCG over intents (redundancy alpha, default 0.5), against the "
                            "greedy ideal ranking",
                defined=has_intent, tool_names={"ir_measures": "alpha_nDCG"},
                param_readers={**COMMON_READERS, "alpha": read_probability("alpha")},
                param_defaults={**COMMON_DEFAULTS, "alpha": DEFAULT_ALPHA}, cutoff_reader=read_cutoff,
                subtopics=True))
