"""Apply a policy to a dataset, a run and measures; return per-query values and means.

Two steps.  ``prepare`` reads a run against a dataset: select the split,
collapse chunks, check the run, reduce it to its judged rows in each ordering
asked (whole, or part by part in bounded memory).  ``evaluate`` applies a
policy to that: raise what the policy rejects (nothing is scored after a
rejection), decide the query set, run each measure's kernel, apply the
policy's rule for queries with no relevant document and average over the
eligible queries.  Exact fractions are kept for the rational measures.
``score`` and ``score_parts`` are the two in one call; the cross-check
evaluates one prepared run under many policies (reconcile.Rescorer).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from . import measures as _measures  # noqa: F401  (registers the families)
from . import memory_guard
from .errors import InvalidInput
from .fingerprint import canonical_sha256
from .measures.base import FAMILIES, GMEAN_FLOOR, Measure, MeasureOverflow, MeasureRefused, Ranking, Values
from .model import ChunkMap, Dataset, QueryOrder, QueryOrders, Run
from .policy import STRICT, Ordering, Policy
from .subtopics import check_measures, judged_pairs
from .validate import RunChecks, keep_last_repeat
from .messages import quote

if TYPE_CHECKING:  # polars and the modules built on it are imported where used: the scorer's results, and the
    import polars as pl  # small-input path of ``score`` built on them (cli/quick.py), load no polars

    from .ranking import RankingBuilder


@dataclass(slots=True)
class QueryResult:
    """One query's outcome; slots and the lazy mappings keep a million of them small."""

    query_id: str
    status: str  # ranked | empty | missing | failed
    relevant: int  # relevant judged documents at the dataset threshold
    retrieved: int
    values: Mapping[str, float | None]  # read from the measure columns (see _QueryValues)
    exact: Mapping[str, Fraction | None]  # computed on first read (see _LazyExact)
    reason: str | None = None  # for failed queries
    answerable: bool | None = None
    tags: tuple[str, ...] = ()


class MeanResult:
    """A measure's summary: its float ``value``, its ``exact`` rational (None: not rational) and how many queries
    it is over.  ``exact`` may be given as a function, called on first read: most callers want only the float,
    which the scorer proves without the big-integer sum (``Values.rounded_mean``)."""

    __slots__ = ("value", "_exact", "eligible")

    def __init__(self, value: float | None, exact: Fraction | Callable[[], Fraction] | None, eligible: int):
        self.value, self._exact, self.eligible = value, exact, eligible

    @property
    def exact(self) -> Fraction | None:
        if callable(self._exact):
            self._exact = self._exact()
        return self._exact

    def __eq__(self, other) -> bool:
        return isinstance(other, MeanResult) and (self.value, self.exact, self.eligible) == \
            (other.value, other.exact, other.eligible)

    __hash__ = None

    def __reduce__(self):  # pickled with its exact value, not the function that computes it
        return MeanResult, (self.value, self.exact, self.eligible)

    def __repr__(self) -> str:
        return f"MeanResult(value={self.value!r}, exact={self.exact!r}, eligible={self.eligible})"


class Known:
    """A value already computed, in the place of the function that computes it (picklable, unlike a lambda)."""

    def __init__(self, value) -> None:
        self.value = value

    def __call__(self):
        return self.value


@dataclass
class ScoreResult:
    """A run scored under a policy: each query's values and each measure's mean, with what the report needs."""

    policy: Policy
    measures: list[Measure]
    queries: Sequence[QueryResult]  # QueryResults from the scorer: made when read
    means: dict[str, MeanResult]
    query_source: str
    split: str | None
    unjudged_queries: list[str]
    protocol: Callable[[], str] = field(repr=False, compare=False)  # computes protocol_fingerprint
    protocol_parts: Callable[[], dict] | None = field(default=None, repr=False, compare=False)  # each part's SHA-256
    chunk_map_fingerprint: str | None = None
    chunk_evidence: pl.DataFrame | None = None
    order: dict | None = None
    threshold: int = 1
    extra: dict = field(default_factory=dict)

    def __getstate__(self) -> dict:
        """Pickled (to or from a worker process: many_runs) with its fingerprints, not the functions computing them."""
        state = dict(self.__dict__)
        state["protocol"] = Known(self.protocol())
        state["protocol_parts"] = None if self.protocol_parts is None else Known(self.protocol_parts())
        return state

    @cached_property
    def protocol_fingerprint(self) -> str:
        """SHA-256 of everything that decides the numbers except the run (policy §6); computed when a report
        asks for it (a table printed to the terminal does not need the judgments hashed)."""
        return self.protocol()

    def by_status(self, status: str) -> list[str]:
        if isinstance(self.queries, QueryResults):
            return self.queries.with_status(status)
        return [q.query_id for q in self.queries if q.status == status]

    @property
    def missing(self) -> list[str]:
        return self.by_status("missing")

    @property
    def failed(self) -> dict[str, str]:
        if isinstance(self.queries, QueryResults):
            return {q: self.queries._statuses.reasons.get(q) or "" for q in self.queries.with_status("failed")}
        return {q.query_id: q.reason or "" for q in self.queries if q.status == "failed"}

    @property
    def no_relevant(self) -> list[str]:
        if isinstance(self.queries, QueryResults):
            return self.queries.without_relevant()
        return [q.query_id for q in self.queries if q.relevant == 0]

    @property
    def complete(self) -> bool:
        return not self.missing and not self.failed


