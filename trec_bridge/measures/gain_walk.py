"""What trec_eval's gain-level measures (G, ndcg_rel, Rndcg) share: gains by grade, the ideal, prefix sums.

trec_eval 9.0.4 (m_G.c, m_ndcg_rel.c, m_Rndcg.c, their ``setup_gains``)
gives each grade >= 0 of a query a gain: the grade itself, or the value a
``rel_level=gain`` parameter names (our ``gains={...}``); a document outside
the qrels or judged below 0 has gain 0.  The ideal ranking is every judged
document with a positive gain, best gain first.  These measures walk the
ranking and the ideal side by side; here the walk becomes prefix sums over
the judged rows and over the ideal, read at any rank with one search.
"""
from __future__ import annotations

import numpy as np

from .base import Ranking


def grade_gain(m, grades: np.ndarray) -> np.ndarray:
    """Each grade's gain: the ``gains`` map where it lists the grade, else the grade; 0 below grade 0."""
    out = grades.astype(np.float64)
    for grade, gain in m.gains or ():
        out[grades == grade] = gain
    out[grades < 0] = 0.0
    return out


def row_gains(r: Ranking, m) -> np.ndarray:
    return grade_gain(m, r.grade)


def ideal(r: Ranking, m) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, 1-based position, gain) of the ideal ranking: each query's positive gains, largest first.

    Kept on the Ranking per gain map: G, nDCG_rel and RnDCG (and their
    ``defined``) on one ranking share one sort of the judgments.
    """
    cache = r.__dict__.setdefault("_ideal_by_gains", {})
    if m.gains not in cache:
        gain = grade_gain(m, r.qrels_grade)
        keep = gain > 0
        q, gain = r.qrels_query[keep], gain[keep]
        order = np.lexsort((-gain, q))
        q, gain = q[order].astype(np.int64), gain[order]
        cache[m.gains] = q, _positions(q), gain
    return cache[m.gains]


def group_offsets(group: np.ndarray) -> np.ndarray:
    """Index of each group's first entry (entries sorted by group), indexed by group; linear, no search."""
    counts = np.bincount(group) if len(group) else np.zeros(0, dtype=np.int64)
    return np.cumsum(counts) - counts


def _positions(group: np.ndarray) -> np.ndarray:
    """1-based position of each entry inside its group (entries sorted by group)."""
    return np.arange(len(group)) - group_offsets(group)[group] + 1


def own_prefix(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each entry: the sum of ``values`` over its group's entries up to and including it (sorted by group),
    added one after another from the group's first, as trec_eval's loops add (a cumulative sum over all groups,
    less the groups before, is another double in the last bits).  One vectorised step per position: a group's
    length, not the entries, sets the number of steps."""
    out = np.empty(len(values), dtype=np.float64)
    if len(values) == 0:
        return out
    position = _positions(group) - 1
    order = np.argsort(position, kind="stable")  # every group's first entries, then their second ones, ...
    steps = np.searchsorted(position[order], np.arange(int(position.max()) + 2))
    running = np.zeros(int(group.max()) + 1, dtype=np.float64)
    for p in range(len(steps) - 1):
        at = order[steps[p]:steps[p + 1]]
        running[group[at]] += values[at]  # a group appears once per position: no two additions collide
        out[at] = running[group[at]]
    return out


def prefix_at(group: np.ndarray, key: np.ndarray, values: np.ndarray, at_group: np.ndarray,
              at_key: np.ndarray) -> np.ndarray:
    """For each (g, k) asked: the sum of ``values`` over entries of group g with key <= k.

    Entries are sorted by (group, key), as the Ranking's rows and the ideal
    are; one running sum per group (``own_prefix``) and one binary search answer every question.
    """
    if len(group) == 0:
        return np.zeros(len(at_group), dtype=np.float64)
    span = int(max(key.max(initial=0), at_key.max(initial=0))) + 1
    flat = group * span + key
    running = own_prefix(group, values)
    offsets = group_offsets(group)
    present = at_group < len(offsets)  # a group asked for may have no entry at all
    starts = np.where(present, offsets[np.minimum(at_group, len(offsets) - 1)], 0)
    ends = np.searchsorted(flat, at_group * span + at_key, side="right")
    found = present & (ends > starts)  # an entry of the group at or below the key
    return np.where(found, running[np.maximum(ends - 1, 0)], 0.0)


def discounted(gains: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """gain / log2(rank + 1): the DCG term of a document at 1-based ``rank``."""
    return gains / np.log2(rank + 1.0)


def positive_gain(r: Ranking, m, ctx) -> np.ndarray:
    """Defined where the ideal has a positive gain (G and ndcg_rel divide by it), whatever the threshold."""
    return np.bincount(ideal(r, m)[0], minlength=r.n_queries) > 0


def per_query_sum(query: np.ndarray, weights: np.ndarray, n_queries: int) -> np.ndarray:
    """Sum of ``weights`` per query, as float64 even when there is nothing to sum (bincount gives int64 then)."""
    return np.bincount(query, weights=weights, minlength=n_queries).astype(np.float64)
