"""The scorer's result for a run and judgments read in Python (converters/trec_plain.py), without polars.

``scorer.prepare_for`` + ``scorer.evaluate`` build the kernels' ``Ranking``
from polars frames; here it is built from the plain reader's arrays, with the
same rules: the policy's order (``ordering.policy_ranks``, ``key_at_precision``),
the run checks (``validate.RunChecks``), the query set (``scorer.index_queries``),
the kernels, the no-relevant rule and the means (``scorer._measure_values``, ``scored_result``),
the memory guard.  Only what a plain TREC run can hold is covered: a run
that records exactly its ranked queries (no empty ranking, no failure), read
by score, with no document twice.  A family is scored here only when it is
in ``PLAIN_FAMILIES`` (its kernel reads nothing but the Ranking made here);
any other measure, and a policy that drops rows (BEIR's identical IDs, when a
row has its query's ID), makes ``score_plain`` return None, and the caller
scores the files the usual way.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import memory_guard
from .measures.base import Measure, Ranking
from .model import Dataset, Run
from .ordering import key_at_precision, policy_ranks, positions
from .policy import Ordering, Policy
from .scorer import (STATUSES, RunSummary, ScoreResult, Statuses, _base_set, _measure_values, index_queries,
                     orderings_for, refuse_unreproducible, scored_result)
from .subtopics import check_measures
from .validate import RunChecks

if TYPE_CHECKING:
    from converters.trec_plain import PlainQrels, PlainRun

# The families whose kernels read only the Ranking's arrays (tests/test_small_inputs.py scores each both ways);
# a family added later is scored the usual way until it is added here with those tests.
PLAIN_FAMILIES = frozenset({
    "AP", "AvgIPrec", "Bpref", "Compat", "ERR", "G", "GMAP", "GMBpref", "INSQ", "INST", "IPrec", "Judged", "NERR10",
    "NERR11", "NERR8", "NERR9", "NumNonRelJudgedRet", "NumQ", "NumRel", "NumRelRet", "NumRet", "P", "R", "RBP", "RR",
    "R_cap", "RelativeP", "RnDCG", "Rprec", "RprecMult", "SDCG", "SetAP", "SetF", "SetP", "SetR", "SetRelP",
    "Success", "Utility", "binG", "infAP", "nDCG", "nDCG_rel",
})


def score_plain(dataset: Dataset, run: PlainRun, measures: list[Measure], policy: Policy) -> ScoreResult | None:
    """What ``evaluation.score_file_in_parts`` gives for these inputs read by the polars readers, or None where
    this module does not cover them (see the module); raises what scoring them raises."""
    orderings = orderings_for(measures, policy)
    if any(m.family not in PLAIN_FAMILIES for m in measures) or not all(_covers(o, run) for o in orderings):
        return None
    refuse_unreproducible(dataset, measures, policy)
    check_measures(dataset.qrels, measures)
    base_set = _base_set(dataset)
    count = len(base_set) + len(run.queries)
    memory_guard.check_queries(count, len(measures), run.source)
    if memory_guard.close_to_a_limit(memory_guard.per_query(len(measures)) * count):
        return None  # the full command, holding more, might refuse these queries
    checks = RunChecks(dataset, set(base_set), policy.duplicates)
    # the reader refused repeated documents; without a listed corpus the checks read no row
    checks.add(Run(frame=None, queries=tuple(run.queries), source=run.source, unique_checked=True))
    unjudged = checks.finish(policy)
    summary = RunSummary(queries=list(run.queries), ranked=list(run.queries), order_source="score")
    index_ids = index_queries(policy, base_set, summary, dataset)
    in_run = set(run.queries)  # a TREC run records exactly its ranked queries: each is ranked or missing
    codes = [STATUSES.index("ranked" if q in in_run else "missing") for q in index_ids]
    statuses = Statuses(np.asarray(codes, dtype=np.int8), {})
    rows = _JudgedRows(dataset.qrels, run, index_ids)
    rankings = {o: rows.ranking(o).restricted(policy.depth, policy.judged_only) for o in orderings}
    missing = statuses.missing_mask() if policy.missing_score == "zero" else None
    per_measure = _measure_values(measures, rankings, policy, dataset.threshold, index_ids, missing)
    any_ranking = next(iter(rankings.values()))  # counts below do not depend on the order
    return scored_result(dataset, summary, measures, policy, index_ids, statuses,
                         any_ranking.relevant_count(dataset.threshold), any_ranking.lengths(), per_measure, unjudged)


def _covers(ordering: Ordering, run: PlainRun) -> bool:
    """Whether ``ordering`` reads the run's rows as they are here (BEIR drops a row whose ID is its query's)."""
    if not ordering.drop_identical_ids:
        return True
    ends = run.ends().tolist()
    return not any((run.doc[a:b] == q.encode("ascii")).any() for q, a, b in zip(run.queries, run.starts.tolist(), ends))


class _JudgedRows:
    """The run's judged rows and the judgments of the index's queries, from which each ordering's Ranking is made
    (what ``ranking.RankingBuilder`` keeps of a run, and its ``finish``)."""

    def __init__(self, qrels: PlainQrels, run: PlainRun, index_ids: list[str]):
        position = {q: i for i, q in enumerate(index_ids)}
        self.run, self.n = run, len(index_ids)
        block_index = np.asarray([position.get(q, -1) for q in run.queries], dtype=np.int64)
        indexed = block_index >= 0
        self.retrieved = np.zeros(self.n, dtype=np.int64)
        self.retrieved[block_index[indexed]] = run.lengths()[indexed]
        rows, grades, queries = [], [], []
        for block, (query, at, end) in enumerate(zip(run.queries, block_index.tolist(), run.ends().tolist())):
            if at >= 0 and query in qrels.judged:
                found, grade = run.rows_of(block, end, qrels.judged[query])
                rows.append(found)
                grades.append(grade)
                queries.append(np.full(len(found), at, dtype=np.int64))
        self.rows, self.row_query, self.grade = (np.concatenate(c) if c else np.zeros(0, dtype=np.int64)
                                                 for c in (rows, queries, grades))
        qrels_index = np.asarray([position.get(q, -1) for q in qrels.query_ids()], dtype=np.int64)[qrels.qidx]
        kept = qrels_index >= 0
        self.qrels_query = qrels_index[kept]
        self.qrels_grade = qrels.grade[kept]

    def ranking(self, ordering: Ordering) -> Ranking:
        run = self.run
        rank = positions(run.starts, len(run.doc))  # the reader's order: 1..n in each query
        if ordering.tie_break != "given":
            rank = policy_ranks(run.starts, key_at_precision(run.score, ordering), run.doc, rank, ordering)
        rank = rank[self.rows]
        order = np.lexsort((rank, self.row_query))  # grouped by query, rank ascending
        return Ranking(n_queries=self.n, retrieved=self.retrieved, row_query=self.row_query[order], rank=rank[order],
                       grade=self.grade[order], qrels_query=self.qrels_query, qrels_grade=self.qrels_grade)