def score(dataset: Dataset, run: Run, measures: list[Measure], policy: Policy = STRICT, *,
          split: str | None = None, chunk_map: ChunkMap | None = None) -> ScoreResult:
    """Score ``run`` on ``dataset`` under ``policy``; raise InvalidInput before any scoring."""
    return evaluate(prepare_for(dataset, run, measures, policy, split=split, chunk_map=chunk_map), measures, policy)


def score_parts(dataset: Dataset, parts: Iterable[Run], measures: list[Measure], policy: Policy = STRICT, *,
                split: str | None = None, judgments: "Judgments | None" = None) -> ScoreResult:
    """Score a run read in parts (each query whole in one part), never holding it all in memory.

    The result is the one ``score`` gives for the whole run.  Raises
    ``QueryNotContiguous`` when a query comes back in a later part: the
    caller then reads the run whole.  ``judgments``: of the dataset already
    checked and selected (``select_checked``, ``refuse_unreproducible``), made
    once for many runs (score-many's workers): ``dataset`` and ``split`` are
    then its own.
    """
    if judgments is not None:
        return evaluate(prepare_checked(judgments.dataset, parts, measures, policy, judgments), measures, policy)
    return evaluate(prepare_for(dataset, parts, measures, policy, split=split), measures, policy)


@dataclass
class Prepared:
    """A run read against a dataset, before a policy picks the queries and measures (``evaluate``).

    The split is selected, chunks are collapsed, the run is checked (the
    findings a policy may ignore wait for ``evaluate``) and reduced to its
    judged rows once per ordering.  A run given whole is kept, so that
    ``evaluate`` can ask for an ordering not prepared yet and
    ``with_duplicates`` can read it again.
    """

    dataset: Dataset  # the selected split
    base_set: list[str]  # the dataset's query set (the judged queries when the qrels define it)
    universe: pl.DataFrame  # every query that may get a value, indexed
    duplicates: str  # the policy's duplicates rule the run was read under
    checks: RunChecks
    summary: RunSummary
    builders: dict[Ordering, RankingBuilder]
    run: Run | None = None  # the whole run after the chunk collapse (None: read in parts)
    rows: Run | None = None  # ``run`` as the rankings read it (repeats dropped under last_wins)
    chunk_map: ChunkMap | None = None
    chunk_evidence: pl.DataFrame | None = None

    def builder(self, ordering: Ordering) -> RankingBuilder:
        """The judged rows in ``ordering``, read from the kept run the first time they are asked."""
        if ordering not in self.builders:
            if self.rows is None:
                raise ValueError(f"the run was read in parts: prepare() must be given {ordering}")
            self.builders[ordering] = _builder(self.dataset, self.universe, ordering)
            self.builders[ordering].add(self.rows)
        return self.builders[ordering]

    def ranking(self, ordering: Ordering = STRICT.ordering) -> Ranking:
        """The judged rows of every query that may get a value (``universe``), in ``ordering``."""
        return self.builder(ordering).finish(self.universe)

    def with_duplicates(self, duplicates: str) -> "Prepared":
        """The same inputs read under another duplicates rule (the run must have been given whole)."""
        if duplicates == self.duplicates:
            return self
        if self.run is None:
            raise ValueError("the run was read in parts: prepare it again under the other duplicates rule")
        again = _read(self.dataset, self.run, (), duplicates)
        if again.rows is self.rows:  # nothing to drop: the same rows, so the same rankings
            again.builders = self.builders
        again.chunk_map, again.chunk_evidence = self.chunk_map, self.chunk_evidence
        return again


def prepare(dataset: Dataset, run: Run | Iterable[Run], orderings: Iterable[Ordering] = (STRICT.ordering,),
            duplicates: str = STRICT.duplicates, *, split: str | None = None,
            chunk_map: ChunkMap | None = None) -> Prepared:
    """Read ``run`` (whole, or in parts with each query whole in one part) against ``dataset``.

    Raises InvalidInput for what every policy rejects; ``evaluate`` raises
    what only some policies reject.  Parts need every ordering up front and
    take no chunk map.
    """
    return _prepare_selected(_selected(dataset, split), run, orderings, duplicates, chunk_map)


def prepare_for(dataset: Dataset, run: Run | Iterable[Run], measures: list[Measure], policy: Policy, *,
                split: str | None = None, chunk_map: ChunkMap | None = None) -> Prepared:
    """``prepare`` what scoring ``measures`` under ``policy`` reads, after refusing what the policy refuses."""
    dataset = _selected(dataset, split)
    refuse_unreproducible(dataset, measures, policy)
    check_measures(dataset.qrels, measures)
    return _prepare_selected(dataset, run, orderings_for(measures, policy), policy.duplicates, chunk_map, len(measures))


