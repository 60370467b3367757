"""Which convention does a project's own metric function implement?  ``check_metric`` finds out, axis by axis.

``fn(qrels, run) -> {query: value}`` is run on the hard cases of strategies.py
(the fixed corpus, then cases hypothesis draws); on each case ``explain``
lists the combinations of the axes and named variants that reproduce its
values (docs/explain.md), and only the combinations that reproduce every
case survive.  The report gives, per axis, the values that survive, and for
each axis where the measure's standard definition does not, the smallest case
that shows the departure (their values beside the standard ones).

Axes split in two: the measure's definition (the named variants, nDCG's gain
and gain floor, RR's cutoff), where a departure is a different measure, and
the conventions a measure leaves open (which queries get a value, queries
without a relevant document, tie order, score precision), which are reported
but fail ``assert_metric`` only when asked for.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from ..explain_search import explain
from ..measures.base import Measure

CONVENTIONS = ("query_set", "no_relevant", "tie_break", "precision")  # left open by a measure's definition
STANDARD = {"query_set": "judged", "no_relevant": "null", "tie_break": "doc_desc", "precision": "float64",
            "gain": "linear", "ndcg_gain_floor": "positive", "rr_cutoff": "honoured"}  # + each variant's standard
NOT_SEARCHED = ("empty_rankings", "duplicates", "rounding")  # a dict run has no empty ranking and no repeat


@dataclass
class Case:
    qrels: dict
    run: dict
    theirs: dict
    matches: set  # tuples over the report's axes that reproduce this case
    tried: dict

    @property
    def size(self) -> int:
        return sum(len(v) for v in self.qrels.values()) + sum(len(v) for v in self.run.values())


@dataclass
class Departure:
    axis: str
    theirs: list[str]  # the values their function follows
    standard: str
    case: Case  # the smallest case the standard value does not reproduce


@dataclass
class MetricReport:
    measure: str
    axes: tuple[str, ...]
    convention: dict[str, list[str]]  # axis -> the values every case agrees with (empty: none does)
    departures: list[Departure] = field(default_factory=list)
    cases: int = 0
    unreproduced: Case | None = None  # the smallest case no combination reproduces (or the one that split them)

    @property
    def standard(self) -> bool:
        """Every definitional axis follows the measure's standard definition."""
        return self.unreproduced is None and not [d for d in self.departures if d.axis not in CONVENTIONS]

    def __str__(self) -> str:
        return render(self)


def check_metric(fn, measure: str | Measure, *, examples: int = 60, rel: int | None = None,
                 seed: int = 0) -> MetricReport:
    """Run ``fn`` on the hard cases and ``examples`` cases hypothesis draws; report its convention per axis."""
    from ..measures import parse_measures

    m = measure if isinstance(measure, Measure) else parse_measures(measure)[0]
    cases = [_case(fn, m, qrels, run, rel) for qrels, run in _inputs(examples, seed)]
    axes = _axes(cases[0].tried)
    values = {a: sorted(set().union(*(c.tried.get(a, set()) for c in cases))) for a in axes}
    alive = set(itertools.product(*(values[a] for a in axes)))
    report = MetricReport(str(m), axes, {}, cases=len(cases))
    for case in sorted(cases, key=lambda c: c.size):
        if not case.matches:
            report.unreproduced = case
            break
    for case in cases:
        alive = {k for k in alive if _normal(k, axes, case.tried) in case.matches}
        if not alive and report.unreproduced is None:
            report.unreproduced = case
    report.convention = {a: sorted({k[i] for k in alive}) for i, a in enumerate(axes)}
    if alive:
        report.departures = _departures(m, axes, alive, cases)
    return report


def assert_metric(fn, measure: str | Measure, *, examples: int = 60, rel: int | None = None, **expected) -> MetricReport:
    """Raise AssertionError with the report unless ``fn`` follows the measure's standard definition on every
    definitional axis, and the values in ``expected`` (``tie_break="doc_asc"``, ``no_relevant="zero"``) on
    the axes named there."""
    report = check_metric(fn, measure, examples=examples, rel=rel)
    wrong = [d for d in report.departures if d.axis not in CONVENTIONS and d.axis not in expected]
    wrong += [axis for axis, value in expected.items() if report.convention.get(axis) != [value]]
    if report.unreproduced is not None or wrong:
        raise AssertionError(str(report))
    return report


