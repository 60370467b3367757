"""Apply a policy to a dataset, a run and measures; return per-query values and means.

The flow is fixed: decide the query set, validate (nothing is scored after a
rejection), collapse chunks, build one ``Ranking`` per distinct ordering,
run each measure's kernel, then apply the policy's rule for queries with no
relevant document and average over the eligible queries.  Exact fractions
are kept for the rational measures.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import polars as pl

from . import measures as _measures  # noqa: F401  (registers the families)
from .chunks import check_chunk_map, collapse
from .dataset_checks import check_dataset
from .errors import InvalidInput
from .fingerprint import canonical_sha256
from .measures.base import FAMILIES, Measure, MeasureContext
from .model import ChunkMap, Dataset, Run
from .policy import STRICT, Policy
from .ranking import build_ranking, query_index


@dataclass
class QueryResult:
    query_id: str
    status: str  # ranked | empty | missing | failed
    relevant: int  # relevant judged documents at the dataset threshold
    retrieved: int
    values: dict[str, float | None]
    exact: dict[str, Fraction | None]
    reason: str | None = None  # for failed queries
    answerable: bool | None = None
    tags: tuple[str, ...] = ()


@dataclass
class MeanResult:
    value: float | None
    exact: Fraction | None
    eligible: int


@dataclass
class ScoreResult:
    policy: Policy
    measures: list[Measure]
    queries: list[QueryResult]
    means: dict[str, MeanResult]
    query_source: str
    split: str | None
    unjudged_queries: list[str]
    protocol_fingerprint: str
    chunk_map_fingerprint: str | None = None
    chunk_evidence: pl.DataFrame | None = None
    order: dict | None = None
    threshold: int = 1
    extra: dict = field(default_factory=dict)

    def by_status(self, status: str) -> list[str]:
        return [q.query_id for q in self.queries if q.status == status]

    @property
    def missing(self) -> list[str]:
        return self.by_status("missing")

    @property
    def failed(self) -> dict[str, str]:
        return {q.query_id: q.reason or "" for q in self.queries if q.status == "failed"}

    @property
    def no_relevant(self) -> list[str]:
        return [q.query_id for q in self.queries if q.relevant == 0]

    @property
    def complete(self) -> bool:
        return not self.missing and not self.failed


def score(dataset: Dataset, run: Run, measures: list[Measure], policy: Policy = STRICT, *,
          split: str | None = None, chunk_map: ChunkMap | None = None) -> ScoreResult:
    """Score ``run`` on ``dataset`` under ``policy``; raise InvalidInput before any scoring."""
    from .validate import check_run, keep_last_repeat

    check_dataset(dataset)
    dataset = dataset.select_split(split)
    if not dataset.queries and dataset.query_source != "qrels":
        raise InvalidInput("E_QUERY_SET_EMPTY",
                           f"no query in split {split!r}" if split else "the dataset lists no query", file=dataset.source)
    chunk_map = chunk_map or dataset.chunk_map
    evidence = None
    if chunk_map is not None:
        check_chunk_map(chunk_map, dataset.corpus)
        collapsed = collapse(run, chunk_map)
        run, evidence = collapsed.run, collapsed.evidence
    base_set = dataset.query_ids() if dataset.query_source != "qrels" else dataset.qrels.query_ids()
    if not base_set:
        raise InvalidInput("E_QUERY_SET_EMPTY", f"no query in split {split!r}: qrels files (TREC, ranx) have no "
                           "splits (--split applies to JSON datasets)" if split else "the qrels judge no query",
                           file=dataset.source)
    unjudged = check_run(run, dataset, base_set, policy)
    if policy.duplicates == "last_wins":
        run = keep_last_repeat(run)
    index_ids = _index_queries(policy, base_set, run, dataset)
    statuses = _statuses(index_ids, run)
    index = query_index(index_ids)

    rankings: dict = {}
    per_measure: dict[str, tuple[np.ndarray, list[Fraction | None] | None, np.ndarray]] = {}
    for m in measures:
        ordering = policy.ordering_for(m)
        if ordering not in rankings:
            rankings[ordering] = build_ranking(run.frame, dataset.qrels.frame, index, ordering)
        ranking = rankings[ordering]
        rel = m.rel if m.rel is not None else dataset.threshold
        effective = m if not (m.family == "RR" and policy.rr_cutoff == "ignored") else Measure("RR", None, m.rel)
        ctx = _context(m, rel, policy)
        values = FAMILIES[m.family].kernel(ranking, effective, ctx)
        has_relevant = ranking.relevant_count(rel) > 0
        exact = [values.fraction(i) for i in range(index.height)] if m.rational else None
        per_measure[str(m)] = (values.value, exact, has_relevant)

    any_ranking = next(iter(rankings.values())) if rankings else build_ranking(
        run.frame, dataset.qrels.frame, index, policy.ordering)
    relevant_at_threshold = any_ranking.relevant_count(dataset.threshold)
    retrieved = any_ranking.lengths()
    by_id = {q.query_id: q for q in dataset.queries}

    results: list[QueryResult] = []
    for i, qid in enumerate(index_ids):
        status, reason = statuses[qid]
        vals: dict[str, float | None] = {}
        exacts: dict[str, Fraction | None] = {}
        for name, (value, exact, has_relevant) in per_measure.items():
            if not has_relevant[i] and policy.no_relevant == "null":
                vals[name], exacts[name] = None, None
            else:
                exacts[name] = exact[i] if exact is not None else None
                # a rational measure's float is its exact value correctly rounded
                vals[name] = float(exacts[name]) if exacts[name] is not None else float(value[i])
        q = by_id.get(qid)
        results.append(QueryResult(qid, status, int(relevant_at_threshold[i]), int(retrieved[i]), vals, exacts,
                                   reason, q.answerable if q else None, q.tags if q else ()))

    means = {str(m): _mean(results, str(m), m.rational) for m in measures}
    return ScoreResult(
        policy=policy, measures=list(measures), queries=results, means=means,
        query_source=dataset.query_source, split=dataset.split, unjudged_queries=unjudged,
        protocol_fingerprint=protocol_fingerprint(dataset, measures, policy),
        chunk_map_fingerprint=chunk_map.fingerprint() if chunk_map is not None else None,
        chunk_evidence=evidence, order=_order_summary(run), threshold=dataset.threshold,
    )


def _index_queries(policy: Policy, base_set: list[str], run: Run, dataset: Dataset) -> list[str]:
    """The queries that get a value under ``policy`` (the mean's denominator before the no-relevant rule)."""
    if policy.query_set == "dataset":
        return list(base_set)
    judged = dataset.qrels.query_ids()
    if policy.query_set == "judged":
        return judged
    in_run = set(run.ranked_queries())
    if policy.empty_rankings == "recorded":
        in_run |= set(run.queries)
    return [q for q in judged if q in in_run]


def _statuses(index_ids: list[str], run: Run) -> dict[str, tuple[str, str | None]]:
    ranked = set(run.ranked_queries())
    recorded = set(run.queries)
    out = {}
    for q in index_ids:
        if q in run.failures:
            out[q] = ("failed", run.failures[q])
        elif q in ranked:
            out[q] = ("ranked", None)
        elif q in recorded:
            out[q] = ("empty", None)
        else:
            out[q] = ("missing", None)
    return out


def _context(m: Measure, rel: int, policy: Policy) -> MeasureContext:
    if m.family != "nDCG":
        return MeasureContext(rel=rel)
    floor = max(rel if policy.ndcg_gain_floor == "threshold" else 1, 0)
    return MeasureContext(rel=rel, gain=gain_function(m, policy), ideal_floor=floor)


def gain_function(m: Measure, policy: Policy):
    if m.gains is not None:
        grades = np.array([g for g, _ in m.gains], dtype=np.int64)
        gains = np.array([v for _, v in m.gains], dtype=np.float64)

        def mapped(g: np.ndarray) -> np.ndarray:
            out = g.astype(np.float64)  # unlisted grades keep their value, as ir_measures' gains= does
            pos = np.searchsorted(grades, g)
            hit = (pos < len(grades)) & (grades[np.minimum(pos, len(grades) - 1)] == g)
            out[hit] = gains[pos[hit]]
            return out
        return mapped
    if (m.gain or policy.gain) == "exp":
        return lambda g: np.exp2(g.astype(np.float64)) - 1.0
    return lambda g: g.astype(np.float64)


def _mean(results: list[QueryResult], name: str, rational: bool) -> MeanResult:
    vals = [q for q in results if q.values[name] is not None]
    if not vals:
        return MeanResult(None, None, 0)
    if rational:
        exact = sum((q.exact[name] for q in vals), Fraction(0)) / len(vals)
        return MeanResult(float(exact), exact, len(vals))
    return MeanResult(float(np.mean([q.values[name] for q in vals])), None, len(vals))


def protocol_fingerprint(dataset: Dataset, measures: list[Measure], policy: Policy) -> str:
    """SHA-256 of everything that decides the numbers except the run (policy §6)."""
    judgments = dataset.qrels.frame.select("query_id", "doc_id", "grade").sort(["query_id", "doc_id"])
    return canonical_sha256({
        "queries": sorted([q.query_id, q.split] for q in dataset.queries),
        "query_source": dataset.query_source,
        "split": dataset.split,
        "judgments_sha256": canonical_sha256(judgments.write_csv()),
        "measures": sorted(str(m) for m in measures),  # the same protocol whatever the listing order
        "threshold": dataset.threshold,
        "gain": policy.gain,
        "policy": policy.name,
        "completeness": dataset.completeness,
    })


def _order_summary(run: Run) -> dict | None:
    if run.order is None:
        return None
    return {
        "source": run.order_source,
        "tied_rows": sum(o.ties_broken for o in run.order),
        "queries_with_ties": [o.query_id for o in run.order if o.ties_broken],
        "rank_column_disagrees": [o.query_id for o in run.order if o.rank_disagrees],
    }
