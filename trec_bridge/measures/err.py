"""ERR@k: expected reciprocal rank (Chapelle et al. 2009), as gdeval (ir_measures' ERR provider) defines it.

A user reads top down and stops at position i with probability
R_i = (2^g_i - 1) / 2^max_rel; ERR@k = sum_{i<=k} R_i / i * prod_{j<i} (1 - R_j).
The grade scale tops at ``max_rel`` = 4, gdeval's fixed MAX_JUDGMENT (the
parameter exists for other scales; ir_measures has none).  Grades <= 0 and
unjudged documents have R = 0; a grade above max_rel is refused
(E_GRADE_SCALE), as gdeval refuses it.  Without a cutoff the whole ranking
counts.

The kernel walks the relevant rows of all queries together, one position
inside a query at a time (a loop over at most k positions, never over
queries), multiplying the stopping products in the same order gdeval does,
so the floats are the same.  ERR is rational, but its exact terms outgrow 64-bit
integers after about a dozen relevant documents, so it is kept as a double.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInput
from ..messages import quote
from .base import Family, MeasureRefused, Ranking, Values, register
from .cwl import read_grade

DEFAULT_MAX = 4  # gdeval's MAX_JUDGMENT


def err(r: Ranking, m, ctx) -> Values:
    top = m.param("max_rel", DEFAULT_MAX)
    _check_scale(r, top)
    keep = r.grade > 0
    if m.cutoff is not None:
        keep &= r.rank <= m.cutoff
    q, rank = r.row_query[keep], r.rank[keep]
    stop = (2.0 ** r.grade[keep] - 1) / 2.0 ** top
    reach = _reach(q, stop)
    return Values(np.bincount(q, weights=stop * reach / rank, minlength=r.n_queries))


def _reach(q: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """prod of (1 - stop) over the earlier rows of the same query (rows grouped by query in rank order)."""
    reach = np.ones(len(q), dtype=np.float64)
    if not len(q):
        return reach
    first = np.r_[True, q[1:] != q[:-1]]
    starts = np.flatnonzero(first)
    pos = np.arange(len(q)) - np.repeat(starts, np.diff(np.r_[starts, len(q)]))
    for step in range(1, int(pos.max()) + 1):
        at = np.flatnonzero(pos == step)
        reach[at] = reach[at - 1] * (1.0 - stop[at - 1])
    return reach


def _check_scale(r: Ranking, top: int) -> None:
    above = np.flatnonzero(r.qrels_grade > top)
    if len(above):
        i = int(above[0])
        raise MeasureRefused(int(r.qrels_query[i]), "E_GRADE_SCALE",
                             f"a judgment has grade {int(r.qrels_grade[i])}, above the scale's top max_rel={top} "
                             "(gdeval, ir_measures' ERR provider, stops on such a grade); give ERR(max_rel=...) "
                             "for another scale")


def has_positive_grade(r: Ranking, m, ctx) -> np.ndarray:
    """ERR is defined on a query with a judged document of positive grade (policy §2)."""
    return np.bincount(r.qrels_query[r.qrels_grade > 0], minlength=r.n_queries) > 0


def read_top(value, token: str) -> int:
    top = read_grade(value, token)
    if not 0 < top <= 1000:
        raise InvalidInput("E_MEASURE_PARAM", f"max_rel must be between 1 and 1000, got {top} (in {quote(token)})")
    return top


register(Family("ERR", err, rational=False, needs_cutoff=False, params=frozenset({"max_rel"}),
                description="expected reciprocal rank in the top k, stopping probability (2^grade - 1) / 16",
                defined=has_positive_grade, tool_names={"ir_measures": "ERR"}, param_readers={"max_rel": read_top},
                param_defaults={"max_rel": DEFAULT_MAX},
                refused_params={"rel": "{token}: ERR has no rel; every positive grade has its stopping probability "
                                       "(2^grade - 1) / 2^max_rel"}))
