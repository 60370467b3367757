"""A run scored part by part on other machines (a Dask cluster's workers), merged into the single-process result.

A worker scores one part of a run -- every query whole in one part, as
``score`` reads a run in parts -- against the judgments it was sent once
(``PartJob``), and sends back what the part's queries need, never its rows
(``PartScores``): their records (IDs, failures, order), what the row checks
found, each query's ranked length and relevant count, and per measure the
kernel's per-query values, exact integer terms and where it is defined.
What travels grows with queries x measures, not with run lines.

The client (``merge``) replays what ``scorer.score_parts`` does part by part
-- a part's reading error at its place, a query in two parts, the memory
guard, the run checks in their order -- then evaluates under the policy:
the queries no part ranked get the kernel of an empty ranking here, and
the policy's rules (missing scored 0, printed digits, the no-relevant rule,
trec_eval's doubles) apply to the merged columns.  Kernels are per query
(``Family.query_local``), so the result, exact fractions and report bytes
included, is the one ``score`` gives.  A family whose kernel sums floats
across queries (G, nDCG_rel, RnDCG) is the exception: for it each part
sends its judged rows (query, rank, grade) and the client runs that kernel
once over them.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from . import memory_guard
from .errors import InvalidInput, TrecBridgeError
from .measures.base import FAMILIES, Measure, Terms, Values
from .model import Dataset, QueryNotContiguous, Run
from .policy import Policy
from .ranking import query_index
from .scorer import (Judgments, RunSummary, ScoreResult, Statuses, finished_values, index_queries, measure_kernel,
                     orderings_for, scored_result)
from .validate import RowFindings, RunChecks, keep_last_repeat


@dataclass
class PartRecord:
    """A part's records as the checks and the run summary read them (in the place of its Run)."""

    queries: tuple[str, ...]
    failures: dict[str, str]
    ranked: list[str]
    dataset_id: str | None = None
    dataset_version: str | None = None
    source: str | None = None
    order: Sequence | None = None
    order_source: str = "list"
    metadata: dict = field(default_factory=dict)

    @classmethod
    def of(cls, run: Run) -> "PartRecord":
        return cls(tuple(run.queries), dict(run.failures), run.ranked_queries(), run.dataset_id, run.dataset_version,
                   run.source, run.order, run.order_source, dict(run.metadata))

    def ranked_queries(self) -> list[str]:
        return self.ranked


@dataclass
class Kernels:
    """Per-query outputs over some queries (universe indexes): each query-local measure's values and where it is
    defined (None for the others), the relevant counts and ranked lengths; ``failure``: the first measure whose
    kernel refused one of these queries (its position, the error)."""

    queries: np.ndarray
    measures: list[tuple[Values, np.ndarray] | None]
    relevant: np.ndarray
    retrieved: np.ndarray
    failure: tuple[int, InvalidInput] | None = None


@dataclass
class PartScores:
    """What a worker sends back for one part (``record`` None: the part holds no data line)."""

    record: PartRecord | None = None
    error: TrecBridgeError | None = None  # reading the part failed: raised at the part's place
    lines: int = 0  # the part's lines, to place a later part's error on the whole file's line numbers
    rows: RowFindings = field(default_factory=RowFindings)
    kernels: Kernels | None = None
    reduced: dict | None = None  # ordering -> RankingBuilder.reduced(), for the families that are not query-local


class PartJob:
    """The judgments, measures and policy every part is scored with: sent once to each worker.

    ``dataset`` is already checked with its split selected
    (``scorer.select_checked``); ``order``: how a TREC part reads its lines;
    ``int_ids``: the integer IDs the Python API's qrels held (a DataFrame
    part's IDs are checked against their spellings); ``chunk_map``: a run
    file is then scored whole on one worker.
    """

    def __init__(self, dataset: Dataset, measures: list[Measure], policy: Policy, order: str = "score",
                 int_ids=None, chunk_map=None):
        self.dataset, self.measures, self.policy, self.order = dataset, list(measures), policy, order
        self.int_ids, self.chunk_map = int_ids, chunk_map
        self._judgments: Judgments | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_judgments": None}  # rebuilt once where it lands

    def judgments(self) -> Judgments:
        if self._judgments is None:
            self._judgments = Judgments(self.dataset)
        return self._judgments

    def orderings(self) -> list:
        return orderings_for(self.measures, self.policy)

    def local(self) -> list[bool]:
        return [FAMILIES[m.family].query_local for m in self.measures]

    def check_ids(self, part: Run) -> None:
        """E_ID_COLLISION for a part's integer IDs (a Parquet partition's, a DataFrame partition's:
        ``part.int_ids``) against the judgments' spellings of the same number, and the judgments' integers (the
        Python API's, or a Parquet qrels file's) against the part's: what ``RunChecks.add`` checks of a part
        scored in one process, so that a worker never scores what ``score`` refuses."""
        from converters.python_objects import IntIds, check_id_spellings

        held = (self.int_ids, self.dataset.qrels.int_ids)
        qrels_ints = next((ints for ints in held if ints is not None and ints.texts), IntIds())
        check_id_spellings(self.dataset, qrels_ints, part, part.int_ids or IntIds())

    def score(self, part: Run | None, lines: int = 0) -> PartScores:
        """One part checked, reduced and scored alone (``None``: a part without data)."""
        if part is None:
            return PartScores(lines=lines)
        j = self.judgments()
        checks = RunChecks(self.dataset, j.in_base, self.policy.duplicates)
        out = PartScores(PartRecord.of(part), lines=lines, rows=checks.row_findings(part))
        if out.rows.duplicate is not None:
            return out
        if self.policy.duplicates in ("last_wins", "first_wins"):
            part = keep_last_repeat(part, self.policy.duplicates.split("_")[0])
        builders = {o: j.builder(o) for o in self.orderings()}
        for builder in builders.values():
            builder.add(part)
        ranked = sum(b.retrieved for b in builders.values()) > 0
        universe = j.universe.get_column("query_id")
        mine = candidates(self, j)
        mine = mine[ranked[mine]]
        out.kernels = kernels(self, builders, mine, universe.gather(mine).to_list())
        if not all(self.local()):
            out.reduced = {o: b.reduced() for o, b in builders.items()}
        return out


