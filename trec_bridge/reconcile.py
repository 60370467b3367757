"""Emulation versus reference, and the attribution of strict-versus-reference differences.

For one reference tool: score the run under the tool's named policy (our
emulation) and compare it with the tool's own output; any disagreement beyond
the tool's printed precision is *unexplained*.  Then walk from the strict
policy to the tool's policy one axis at a time (order of ``axes.AXES``): the
change at each step is that axis's part of the difference, so the parts add up
to reference minus strict (exactly: emulation minus strict).

Each step is a full rescoring, so steps go through a ``ScoreCache``: a policy
that differs from one already scored only on axes that cannot matter for
these inputs (``inert_axes``) reuses that result instead of scoring again.
One cache serves every tool of a cross-check, whose walks share most steps.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from fractions import Fraction

import numpy as np
import polars as pl

from .axes import AXES, reason
from .measures.base import Measure
from .model import ChunkMap, Dataset, Run
from .policy import STRICT, Ordering, Policy
from .scorer import QueryResult, ScoreResult, protocol_fingerprint, score

ABSENT = "absent"  # the query is not in the policy's query set


@dataclass
class Part:
    axis: str
    reason: str
    delta: float | None  # value before this step minus value after it (None when a value appears or disappears)
    exact: Fraction | None = None
    before: object = None
    after: object = None

    def to_json(self) -> dict:
        out = {"axis": self.axis, "reason": self.reason, "delta": self.delta}
        if self.exact is not None:
            out["exact"] = _ftext(self.exact)
        if self.delta is None:
            out["from"], out["to"] = self.before, self.after
        return out


@dataclass
class Walk:
    """The strict result, then one (axis, result) per switched axis, ending at the target policy."""

    steps: list[tuple[str | None, ScoreResult]] = field(default_factory=list)

    @property
    def strict(self) -> ScoreResult:
        return self.steps[0][1]

    @property
    def final(self) -> ScoreResult:
        return self.steps[-1][1]


def walk_axes(dataset: Dataset, run: Run, measures: list[Measure], target: Policy, *,
              split: str | None = None, chunk_map: ChunkMap | None = None,
              strict_result: ScoreResult | None = None, cache: "ScoreCache | None" = None) -> Walk:
    """``cache`` (built on the same inputs) lets several walks share their scorings."""
    if cache is None:
        strict = strict_result or score(dataset, run, measures, STRICT, split=split, chunk_map=chunk_map)
        cache = ScoreCache(dataset, run, measures, strict, split=split, chunk_map=chunk_map)
    policy = STRICT
    walk = Walk([(None, cache.strict)])
    for axis in AXES:
        value = getattr(target, axis.field)
        if getattr(policy, axis.field) == value:
            continue
        policy = replace(policy, **{axis.field: value})
        walk.steps.append((axis.field, cache.score(policy)))
    return walk


class ScoreCache:
    """``score`` on fixed inputs, once per distinct effect of a policy.

    Two policies get the same key when they differ only on axes that
    ``inert_axes`` shows cannot change ``score``'s output on these inputs, and
    in orderings that ``_keeps_given_order`` shows leave every ranking as
    given.  A key seen before returns that result relabelled with the asked
    policy (and its protocol fingerprint, which names the policy and its gain).
    The inputs must be the ones ``strict`` was scored on: the proofs rely on
    the strict scorer having accepted them.
    """

    def __init__(self, dataset: Dataset, run: Run, measures: list[Measure], strict: ScoreResult, *,
                 split: str | None = None, chunk_map: ChunkMap | None = None):
        self.dataset, self.run, self.measures, self.strict = dataset, run, list(measures), strict
        self.split, self.chunk_map = split, chunk_map
        # split / chunk collapsing happen inside score(): then only identical policies share a result
        self._plain = split is None and chunk_map is None and dataset.chunk_map is None
        self.inert = inert_axes(dataset, run, measures) if self._plain else frozenset()
        self._given: dict[Ordering, bool] = {}
        self._results = {self._key(strict.policy): strict}
        self.scored = 0  # score() calls made (the strict result is given)

    def score(self, policy: Policy) -> ScoreResult:
        key = self._key(policy)
        hit = self._results.get(key)
        if hit is None:
            self.scored += 1
            hit = self._results[key] = score(self.dataset, self.run, self.measures, policy, split=self.split,
                                              chunk_map=self.chunk_map)
            return hit
        if hit.policy == policy:
            return hit
        if (hit.policy.name, hit.policy.gain) == (policy.name, policy.gain):
            def protocol() -> str:
                return hit.protocol_fingerprint  # the same protocol: computed (and cached) once
        else:
            def protocol() -> str:
                return protocol_fingerprint(self.dataset.select_split(self.split), self.measures, policy)
        return replace(hit, policy=policy, protocol=protocol)

    def _key(self, policy: Policy) -> tuple:
        skip = {"name", "description", "ordering", "measure_orderings"}
        values = tuple((f.name, getattr(STRICT if f.name in self.inert else policy, f.name))
                       for f in fields(Policy) if f.name not in skip)
        return values, tuple(self._canonical(policy.ordering_for(m)) for m in self.measures)

    def _canonical(self, ordering: Ordering) -> Ordering:
        """The given order stands for every ordering that provably re-sorts nothing."""
        if ordering.tie_break == "given" or not self._plain:
            return ordering
        if ordering not in self._given:
            self._given[ordering] = _keeps_given_order(self.run.frame, ordering)
        return STRICT.ordering if self._given[ordering] else ordering


def inert_axes(dataset: Dataset, run: Run, measures: list[Measure]) -> frozenset[str]:
    """Policy fields whose value cannot change ``score`` on these inputs, once the strict policy accepted them.

    Each rule mirrors the one place the scorer reads the field; anything
    not proved inert here is simply scored.
    """
    judged = dataset.qrels.query_ids()
    base = dataset.query_ids() if dataset.query_source != "qrels" else judged
    ranked = set(run.ranked_queries())
    grades = dataset.qrels.frame.get_column("grade")
    ndcg = [m for m in measures if m.family == "nDCG"]
    # the grade a query needs for every measure to be defined: a binary measure's threshold; grade 1
    # for nDCG (a positive gain; a gains= map can give grade 1 none, so it proves nothing)
    rels = [m.rel if m.rel is not None else dataset.threshold for m in measures if m.family != "nDCG"]
    rels += [1] * bool(ndcg)
    inert = {"unknown_docs"}  # the strict policy checked the corpus; nothing else reads this field
    if base == judged and ranked >= set(judged):
        inert.add("query_set")  # every value averages the same queries, in the same order
    if ranked >= set(run.queries):
        inert.add("empty_rankings")  # no explicit empty ranking to show or hide
    if grades.null_count() == 0:
        top = dataset.qrels.frame.group_by("query_id").agg(pl.col("grade").max()).get_column("grade")
        if (set(base) <= set(judged) and all(m.gains is None for m in ndcg)
                and (not rels or (top.len() > 0 and top.min() >= max(max(rels), 0)))):
            inert.add("no_relevant")  # every query that can be averaged has a relevant document
        if set(grades.filter(grades >= 0).unique().to_list()) <= {0, 1}:
            inert.add("gain")  # 2^g - 1 == g for g in {0, 1}, and lower grades never earn gain
    if not ndcg or dataset.threshold == 1:
        inert.add("ndcg_gain_floor")  # max(threshold, 0) == 1: both floors are 1
    if not any(m.gain is None and m.gains is None for m in ndcg):
        inert.add("gain")
    if not any(m.family == "RR" and m.cutoff is not None for m in measures):
        inert.add("rr_cutoff")
    if run.unique_checked:
        inert.add("duplicates")  # no repeat to reject or to drop
    known = set(base)
    if all(q in known for q in (*run.queries, *run.failures)):
        inert.add("run_only_queries")  # no run query outside the query set
    return frozenset(inert)


def _keeps_given_order(frame: pl.DataFrame, ordering: Ordering) -> bool:
    """True when sorting each query by ``ordering`` (the scorer's key) provably returns the rows as given.

    That holds when every query's rows are contiguous, ranked 1..n, and
    strictly ordered by (key, document ID in the tie-break direction); NaN
    keys are never trusted.
    """
    if frame.height == 0:
        return True
    q = frame.get_column("query_id")
    first = q.ne_missing(q.shift(1)).to_numpy()
    starts = np.flatnonzero(first)
    if q.gather(starts).n_unique() != len(starts):
        return False
    position = np.arange(frame.height) - np.repeat(starts, np.diff(np.append(starts, frame.height))) + 1
    if not (frame.get_column("rank").fill_null(0).to_numpy() == position).all():
        return False
    n = pl.len().over("query_id")
    key = pl.when(pl.col("score").is_null()).then((n - pl.col("rank") + 1).cast(pl.Float64)).otherwise(pl.col("score"))
    key = key.cast(pl.Float32) if ordering.precision == "float32" else key
    k = frame.select(key).to_series().to_numpy()
    if np.isnan(k).any():
        return False
    same = ~first[1:]
    if (same & (k[1:] > k[:-1])).any():
        return False
    tie = np.flatnonzero(same & (k[1:] == k[:-1]))
    if len(tie) == 0:
        return True
    doc = frame.get_column("doc_id")
    a, b = doc.gather(tie), doc.gather(tie + 1)
    right = (a > b) if ordering.tie_break == "doc_desc" else (a < b)
    return bool(right.fill_null(False).all())


def table(result: ScoreResult) -> dict[str, QueryResult]:
    """query -> its row; ``cell`` reads a value from it (exact fractions only where a part needs them)."""
    return {q.query_id: q for q in result.queries}


def cell(rows: dict[str, QueryResult], query_id: str, measure: str) -> tuple:
    """(value or None, exact or None) of one query and measure; (ABSENT, None) outside the query set."""
    q = rows.get(query_id)
    if q is None or measure not in q.values:
        return ABSENT, None
    return q.values[measure], q.exact.get(measure)


def value(rows: dict[str, QueryResult], query_id: str, measure: str) -> object:
    """The value alone (None when null, ABSENT outside the query set)."""
    q = rows.get(query_id)
    return ABSENT if q is None else q.values.get(measure, ABSENT)


def per_query_parts(walk: Walk, query_id: str, measure: str, tables: list[dict]) -> list[Part]:
    """``tables``: ``table`` of each step; steps that share a result may share one table (then nothing changed)."""
    parts = []
    axis_of = {a.field: a for a in AXES}
    before = cell(tables[0], query_id, measure)
    for i in range(1, len(walk.steps)):
        axis_name, result = walk.steps[i]
        if tables[i] is tables[i - 1] and before[0] == before[0]:
            continue  # the same rows (a NaN still goes through the comparison below, as it always did)
        after = cell(tables[i], query_id, measure)
        if before[0] == after[0] and before[1] == after[1]:
            before = after
            continue
        why = reason(axis_of[axis_name], getattr(result.policy, axis_name))
        if isinstance(before[0], float) and isinstance(after[0], float):
            exact = before[1] - after[1] if before[1] is not None and after[1] is not None else None
            parts.append(Part(axis_name, why, before[0] - after[0], exact))
        else:
            parts.append(Part(axis_name, why, None, None, before[0], after[0]))
        before = after
    return parts


def mean_parts(walk: Walk, measure: str) -> list[Part]:
    parts = []
    axis_of = {a.field: a for a in AXES}
    for i in range(1, len(walk.steps)):
        axis_name, result = walk.steps[i]
        before, after = walk.steps[i - 1][1].means[measure], result.means[measure]
        if before.value == after.value and before.exact == after.exact:
            continue
        why = reason(axis_of[axis_name], getattr(result.policy, axis_name))
        if before.value is not None and after.value is not None:
            exact = before.exact - after.exact if before.exact is not None and after.exact is not None else None
            parts.append(Part(axis_name, why, before.value - after.value, exact))
        else:
            parts.append(Part(axis_name, why, None, None, before.value, after.value))
    return parts


def _ftext(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"
