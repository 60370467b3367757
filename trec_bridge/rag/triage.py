"""Triage lists: the queries to look at first, with where their first relevant document is.

Two lists (policy §8): queries with R@k below ``recall_below`` (0.3) and
queries with the method's nDCG@k (exponential gain) below ``ndcg_below`` (0.5).  Queries without a relevant
document (null) are never listed; missing, failed and empty queries score 0
and are.  Each entry carries the query's first relevant rank in the whole
ranking (no cutoff; null when no relevant document was retrieved), read
from the scorer's prepared run (its judged rows).
Entries are sorted by value, worst first, then by query-set order.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..scorer import Prepared
from .repeats import Combined
from .tiers import Triage, below


def first_relevant_ranks(prepared: Prepared, threshold: int | None = None) -> dict[str, int]:
    """query -> rank (1-based) of its first document with grade >= threshold, for queries that have one.

    Read from the prepared run's judged rows in the strict policy's order
    (the reader's order, after the chunk collapse when there is a map).
    """
    thr = prepared.dataset.threshold if threshold is None else threshold
    ranking = prepared.ranking()
    relevant = (ranking.grade >= thr) & (ranking.grade >= 0)
    query, rank = ranking.row_query[relevant], ranking.rank[relevant]  # grouped by query, rank ascending
    first = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if len(query) else query
    ids = prepared.universe.get_column("query_id").to_list()
    return {ids[q]: r for q, r in zip(query[first].tolist(), rank[first].tolist())}


@dataclass
class TriageEntry:
    query_id: str
    status: str
    value: float
    exact: Fraction | None
    relevant: int
    first_relevant_rank: int | None
    tags: tuple[str, ...]
    first_relevant_rank_by_run: list[int | None] | None = None


@dataclass
class TriageLists:
    config: Triage
    recall: list[TriageEntry]
    ndcg: list[TriageEntry]

    @property
    def recall_measure(self) -> str:
        return str(self.config.recall_measure)

    @property
    def ndcg_measure(self) -> str:
        return str(self.config.ndcg_measure)


def triage(c: Combined, config: Triage, first_ranks: list[dict[str, int]]) -> TriageLists:
    """``first_ranks``: one map per run of ``c`` (the first is the one shown)."""
    def listing(name: str, limit: Fraction) -> list[TriageEntry]:
        out = []
        for pos, q in enumerate(c.queries):
            value, exact = q.values[name], q.exact.get(name)
            if value is None or not below(value, exact, limit):
                continue
            ranks = [fr.get(q.query_id) for fr in first_ranks]
            out.append((value, pos, TriageEntry(q.query_id, q.status, value, exact, q.relevant, ranks[0], q.tags,
                                                ranks if len(ranks) > 1 else None)))
        return [e for _, _, e in sorted(out, key=lambda t: (t[0], t[1]))]

    return TriageLists(config, listing(str(config.recall_measure), config.recall_below),
                       listing(str(config.ndcg_measure), config.ndcg_below))


def triage_json(t: TriageLists) -> dict:
    from ..report import fraction_text
    from .tiers import fraction_decimal

    def entries(lst):
        return [{"query_id": e.query_id, "status": e.status, "value": e.value, "exact": fraction_text(e.exact),
                 "relevant": e.relevant, "first_relevant_rank": e.first_relevant_rank, "tags": list(e.tags),
                 **({"first_relevant_rank_by_run": e.first_relevant_rank_by_run}
                    if e.first_relevant_rank_by_run is not None else {})}
                for e in lst]

    return {
        "k": t.config.k,
        "recall": {"measure": t.recall_measure, "below": fraction_decimal(t.config.recall_below),
                   "queries": entries(t.recall)},
        "ndcg": {"measure": t.ndcg_measure, "below": fraction_decimal(t.config.ndcg_below),
                 "queries": entries(t.ndcg)},
    }