def select_checked(dataset: Dataset, split: str | None = None) -> Dataset:
    """The dataset checked and its split selected, once for many runs (``prepare_checked``; the Python API)."""
    return _selected(dataset, split)


def prepare_checked(dataset: Dataset, run: Run, measures: list[Measure], policy: Policy,
                    judgments: "Judgments | None" = None) -> Prepared:
    """``prepare_for`` on a dataset from ``select_checked`` (after ``refuse_unreproducible``): no re-check;
    ``judgments``: what reading a run against this dataset needs, prepared once for many runs."""
    return _prepare_selected(dataset, run, orderings_for(measures, policy), policy.duplicates, None, len(measures),
                             judgments)


class Judgments:
    """What reading any run against one dataset needs and depends on the dataset alone: its query set, the
    indexed universe of queries and, per ordering, a ranking builder's judged rows and query lookup.

    Made once (the Python API's ``Evaluator``) and handed to ``prepare_checked`` for each run, which then
    starts from copies instead of joining the judgments again.
    """

    def __init__(self, dataset: Dataset):
        from .ranking import query_index

        self.dataset = dataset
        self.base_set = _base_set(dataset)
        self.in_base = set(self.base_set)
        self.universe = query_index(self.base_set + [q for q in dataset.qrels.query_ids() if q not in self.in_base])
        self._builders: dict[Ordering, RankingBuilder] = {}

    def builder(self, ordering: Ordering) -> RankingBuilder:
        """An empty builder for ``ordering`` (the judgments joined once per ordering)."""
        if ordering not in self._builders:
            self._builders[ordering] = _builder(self.dataset, self.universe, ordering)
        return self._builders[ordering].fresh()


def orderings_for(measures: list[Measure], policy: Policy) -> list[Ordering]:
    """The distinct orderings ``policy`` sorts ``measures`` by."""
    return list(dict.fromkeys([policy.ordering_for(m) for m in measures])) or [policy.ordering]


def _prepare_selected(dataset: Dataset, run: Run | Iterable[Run], orderings: Iterable[Ordering], duplicates: str,
                      chunk_map: ChunkMap | None = None, n_measures: int = 1,
                      judgments: Judgments | None = None) -> Prepared:
    whole = isinstance(run, Run)
    chunk_map = chunk_map or dataset.chunk_map
    if chunk_map is not None and not whole:  # never score chunk IDs as documents
        raise ValueError("a run read in parts cannot be chunk-collapsed: read it whole")
    if chunk_map is None:
        return _read(dataset, run, orderings, duplicates, n_measures, judgments)
    from .chunks import check_chunk_map, collapse

    check_chunk_map(chunk_map, dataset.corpus)
    collapsed = collapse(run, chunk_map)
    prepared = _read(dataset, collapsed.run, orderings, duplicates, n_measures)
    prepared.chunk_map, prepared.chunk_evidence = chunk_map, collapsed.evidence
    return prepared


def _read(dataset: Dataset, run: Run | Iterable[Run], orderings: Iterable[Ordering], duplicates: str,
          n_measures: int = 1, judgments: Judgments | None = None) -> Prepared:
    """Check the run (or its parts) and reduce it to its judged rows in each ordering."""
    whole = isinstance(run, Run)
    if judgments is None or judgments.dataset is not dataset:
        judgments = Judgments(dataset)
    base_set, universe = judgments.base_set, judgments.universe
    prepared = Prepared(dataset, base_set, universe, duplicates, RunChecks(dataset, judgments.in_base, duplicates),
                        RunSummary(), {o: judgments.builder(o) for o in orderings})
    for part in [run] if whole else run:
        memory_guard.check_queries(universe.height + len(prepared.summary.queries) + len(part.queries), n_measures,
                                   part.source)
        prepared.checks.add(part)
        if duplicates in ("last_wins", "first_wins"):
            part = keep_last_repeat(part, duplicates.split("_")[0])
        for builder in prepared.builders.values():
            builder.add(part)
        prepared.summary.add(part)
        if whole:
            prepared.run, prepared.rows = run, part
    return prepared


def _builder(dataset: Dataset, universe: pl.DataFrame, ordering: Ordering) -> RankingBuilder:
    from .ranking import RankingBuilder

    if dataset.qrels.subtopics:  # one judged row per (query, document), carrying its subtopic judgments
        pairs, table = judged_pairs(dataset.qrels)
        return RankingBuilder(pairs, universe, ordering, table)
    return RankingBuilder(dataset.qrels.frame, universe, ordering)


def _base_set(dataset: Dataset) -> list[str]:
    """The dataset's query set: its queries, or the judged ones when the qrels define it."""
    base_set = dataset.query_ids() if dataset.query_source != "qrels" else dataset.qrels.query_ids()
    if not base_set:
        split = dataset.split
        raise InvalidInput("E_QUERY_SET_EMPTY", f"no query in split {quote(split)}: qrels files (TREC, ranx) have no "
                           "splits (--split applies to JSON datasets)" if split else "the qrels judge no query",
                           file=dataset.source)
    return base_set


