"""Helpers for a project's own tests: check its metric values against trec-bridge's, and say which convention
its metric code follows.

* ``assert_scores_equal``: their values on one input against ours, naming the policy they match;
* ``check_metric`` / ``assert_metric``: run their metric function on generated hard cases (ties, float32-equal
  scores, queries without relevant documents, missing queries, graded and negative judgments, rankings
  shorter than k) and report the convention it implements on each axis, with the smallest case that shows
  each departure from the measure's standard definition (check.py; the cases: strategies.py, hypothesis).

>>> from trec_bridge.testing import assert_scores_equal
>>> assert_scores_equal({"q1": 0.5}, {"q1": {"a": 1}}, {"q1": {"b": 2.0, "a": 1.0}}, "RR")
"""
from __future__ import annotations

import math
from typing import Any

__all__ = ["assert_scores_equal", "axes_between", "check_metric", "assert_metric"]


def check_metric(fn, measure, **options):
    """``check.check_metric``: which convention ``fn(qrels, run) -> {query: value}`` implements, axis by axis."""
    from .check import check_metric as check

    return check(fn, measure, **options)


def assert_metric(fn, measure, **expected):
    """``check.assert_metric``: raise AssertionError (with the report) unless ``fn`` follows the standard definition
    of ``measure``, or the axis values given in ``expected`` (e.g. ``tie_break="doc_asc"``)."""
    from .check import assert_metric as check

    return check(fn, measure, **expected)


def assert_scores_equal(their: Any, qrels: Any, run: Any, measure: Any, policy: str = "strict", *,
                        rel: int | None = None, abs_tol: float = 1e-9) -> None:
    """Raise AssertionError unless ``their`` values equal ours for ``measure`` under ``policy``.

    ``their``: a mean (a number) or per-query values (``{query_id: value}``;
    None for a query the policy leaves without a value).  The failure lists
    each differing query with both values, names every policy under which
    trec-bridge does reproduce their values (e.g. "they match policy
    trec_eval") and the divergence axes that separate it from ``policy``
    on these inputs (e.g. "axis query_set (...)"), which says which
    convention their code follows.

    >>> assert_scores_equal(0.75, {"q1": {"a": 1}, "q2": {"c": 1}}, {"q1": {"b": 2.0, "a": 1.0}, "q2": {"c": 1.0}},
    ...                     "RR", policy="trec_eval")
    """
    from ..api import Evaluator, read_dataset, read_run

    dataset, r = read_dataset(qrels, rel=rel), read_run(run)
    differences = _differences(their, Evaluator(dataset, [measure], policy).score(r), abs_tol)
    if not differences:
        return
    explained = [name for name in _policies() if name != policy and _matches(their, dataset, r, measure, name, abs_tol)]
    lines = [f"{measure} under policy {policy}: {len(differences)} difference(s) (query: theirs vs ours)"]
    lines += [f"  {q}: {t!r} vs {o!r}" for q, t, o in differences[:20]]
    lines += [f"  ... and {len(differences) - 20} more"] if len(differences) > 20 else []
    if not explained:
        lines.append("no policy of trec-bridge reproduces them (see docs/divergences.md for the conventions)")
    for name in explained:
        axes = axes_between(dataset, r, measure, policy, name)
        lines.append(f"they match policy {name}: " + ("; ".join(f"axis {a} ({why})" for a, why in axes)
                                                      if axes else "no divergence axis changes these values"))
    raise AssertionError("\n".join(lines))


def axes_between(qrels: Any, run: Any, measure: Any, policy: str, other: str) -> list[tuple[str, str]]:
    """The divergence axes (trec_bridge/axes.py), with their reasons, on which ``other`` differs from ``policy``
    and that change ``measure`` on these inputs (any input kind): walked one axis at a time, as the cross-check
    does.  When the walk cannot be made (a step refuses these inputs), every axis on which the two policies
    differ is named.

    >>> [axis for axis, why in axes_between({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, "P@1",
    ...                                     "strict", "trec_eval")]
    ['query_set']
    """
    from ..api import _measures, read_dataset, read_run
    from ..axes import AXES, reason
    from ..errors import InvalidInput
    from ..policy import get_policy
    from ..reconcile import Rescorer, mean_parts, per_query_parts, table, walk_between
    from ..scorer import prepare

    dataset, run = read_dataset(qrels), read_run(run)
    start, target = get_policy(policy), get_policy(other)
    differing = [a for a in AXES if getattr(start, a.field) != getattr(target, a.field)]
    measures = _measures([measure])
    try:
        walk = walk_between(Rescorer(prepare(dataset, run), measures), start, target)
    except InvalidInput:
        return [(a.field, reason(a, getattr(target, a.field))) for a in differing]
    name, tables = str(measures[0]), [table(result) for _, result in walk.steps]
    queries = {q for t in tables for q in t}
    changed = {p.axis for p in mean_parts(walk, name)}
    changed |= {p.axis for q in queries for p in per_query_parts(walk, q, name, tables)}
    return [(a.field, reason(a, getattr(target, a.field))) for a in differing if a.field in changed]


def _differences(their: Any, result, abs_tol: float) -> list[tuple[str, Any, Any]]:
    """(query or "mean", theirs, ours) wherever the two differ."""
    name = str(result.result.measures[0])
    if not isinstance(their, dict):
        ours = result.means[name]
        return [] if _same(their, ours, abs_tol) else [("mean", their, ours)]
    ours = {q.query_id: q.values[name] for q in result.result.queries}
    return [(q, their.get(q), ours.get(q)) for q in list(ours) + [q for q in their if q not in ours]
            if not _same(their.get(q), ours.get(q), abs_tol)]


def _same(a: Any, b: Any, abs_tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=abs_tol)


def _matches(their: Any, dataset, run, measure: Any, policy: str, abs_tol: float) -> bool:
    from ..api import Evaluator
    from ..errors import InvalidInput

    try:
        return not _differences(their, Evaluator(dataset, [measure], policy).score(run), abs_tol)
    except InvalidInput:  # the policy's tool does not compute this measure, or rejects this input
        return False


def _policies() -> list[str]:
    from ..policy import POLICIES

    return list(POLICIES)
