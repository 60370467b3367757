"""IPrec@r (trec_eval iprec_at_recall): interpolated precision at recall level r.

Interpolated precision at a point is the best precision at that rank or any
later one.  As in trec_eval 9.0.4 (m_iprec_at_recall.c), level r of a query
with R relevant documents is reached at its c-th relevant retrieved document,
c = (long)(r * R + 0.9) (computed in doubles, so the default levels fall where
historical trec_eval put them); the value there is the best k / rank_k over its
k-th relevant retrieved documents, k >= c (c = 0: over all of them).  A level
beyond the relevant documents retrieved scores 0.  Exact: the best precision
is one k / rank_k, kept as a fraction.
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import InvalidInput
from ..messages import quote
from .base import Family, Measure, Ranking, Values, register
from .trec_names import TrecEvalName, atof

DEFAULT_LEVELS = tuple(i / 10 for i in range(11))  # trec_eval's 0.0, 0.1, ..., 1.0 (the same doubles)


def level_counts(levels: np.ndarray | float, n_rel: np.ndarray) -> np.ndarray:
    """trec_eval's document count for a fraction of R: (long)(level * R + 0.9), in doubles as its C code does."""
    return np.trunc(levels * n_rel.astype(np.float64) + 0.9).astype(np.int64)


def best_precision_from(r: Ranking, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per relevant retrieved row, grouped by query: (query, num, den) of the best k / rank_k from it on.

    Also returns each query's first row in that list.  The suffix maximum per
    query is one ``maximum.accumulate`` over order-preserving integer codes
    shifted per query, so no Python loop and no float addition blurs values.
    """
    query, k, rank = r.hits(rel)
    precision = k / rank
    uniq, first, code = np.unique(precision, return_index=True, return_inverse=True)
    shift = (r.n_queries - query) * len(uniq)  # later queries (reversed: earlier) sit above every earlier code
    best = np.maximum.accumulate((code + shift)[::-1])[::-1] - shift
    at = first[best]
    return query, k[at], rank[at], np.searchsorted(query, np.arange(r.n_queries + 1))


def interpolated(r: Ranking, rel: int, levels: list[float]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(num, den) per query of the interpolated precision at each of ``levels`` (0/1 where it is 0)."""
    query, num, den, bounds = best_precision_from(r, rel)
    n_rel, retrieved = r.relevant_count(rel), np.diff(bounds)
    out = []
    for level in levels:
        c = level_counts(level, n_rel)
        reached = (c <= retrieved) & (retrieved > 0)
        at = np.where(reached, bounds[:-1] + np.maximum(c, 1) - 1, 0)
        if len(query):
            out.append((np.where(reached, num[at], 0), np.where(reached, den[at], 1)))
        else:
            out.append((np.zeros(r.n_queries, dtype=np.int64), np.ones(r.n_queries, dtype=np.int64)))
    return out


def iprec(r: Ranking, m, ctx) -> Values:
    ((num, den),) = interpolated(r, ctx.rel, [m.cutoff])
    return Values.of_ratio(num, den)


LEVEL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def read_fraction_level(raw: str, token: str, *, what: str, upper: float) -> float:
    """A level such as 0.5 in [0, upper] with at most two decimals (trec_eval prints levels as %3.2f)."""
    value = float(raw) if LEVEL.fullmatch(raw or "") else None
    if value is None or not 0 <= value <= upper or float(f"{value:.2f}") != value:
        raise InvalidInput("E_CUTOFF", f"{what} {quote(raw)} in {quote(token)} is not a number in [0, {upper:g}] with at "
                           "most two decimals (trec_eval prints levels with two)")
    return value


def read_recall_level(raw: str, token: str) -> float:
    return read_fraction_level(raw, token, what="recall level", upper=1.0)


def level_name(family: str, name: str, defaults: tuple[float, ...]) -> TrecEvalName:
    """trec_eval's name for a family whose parameters are levels: ``-m name.0.2,0.5``, printed ``name_0.20``."""
    def to_measures(text: str | None) -> list:
        """The levels as get_float_cutoffs reads them: each by atof, ascending whatever the order given, a repeat
        refused ("duplicate cutoffs detected")."""
        levels = defaults if text is None else sorted(atof(v) for v in text.split(","))
        if any(a == b for a, b in zip(levels, levels[1:])):
            raise ValueError(f"duplicate levels in {name}.{text}")
        return [Measure(family, cutoff=v) for v in levels]

    def spell(m):
        if m.family != family or m.cutoff is None:
            return None
        return repr(float(m.cutoff)), f"{name}_{m.cutoff:3.2f}"
    return TrecEvalName(name, to_measures, spell)


register(Family("IPrec", iprec, rational=True, needs_cutoff=True, params=frozenset({"rel"}),
                cutoff_reader=read_recall_level,
                description="interpolated precision at a recall level (IPrec@0.5)",
                tool_names={"trec_eval": level_name("IPrec", "iprec_at_recall", DEFAULT_LEVELS),
                            "ir_measures": "IPrec"}))
