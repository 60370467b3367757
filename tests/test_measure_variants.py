"""The named measure variants (measures/variants.py), worked by hand; an unadorned measure is unchanged.

q1 ranks b (grade 1), d (grade 0), a (grade 2); c (grade 1) is judged but not retrieved.
q2 judges x (grade 1) and ranks only y (unjudged).
"""
from fractions import Fraction

import pytest

import trec_bridge as tb
from trec_bridge.errors import InvalidInput

QRELS = {"q1": {"a": 2, "b": 1, "c": 1, "d": 0}, "q2": {"x": 1}}
RUN = {"q1": {"a": 0.1, "b": 0.9, "d": 0.5}, "q2": {"y": 1.0}}


@pytest.mark.parametrize("measure, q1, q2", [
    ("R@2", Fraction(1, 3), 0),
    ("R(den=min_k)@2", Fraction(1, 2), 0),  # min(3, 2) = 2
    ("R(den=k)@2", Fraction(1, 2), 0),
    ("P@5", Fraction(2, 5), 0),
    ("P(den=retrieved)@5", Fraction(2, 3), 0),  # q1 ranks 3 documents
    ("AP", (1 + Fraction(2, 3)) / 3, 0),
    ("AP(den=retrieved)", (1 + Fraction(2, 3)) / 2, 0),  # b and a retrieved, c not
    ("RR(relevant=judged)", 1, 0),  # b is judged; q2 has no judged document ranked
    ("P(rel=2)@1", 0, None),  # q2 has nothing relevant at 2: null
    ("P(rel=2,relevant=positive)@1", 1, 0),  # b's grade 1 counted although below rel=2
])
def test_binary_variants(measure, q1, q2):
    res = tb.score(QRELS, RUN, measure)
    values = {q.query_id: q.exact[str(res.result.measures[0])] for q in res.result.queries}
    assert values == {"q1": q1, "q2": q2}


def test_ndcg_variants():
    ideal_all = 2 + 1 / 1.584962500721156  # grades 2, 1 in the top 2 of the ideal
    cases = {"nDCG@2": 1 / ideal_all,  # DCG: b (gain 1) at rank 1
             "nDCG(ideal=retrieved)@2": 1 / ideal_all,  # retrieved gains 1 and 2: the same ideal here
             "nDCG(ideal=top_k)@2": 1.0,  # top 2 are b (1) and d (0): already in gain order
             "nDCG(discount=log2_rank)@3": (1 + 2 / 1.584962500721156) / (2 + 1 + 1 / 1.584962500721156)}
    for measure, q1 in cases.items():
        res = tb.score(QRELS, RUN, measure)
        assert res.result.queries[0].values[measure] == pytest.approx(q1, abs=1e-12), measure


def test_bad_variant_value_is_refused():
    with pytest.raises(InvalidInput) as exc:
        tb.score(QRELS, RUN, "R(den=all)@2")
    assert exc.value.code == "E_MEASURE_PARAM" and "min_k" in str(exc.value)


def test_no_tool_is_asked_for_a_variant():
    with pytest.raises(InvalidInput) as exc:
        tb.score(QRELS, RUN, "AP(den=retrieved)", policy="trec_eval")
    assert exc.value.code == "E_POLICY_MEASURE"


def test_duplicate_rules_first_and_keep_all():
    import polars as pl

    from trec_bridge.model import RUN_SCHEMA, Run
    from trec_bridge.policy import STRICT
    from trec_bridge.scorer import evaluate, prepare
    from trec_bridge.measures import parse_measures

    ds = tb.read_dataset({"q1": {"a": 1, "b": 1}})
    frame = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "z", "a"], "rank": [1, 2, 3],
                          "score": [3.0, 2.0, 1.0]}, schema=RUN_SCHEMA)  # a at ranks 1 and 3 (a JSON run may hold that)
    run = Run(frame, ("q1",))
    ms = parse_measures("R@3 P@3 RR")
    for rule, r3, p3 in (("first_wins", Fraction(1, 2), Fraction(1, 3)), ("last_wins", Fraction(1, 2), Fraction(1, 3)),
                         ("keep_all", 1, Fraction(2, 3))):
        res = evaluate(prepare(ds, run, duplicates=rule), ms, STRICT.with_axis(duplicates=rule))
        assert (res.means["R@3"].exact, res.means["P@3"].exact) == (r3, p3), rule
    first = evaluate(prepare(ds, run, duplicates="first_wins"), ms, STRICT.with_axis(duplicates="first_wins"))
    last = evaluate(prepare(ds, run, duplicates="last_wins"), ms, STRICT.with_axis(duplicates="last_wins"))
    assert (first.means["RR"].exact, last.means["RR"].exact) == (1, Fraction(1, 2))  # a kept at rank 1, or 2


def test_a_variant_at_its_standard_value_is_the_unadorned_measure():
    """The variants never change what a measure string without them computes: naming the standard value of
    every variant parameter gives the same exact values, query by query."""
    from dataclasses import replace

    from trec_bridge.measures import parse_measures
    from trec_bridge.measures.variants import variants_of

    for text in ("R@2", "P@5", "AP", "AP@3", "RR", "RR@2", "nDCG", "nDCG@3", "nDCG(gain=exp)@2"):
        plain = parse_measures(text)[0]
        named = replace(plain, extra=tuple(sorted((p, v.standard) for p, v in variants_of(plain.family).items())))
        assert named.extra, text
        res = tb.score(QRELS, RUN, [str(plain), str(named)])
        for q in res.result.queries:
            assert q.values[str(plain)] == q.values[str(named)], (text, q.query_id)
            assert q.exact[str(plain)] == q.exact[str(named)], (text, q.query_id)


def test_explain_needs_a_measure_they_give():
    with pytest.raises(InvalidInput) as exc:
        tb.explain(QRELS, RUN, {"P@5": {"q1": 0.4}}, "AP")
    assert exc.value.code == "E_THEIRS_FORMAT" and "P@5" in str(exc.value)
