"""Explain someone else's figures: which conventions make our scorer reproduce them (``trec-bridge explain``).

The search walks the cross-check's axes (query set, empty rankings, the
no-relevant rule, tie order and score precision, duplicates, RR's cutoff,
nDCG's gain and gain floor) plus the named measure variants of
measures/variants.py and per-query rounding before the mean.  It never
computes a number outside the scorer: each combination of the axes that
change per-query values is one ``scorer.evaluate`` of a shared ``Prepared``
run (one per duplicates rule and run order, rankings kept per ordering),
with every variant of the measure evaluated in the same call.  The axes that
only choose queries or the mean (query set, empty rankings, the no-relevant
rule, rounding) are then applied to those columns as masks, so they cost no
scoring at all; an axis the inputs cannot tell apart (no ties, no
duplicates, no empty ranking) is tried once and reported as undecided.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

import numpy as np

from . import references as _references  # noqa: F401  (the tools register their policies: the defaults ranked against)
from .errors import InvalidInput
from .measures.base import Measure
from .measures.variants import variants_of
from .model import Dataset, Run
from .policy import POLICIES, STRICT, Ordering, Policy
from .scorer import Prepared, evaluate, prepare

ROUNDINGS = ("none", "4", "3", "2")  # per-query values rounded to this many decimals before the mean


@dataclass(frozen=True)
class ExplainAxis:
    name: str
    title: str
    values: dict[str, str]  # value -> meaning; the first is the strict policy's


AXES: tuple[ExplainAxis, ...] = (
    ExplainAxis("query_set", "which queries get a value and enter the mean", {
        "dataset": "the dataset's query set (strict)",
        "judged": "every judged query, a missing one scored 0 (trec_eval -c, ir_measures)",
        "run_and_judged": "only judged queries the run has (trec_eval without -c, pytrec_eval)",
        "run": "every query of the run, judged or not (an unjudged one has nothing relevant): the mean over the "
               "run's queries"}),
    ExplainAxis("empty_rankings", "explicitly empty rankings", {
        "recorded": "the query ran and found nothing: it is in the run", "invisible": "never seen (a TREC file)"}),
    ExplainAxis("no_relevant", "queries with no relevant document", {
        "null": "no value, out of the mean (strict)", "zero": "scored 0 and counted"}),
    ExplainAxis("tie_break", "ranking order", {
        "doc_desc": "score descending, ties by document ID descending (trec_eval)",
        "doc_asc": "score descending, ties by document ID ascending (Python sorts)",
        "rank": "the run's rank column (TREC, --order rank) or list order (JSON)"}),
    ExplainAxis("precision", "score precision when sorting", {
        "float64": "scores as doubles", "float32": "scores cast to float32 (trec_eval): close scores tie"}),
    ExplainAxis("duplicates", "a document twice in one ranking", {
        "reject": "refused (strict)", "last_wins": "the last line wins (ir_measures, ranx)",
        "first_wins": "the first line wins", "keep_all": "every line counts (a relevant document counted twice)"}),
    ExplainAxis("rr_cutoff", "RR@k's cutoff", {"honoured": "the top k only", "ignored": "trec_eval's recip_rank"}),
    ExplainAxis("gain", "nDCG's gain", {"linear": "the grade (trec_eval, ir_measures)", "exp": "2^grade - 1"}),
    ExplainAxis("ndcg_gain_floor", "grades that earn nDCG gain", {
        "positive": "every grade > 0", "threshold": "only grades at or above the relevance threshold"}),
    ExplainAxis("rounding", "per-query values rounded before the mean", {
        "none": "not rounded", "4": "to 4 decimals (as trec_eval -q prints them)", "3": "to 3 decimals",
        "2": "to 2 decimals"}),
)
AXIS = {a.name: a for a in AXES}


@dataclass
class Combination:
    """One assignment of the axes (axis -> value; a measure variant's axis is its parameter name)."""

    values: dict[str, str]
    mismatched: list[tuple[str, float | None, float | None]] = field(default_factory=list)  # (query, theirs, ours)
    mean: float | None = None

    def distance(self, defaults: dict[str, str], tried: dict[str, set] | None = None) -> int:
        """Axes on which this departs from ``defaults``; a default the search never tried (the inputs cannot
        tell it from the value tried: no empty ranking, no duplicate) is no departure."""
        return len(self.departures(defaults, tried))

    def departures(self, defaults: dict[str, str], tried: dict[str, set] | None = None) -> dict[str, str]:
        return {k: v for k, v in self.values.items()
                if defaults.get(k) != v and (tried is None or defaults.get(k) in tried.get(k, ()))}


@dataclass
class MeasureExplanation:
    measure: str  # ours
    spelled: str  # theirs
    per_query: bool  # they gave per-query values (else only the mean)
    matches: list[Combination]  # every combination reproducing their figures
    closest: Combination | None  # when nothing reproduces them
    tools: dict[str, dict[str, str]]  # known tool -> its values on the axes searched
    decided: dict[str, list[str]] = field(default_factory=dict)  # axis -> the values that reproduce them
    undecided: list[str] = field(default_factory=list)  # axes the inputs cannot tell apart
    their_mean: float | None = None
    queries: int = 0
    tried: dict[str, set] = field(default_factory=dict)  # axis -> the values the search tried

    @property
    def explained(self) -> bool:
        return bool(self.matches)

    def ranked(self) -> list[tuple[int, str, Combination]]:
        """(axes differing from the tool, tool, combination), closest first: "your X = tool's X with ..."."""
        out = []
        for c in self.matches:
            tool = min(self.tools, key=lambda t: (c.distance(self.tools[t], self.tried), list(self.tools).index(t)))
            out.append((c.distance(self.tools[tool], self.tried), tool, c))
        return sorted(out, key=lambda x: (x[0], list(self.tools).index(x[1])))


@dataclass
class Explanation:
    measures: list[MeasureExplanation]
    form: str  # the shape their figures came in
    skipped: list[str]  # their names we do not compute
    source: str

    @property
    def explained(self) -> bool:
        return all(m.explained for m in self.measures)


SEARCH_BASE = STRICT.with_axis(name="explain", description="the explain search", run_only_queries="ignore",
                                unknown_docs="ignore")
ORDERINGS = (("doc_desc", "float64"), ("doc_desc", "float32"), ("doc_asc", "float64"), ("doc_asc", "float32"))


class _Sources:
    """The run prepared once per (order source, duplicates rule), shared by every measure and combination.

    ``score``: the run as read (re-sorted by each ordering); ``rank``: its rank
    column or list order, when the inputs have one.  A run without repeated
    documents is read under "reject" only: the other rules give the same rows.
    """

    def __init__(self, dataset: Dataset, run: Run, run_by_rank: Run | None):
        self.dataset = dataset
        self.runs = {"score": run}
        if run_by_rank is not None:
            self.runs["rank"] = run_by_rank
        elif run.order_source in ("list", "rank"):
            self.runs["rank"] = run
        self.cache: dict[tuple[str, str], Prepared] = {}
        self.scored = self.n_ids = 0  # the scorer's index size, and with the run's other queries (index())
        try:
            self.prepared("score", "reject")
            self.duplicates = ("reject",)
        except InvalidInput as exc:
            if exc.code != "E_RUN_DUPLICATE_DOC":
                raise
            self.duplicates = ("last_wins", "first_wins", "keep_all")

    def index(self) -> list[str]:
        """The scorer's query index, then the run's queries outside it (unjudged: nothing relevant, scored 0
        when the no-relevant rule makes them 0; the "run" query set averages them)."""
        ids = self.prepared("score", self.duplicates[0]).base_set
        self.scored = len(ids)
        known = set(ids)
        return ids + [q for q in self.runs["score"].queries if q not in known]

    def padded(self, values: np.ndarray, defined: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A column over the scorer's index, extended to the run's other queries (value 0, no value)."""
        extra = self.n_ids - len(values)
        if extra == 0:
            return values, defined
        return np.concatenate([values, np.zeros(extra)]), np.concatenate([defined, np.zeros(extra, dtype=bool)])

    def prepared(self, source: str, duplicates: str) -> Prepared:
        key = (source, duplicates)
        if key not in self.cache:
            self.cache[key] = prepare(self.dataset, self.runs[source], (), duplicates)
        return self.cache[key]

    def orderings(self):
        """(axis values, source, Ordering) of each run order searched."""
        for tie, precision in ORDERINGS:
            yield {"tie_break": tie, "precision": precision}, "score", Ordering(tie, precision)
        if "rank" in self.runs:
            for precision in ("float64", "float32"):  # no score is read: either value gives this order
                yield {"tie_break": "rank", "precision": precision}, "rank", Ordering("given")


def _policy_axes(measure: Measure, threshold: int) -> list[dict[str, str]]:
    """The policy axes that change this measure's values (the others are not tried)."""
    if measure.family == "nDCG" and measure.gain is None and measure.gains is None:
        floors = ("positive", "threshold") if threshold > 1 else ("positive",)
        return [{"gain": g, "ndcg_gain_floor": f} for g in ("linear", "exp") for f in floors]
    if measure.family == "RR" and measure.cutoff is not None:
        return [{"rr_cutoff": "honoured"}, {"rr_cutoff": "ignored"}]
    return [{}]


def _variants(measure: Measure) -> list[tuple[dict[str, str], Measure]]:
    """Every named variant of ``measure`` (its own parameters kept): (axis values, the variant measure)."""
    named = dict(measure.extra)
    free = {p: v for p, v in variants_of(measure.family).items() if p not in named}
    out = []
    for values in itertools.product(*(list(v.values) for v in free.values())):
        chosen = dict(zip(free, values))
        extra = {**named, **{p: v for p, v in chosen.items() if v != free[p].standard}}
        out.append((chosen, replace(measure, extra=tuple(sorted(extra.items())))))
    return out


def _columns(sources: _Sources, measure: Measure, only: set | None = None):
    """(axis values, value per query, defined per query) of every combination of the value-changing axes
    (``only``: just these combinations, as sorted item tuples)."""
    variants = _variants(measure)
    for order_values, source, ordering in sources.orderings():
        for duplicates in sources.duplicates:
            prepared = sources.prepared(source, duplicates)
            for policy_values in _policy_axes(measure, sources.dataset.threshold):
                base = {**order_values, "duplicates": duplicates, **policy_values}
                wanted = [(v, m) for v, m in variants if only is None or _key({**base, **v}) in only]
                if not wanted:
                    continue
                policy = SEARCH_BASE.with_axis(ordering=ordering, duplicates=duplicates, **policy_values)
                result = evaluate(prepared, list(dict.fromkeys(m for _, m in wanted)), policy, approximate=True)
                for variant_values, m in wanted:
                    values, defined = sources.padded(*result.queries.column(str(m)))
                    yield {**base, **variant_values}, values, defined


def _key(axes: dict) -> tuple:
    return tuple(sorted(axes.items()))


SUBSET = 8  # with per-query figures on many queries, every combination is tried on this many of them first
PRUNE_ABOVE = 100  # ... when they give more than this many (below, preparing the subset costs more than it saves)


def _survivors(sources: _Sources, figures, ids: list[str]) -> tuple[set, dict] | None:
    """The value-changing combinations that reproduce their values on a few of their queries, and every value
    tried there; None when the search is small enough to run whole (or the subset cannot stand for the run)."""
    theirs = [q for q in ids if q in (figures.per_query or {})]
    if len(theirs) <= max(PRUNE_ABOVE, 2 * SUBSET):
        return None
    sub = _subset(sources, theirs[::len(theirs) // SUBSET][:SUBSET])
    if sub.duplicates != sources.duplicates or set(sub.runs) != set(sources.runs):
        return None
    sub_ids = sub.index()
    sub.n_ids = len(sub_ids)
    t = _Target.of(figures, sub_ids)
    keep, tried = set(), {}
    for axes, values, _ in _columns(sub, figures.measure):
        for k, v in axes.items():
            tried.setdefault(k, set()).add(v)
        if np.all(np.abs(values - t.value)[t.has] <= t.tolerance[t.has]):  # necessary for a match: 0 or the value
            keep.add(_key(axes))
    return keep, tried


def _subset(sources: _Sources, queries: list[str]) -> _Sources:
    """The same inputs cut to ``queries``: their judgments, their rankings."""
    import polars as pl

    keep = set(queries)
    ds = sources.dataset
    dataset = replace(ds, queries=tuple(q for q in ds.queries if q.query_id in keep), unjudged_queries=(),
                      qrels=ds.qrels.with_frame(ds.qrels.frame.filter(pl.col("query_id").is_in(queries))))

    def cut(run: Run) -> Run:
        return Run(**{**run.__dict__, "frame": run.frame.filter(pl.col("query_id").is_in(queries)),
                      "queries": tuple(q for q in run.queries if q in keep), "order": None, "_blocks": None,
                      "_pair_keys": None, "_own_scores": None,
                      "failures": {q: r for q, r in run.failures.items() if q in keep}})
    return _Sources(dataset, cut(sources.runs["score"]), cut(sources.runs["rank"]) if "rank" in sources.runs else None)


@dataclass
class _Target:
    """Their figures for one measure laid over our query index."""

    ids: list[str]
    has: np.ndarray  # bool per query: they give a value
    value: np.ndarray
    tolerance: np.ndarray
    outside: dict[str, float]  # their queries that are not in our query index, with their values
    mean: object = None  # their Figure of the mean, or None

    @staticmethod
    def of(figures, ids: list[str]) -> "_Target":
        at = {q: i for i, q in enumerate(ids)}
        n = len(ids)
        has, value, tol = np.zeros(n, dtype=bool), np.zeros(n), np.zeros(n)
        outside = {}
        for q, fig in (figures.per_query or {}).items():
            if q not in at:
                outside[q] = fig.value
                continue
            has[at[q]], value[at[q]], tol[at[q]] = True, fig.value, fig.tolerance
        return _Target(ids, has, value, tol, outside, figures.mean)


def _query_sets(sources: _Sources, ids: list[str]) -> dict[tuple[str, str], np.ndarray]:
    """(query_set, empty_rankings) -> mask over the index; empty rankings only when the run records one."""
    dataset, run = sources.dataset, sources.runs["score"]
    index = np.array(ids, dtype=object)
    judged = np.isin(index, np.array(dataset.qrels.query_ids(), dtype=object))
    ranked = np.isin(index, np.array(run.ranked_queries(), dtype=object))
    recorded = np.isin(index, np.array(list(run.queries), dtype=object))
    scored = np.zeros(len(ids), dtype=bool)
    scored[:sources.scored] = True  # the query index; the run's other queries follow it
    out = {("dataset", "recorded"): scored, ("judged", "recorded"): judged,
           ("run_and_judged", "recorded"): judged & recorded, ("run", "recorded"): recorded}
    if (judged == scored).all():  # the qrels define the query set: "dataset" is "judged", tried once under that name
        del out[("dataset", "recorded")]
    if (recorded & ~ranked).any():
        out.update({(q, "invisible"): m for (q, _), m in out.items()})
        out[("run_and_judged", "invisible")] = judged & ranked
        out[("run", "invisible")] = ranked
    return out


def _means(values: np.ndarray, chosen: np.ndarray) -> dict[str, float | None]:
    """The mean over ``chosen`` under each rounding of the per-query values."""
    if not chosen.any():
        return {r: None for r in ROUNDINGS}
    kept = values[chosen]
    return {r: float(np.mean(kept if r == "none" else np.round(kept, int(r)))) for r in ROUNDINGS}


class _Search:
    """Every combination for one measure, checked against their figures; keeps the matches and the closest."""

    def __init__(self, target: _Target, query_sets: dict, tools: dict[str, dict[str, str]], unanswered: np.ndarray):
        self.target, self.query_sets, self.tools, self.unanswered = target, query_sets, tools, unanswered
        self.matches: list[Combination] = []
        self.tried: dict[str, set] = {}  # axis -> every value tried
        self.best: tuple | None = None  # (key, combination values, values, chosen)

    def check(self, axes: dict[str, str], values: np.ndarray, defined: np.ndarray) -> None:
        t = self.target
        close = np.abs(values - t.value) <= t.tolerance
        for no_relevant in ("null", "zero"):
            present = defined if no_relevant == "null" else np.ones(len(values), dtype=bool)
            for (query_set, empty), mask in self.query_sets.items():
                chosen = mask & present
                wrong = self._wrong(chosen, close) if t.has.any() or t.outside else 0
                combo = {"query_set": query_set, "empty_rankings": empty, "no_relevant": no_relevant, **axes}
                for k, v in combo.items():
                    self.tried.setdefault(k, set()).add(v)
                self._judge(combo, values, chosen, wrong, no_relevant == "zero")

    def _wrong(self, chosen: np.ndarray, close: np.ndarray) -> int:
        """Queries where they and we differ: a value, or a value on one side only.  A query the run does not
        answer may be left out by them (tools print rows only for the queries they saw: trec_eval -c -q):
        its value is 0 either way, and their mean says whether it counts."""
        t = self.target
        unprinted = chosen & ~t.has & self.unanswered
        return int(np.count_nonzero((t.has & chosen & ~close) | ((t.has ^ chosen) & ~unprinted))) + len(t.outside)

    def _judge(self, combo: dict, values: np.ndarray, chosen: np.ndarray, wrong: int, zero: bool) -> None:
        t = self.target
        if wrong and (self.matches or (self.best is not None and wrong > self.best[0][0])):
            return  # cannot match, and cannot be the closest: skip its means
        rounded = [("none", None)] if t.mean is None else list(_means(np.where(chosen, values, 0.0), chosen).items())
        for rounding, mean in rounded:
            full = combo if t.mean is None else {**combo, "rounding": rounding}
            self.tried.setdefault("rounding", set()).add(rounding) if t.mean is not None else None
            off = 0.0 if t.mean is None else (np.inf if mean is None else abs(mean - t.mean.value))
            if wrong == 0 and off <= (0 if t.mean is None else t.mean.tolerance):
                self.matches.append(Combination(full, [], mean))
                continue
            key = (wrong, off > (0 if t.mean is None else t.mean.tolerance), off)
            if self.best is not None and key > self.best[0][:3]:
                continue
            key += (min(Combination(full).distance(d, self.tried) for d in self.tools.values()),)
            if self.best is None or key < self.best[0]:
                self.best = (key, full, values.copy(), chosen.copy(), mean)

    def closest(self) -> Combination | None:
        if self.matches or self.best is None:
            return None
        _, combo, values, chosen, mean = self.best
        t = self.target
        if not t.has.any() and not t.outside:  # the mean only: no query to compare
            return Combination(combo, [], mean)
        unprinted = chosen & ~t.has & self.unanswered
        wrong = [(q, float(t.value[i]) if t.has[i] else None, float(values[i]) if chosen[i] else None)
                 for i, q in enumerate(t.ids) if not unprinted[i] and
                 ((t.has[i] != chosen[i]) or (t.has[i] and abs(values[i] - t.value[i]) > t.tolerance[i]))]
        wrong += [(q, v, None) for q, v in t.outside.items()]
        return Combination(combo, wrong, mean)


def tool_defaults(measure: Measure, run: Run, with_rounding: bool) -> dict[str, dict[str, str]]:
    """Each named policy's value on every axis searched for ``measure`` ("strict" first): the known tools'
    defaults a match is ranked against.  A variant's standard value is every tool's."""
    out = {}
    for name, policy in POLICIES.items():
        ordering = policy.ordering_for(measure)
        tie = ordering.tie_break
        if tie == "given":  # the reader's order: a TREC run's score order is trec_eval's, a JSON run's is its list
            tie = "doc_desc" if run.order_source == "score" else "rank"
        values = {"query_set": policy.query_set, "empty_rankings": policy.empty_rankings,
                  "no_relevant": policy.no_relevant, "tie_break": tie, "precision": ordering.precision,
                  "duplicates": policy.duplicates, "rr_cutoff": policy.rr_cutoff, "gain": policy.gain,
                  "ndcg_gain_floor": policy.ndcg_gain_floor, "rounding": "none"}
        values.update({p: v.standard for p, v in variants_of(measure.family).items()})
        if not with_rounding:
            del values["rounding"]
        out[name] = values
    return out


def explain(dataset: Dataset, run: Run, theirs, measures: list[Measure] | None = None, *,
            run_by_rank: Run | None = None) -> Explanation:
    """Search the conventions under which our scorer reproduces ``theirs`` (converters.theirs.Theirs).

    ``measures``: only these of their measures (all of them when None).
    ``run_by_rank``: the same run read by its rank column, so that the rank
    order is searched too (a JSON run's list order is searched without it).
    """
    sources = _Sources(dataset, run, run_by_rank)
    wanted = None if measures is None else {str(m) for m in measures}
    figures = [f for name, f in theirs.figures.items() if wanted is None or name in wanted]
    if not figures:
        raise InvalidInput("E_THEIRS_FORMAT", f"none of the measures asked ({', '.join(sorted(wanted or ()))}) is "
                           f"among their figures ({', '.join(theirs.figures)})", file=theirs.source)
    ids = sources.index()
    sources.n_ids = len(ids)
    query_sets = _query_sets(sources, ids)
    return Explanation([_explain_one(sources, f, ids, query_sets) for f in figures], theirs.form,
                       list(theirs.skipped), theirs.source)


def _explain_one(sources: _Sources, figures, ids: list[str], query_sets: dict) -> MeasureExplanation:
    target = _Target.of(figures, ids)
    tools = tool_defaults(figures.measure, sources.runs["score"], figures.mean is not None)
    unanswered = ~np.isin(np.array(ids, dtype=object), np.array(list(sources.runs["score"].queries), dtype=object))
    search = _Search(target, query_sets, tools, unanswered)
    pruned = _survivors(sources, figures, ids)
    if pruned is not None and pruned[0]:
        search.tried.update(pruned[1])  # ruled out on the subset: tried, not unknown
    only = pruned[0] if pruned is not None and pruned[0] else None  # none survives: search whole for the closest
    for axes, values, defined in _columns(sources, figures.measure, only):
        search.check(axes, values, defined)
    out = MeasureExplanation(str(figures.measure), figures.spelled, figures.per_query is not None, search.matches,
                             search.closest(), tools, their_mean=None if figures.mean is None else figures.mean.value,
                             queries=len(figures.per_query or {}), tried=search.tried)
    if out.matches:
        tried = {k: {c.values[k] for c in out.matches} for k in out.matches[0].values}
        out.decided = {k: sorted(v) for k, v in tried.items()}
        out.undecided = [k for k in tried if tried[k] == search.tried[k]]
    return out