def refuse_unreproducible(dataset: Dataset, measures: list[Measure], policy: Policy) -> None:
    """A policy that emulates a tool prints only what the tool prints: refuse any other measure before scoring.

    The rule is the adapter's ``refusal``, the one the cross-check uses to
    list a measure as "not compared" (references/base.py).
    """
    from .errors import UsageError

    for m in measures:
        if policy.families is not None and m.family not in policy.families:
            raise UsageError("E_POLICY_MEASURE", f"--policy {policy.name} reproduces a script that computes only "
                             f"{', '.join(policy.families)}, not {m}; score it under the strict policy")
    if policy.emulates is None:
        return
    from .references import get

    tool = get(policy.emulates)
    for m in measures:
        reason = tool.refusal_under(policy, m, dataset.threshold, dataset.qrels)
        if reason is not None:
            raise UsageError("E_POLICY_MEASURE", f"--policy {policy.name} prints {policy.emulates}'s numbers, and "
                             f"{policy.emulates} does not compute {m} so ({reason}); score it under the strict "
                             "policy, or ask for a measure the tool computes")


def _selected(dataset: Dataset, split: str | None) -> Dataset:
    from .dataset_checks import check_dataset

    check_dataset(dataset)
    dataset = dataset.select_split(split)
    if not dataset.queries and dataset.query_source != "qrels":
        raise InvalidInput("E_QUERY_SET_EMPTY",
                           f"no query in split {quote(split)}" if split else "the dataset lists no query", file=dataset.source)
    return dataset


def evaluate(prepared: Prepared, measures: list[Measure], policy: Policy = STRICT, *,
             approximate: bool = False, reuse: "Reuse | None" = None) -> ScoreResult:
    """Score a prepared run under ``policy``: its query set, the kernels, the no-relevant rule, the means.

    ``approximate``: per-query values as the kernels' floats (within an ulp of the correctly rounded exact
    value) and float means, no fractions: for a search that compares many combinations with printed figures
    (explain), never for a report.  ``reuse``: what earlier evaluations of the same inputs under other policies
    computed (a cross-check's walk: ``Reuse``)."""
    if policy.duplicates != prepared.duplicates:
        raise ValueError(f"prepared under duplicates={prepared.duplicates}, evaluated under {policy.duplicates}: "
                         "use Prepared.with_duplicates")
    dataset, run = prepared.dataset, prepared.summary
    check_measures(dataset.qrels, measures)
    unjudged = prepared.checks.finish(policy)
    index_ids = index_queries(policy, prepared.base_set, run, dataset)
    statuses = Statuses.of(index_ids, run)
    missing = statuses.missing_mask() if policy.missing_score == "zero" else None
    if reuse is None:  # one evaluation: nothing to share, no keys to make
        from .ranking import query_index

        index = query_index(index_ids)
        rankings = {o: policy_ranking(prepared, o, index, policy) for o in orderings_for(measures, policy)}
        per_measure = _measure_values(measures, rankings, policy, dataset.threshold, index_ids, missing, approximate)
    else:
        rankings = {o: reuse.ranking(prepared, o, index_ids, policy) for o in orderings_for(measures, policy)}
        per_measure = {str(m): reuse.finished(m, rankings, policy, dataset.threshold, index_ids, missing,
                                              approximate) for m in measures}
    any_ranking = next(iter(rankings.values()))  # counts below do not depend on the order
    return scored_result(dataset, run, measures, policy, index_ids, statuses, any_ranking.relevant_count(
        dataset.threshold), any_ranking.lengths(), per_measure, unjudged, prepared.chunk_map, prepared.chunk_evidence)


def scored_result(dataset: Dataset, run: "RunSummary", measures: list[Measure], policy: Policy, index_ids: list[str],
                  statuses: "Statuses", relevant: np.ndarray, retrieved: np.ndarray,
                  per_measure: dict[str, "_MeasureValues"], unjudged: list[str], chunk_map: ChunkMap | None = None,
                  chunk_evidence: pl.DataFrame | None = None) -> ScoreResult:
    """The result of per-query values over the index: the means (a non-finite one refused), the lazy fingerprints.

    ``evaluate`` and the merge of parts scored elsewhere (part_scores.py) both end here."""
    results = QueryResults(index_ids, statuses, relevant, retrieved, per_measure, dataset.queries)
    means = {str(m): per_measure[str(m)].mean() for m in measures}
    for m in measures:
        if means[str(m)].value is not None and not np.isfinite(means[str(m)].value):
            raise gain_overflow(m, "mean")
    components = cache(lambda: protocol_components(dataset, measures, policy))  # the judgments hashed once
    return ScoreResult(
        policy=policy, measures=list(measures), queries=results, means=means,
        query_source=dataset.query_source, split=dataset.split, unjudged_queries=unjudged,
        protocol=lambda: canonical_sha256(components()),
        protocol_parts=lambda: protocol_part_fingerprints(components()),
        order=_order_summary(run), threshold=dataset.threshold,
        chunk_map_fingerprint=chunk_map.fingerprint() if chunk_map is not None else None,
        chunk_evidence=chunk_evidence,
    )


