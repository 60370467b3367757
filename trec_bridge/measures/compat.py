"""Compat(p=…, normalize=…): compatibility (Clarke, Vtyurina and Smucker 2021), as ir_measures' compat provider.

The rank-biased overlap of the ranking with the ideal ranking the qrels
imply, to depth n = max(ranking length, relevant documents):
RBO = sum_{d=1}^{n} p^(d-1) |top d of ranking ∩ top d of ideal| / d, divided
by sum_{d<=n} p^(d-1); with ``normalize`` (the default) it is divided by the
ideal's RBO with itself instead, so a perfect ranking scores 1.

The ideal ranking holds every judged document of positive grade, best grade
first; documents of one grade are in the ranking's order, retrieved ones
first (ir_measures orders them by run score, unretrieved ones as score 0:
the same order for positive scores).  A relevant document d at ideal
position a_d and ranking position b_d is in both tops from depth
max(a_d, b_d) on, so RBO is a sum over relevant retrieved documents of
S(n) - S(max(a_d, b_d) - 1), with S(m) = sum_{d<=m} p^(d-1) / d: no loop
over depths or queries.  p defaults to 0.95; relevance is grade > 0 (no rel
parameter, as in ir_measures).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInput
from ..messages import quote
from .base import Family, Ranking, Values, register
from .cwl import read_probability


def compat(r: Ranking, m, ctx) -> Values:
    p = m.param("p", 0.95)
    relevant = np.bincount(r.qrels_query[r.qrels_grade > 0], minlength=r.n_queries)
    depth = np.maximum(r.retrieved, relevant)
    power = np.cumprod(np.r_[1.0, np.full(max(int(depth.max(initial=0)), 1) - 1, p)])  # p^(d-1), d = 1..
    s = np.r_[0.0, np.cumsum(power / np.arange(1, len(power) + 1))]  # S(m), m = 0..
    g = np.r_[0.0, np.cumsum(power)]  # sum_{d<=m} p^(d-1)
    q, met = _meeting_depths(r)
    overlap = np.bincount(q, weights=s[depth[q]] - s[met - 1], minlength=r.n_queries)
    value = np.zeros(r.n_queries, dtype=np.float64)
    if m.param("normalize", True):
        best = g[relevant] + relevant * (s[depth] - s[relevant])
        np.divide(overlap, best, out=value, where=best > 0)
    else:
        np.divide(overlap, g[depth], out=value, where=depth > 0)
    return Values(value)


def _meeting_depths(r: Ranking) -> tuple[np.ndarray, np.ndarray]:
    """(query, max(ideal position, rank)) of every relevant retrieved document."""
    rows = np.flatnonzero(r.grade > 0)
    q, grade, rank = r.row_query[rows], r.grade[rows], r.rank[rows]
    order = np.lexsort((rank, -grade, q))
    q, grade, rank = q[order], grade[order], rank[order]
    levels, inverse = np.unique(np.r_[grade, r.qrels_grade], return_inverse=True)
    n_levels = len(levels)
    descending = n_levels - 1 - inverse  # best grade first
    key = q * n_levels + descending[:len(grade)]  # (query, grade) as one integer, ascending in ``order``
    positive = r.qrels_grade > 0
    judged_keys = np.sort(r.qrels_query[positive] * n_levels + descending[len(grade):][positive])
    better = np.searchsorted(judged_keys, key) - np.searchsorted(judged_keys, q * n_levels)  # same query, higher grade
    group_start = np.searchsorted(key, key, side="left")  # rows are sorted by key
    ideal = better + np.arange(len(key)) - group_start + 1
    return q, np.maximum(ideal, rank)


def has_relevant_doc(r: Ranking, m, ctx) -> np.ndarray:
    """Compat is defined on a query with a judged document of positive grade (its ideal is not empty)."""
    return np.bincount(r.qrels_query[r.qrels_grade > 0], minlength=r.n_queries) > 0


def read_normalize(value, token: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput("E_MEASURE_PARAM", f"normalize must be True or False, got {quote(value)} (in {quote(token)})")
    return value


register(Family("Compat", compat, rational=False, needs_cutoff=False, params=frozenset({"p", "normalize"}),
                description="compatibility: rank-biased overlap with the ideal ranking (persistence p, default 0.95)",
                takes_cutoff=False, defined=has_relevant_doc, tool_names={"ir_measures": "Compat"},
                param_readers={"p": read_probability, "normalize": read_normalize},
                param_defaults={"p": 0.95, "normalize": True},
                refused_params={"rel": "{token}: Compat has no rel; its ideal holds every document of positive grade, "
                                       "as in ir_measures"}))