def _inputs(examples: int, seed: int) -> list[tuple[dict, dict]]:
    """The fixed hard cases, then ``examples`` drawn by hypothesis (derandomized: the same cases every run)."""
    from .strategies import HARD_CASES, cases

    if examples <= 0:
        return list(HARD_CASES)
    from hypothesis import HealthCheck, given, settings

    drawn: list = []

    @settings(max_examples=examples, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(cases())
    def collect(case):
        drawn.append(case)

    collect()
    return list(HARD_CASES) + drawn


def _case(fn, m: Measure, qrels: dict, run: dict, rel: int | None) -> Case:
    """Their values on one case, and the combinations that reproduce them (as tuples over the case's axes)."""
    from converters.theirs import Figure, Figures, Theirs

    from ..api import read_dataset, read_run

    raw = fn({q: dict(d) for q, d in qrels.items()}, {q: dict(d) for q, d in run.items()})
    theirs = {str(q): float(v) for q, v in (raw or {}).items()
              if v is not None and not (isinstance(v, float) and math.isnan(v))}
    figures = Figures(m, str(m), per_query={q: Figure(v, None) for q, v in theirs.items()})
    ex = explain(read_dataset(qrels, rel=rel), read_run(run), Theirs("their function", "json", {str(m): figures}))
    found = ex.measures[0]
    axes = _axes(found.tried)
    matches = {tuple(c.values[a] for a in axes) for c in found.matches}
    return Case(qrels, run, theirs, matches, dict(found.tried))


def _axes(tried: dict) -> tuple[str, ...]:
    """The axes a report covers, in one fixed order (every case tries the same ones)."""
    return tuple(sorted(k for k in tried if k not in NOT_SEARCHED))


def _normal(key: tuple, axes: tuple[str, ...], tried: dict) -> tuple:
    """``key`` as this case sees it: a value the case did not try (it cannot tell it from the one it tried:
    no judged query missing from the set, threshold 1) becomes the value it tried."""
    out = []
    for a, v in zip(axes, key):
        seen = tried.get(a, {v})
        out.append(v if v in seen or len(seen) != 1 else next(iter(seen)))
    return tuple(out)


def _departures(m: Measure, axes: tuple[str, ...], alive: set, cases: list[Case]) -> list[Departure]:
    """Each axis where the standard value is not among theirs, with the smallest case it fails on."""
    from ..measures.variants import variants_of

    standard = {**STANDARD, **{p: v.standard for p, v in variants_of(m.family).items()}}
    closest = min(alive, key=lambda k: sum(v != standard.get(a) for a, v in zip(axes, k)))
    out = []
    for i, axis in enumerate(axes):
        values = sorted({k[i] for k in alive})
        if standard.get(axis) in values or axis not in standard:
            continue
        swapped = closest[:i] + (standard[axis],) + closest[i + 1:]
        failing = [c for c in cases if _normal(swapped, axes, c.tried) not in c.matches]
        if failing:
            out.append(Departure(axis, values, standard[axis], min(failing, key=lambda c: c.size)))
    return out


def render(report: MetricReport) -> str:
    lines = [f"check_metric {report.measure}: {report.cases} cases"]
    if report.unreproduced is not None:
        c = report.unreproduced
        lines.append("  no single convention searched reproduces every case; the first case that rules out the rest:")
        lines += _case_lines(c)
        return "\n".join(lines) + "\n"
    lines.append("  convention per axis (every value listed reproduces all cases):")
    for axis, values in report.convention.items():
        kind = "convention" if axis in CONVENTIONS else "definition"
        lines.append(f"    {axis} = {' | '.join(values)}   ({kind})")
    if not report.departures:
        lines.append("  follows the standard definition on every axis")
    for d in report.departures:
        kind = "a convention the measure leaves open" if d.axis in CONVENTIONS else "a different measure"
        lines.append(f"  departure on {d.axis}: {' | '.join(d.theirs)} instead of {d.standard} ({kind}); smallest case:")
        lines += _case_lines(d.case)
    return "\n".join(lines) + "\n"


def _case_lines(case) -> list[str]:
    return [f"    qrels  {case.qrels}", f"    run    {case.run}", f"    theirs {case.theirs}"]