def policy_ranking(prepared: Prepared, ordering: Ordering, index: pl.DataFrame, policy: Policy) -> Ranking:
    """The judged rows of ``index``'s queries in ``ordering``, under the policy's ranking options (depth, judged only)."""
    return prepared.builder(ordering).finish(index).restricted(policy.depth, policy.judged_only)


class Reuse:
    """What evaluations of one prepared run under several policies share (a cross-check walks ~9 policies on the
    same inputs): the ranking of an index in an ordering, and each measure's kernel output and finished values,
    each kept under every input it is a function of, so that an axis that changes nothing a measure reads costs
    it nothing; any other input is a new key, computed afresh.  One ``evaluate`` alone shares nothing."""

    def __init__(self) -> None:
        self._rankings: dict[tuple, tuple[Prepared, Ranking]] = {}
        self._kernels: dict[tuple, tuple[Values, np.ndarray]] = {}
        self._finished: dict[tuple, _MeasureValues] = {}

    def ranking(self, prepared: Prepared, ordering: Ordering, index_ids: list[str], policy: Policy) -> Ranking:
        """``policy_ranking`` of the index ``index_ids``; ``prepared`` is kept with it (its id is in the key)."""
        from .ranking import query_index

        key = (id(prepared), ordering, tuple(index_ids), policy.depth, policy.judged_only)
        if key not in self._rankings:
            self._rankings[key] = (prepared, policy_ranking(prepared, ordering, query_index(index_ids), policy))
        return self._rankings[key][1]

    def finished(self, m: Measure, rankings: dict[Ordering, Ranking], policy: Policy, threshold: int,
                 index_ids: list[str], zeroed: np.ndarray | None, approximate: bool) -> "_MeasureValues":
        """``finished_values`` of ``measure_kernel``: the kernel a function of (ranking, measure as the policy computes
        it, its context), the rules of the policy's zeroed queries, printed digits, no-relevant rule, arithmetic."""
        family, any_judgment = FAMILIES[m.family], policy.relevance == "any_judgment"
        rel = 1 if any_judgment else m.rel if m.rel is not None else threshold  # as measure_kernel reads it
        ctx = family.context(m, rel, policy)
        if ctx.gain_key is not None:  # a gain function is made anew each time; its key says which it is
            ctx = replace(ctx, gain=None)
        kernel_key = (id(rankings[policy.ordering_for(m)]), m, any_judgment, family.effective(m, policy), ctx)
        key = (kernel_key, None if zeroed is None else zeroed.tobytes(), policy.digits_for(m),
               policy.no_relevant, policy.arithmetic, approximate)
        try:
            hash(key)
        except TypeError:  # a parameter that is no key (a list): computed, not shared
            return finished_values(m, *measure_kernel(m, rankings, policy, threshold, index_ids), policy, index_ids,
                                   zeroed, approximate)
        if kernel_key not in self._kernels:
            self._kernels[kernel_key] = measure_kernel(m, rankings, policy, threshold, index_ids)
        if key not in self._finished:
            self._finished[key] = finished_values(m, *self._kernels[kernel_key], policy, index_ids, zeroed,
                                                  approximate)
        return self._finished[key]


def _measure_values(measures: list[Measure], rankings: dict[Ordering, Ranking], policy: Policy, threshold: int,
                    index_ids: list[str], zeroed: np.ndarray | None = None,
                    approximate: bool = False) -> dict[str, "_MeasureValues"]:
    """Each measure's kernel on the ranking in its policy order, then the policy's rules (``finished_values``)."""
    return {str(m): finished_values(m, *measure_kernel(m, rankings, policy, threshold, index_ids), policy, index_ids,
                                    zeroed, approximate) for m in measures}


def measure_kernel(m: Measure, rankings: dict[Ordering, Ranking], policy: Policy, threshold: int,
                   index_ids: list[str]) -> tuple[Values, np.ndarray]:
    """One measure's kernel on the ranking in its policy order, and where it is defined (bool per query).

    Both are per query: a query's values and terms depend on its own rows
    and judgments only (``Family.query_local``), which is what lets parts of
    a run be scored apart and merged (part_scores.py)."""
    ranking = rankings[policy.ordering_for(m)]
    rel = m.rel if m.rel is not None else threshold
    if policy.relevance == "any_judgment":  # every judgment relevant whatever its grade: one grade for all
        ranking, rel = every_judgment_relevant(ranking), 1
    family = FAMILIES[m.family]
    effective, ctx = family.effective(m, policy), family.context(m, rel, policy)
    try:
        values = family.kernel(ranking, effective, ctx)
    except MeasureOverflow as exc:
        raise gain_overflow(m, exc.what, query=index_ids[exc.query]) from None
    except MeasureRefused as exc:
        raise InvalidInput(exc.code, f"{m}: {exc.message}", query=index_ids[exc.query]) from None
    return values, family.defined(ranking, effective, ctx)


