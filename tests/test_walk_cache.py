"""The axis walk's score cache changes no number: cached walks equal walks that rescore every step.

``reconcile.ScoreCache`` reuses a result when two policies differ only on
axes ``inert_axes`` proves cannot matter for the inputs, or in orderings that
re-sort nothing.  These tests compare every step of cached walks (one cache
shared by all four reference policies, as the cross-check does) with a plain
walk that calls ``score`` for every step, on the adversarial inputs of the
cross-check property test and on inputs where most axes are inert.
"""
from __future__ import annotations

from dataclasses import replace

import polars as pl
from hypothesis import HealthCheck, given, settings

from trec_bridge.axes import AXES
from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Dataset, Qrels, Query, Run
from trec_bridge.policy import IR_MEASURES, PYTREC_EVAL, STRICT, TREC_EVAL, TREC_EVAL_C, Ordering
from trec_bridge.reconcile import ScoreCache, _keeps_given_order, inert_axes, walk_axes
from trec_bridge.scorer import score

from .test_crosscheck_hypothesis import MEASURES, Case, cases, with_named_cases

TARGETS = (TREC_EVAL, TREC_EVAL_C, PYTREC_EVAL, IR_MEASURES)


def plain_walk(dataset, run, measures, target):
    """The walk without a cache: one score() per switched axis."""
    policy, steps = STRICT, [(None, score(dataset, run, measures))]
    for axis in AXES:
        value = getattr(target, axis.field)
        if getattr(policy, axis.field) != value:
            policy = replace(policy, **{axis.field: value})
            steps.append((axis.field, score(dataset, run, measures, policy)))
    return steps


def same_result(a, b) -> None:
    assert a.policy == b.policy
    assert a.protocol_fingerprint == b.protocol_fingerprint
    assert a.unjudged_queries == b.unjudged_queries and a.query_source == b.query_source
    assert [(m, (v.value, v.exact, v.eligible)) for m, v in a.means.items()] == \
        [(m, (v.value, v.exact, v.eligible)) for m, v in b.means.items()]
    rows = lambda r: [(q.query_id, q.status, q.relevant, q.retrieved, q.reason, list(q.values.items()),
                       [(m, q.exact.get(m)) for m in q.values]) for q in r.queries]  # noqa: E731
    assert rows(a) == rows(b)


def check(dataset: Dataset, run: Run, measures) -> ScoreCache | None:
    try:
        strict = score(dataset, run, measures)
    except InvalidInput:
        return None
    cache = ScoreCache(dataset, run, measures, strict)
    for target in TARGETS:
        walk = walk_axes(dataset, run, measures, target, strict_result=strict, cache=cache)
        expected = plain_walk(dataset, run, measures, target)
        assert [a for a, _ in walk.steps] == [a for a, _ in expected]
        for (_, got), (_, want) in zip(walk.steps, expected):
            same_result(got, want)
    return cache


SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@with_named_cases
@given(cases())
def test_cached_walks_equal_plain_walks(case: Case) -> None:
    check(case.dataset(), case.run(), MEASURES)


def _simple(grades=(1, 0), threshold=1, scores=(3.0, 2.0, 1.0), unique=True, docs=("d2", "d1", "x")):
    """Two judged queries, both ranked, binary grades, strictly descending scores: most axes are inert."""
    qrels = Qrels(pl.DataFrame([("a", "0", "d1", grades[0]), ("a", "0", "d2", grades[1]), ("b", "0", "d3", 1)],
                               schema=QRELS_SCHEMA, orient="row"))
    rows = [("a", d, s, i) for i, (d, s) in enumerate(zip(docs, scores), 1)] + [("b", "d3", 1.0, 1)]
    run = Run(pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), ("a", "b"), unique_checked=unique)
    return Dataset(queries=(Query("a"), Query("b")), qrels=qrels, threshold=threshold, query_source="qrels"), run


def test_inert_axes_on_a_plain_run_and_the_reuse_it_buys():
    dataset, run = _simple()
    measures = parse_measures("P@2 AP nDCG@2 RR@2")
    assert inert_axes(dataset, run, measures) == {"query_set", "empty_rankings", "no_relevant", "gain",
                                                   "ndcg_gain_floor", "duplicates", "run_only_queries", "unknown_docs"}
    cache = check(dataset, run, measures)
    assert cache.scored == 1  # only rr_cutoff changes anything: four walks, one rescoring


def test_axes_that_matter_are_never_inert():
    measures = parse_measures("P@2 nDCG@2 RR@2")
    graded, _ = _simple(grades=(2, 0))
    assert "gain" not in inert_axes(graded, _simple()[1], measures)  # 2^2 - 1 != 2
    assert "no_relevant" not in inert_axes(_simple(grades=(0, 0))[0], _simple()[1], measures)
    assert "ndcg_gain_floor" not in inert_axes(*_simple(threshold=2), measures)
    assert "duplicates" not in inert_axes(*_simple(unique=False), measures)
    assert "rr_cutoff" in inert_axes(*_simple(), parse_measures("P@2 RR"))
    for ds_run in (_simple(grades=(2, 0)), _simple(grades=(0, 0)), _simple(threshold=2), _simple(unique=False)):
        check(*ds_run, measures)


def test_given_order_is_only_trusted_when_strictly_sorted():
    trec = Ordering(tie_break="doc_desc", precision="float32")
    _, run = _simple()
    assert _keeps_given_order(run.frame, trec)
    near = dict(scores=(1.00000002, 1.00000001, 0.5), docs=("d1", "d2", "x"))  # one float32: d2 goes first
    assert not _keeps_given_order(_simple(**near)[1].frame, trec)
    assert _keeps_given_order(_simple(**near)[1].frame, Ordering(tie_break="doc_desc", precision="float64"))
    assert _keeps_given_order(_simple(scores=(1.00000002, 1.00000001, 0.5))[1].frame, trec)  # tie already d2, d1
    _, nan = _simple(scores=(float("nan"), 2.0, 1.0))
    assert not _keeps_given_order(nan.frame, trec)
    for ds_run in (_simple(**near), _simple(scores=(1.00000002, 1.00000001, 0.5)), _simple(scores=(2.0, 2.0, 1.0))):
        check(*ds_run, parse_measures("P@1 RR@1 AP nDCG@2"))