def job_for(dataset: Dataset, measures: list[Measure], policy: Policy, *, split: str | None = None,
            order: str = "score", chunk_map=None, int_ids=None) -> PartJob:
    """The job for ``dataset`` (checked, ``split`` selected), after refusing what ``policy`` refuses: what
    ``score`` does before it reads a run."""
    from .scorer import refuse_unreproducible, select_checked
    from .subtopics import check_measures

    dataset = select_checked(dataset, split)
    refuse_unreproducible(dataset, measures, policy)
    check_measures(dataset.qrels, measures)
    return PartJob(dataset, measures, policy, order, int_ids, chunk_map)


def candidates(job: PartJob, j: Judgments) -> np.ndarray:
    """Universe indexes of the queries that get a value whenever they are ranked, in the index's order
    (``scorer.index_queries``): the dataset's set, else the judged queries."""
    if job.policy.query_set == "dataset":
        return np.arange(len(j.base_set), dtype=np.int64)
    return _universe_positions(j, job.dataset.qrels.query_ids())


def _universe_positions(j: Judgments, ids: list[str]) -> np.ndarray:
    found = pl.DataFrame({"query_id": ids}, schema={"query_id": pl.String}).join(
        j.universe, on="query_id", how="left", maintain_order="left").get_column("qidx")
    return found.fill_null(-1).to_numpy().astype(np.int64)


def kernels(job: PartJob, builders: dict, queries: np.ndarray, ids: list[str]) -> Kernels:
    """The query-local measures' kernels over ``queries`` (universe indexes, IDs ``ids``), stopping at the first
    measure that refuses one of them."""
    policy = job.policy
    index = query_index(ids)
    rankings = {o: b.finish(index).restricted(policy.depth, policy.judged_only) for o, b in builders.items()}
    outputs: list = []
    failure = None
    for i, (m, local) in enumerate(zip(job.measures, job.local())):
        if not local:
            outputs.append(None)
            continue
        try:
            outputs.append(measure_kernel(m, rankings, policy, job.dataset.threshold, ids))
        except InvalidInput as exc:
            failure = (i, exc)
            break
    first = next(iter(rankings.values()))
    return Kernels(queries, outputs, first.relevant_count(job.dataset.threshold), first.lengths(), failure)


def merge(job: PartJob, parts: Iterable[PartScores], on_split: Callable[[str], None] | None = None,
          empty_file: str | None = None) -> ScoreResult:
    """The parts' scores (in run order) as ``scorer.score_parts`` scores the whole run, raising what it raises.

    ``on_split(query)``: a query in two parts (default: ``QueryNotContiguous``,
    the caller scores the run whole); ``empty_file``: no part with a data
    line is the TREC reader's E_FILE_EMPTY for this file.
    """
    j = job.judgments()
    checks = RunChecks(job.dataset, j.in_base, job.policy.duplicates)
    summary, seen, lines, scored = RunSummary(), set(), 0, []
    for p in parts:
        if p.error is not None:
            raise _shifted(p.error, lines)
        lines += p.lines
        if p.record is None:
            continue
        again = [q for q in p.record.queries if q in seen]
        if again:
            (on_split or _not_contiguous)(again[0])
        seen.update(p.record.queries)
        memory_guard.check_queries(j.universe.height + len(summary.queries) + len(p.record.queries),
                                   len(job.measures), p.record.source)
        checks.add_part(p.record, p.rows)
        summary.add(p.record)
        scored.append(p)
    if empty_file is not None and not scored:
        raise InvalidInput("E_FILE_EMPTY", "the file has no data line", file=empty_file)
    return _evaluated(job, j, checks, summary, scored)