def finished_values(m: Measure, values: Values, defined: np.ndarray, policy: Policy, index_ids: list[str],
                    zeroed: np.ndarray | None = None, approximate: bool = False) -> "_MeasureValues":
    """A measure's kernel values under the policy's rules, and which queries count (the no-relevant rule);
    ``zeroed`` (a mask, under ``missing_score="zero"``): queries that score 0 whatever the kernel says;
    ``approximate``: the kernels' floats, no exact terms."""
    family = FAMILIES[m.family]
    if zeroed is not None and zeroed.any():
        values = values.zeroed(zeroed)
    digits = policy.digits_for(m)
    if digits is not None:
        values = Values(printed(values.value, digits))
    counted = defined
    if policy.no_relevant != "null":
        counted = np.ones(len(index_ids), dtype=bool)
    # a rational measure's float is its exact value correctly rounded
    if approximate:
        values = Values(values.value)  # the floats, no exact terms
    if policy.arithmetic == "float":  # the tool's doubles, summed in its query order (Policy.arithmetic)
        return _MeasureValues(Values(values.value, logged=values.logged), values.value, counted, family.aggregate,
                              _byte_order(index_ids))
    return _MeasureValues(values, values.rounded(), counted, family.aggregate)


def every_judgment_relevant(ranking: Ranking) -> Ranking:
    """``ranking`` with every judged row and judgment at grade 1 (MS MARCO's script: a qrels line is a relevant
    passage, whatever its grade)."""
    return replace(ranking, grade=np.ones_like(ranking.grade), qrels_grade=np.ones_like(ranking.qrels_grade), memo={})


@dataclass
class RunSummary:
    """What the scorer needs of a run beyond its rankings, gathered part by part."""

    queries: list[str] = field(default_factory=list)  # recorded (ranked or explicitly empty)
    ranked: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    order: list[Sequence[QueryOrder]] | None = None  # each part's
    order_source: str = "list"

    def add(self, part: Run) -> None:
        self.add_records(part.queries, part.ranked_queries(), part.failures, part.order_source, part.order)

    def add_records(self, queries: Sequence[str], ranked: list[str], failures: Mapping[str, str], order_source: str,
                    order: Sequence[QueryOrder] | None) -> None:
        """A part's records: its queries, those ranked, the failed, how it was ordered and what ordering decided."""
        self.queries += queries
        self.ranked += ranked
        self.failures.update(failures)
        self.order_source = order_source
        if order is not None:
            self.order = (self.order or []) + [order]

    def ranked_queries(self) -> list[str]:
        return self.ranked


def index_queries(policy: Policy, base_set: list[str], run: RunSummary, dataset: Dataset) -> list[str]:
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


STATUSES = ("failed", "ranked", "empty", "missing")  # the first that applies names a query's status


@dataclass
class Statuses:
    """Each index query's status as a code into STATUSES, found with vectorised membership tests."""

    codes: np.ndarray  # int8 per query
    reasons: dict[str, str]  # of the failed queries

    @classmethod
    def of(cls, index_ids: list[str], run: RunSummary) -> "Statuses":
        codes = np.full(len(index_ids), STATUSES.index("missing"), dtype=np.int8)
        small = len(index_ids) <= _SMALL_INDEX  # a few hundred queries: a set costs less than polars' calls
        if not small:
            import polars as pl

            ids = pl.Series(index_ids, dtype=pl.String)
        for name, members in (("empty", run.queries), ("ranked", run.ranked_queries()), ("failed", run.failures)):
            if members:
                if small:
                    wanted = members if isinstance(members, (set, dict)) else set(members)
                    found = np.fromiter((q in wanted for q in index_ids), dtype=bool, count=len(index_ids))
                else:
                    found = ids.is_in(list(members)).to_numpy()
                codes[found] = STATUSES.index(name)
        return cls(codes, run.failures)

    def missing_mask(self) -> np.ndarray:
        return self.codes == STATUSES.index("missing")


_SMALL_INDEX = 2_000


