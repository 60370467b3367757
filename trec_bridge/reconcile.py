"""Emulation versus reference, and the attribution of strict-versus-reference differences.

For one reference tool: score the run under the tool's named policy (our
emulation) and compare it with the tool's own output; any disagreement beyond
the tool's printed precision is *unexplained*.  Then walk from the strict
policy to the tool's policy one axis at a time (order of ``axes.AXES``): the
change at each step is that axis's part of the difference, so the parts add up
to reference minus strict (exactly: emulation minus strict).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

from .axes import AXES, reason
from .measures.base import Measure
from .model import ChunkMap, Dataset, Run
from .policy import STRICT, Policy
from .scorer import ScoreResult, score

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
              strict_result: ScoreResult | None = None) -> Walk:
    policy = STRICT
    walk = Walk([(None, strict_result or score(dataset, run, measures, STRICT, split=split, chunk_map=chunk_map))])
    for axis in AXES:
        value = getattr(target, axis.field)
        if getattr(policy, axis.field) == value:
            continue
        policy = replace(policy, **{axis.field: value})
        walk.steps.append((axis.field, score(dataset, run, measures, policy, split=split, chunk_map=chunk_map)))
    return walk


def table(result: ScoreResult) -> dict[str, dict[str, tuple]]:
    """query -> measure -> (value or None, exact or None)."""
    return {q.query_id: {m: (q.values[m], q.exact.get(m)) for m in q.values} for q in result.queries}


def per_query_parts(walk: Walk, query_id: str, measure: str, tables: list[dict]) -> list[Part]:
    parts = []
    axis_of = {a.field: a for a in AXES}
    for i in range(1, len(walk.steps)):
        axis_name, result = walk.steps[i]
        before = tables[i - 1].get(query_id, {}).get(measure, (ABSENT, None))
        after = tables[i].get(query_id, {}).get(measure, (ABSENT, None))
        if before[0] == after[0] and before[1] == after[1]:
            continue
        why = reason(axis_of[axis_name], getattr(result.policy, axis_name))
        if isinstance(before[0], float) and isinstance(after[0], float):
            exact = before[1] - after[1] if before[1] is not None and after[1] is not None else None
            parts.append(Part(axis_name, why, before[0] - after[0], exact))
        else:
            parts.append(Part(axis_name, why, None, None, before[0], after[0]))
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
