"""The intent-aware (diversity) measures' shared walk, as ndeval computes it (ir_measures' pyndeval provider).

A diversity qrels judges a document per subtopic (intent) of its query; a
document is relevant to subtopic s when its judgment for s has grade >= rel
(never a negative grade), and a document without one is relevant to nothing.
A query's *intents* S are its subtopics with at least one relevant judgment:
a subtopic judged only non-relevant is ignored (ndeval's actualSubtopics),
and a query with none has no value (policy §2; ndeval prints 0 for it).

Novelty: the gain of a document for subtopic s is (1 - alpha)^c, where c is
the number of documents ranked above it that are relevant to s (Clarke et
al. 2008), so a second document on the same intent is worth less; a
document's gain is the sum over the subtopics it is relevant to.  Powers
are formed as ndeval forms them, by repeated multiplication.

The kernels work on *entries*: one per (ranked judged row, subtopic it is
relevant to), in query, rank and subtopic order (ndeval adds a document's
subtopic gains in the subtopics' order of first appearance in the qrels),
never looping over queries.  ``judged_only``: documents without any judgment
are removed and the rest ranked 1, 2, ... (ir_measures' filter: a judgment
of any grade).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidInput
from ..messages import quote
from .base import Ranking

DEFAULT_ALPHA = 0.5  # ndeval's ALPHA, ir_measures' default
DEFAULT_BETA = 0.5  # ndeval's BETA
MAX_CUTOFF = 10 ** 9  # far beyond ndeval's depth of 20; keeps k * |S| (P_IA's denominator) inside int64


@dataclass(frozen=True)
class Entries:
    """One per (ranked judged row, subtopic it is relevant to), grouped by query, in rank then subtopic order."""

    query: np.ndarray  # int64
    rank: np.ndarray  # int64, 1-based position in the ranking (as judged_only renumbers it)
    subtopic: np.ndarray  # int64
    seen: np.ndarray  # int64: earlier entries of the same query and subtopic (documents above it on that intent)


def relevant_judgments(r: Ranking, pairs: np.ndarray, rel: int) -> tuple[np.ndarray, np.ndarray]:
    """(position in ``pairs``, subtopic) of each judgment of ``pairs`` that is relevant at ``rel``, in order."""
    table = r.subtopics
    owner, j = table.judgments_of(pairs)
    keep = (table.grade[j] >= rel) & (table.grade[j] >= 0)
    return owner[keep], table.subtopic[j[keep]]


def entries(r: Ranking, m, rel: int) -> Entries:
    """The ranking's relevant (row, subtopic) entries within the measure's cutoff, with their novelty counts."""
    rank = ranks_judged_only(r) if m.param("judged_only", False) else r.rank
    rows = np.arange(len(rank)) if m.cutoff is None else np.flatnonzero(rank <= m.cutoff)
    owner, subtopic = relevant_judgments(r, r.row_pair[rows], rel)
    query, rank = r.row_query[rows][owner], rank[rows][owner]
    order = np.lexsort((subtopic, rank, query))  # ndeval adds a document's subtopic gains in subtopic order
    query, rank, subtopic = query[order], rank[order], subtopic[order]
    return Entries(query, rank, subtopic, _seen(query, subtopic, rank))


def _seen(query: np.ndarray, subtopic: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """For each entry, how many entries of its (query, subtopic) come at a smaller rank."""
    by_intent = np.lexsort((rank, subtopic, query))
    q, s = query[by_intent], subtopic[by_intent]
    new = np.r_[True, (q[1:] != q[:-1]) | (s[1:] != s[:-1])] if len(q) else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(new)
    within = np.arange(len(q)) - np.repeat(starts, np.diff(np.r_[starts, len(q)]))
    seen = np.empty(len(q), dtype=np.int64)
    seen[by_intent] = within
    return seen


def ranks_judged_only(r: Ranking) -> np.ndarray:
    """Each judged row's position among its query's judged rows (rows are grouped by query in rank order)."""
    q = r.row_query
    if not len(q):
        return r.rank
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    return np.arange(1, len(q) + 1, dtype=np.int64) - np.repeat(starts, np.diff(np.r_[starts, len(q)]))


def intents(r: Ranking, rel: int) -> np.ndarray:
    """|S| per query: the subtopics with at least one relevant judgment (ndeval's actualSubtopics)."""
    owner, subtopic = relevant_judgments(r, r.qrels_pair, rel)
    query = r.qrels_query[owner]
    width = int(subtopic.max()) + 1 if len(subtopic) else 1
    distinct = np.unique(query * width + subtopic)
    return np.bincount(distinct // width, minlength=r.n_queries).astype(np.int64)


def powers(base: float, n: int) -> np.ndarray:
    """base^0, base^1, ..., base^(n-1), each the previous one times ``base`` (ndeval's repeated products)."""
    out = np.full(max(n, 1), base, dtype=np.float64)
    out[0] = 1.0
    return np.cumprod(out)[:n]


def novelty(e: Entries, alpha: float) -> np.ndarray:
    """(1 - alpha)^seen per entry: its subtopic's gain after the documents above it on that intent."""
    table = powers(1.0 - alpha, int(e.seen.max()) + 1 if len(e.seen) else 1)
    return table[e.seen]


def has_intent(r: Ranking, m, ctx) -> np.ndarray:
    """A diversity measure is defined on a query with a relevant judgment for some subtopic (policy §2)."""
    return intents(r, ctx.rel) > 0


def read_probability(name: str):
    """A reader of alpha or beta: a number from 0 to 1 (ndeval refuses others), kept as a float."""

    def read(value, token: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise InvalidInput("E_MEASURE_PARAM", f"{name} must be a number from 0 to 1, got {quote(value)} "
                               f"(in {quote(token)})")
        return float(value)

    return read


def read_flag(value, token: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput("E_MEASURE_PARAM", f"judged_only must be True or False, got {quote(value)} "
                           f"(in {quote(token)})")
    return value


def read_cutoff(raw: str, token: str) -> int:
    """A positive integer up to ``MAX_CUTOFF``."""
    from .parse import _cutoff

    k = _cutoff(raw, token)
    if k > MAX_CUTOFF:
        raise InvalidInput("E_CUTOFF", f"cutoff {k} in {quote(token)} is above {MAX_CUTOFF:,}, the largest a diversity "
                           "measure takes (ndeval itself stops at 20)")
    return k


COMMON_PARAMS = frozenset({"rel", "judged_only"})
COMMON_READERS = {"judged_only": read_flag}
COMMON_DEFAULTS = {"judged_only": False}
