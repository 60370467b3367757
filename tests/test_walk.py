"""The cross-check's axis walk gives, at every step, what scoring afresh under that step's policy gives.

The walk evaluates one prepared run under each step's policy (``reconcile.Rescorer``
shared by all four reference policies, as the cross-check does); these tests
compare every step with a plain ``score`` call, on the adversarial inputs of
the cross-check property test and on a few hand-made ones (repeats read under
``last_wins``, float32 ties, a split and a chunk map).
"""
from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings

from trec_bridge.axes import AXES
from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, ChunkMap, Dataset, Qrels, Query, Run
from trec_bridge.policy import IR_MEASURES, PYTREC_EVAL, STRICT, TREC_EVAL, TREC_EVAL_C
from trec_bridge.reconcile import Rescorer, walk_axes
from trec_bridge.scorer import prepare, score

from .examples_budget import DIFFERENTIAL_EXAMPLES
from .test_crosscheck_hypothesis import MEASURES, Case, cases, with_named_cases

TARGETS = (TREC_EVAL, TREC_EVAL_C, PYTREC_EVAL, IR_MEASURES)


def plain_walk(dataset, run, measures, target, **where):
    """One score() per switched axis, from scratch."""
    policy, steps = STRICT, [(None, score(dataset, run, measures, **where))]
    for axis in AXES:
        value = getattr(target, axis.field)
        if getattr(policy, axis.field) != value:
            policy = replace(policy, **{axis.field: value})
            steps.append((axis.field, score(dataset, run, measures, policy, **where)))
    return steps


def same_result(a, b) -> None:
    assert a.policy == b.policy
    assert a.protocol_fingerprint == b.protocol_fingerprint
    assert a.unjudged_queries == b.unjudged_queries and a.query_source == b.query_source
    assert (a.chunk_map_fingerprint, a.order) == (b.chunk_map_fingerprint, b.order)
    assert [(m, (v.value, v.exact, v.eligible)) for m, v in a.means.items()] == \
        [(m, (v.value, v.exact, v.eligible)) for m, v in b.means.items()]
    rows = lambda r: [(q.query_id, q.status, q.relevant, q.retrieved, q.reason, list(q.values.items()),
                       [(m, q.exact.get(m)) for m in q.values]) for q in r.queries]  # noqa: E731
    assert rows(a) == rows(b)


def check(dataset: Dataset, run: Run, measures, **where) -> Rescorer | None:
    try:
        steps = Rescorer(prepare(dataset, run, **where), measures)
    except InvalidInput:
        with pytest.raises(InvalidInput):
            score(dataset, run, measures, **where)
        return None
    for target in TARGETS:
        walk = walk_axes(steps, target)
        expected = plain_walk(dataset, run, measures, target, **where)
        assert [a for a, _ in walk.steps] == [a for a, _ in expected]
        for (_, got), (_, want) in zip(walk.steps, expected):
            same_result(got, want)
    return steps


SETTINGS = settings(max_examples=DIFFERENTIAL_EXAMPLES // 4, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@with_named_cases
@given(cases())
def test_walks_equal_plain_rescoring(case: Case) -> None:
    check(case.dataset(), case.run(), MEASURES)


def _simple(grades=(1, 0), scores=(3.0, 2.0, 1.0), docs=("d2", "d1", "x"), unique=True, splits=(None, None)):
    qrels = Qrels(pl.DataFrame([("a", "0", "d1", grades[0]), ("a", "0", "d2", grades[1]), ("b", "0", "d3", 1)],
                               schema=QRELS_SCHEMA, orient="row"))
    rows = [("a", d, s, i) for i, (d, s) in enumerate(zip(docs, scores), 1)] + [("b", "d3", 1.0, 1)]
    run = Run(pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), ("a", "b"), unique_checked=unique)
    source = "qrels" if splits == (None, None) else "dataset"
    queries = (Query("a", split=splits[0]), Query("b", split=splits[1]))
    return Dataset(queries=queries, qrels=qrels, query_source=source), run


def test_a_repeated_document_is_read_again_under_last_wins():
    dataset, run = _simple(docs=("d1", "d2", "d1"), unique=False)  # strict rejects the repeat
    steps = check(dataset, run, parse_measures("P@2 AP RR@2"))
    assert steps is None
    dataset, run = _simple(unique=False)  # no repeat, but the reader did not vouch for it: read again
    steps = check(dataset, run, parse_measures("P@2 AP RR@2"))
    assert set(steps.prepared) == {"reject", "last_wins"}
    assert steps.prepared["last_wins"].builders is not steps.prepared["reject"].builders


def test_float32_ties_and_graded_judgments_change_steps():
    near = dict(scores=(1.00000002, 1.00000001, 0.5), docs=("d1", "d2", "x"))  # one float32: d2 goes first
    check(*_simple(**near), parse_measures("P@1 RR@1 AP nDCG@2"))
    check(*_simple(grades=(2, 0)), parse_measures("P@2 nDCG@2 RR@2 nDCG(gain=exp)@2"))
    check(*_simple(grades=(0, 0)), parse_measures("P@2 nDCG@2 RR@2"))


def test_a_walk_on_a_split_and_chunks():
    dataset, _ = _simple(splits=("test", "test"))
    chunks = Run(pl.DataFrame([("a", "d2#1", 3.0, 1), ("a", "d2#2", 2.5, 2), ("a", "d1#1", 2.0, 3),
                               ("b", "d3#1", 1.0, 1)], schema=RUN_SCHEMA, orient="row"), ("a", "b"))
    chunk_map = ChunkMap(pl.DataFrame({"chunk_id": ["d2#1", "d2#2", "d1#1", "d3#1"],
                                       "doc_id": ["d2", "d2", "d1", "d3"]}))
    steps = check(dataset, chunks, parse_measures("P@2 AP RR@2"), split="test", chunk_map=chunk_map)
    assert steps.strict.chunk_map_fingerprint == chunk_map.fingerprint()


def test_the_steps_share_what_their_axes_leave_alone(monkeypatch):
    """A step recomputes only the measures its axis changes (scorer.Reuse): fewer kernels than steps x measures
    (that each step still equals a fresh score is ``check``'s, on these inputs too: the test above)."""
    from trec_bridge import scorer

    calls = []
    kernel = scorer.measure_kernel
    monkeypatch.setattr(scorer, "measure_kernel", lambda m, *a: calls.append(m) or kernel(m, *a))
    dataset, run = _simple(grades=(2, 0))
    measures = parse_measures("P@2 nDCG@2 RR@2 nDCG(gain=exp)@2 AP")
    steps = Rescorer(prepare(dataset, run), measures)
    walks = [walk_axes(steps, target) for target in TARGETS]
    evaluations = 1 + sum(len(w.steps) - 1 for w in walks)
    assert evaluations > 10 and len(calls) < evaluations * len(measures) / 2, (len(calls), evaluations)
