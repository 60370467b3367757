"""Repeated runs of one system: scored separately, then averaged, with their spread.

A retrieval pipeline with sampling, approximate search or a model in the loop
does not return the same ranking twice; the acceptance method scores several
runs of the same system (3 by default) and judges the average.  Every run is
scored on its own by the strict scorer; this module only combines the
results, after checking that they share one protocol fingerprint.

The combined view (``Combined``) is what tiers, breakdowns and triage read,
also for a single run (then the spread is empty).  Per query and measure it
keeps each run's value, the average (exact for rational measures), min, max
and the sample standard deviation (n - 1; null for one run).  The mean of a
measure is the average of the runs' means, which for a fixed query set is
also the mean of the per-query averages.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import InvalidInput
from ..scorer import MeanResult, ScoreResult
from ..messages import quote


@dataclass
class Spread:
    min: float
    max: float
    stdev: float | None  # sample standard deviation over the runs; None with one run

    def to_json(self) -> dict:
        return {"min": self.min, "max": self.max, "stdev": self.stdev}


@dataclass
class QueryView:
    query_id: str
    tags: tuple[str, ...]
    relevant: int
    statuses: tuple[str, ...]  # one per run
    values: dict[str, float | None]  # average over the runs
    exact: dict[str, Fraction | None]  # exact average for rational measures
    per_run: dict[str, list[float | None]]
    spread: dict[str, Spread | None]

    @property
    def status(self) -> str:
        """The first run's status, or "mixed: a/b/c" when the runs disagree."""
        if len(set(self.statuses)) == 1:
            return self.statuses[0]
        return "mixed: " + "/".join(self.statuses)

    @property
    def eligible(self) -> bool:
        return self.relevant > 0


@dataclass
class Combined:
    labels: list[str]
    measures: list[str]
    rational: dict[str, bool]
    queries: list[QueryView]
    means: dict[str, MeanResult]
    run_means: dict[str, list[MeanResult]]
    run_complete: list[bool]
    protocol_fingerprint: str
    changed: dict[str, list[str]] = field(default_factory=dict)  # query -> measures whose value differs

    @property
    def n_runs(self) -> int:
        return len(self.labels)

    @property
    def complete(self) -> bool:
        return all(self.run_complete)

    @property
    def eligible(self) -> int:
        return sum(1 for q in self.queries if q.eligible)


def combine(results: list[ScoreResult], labels: list[str]) -> Combined:
    """Average ``results`` (runs of one system, same protocol) per query and measure."""
    if not results:
        raise ValueError("no result to combine")
    first = results[0]
    for label, r in zip(labels[1:], results[1:]):
        if r.protocol_fingerprint != first.protocol_fingerprint:
            raise InvalidInput("E_REPEAT_PROTOCOL",
                               f"repeat {quote(label)} was scored under protocol {r.protocol_fingerprint[:12]}..., "
                               f"the first run under {first.protocol_fingerprint[:12]}...: repeats must share "
                               "the query set, judgments, measures and policy", file=label)
        if [q.query_id for q in r.queries] != [q.query_id for q in first.queries]:
            raise InvalidInput("E_REPEAT_PROTOCOL", "repeat has a different query set", file=label)
    names = [str(m) for m in first.measures]
    rational = {str(m): m.rational for m in first.measures}
    n = len(results)

    queries: list[QueryView] = []
    changed: dict[str, list[str]] = {}
    for i, q0 in enumerate(first.queries):
        rows = [r.queries[i] for r in results]
        values, exact, per_run, spread = {}, {}, {}, {}
        for name in names:
            vals = [row.values[name] for row in rows]
            per_run[name] = vals
            if any(v is None for v in vals):
                # null-ness depends on the judgments only, so it is the same in every run
                values[name], exact[name], spread[name] = None, None, None
                continue
            if rational[name]:
                exacts = [row.exact[name] for row in rows]
                exact[name] = sum(exacts, Fraction(0)) / n
                values[name] = float(exact[name])
                differs = len(set(exacts)) > 1
            else:
                exact[name] = None
                values[name] = math.fsum(vals) / n
                differs = len(set(vals)) > 1
            spread[name] = Spread(min(vals), max(vals), statistics.stdev(vals) if n > 1 else None)
            if differs:
                changed.setdefault(q0.query_id, []).append(name)
        queries.append(QueryView(q0.query_id, tuple(q0.tags), q0.relevant, tuple(row.status for row in rows),
                                 values, exact, per_run, spread))

    run_means = {name: [r.means[name] for r in results] for name in names}
    means = {name: _average_means(run_means[name], rational[name]) for name in names}
    return Combined(list(labels), names, rational, queries, means, run_means,
                    [r.complete for r in results], first.protocol_fingerprint, changed)


def _average_means(means: list[MeanResult], rational: bool) -> MeanResult:
    if len(means) == 1:
        return means[0]
    if any(m.value is None for m in means):
        return MeanResult(None, None, 0)
    if rational:
        exact = sum((m.exact for m in means), Fraction(0)) / len(means)
        return MeanResult(float(exact), exact, means[0].eligible)
    return MeanResult(math.fsum(m.value for m in means) / len(means), None, means[0].eligible)


def repeats_json(c: Combined, expected: int) -> dict:
    from ..report import fraction_text

    out = {
        "runs": c.labels,
        "count": c.n_runs,
        "expected": expected,
        "warning": repeat_warning(c.n_runs, expected),
        "complete": c.run_complete,
        "run_means": {name: [{"value": m.value, "exact": fraction_text(m.exact)} for m in ms]
                      for name, ms in c.run_means.items()},
        "mean_spread": {name: _spread_of([m.value for m in ms]) for name, ms in c.run_means.items()},
        "changed_queries": [{"query_id": q, "measures": ms} for q, ms in c.changed.items()],
        "per_query": [
            {"query_id": q.query_id, "statuses": list(q.statuses),
             "values": q.values,
             "exact": {n: fraction_text(q.exact[n]) for n in c.measures if c.rational[n]},
             "per_run": q.per_run,
             "spread": {n: (s.to_json() if s else None) for n, s in q.spread.items()}}
            for q in c.queries
        ],
    }
    return out


def _spread_of(values: list[float | None]) -> dict | None:
    if any(v is None for v in values):
        return None
    return {"min": min(values), "max": max(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else None}


def repeat_warning(count: int, expected: int) -> str | None:
    if count >= expected:
        return None
    return (f"{count} run{'s' if count != 1 else ''} of the system scored, the acceptance method expects "
            f"{expected}: the variation between runs is {'unknown' if count == 1 else 'poorly estimated'}")