def run_metadata(parts: Iterable[PartScores]) -> dict:
    """The run's metadata (system, timing, ...) gathered from its parts, as ``score`` gathers it."""
    seen: dict = {}
    for p in parts:
        if p.record is not None:
            seen.update(p.record.metadata)
    return seen


def _not_contiguous(query: str) -> None:
    raise QueryNotContiguous(query)


def _shifted(exc: TrecBridgeError, before: int) -> TrecBridgeError:
    """A part's error on the whole file's line numbers (its line counted from the part's first line)."""
    if exc.where.line is not None and before:
        from dataclasses import replace

        exc.where = replace(exc.where, line=exc.where.line + before)
        exc.args = (exc.render(),)
    return exc


def _evaluated(job: PartJob, j: Judgments, checks: RunChecks, summary: RunSummary,
               parts: list[PartScores]) -> ScoreResult:
    """``scorer.evaluate`` on the merged parts: the query set, the statuses, each measure's merged values."""
    dataset, measures, policy = job.dataset, job.measures, job.policy
    unjudged = checks.finish(policy)
    index_ids = index_queries(policy, j.base_set, summary, dataset)
    statuses = Statuses.of(index_ids, summary)
    to_index = np.full(j.universe.height, -1, dtype=np.int64)
    to_index[_universe_positions(j, index_ids)] = np.arange(len(index_ids))
    covered = np.zeros(len(index_ids), dtype=bool)
    for p in parts:
        covered[to_index[p.kernels.queries]] = True
    rest = np.flatnonzero(~covered)
    universe = j.universe.get_column("query_id")
    rest_u = _universe_positions(j, [index_ids[i] for i in rest.tolist()])
    sources = [p.kernels for p in parts] + [
        kernels(job, {o: j.builder(o) for o in job.orderings()}, rest_u, universe.gather(rest_u).to_list())]
    positions = [to_index[k.queries] for k in sources]
    zeroed = statuses.missing_mask() if policy.missing_score == "zero" else None
    whole = _whole_rankings(job, j, parts, index_ids) if not all(job.local()) else None
    per_measure = {}
    for i, m in enumerate(measures):
        if whole is None or job.local()[i]:
            _raise_first_failure(i, sources, positions, index_ids)
            values, defined = _merged([k.measures[i] for k in sources], positions, len(index_ids))
        else:
            values, defined = measure_kernel(m, whole, policy, dataset.threshold, index_ids)
        per_measure[str(m)] = finished_values(m, values, defined, policy, index_ids, zeroed)
    relevant = _column([k.relevant for k in sources], positions, len(index_ids))
    retrieved = _column([k.retrieved for k in sources], positions, len(index_ids))
    return scored_result(dataset, summary, measures, policy, index_ids, statuses, relevant, retrieved, per_measure,
                         unjudged)


def _raise_first_failure(i: int, sources: list[Kernels], positions: list[np.ndarray], index_ids: list[str]) -> None:
    """Measure ``i``'s refusal at the first query (in index order) any part found, as one kernel over the whole
    index raises it."""
    found = [exc for k in sources if k.failure is not None and k.failure[0] == i for exc in [k.failure[1]]]
    if found:
        at = {q: n for n, q in enumerate(index_ids)}
        raise min(found, key=lambda exc: at.get(exc.where.query, len(index_ids)))


def _merged(outputs: list[tuple[Values, np.ndarray]], positions: list[np.ndarray], n: int) -> tuple[Values, np.ndarray]:
    """One measure's per-query outputs from each source, put at their index positions; terms in query order."""
    values = _column([v.value for v, _ in outputs], positions, n)
    defined = _column([d for _, d in outputs], positions, n)
    with_terms = [(v.terms, pos) for (v, _), pos in zip(outputs, positions) if v.terms is not None]
    terms = None
    if with_terms:
        if len(with_terms) != len(outputs):
            raise ValueError("a measure gave exact terms for some parts only")
        query = np.concatenate([pos[t.query] for t, pos in with_terms])
        order = np.argsort(query, kind="stable")  # each query's terms come from one source, in their order
        terms = Terms(query[order], np.concatenate([t.num for t, _ in with_terms])[order],
                      np.concatenate([t.den for t, _ in with_terms])[order])
    return Values(values, terms, logged=outputs[0][0].logged), defined


def _column(columns: list[np.ndarray], positions: list[np.ndarray], n: int) -> np.ndarray:
    out = np.zeros(n, dtype=columns[0].dtype)
    for column, pos in zip(columns, positions):
        out[pos] = column
    return out


def _whole_rankings(job: PartJob, j: Judgments, parts: list[PartScores], index_ids: list[str]) -> dict:
    """Every ordering's ranking over the whole index from the parts' judged rows (for the families that are not
    query-local)."""
    builders = {o: j.builder(o) for o in job.orderings()}
    for p in parts:
        for o, b in builders.items():
            b.absorb(p.reduced[o])
    index = query_index(index_ids)
    return {o: b.finish(index).restricted(job.policy.depth, job.policy.judged_only) for o, b in builders.items()}