class QueryResults(Sequence):
    """The per-query results, made one ``QueryResult`` at a time when read.

    A million queries then cost their columns, not a million objects; the
    questions asked of every query (by status, without relevant documents)
    are answered from the columns.
    """

    def __init__(self, index_ids: list[str], statuses: Statuses, relevant: np.ndarray, retrieved: np.ndarray,
                 per_measure: dict[str, "_MeasureValues"], queries: Iterable):
        self._ids, self._statuses = index_ids, statuses
        self._relevant, self._retrieved = relevant, retrieved
        self._per_measure = per_measure
        self._extra = {q.query_id: q for q in queries if q.answerable is not None or q.tags}

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self._ids)
        qid = self._ids[i]  # raises IndexError past the end, as iteration expects
        status = STATUSES[self._statuses.codes[i]]
        q = self._extra.get(qid)
        return QueryResult(qid, status, int(self._relevant[i]), int(self._retrieved[i]),
                           _QueryValues(self._per_measure, i), _LazyExact(self._per_measure, i),
                           self._statuses.reasons.get(qid) if status == "failed" else None,
                           q.answerable if q else None, q.tags if q else ())

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and list(self) == list(other)

    __hash__ = None

    def ids_where(self, mask: np.ndarray) -> list[str]:
        return [self._ids[i] for i in np.flatnonzero(mask).tolist()]

    def with_status(self, status: str) -> list[str]:
        return self.ids_where(self._statuses.codes == STATUSES.index(status))

    def without_relevant(self) -> list[str]:
        return self.ids_where(self._relevant == 0)

    def column(self, measure: str) -> tuple[np.ndarray, np.ndarray]:
        """One measure over every query at once: (float value per query, True where it has one), for callers
        that compare whole columns (explain) rather than read query by query."""
        mv = self._per_measure[measure]
        return mv.rounded, mv.counted

    def columns(self) -> dict:
        """Every query's fields as lists, in query order (a report's rows are built from them, not read query by
        query): ``query_id``, ``status``, ``reason`` (None unless failed), ``relevant``, ``retrieved``, ``answerable``."""
        statuses = [STATUSES[c] for c in self._statuses.codes.tolist()]
        reasons, extra = self._statuses.reasons, self._extra
        return {"query_id": self._ids, "status": statuses,
                "reason": [reasons.get(q) if s == "failed" else None for q, s in zip(self._ids, statuses)],
                "relevant": self._relevant.tolist(), "retrieved": self._retrieved.tolist(),
                "answerable": [extra[q].answerable if q in extra else None for q in self._ids] if extra
                else [None] * len(self._ids)}

    def measure_names(self) -> list[str]:
        """The measures in the order each query's ``values`` lists them."""
        return list(self._per_measure)

    def value_column(self, measure: str, integer: bool = False) -> list:
        """One measure's ``values`` entry of every query: its float (an int for a count: ``integer``) or None."""
        mv = self._per_measure[measure]
        out = mv.rounded.tolist()
        for i in np.flatnonzero(~mv.counted).tolist():
            out[i] = None
        return [None if v is None else int(v) for v in out] if integer else out

    def exact_column(self, measure: str) -> list[str | None]:
        """One measure's ``exact`` entry of every query, as report text (``Values.fraction_texts``)."""
        mv = self._per_measure[measure]
        return mv.values.fraction_texts(mv.counted)


def printed(value: np.ndarray, digits: int) -> np.ndarray:
    """Each value as a tool prints it with ``digits`` decimals (C's printf %.Nf: the double correctly rounded,
    halves to even) and reads it back; one string per query, only under a policy that prints so."""
    return np.array([float(f"{v:.{digits}f}") for v in value.tolist()], dtype=np.float64)


def gain_overflow(m: Measure, what: str, query: str | None = None) -> InvalidInput:
    """E_GAIN_OVERFLOW: a value that a double cannot hold is refused, never reported as inf or nan."""
    return InvalidInput("E_GAIN_OVERFLOW", f"{m}: the {what} exceeds the largest double (about 1.8e308); grades this "
                        "high or gains this large cannot be scored with these gains (linear gain, nDCG(gain=linear), "
                        "or smaller gains= values can)", query=query)


@dataclass
class _MeasureValues:
    """One measure's kernel output, its correctly rounded floats and which queries count."""

    values: Values
    rounded: np.ndarray
    counted: np.ndarray  # bool per query: has a value (not null under the policy)
    aggregate: str = "mean"  # the family's summary: mean, sum or gmean (Family.aggregate)
    sum_order: np.ndarray | None = None  # Policy.arithmetic "float": the order a running double sum takes
    _mean: MeanResult | None = field(default=None, repr=False, compare=False)  # ``mean``, once made

    def value(self, i: int) -> float | None:
        return float(self.rounded[i]) if self.counted[i] else None

    def mean(self) -> MeanResult:
        """The summary (made once: the same values shared by a walk's steps, ``Reuse``, share it)."""
        if self._mean is None:
            self._mean = self._summary()
        return self._mean

    def _summary(self) -> MeanResult:
        eligible = int(self.counted.sum())
        if not eligible:
            return MeanResult(None, None, 0)
        if self.aggregate != "mean":
            return self._other_summary(eligible)
        if self.sum_order is not None:  # trec_eval: a running double sum, then one division
            total = 0.0
            for v in self.rounded[self.sum_order[self.counted[self.sum_order]]].tolist():
                total += v
            return MeanResult(total / eligible, None, eligible)
        if self.values.terms is not None:
            terms, counted = self.values.terms, self.counted
            return MeanResult(self.values.rounded_mean(counted, eligible), lambda: terms.total(counted) / eligible,
                              eligible)
        with np.errstate(over="ignore"):
            return MeanResult(float(np.mean(self.rounded[self.counted])), None, eligible)

    def _other_summary(self, eligible: int) -> MeanResult:
        """trec_eval's other summaries: num_* are summed (exact), gm_* are geometric means of max(value, 1e-5)."""
        counted = self.rounded[self.counted]
        if self.aggregate == "sum":
            if self.values.terms is not None:
                terms, counted = self.values.terms, self.counted
                return MeanResult(self.values.rounded_mean(counted, 1), lambda: terms.total(counted), eligible)
            return MeanResult(float(np.sum(counted)), None, eligible)
        if self.aggregate == "gmean":  # values already logged (trec_eval's per-query form) or the measure's own
            if self.sum_order is not None:
                counted = self.rounded[self.sum_order[self.counted[self.sum_order]]]
            logs = counted if self.values.logged else np.log(np.maximum(counted, GMEAN_FLOOR))
            if self.sum_order is not None:  # trec_eval: a running double sum of the logs
                return MeanResult(float(np.exp(float(np.cumsum(logs)[-1]) / eligible)), None, eligible)
            return MeanResult(float(np.exp(np.mean(logs))), None, eligible)
        raise ValueError(f"unknown aggregate {self.aggregate!r}")


