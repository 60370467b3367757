"""Emulation versus reference, and the attribution of strict-versus-reference differences.

For one reference tool: score the run under the tool's named policy (our
emulation) and compare it with the tool's own output; any disagreement beyond
the tool's printed precision is *unexplained*.  Then walk from the strict
policy to the tool's policy one axis at a time (order of ``axes.AXES``): the
change at each step is that axis's part of the difference, so the parts add up
to reference minus strict (exactly: emulation minus strict).

Each step evaluates the prepared run again under the step's policy; one
``Rescorer`` serves every tool of a cross-check, so the run is read once
per duplicates rule and its rankings once per ordering.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

from . import references as _references  # noqa: F401  (the tools register their axis reasons)
from .axes import AXES, reason
from .measures.base import Measure
from .policy import STRICT, Policy
from .scorer import Prepared, QueryResult, Reuse, ScoreResult, evaluate

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


def walk_axes(steps: "Rescorer", target: Policy) -> Walk:
    """Strict, then one step per axis on which ``target`` differs, in the order of ``axes.AXES``."""
    return walk_between(steps, STRICT, target)


def walk_between(steps: "Rescorer", start: Policy, target: Policy) -> Walk:
    """``start``'s result, then one step per axis on which ``target`` differs from it, in the order of ``axes.AXES``
    (``walk_axes`` from strict; tb.testing between the policy asked for and one that matches the user's values)."""
    policy = start
    walk = Walk([(None, steps.score(start))])
    for axis in AXES:
        value = getattr(target, axis.field)
        if getattr(policy, axis.field) == value:
            continue
        policy = replace(policy, **{axis.field: value})
        walk.steps.append((axis.field, steps.score(policy)))
    return walk


def policy_walk(dataset, run, measures: list[Measure], policy: Policy) -> Walk:
    """Strict walked to ``policy`` on one dataset and run: the explanation of a policy no tool can be run for
    (a leaderboard script's), axis by axis, as the cross-check explains a tool's."""
    from .scorer import prepare

    prepared = prepare(dataset, run, duplicates=policy.duplicates)
    return walk_axes(Rescorer(prepared, measures), policy)


class Rescorer:
    """``evaluate`` of fixed inputs under any policy, the run read once per duplicates rule.

    Each ``Prepared`` keeps its rankings per ordering, so the walks of every
    tool of a cross-check share their reading of the run and each step only
    runs the kernels again.
    """

    def __init__(self, prepared: Prepared, measures: list[Measure], strict: ScoreResult | None = None):
        self.measures = list(measures)
        self.prepared = {prepared.duplicates: prepared}
        self.reuse = Reuse()  # what the walks' evaluations share (rankings, kernels): each step's own work only
        self.strict = strict if strict is not None else evaluate(prepared, self.measures, STRICT, reuse=self.reuse)

    def score(self, policy: Policy) -> ScoreResult:
        if policy == self.strict.policy:
            return self.strict
        if policy.duplicates not in self.prepared:
            any_prepared = next(iter(self.prepared.values()))
            self.prepared[policy.duplicates] = any_prepared.with_duplicates(policy.duplicates)
        return evaluate(self.prepared[policy.duplicates], self.measures, policy, reuse=self.reuse)


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
