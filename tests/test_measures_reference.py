"""Each measure equals a plain, obviously-correct per-query implementation written here.

Random rankings and graded judgments (hypothesis); rational measures must be
equal exactly (fractions), nDCG to 1e-12.
"""
from __future__ import annotations

import math
from fractions import Fraction

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Dataset, Qrels, Query, Run
from trec_bridge.scorer import score

DOCS = [f"d{i}" for i in range(12)]


def relevant(grade, rel):
    return grade is not None and grade >= rel and grade >= 0


def ref_value(family, k, rel, gain, ranking, judgments):
    """The textbook definition, one query at a time."""
    top = ranking if k is None else ranking[:k]
    n_rel = sum(1 for g in judgments.values() if relevant(g, rel))
    if family == "R":
        return Fraction(sum(1 for d in top if relevant(judgments.get(d), rel)), n_rel)
    if family == "P":
        return Fraction(sum(1 for d in top if relevant(judgments.get(d), rel)), k)
    if family == "Success":
        return Fraction(int(any(relevant(judgments.get(d), rel) for d in top)))
    if family == "RR":
        for i, d in enumerate(top, 1):
            if relevant(judgments.get(d), rel):
                return Fraction(1, i)
        return Fraction(0)
    if family == "AP":
        hits, total = 0, Fraction(0)
        for i, d in enumerate(top, 1):
            if relevant(judgments.get(d), rel):
                hits += 1
                total += Fraction(hits, i)
        return total / n_rel
    if family == "Judged":
        return Fraction(sum(1 for d in top if d in judgments), len(top)) if top else Fraction(0)
    if family == "nDCG":
        # the grade is the gain (trec_eval, ir_measures) unless named; grades <= 0 never earn gain, and the
        # relevance threshold plays no part; the ideal is the best ranking of every judged gain
        useful = lambda x: x is not None and x > 0  # noqa: E731
        dcg = sum(gain(judgments[d]) / math.log2(i + 1) for i, d in enumerate(top, 1) if useful(judgments.get(d)))
        ideal = sorted((gain(x) for x in judgments.values() if useful(x)), reverse=True)
        ideal = ideal if k is None else ideal[:k]
        idcg = sum(x / math.log2(i + 1) for i, x in enumerate(ideal, 1))
        return dcg / idcg
    raise AssertionError(family)


query_case = st.tuples(
    st.lists(st.sampled_from(DOCS), unique=True, max_size=10),  # ranking
    st.dictionaries(st.sampled_from(DOCS), st.integers(-2, 3), max_size=10),  # judgments
)

MEASURES = ("R@1 R@5 P@3 P@10 Success@2 RR RR@3 AP AP@4 nDCG nDCG@3 nDCG(gain=linear)@5 Judged@5 RR(rel=2)@5 "
            "R(rel=2)@4 nDCG(gain=exp)@5 nDCG(dcg=exp-log2) nDCG(gains={1:5,2:1,3:0})@3")
GAINS = {None: lambda x: x, "linear": lambda x: x, "exp": lambda x: 2 ** x - 1}


def gain_of(m):
    if m.gains is not None:
        table = dict(m.gains)
        return lambda x: table.get(x, x)
    return GAINS[m.gain]


@settings(max_examples=150, deadline=None)
@given(st.lists(query_case, min_size=1, max_size=6), st.integers(1, 3))
def test_every_measure_matches_the_textbook_definition(cases, threshold):
    queries = [f"q{i}" for i in range(len(cases))]
    run_rows, qrels_rows = [], []
    for q, (ranking, judgments) in zip(queries, cases):
        run_rows += [(q, d, None, i) for i, d in enumerate(ranking, 1)]
        qrels_rows += [(q, "0", d, g) for d, g in judgments.items()]
    dataset = Dataset(queries=tuple(Query(q) for q in queries),
                      qrels=Qrels(pl.DataFrame(qrels_rows, schema=QRELS_SCHEMA, orient="row")),
                      grades=None, completeness="pooled", threshold=threshold)
    run = Run(pl.DataFrame(run_rows, schema=RUN_SCHEMA, orient="row"), queries=tuple(queries))
    measures = parse_measures(MEASURES)
    result = score(dataset, run, measures)
    for q, (ranking, judgments) in zip(result.queries, cases):
        for m in measures:
            rel = m.rel if m.rel is not None else threshold
            gain = gain_of(m)
            if m.family == "nDCG":  # defined on a judged document of positive gain, whatever the threshold
                n_rel = sum(1 for g in judgments.values() if g > 0 and gain(g) > 0)
            else:
                n_rel = sum(1 for g in judgments.values() if relevant(g, rel))
            got = q.values[str(m)]
            if n_rel == 0:
                assert got is None, (q.query_id, str(m))
                continue
            want = ref_value(m.family, m.cutoff, rel, gain, ranking, judgments)
            if m.rational:
                assert q.exact[str(m)] == want, (q.query_id, str(m), ranking, judgments)
                assert got == float(want)
            else:
                assert abs(got - want) <= 1e-12, (q.query_id, str(m), got, want)