def _byte_order(ids: list[str]) -> np.ndarray:
    """Indexes of ``ids`` in the order of their UTF-8 bytes (C's strcmp, trec_eval's query order)."""
    return np.array(sorted(range(len(ids)), key=lambda i: ids[i].encode("utf-8")), dtype=np.int64)


class _QueryValues(Mapping):
    """A query's float values by measure name, read from the per-measure arrays (no dict or list per query)."""

    __slots__ = ("_measures", "_i")

    def __init__(self, measures: dict[str, _MeasureValues], i: int):
        self._measures, self._i = measures, i

    def __getitem__(self, name: str) -> float | None:
        return self._measures[name].value(self._i)

    def __iter__(self):
        return iter(self._measures)

    def __len__(self) -> int:
        return len(self._measures)

    def __repr__(self) -> str:
        return repr(dict(self))


class _LazyExact(Mapping):
    """A query's exact values by measure name, made into Fractions only when read (reports, RAG tables)."""

    __slots__ = ("_measures", "_i")

    def __init__(self, measures: dict[str, _MeasureValues], i: int):
        self._measures, self._i = measures, i

    def __getitem__(self, name: str) -> Fraction | None:
        mv = self._measures[name]
        return mv.values.fraction(self._i) if mv.counted[self._i] else None

    def __iter__(self):
        return iter(self._measures)

    def __len__(self) -> int:
        return len(self._measures)


def protocol_fingerprint(dataset: Dataset, measures: list[Measure], policy: Policy) -> str:
    """SHA-256 of everything that decides the numbers except the run (policy §6)."""
    return canonical_sha256(protocol_components(dataset, measures, policy))


# a protocol part as a reader names it (compare says which differ) -> the components it covers
PROTOCOL_PARTS = {"queries": ("queries", "query_source", "split"), "judgments": ("judgments_sha256", "completeness"),
                  "measures": ("measures",), "threshold": ("threshold",), "gain": ("gain",),
                  "policy": ("policy", "depth", "judged_only")}  # the ranking options only when set


def protocol_part_fingerprints(components: dict) -> dict[str, str]:
    """One SHA-256 per protocol part (PROTOCOL_PARTS), so that two reports can say *which* part differs."""
    return {part: canonical_sha256({k: components[k] for k in keys if k in components})
            for part, keys in PROTOCOL_PARTS.items()}


def protocol_components(dataset: Dataset, measures: list[Measure], policy: Policy) -> dict:
    """Everything that decides the numbers except the run, as a dict (hashed whole: the protocol fingerprint)."""
    if dataset.qrels.subtopics:  # a diversity qrels' judgments are per subtopic
        judgments = dataset.qrels.frame.select("query_id", "iteration", "doc_id", "grade").sort(
            ["query_id", "iteration", "doc_id"])
    else:
        judgments = dataset.qrels.frame.select("query_id", "doc_id", "grade").sort(["query_id", "doc_id"])
    return {
        "queries": sorted([q.query_id, q.split] for q in dataset.queries),
        "query_source": dataset.query_source,
        "split": dataset.split,
        "judgments_sha256": canonical_sha256(judgments.write_csv()),
        "measures": sorted(str(m) for m in measures),  # the same protocol whatever the listing order
        "threshold": dataset.threshold,
        "gain": policy.gain,
        "policy": policy.name,
        "completeness": dataset.completeness,
        # the ranking options only when set, so that every fingerprint made before them stays the same
        **({"depth": policy.depth} if policy.depth is not None else {}),
        **({"judged_only": True} if policy.judged_only else {}),
    }


def _order_summary(run: RunSummary) -> dict | None:
    if run.order is None:
        return None
    tied, with_ties, disagree = 0, [], []
    for orders in run.order:
        if isinstance(orders, QueryOrders):
            tied += orders.tied_rows()
            with_ties += orders.with_ties()
            disagree += orders.disagreeing()
        else:
            tied += sum(o.ties_broken for o in orders)
            with_ties += [o.query_id for o in orders if o.ties_broken]
            disagree += [o.query_id for o in orders if o.rank_disagrees]
    return {"source": run.order_source, "tied_rows": tied, "queries_with_ties": with_ties,
            "rank_column_disagrees": disagree}
