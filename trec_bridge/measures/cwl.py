"""The C/W/L framework shared by RBP, SDCG, NERR8-11, INST and INSQ, as cwl_eval computes it.

A C/W/L measure is the expected rate of gain of a user who reads the ranking
top down and, after position i, continues with probability C(i).  The weight
of position i is W(i) = prod_{j<i} C(j) / sum_k prod_{j<k} C(j), and the
measure is sum_i W(i) g(i).  Following cwl_eval (the provider ir_measures
routes these measures to), the ranking is seen to a fixed depth of
``DEPTH`` = 1,000 positions: a shorter ranking is padded with items of no
gain (unjudged documents have no gain either), a longer one is cut, and the
weights are normalised over those 1,000 positions.

Gains: binary measures (RBP) give 1 to a grade at or above ``rel``; graded
ones map grade g to (clip(max(g, 0), min_rel, max_rel) - min_rel) /
(max_rel - min_rel), cwl_eval's scaling into [0, 1].  A grade above
``max_rel`` is outside the scale the measure was given: cwl_eval clips it
silently, we refuse it (``check_scale``).

Kernels here never loop over queries: a C that does not depend on the gains
(RBP, SDCG, INSQ) gives one weight vector for every query, applied to the
judged rows; one that does (NERR, INST) is computed on a dense
(queries x depth) matrix, in blocks of queries to bound memory.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import InvalidInput
from ..integers import INT64_MAX, INT64_MIN, in_range
from ..messages import quote
from .base import MeasureRefused, Ranking

DEPTH = 1000  # cwl_eval's default max_n, which ir_measures' provider keeps
BLOCK = 1024  # queries per dense block


def scaled_gain(grade: np.ndarray, m) -> np.ndarray:
    """cwl_eval's gain of a graded measure: the grade clipped to [min_rel, max_rel], scaled into [0, 1]."""
    lo, hi = m.param("min_rel", 0), m.param("max_rel")
    g = np.clip(np.maximum(grade, 0), lo, hi).astype(np.float64)
    return (g - lo) / (hi - lo)


def check_scale(r: Ranking, m) -> None:
    """Refuse a judged grade above the measure's ``max_rel`` (cwl_eval would clip it to max_rel silently)."""
    hi = m.param("max_rel")
    above = np.flatnonzero(r.qrels_grade > hi)
    if len(above):
        i = int(above[0])
        raise MeasureRefused(int(r.qrels_query[i]), "E_GRADE_SCALE",
                             f"a judgment has grade {int(r.qrels_grade[i])}, above max_rel={hi}: the measure's scale "
                             "ends at max_rel (ir_measures' cwl_eval provider would clip it silently); give a max_rel "
                             "that covers every grade")


def weights(c: np.ndarray) -> np.ndarray:
    """W from continuation probabilities C along the last axis (cwl_eval's w_vector, row-wise)."""
    head = np.ones(c.shape[:-1] + (1,), dtype=np.float64)
    prod = np.concatenate([head, np.cumprod(c[..., :-1], axis=-1)], axis=-1)
    return prod / prod.sum(axis=-1, keepdims=True)


def fixed_weights_value(r: Ranking, w: np.ndarray, gain: np.ndarray) -> np.ndarray:
    """sum_i W(i) g(i) per query for a weight vector shared by all queries (``gain`` per judged row)."""
    seen = r.rank <= len(w)
    return np.bincount(r.row_query[seen], weights=w[r.rank[seen] - 1] * gain[seen], minlength=r.n_queries)


def dense_gains(r: Ranking, gain: np.ndarray, queries: slice, depth: int) -> np.ndarray:
    """The (queries x depth) gain matrix of a block of queries: judged rows at their ranks, 0 elsewhere."""
    lo, hi = np.searchsorted(r.row_query, [queries.start, queries.stop])
    q, rank, g = r.row_query[lo:hi], r.rank[lo:hi], gain[lo:hi]
    seen = rank <= depth
    out = np.zeros((queries.stop - queries.start, depth), dtype=np.float64)
    out[q[seen] - queries.start, rank[seen] - 1] = g[seen]
    return out


def gain_dependent_value(r: Ranking, gain: np.ndarray, continuation: Callable[[np.ndarray], np.ndarray],
                         depth: int = DEPTH) -> np.ndarray:
    """sum_i W(i) g(i) per query where C depends on the gains: ``continuation(G)`` gives C for a gain block.

    ``depth`` below 1,000 is for measures whose C is 0 from some position on
    (NERR8@k, NERR9@k): the weights beyond are 0, so fewer columns suffice.
    """
    out = np.zeros(r.n_queries, dtype=np.float64)
    for start in range(0, r.n_queries, BLOCK):
        block = slice(start, min(start + BLOCK, r.n_queries))
        g = dense_gains(r, gain, block, depth)
        out[block] = np.einsum("ij,ij->i", weights(continuation(g)), g)
    return out


def positions(depth: int = DEPTH) -> np.ndarray:
    """1, 2, ..., depth as float64 (the rank of each column)."""
    return np.arange(1, depth + 1, dtype=np.float64)


def has_gain(r: Ranking, m, ctx) -> np.ndarray:
    """A graded C/W/L measure is defined on a query with a judged document of positive gain (policy §2)."""
    keep = scaled_gain(r.qrels_grade, m) > 0
    return np.bincount(r.qrels_query[keep], minlength=r.n_queries) > 0


def read_probability(value, token: str) -> float:
    """A persistence p: a number strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise InvalidInput("E_MEASURE_PARAM", f"p must be a number between 0 and 1 (exclusive), got {quote(value)} "
                           f"(in {quote(token)})")
    return float(value)


MAX_TARGET = 1e6  # far beyond any ranking's total gain (at most 1,000 here); 2T must stay a finite double


def read_target(value, token: str) -> float:
    """INST/INSQ/NERR11's T, the gain the user wants: a positive number up to ``MAX_TARGET``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TARGET:
        raise InvalidInput("E_MEASURE_PARAM", f"T must be a positive number up to {MAX_TARGET:g}, got {quote(value)} "
                           f"(in {quote(token)})")
    return float(value)


def read_grade(value, token: str) -> int:
    """min_rel / max_rel: an integer grade."""
    if isinstance(value, bool) or not in_range(value, INT64_MIN, INT64_MAX):
        raise InvalidInput("E_MEASURE_PARAM", f"min_rel and max_rel are integer grades, got {quote(value)} "
                           f"(in {quote(token)})")
    return value


def check_scale_params(params: dict, token: str) -> None:
    """max_rel is required (as in ir_measures) and above min_rel (default 0)."""
    if "max_rel" not in params:
        raise InvalidInput("E_MEASURE_PARAM", f"give the top of the grade scale, e.g. max_rel=3 (in {quote(token)}); "
                           "the measure scales grades into [0, 1] between min_rel and max_rel, as ir_measures does")
    if params["max_rel"] <= params.get("min_rel", 0):
        raise InvalidInput("E_MEASURE_PARAM", f"max_rel must be above min_rel (default 0) (in {quote(token)})")


GRADED_PARAMS = frozenset({"min_rel", "max_rel"})
GRADED_READERS = {"min_rel": read_grade, "max_rel": read_grade}
GRADED_DEFAULTS = {"min_rel": 0}
NO_REL = ("{token}: a graded C/W/L measure has no rel; its gain is the grade scaled between min_rel and max_rel "
          "(ir_measures' spelling)")
