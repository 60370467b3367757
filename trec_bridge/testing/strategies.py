"""Hypothesis strategies for evaluation inputs that break metric code, and a fixed corpus of hard cases.

A case is ``(qrels, run)`` as pytrec_eval's nested dicts: ``{query: {doc: grade}}`` and
``{query: {doc: score}}``.  The strategies lean on what implementations get wrong: scores
tied exactly, scores equal only as float32 (0.3 and 0.30000001), graded and negative
judgments, queries without a relevant document, judged queries missing from the run, unjudged
documents, rankings shorter than k and relevant documents ranked past k.

>>> from hypothesis import given
>>> @given(cases())
... def test_my_metric(case):
...     qrels, run = case
...     assert set(run) <= set(qrels) | {"u"}
"""
from __future__ import annotations

from hypothesis import strategies as st

SCORES = (0.3, 0.30000001, 0.5, 1.0, 2.0)  # exact ties, and two doubles one float32 apart from nothing
GRADES = (-1, 0, 0, 1, 1, 2, 3)
DOCS = tuple(f"d{i}" for i in range(1, 9))
UNJUDGED = ("u1", "u2", "u3")


def grades() -> st.SearchStrategy[int]:
    """Relevance grades, non-relevant and negative ones included."""
    return st.sampled_from(GRADES)


def scores() -> st.SearchStrategy[float]:
    """Scores drawn from a small set, so that ties (exact, and as float32) are common."""
    return st.sampled_from(SCORES)


@st.composite
def judgments(draw, query_ids=("q1", "q2", "q3")) -> dict:
    """``{query: {doc: grade}}`` for one to three queries, each with one to six judgments."""
    out = {}
    for q in query_ids[:draw(st.integers(1, len(query_ids)))]:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        out[q] = {d: draw(grades()) for d in docs}
    return out


@st.composite
def rankings(draw, qrels: dict) -> dict:
    """``{query: {doc: score}}`` for some of the judged queries (at least one; a query may be missing), each
    ranking judged and unjudged documents, one to ten of them."""
    queries = [q for q in qrels if draw(st.booleans())] or [next(iter(qrels))]
    out = {}
    for q in queries:
        pool = list(qrels[q]) + list(UNJUDGED) + [d for d in DOCS if d not in qrels[q]][:2]
        docs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=10, unique=True))
        out[q] = {d: draw(scores()) for d in docs}
    return out


@st.composite
def cases(draw) -> tuple[dict, dict]:
    """One ``(qrels, run)`` case."""
    qrels = draw(judgments())
    return qrels, draw(rankings(qrels))


def _long_ranking(relevant_at: int, length: int) -> dict:
    return {f"u{i}": float(length - i) for i in range(1, length + 1) if i != relevant_at} | \
        {"r": float(length - relevant_at)}


# Cases every check starts with, one per trap, so that each axis is shown whatever hypothesis draws.
HARD_CASES: tuple[tuple[dict, dict], ...] = (
    ({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 1.0, "b": 1.0}}),  # a tie: b first by ID descending, a ascending
    ({"q1": {"a": 0, "b": 1}}, {"q1": {"a": 0.30000001, "b": 0.3}}),  # equal only as float32
    ({"q1": {"a": 0}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"b": 1.0}}),  # q1: nothing relevant
    ({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}),  # q2 judged, missing from the run
    ({"q1": {f"r{i}": 1 for i in range(12)}}, {"q1": {"r0": 3.0, "x": 2.0, "r1": 1.0}}),  # more relevant than k, short
    ({"q1": {"a": 2, "b": 1, "c": -1, "d": 0, "e": 1}}, {"q1": {"c": 4.0, "d": 3.0, "b": 2.0, "a": 1.0}}),  # graded
    ({"q1": {"a": 1, "b": 1, "c": 2}}, {"q1": {"x": 1.0, "a": 0.5}}),  # relevant documents not retrieved
    ({"q1": {"r": 1}}, {"q1": _long_ranking(relevant_at=12, length=14)}),  # the first relevant past rank 10
    ({"q1": {"r": 1}}, {"q1": _long_ranking(relevant_at=3, length=4)}),  # ... and at rank 3 (past k = 2)
    ({"q1": {"a": 1, "b": 2, "c": 0}}, {"q1": {"c": 3.0, "b": 2.0, "a": 1.0}}),  # gains out of order
    ({"q1": {"a": 1, "r": 2}}, {"q1": {"a": 20.0, **_long_ranking(relevant_at=12, length=14)}}),  # best past k
    ({"q1": {"a1": 1, "a2": 1, "a3": 1}},  # one tie over 25 documents: the relevant ones first or last
     {"q1": {**{f"a{i}": 1.0 for i in (1, 2, 3)}, **{f"z{i:02d}": 1.0 for i in range(22)}}}),
)
