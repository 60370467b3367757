"""The diversity family (alpha_nDCG, ERR_IA, NRBP, P_IA, StRecall) on diversity qrels small enough to work by hand.

Each figure is worked from the definitions in trec_bridge/measures/intent.py
and the family modules (ndeval's, the provider ir_measures routes these
measures to); golden/D1 holds the larger worked case.  Where pyndeval is
installed, the cross-check against ir_measures must agree query by query.
"""
from __future__ import annotations

import math
from importlib.util import find_spec

import polars as pl
import pytest

import trec_bridge as tb
from trec_bridge.crosscheck import crosscheck
from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, Dataset, Qrels, Query
from trec_bridge.policy import STRICT
from trec_bridge.references import get
from trec_bridge.scorer import protocol_fingerprint

L3 = math.log2(3)


def dataset(rows, queries=None) -> Dataset:
    qrels = Qrels(pl.DataFrame(rows, schema=QRELS_SCHEMA, orient="row"), subtopics=True)
    ids = queries or list(dict.fromkeys(r[0] for r in rows))
    return Dataset(queries=tuple(Query(q) for q in ids), qrels=qrels, threshold=1, query_source="qrels")


def values(ds, run, measures, policy="strict") -> dict:
    res = tb.score(ds, run, measures, policy=policy)
    return {(q.query_id, m): q.values[m] for q in res.result.queries for m in q.values}


# a{s1, s2}, b{s3, s4}, c{s1, s3}: every document first scores 2, and the tie decides the ideal
TIE = dataset([("1", "s1", "a", 1), ("1", "s2", "a", 1), ("1", "s3", "b", 1), ("1", "s4", "b", 1),
               ("1", "s1", "c", 1), ("1", "s3", "c", 1)])


def test_the_ideal_is_ndevals_greedy_one_ties_to_the_larger_document_id():
    # c first (largest ID): s1, s3 at 1/2; then a and b tie at 3/2, b placed; then a at 3/2: ideal 2, 3/2, 3/2.
    # The run c, b, a gains exactly that, so it is ideal; a first would have given 2, 2, 1 (DCG@3 2.5 + 2/log2 3).
    got = values(TIE, {"1": {"c": 3.0, "b": 2.0, "a": 1.0}}, "alpha_nDCG@3")
    assert got[("1", "alpha_nDCG@3")] == pytest.approx(1.0, abs=1e-15)
    got = values(TIE, {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}, "alpha_nDCG@3")
    assert got[("1", "alpha_nDCG@3")] == pytest.approx((2 + 2 / L3 + 1 / 2) / (2 + 1.5 / L3 + 1.5 / 2), abs=1e-15)


def test_novelty_discounts_a_second_document_on_the_same_intent():
    ds = dataset([("1", "s1", "a", 1), ("1", "s1", "b", 1), ("1", "s2", "c", 1)])
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    got = values(ds, run, "alpha_nDCG(alpha=0.25)@3 NRBP(alpha=0.25,beta=0.5) P_IA@2 StRecall@2 ERR_IA@2")
    # gains 1, 3/4 (s1 again), 1; ideal: a (1, ties to c), then c (1), then b (3/4)
    assert got[("1", "alpha_nDCG(alpha=0.25)@3")] == pytest.approx((1 + 0.75 / L3 + 1 / 2) / (1 + 1 / L3 + 0.75 / 2))
    # (1 - 3/4 x 1/2) / 2 x (1 + 3/4 x 1/2 + 1 x 1/4)
    assert got[("1", "NRBP(alpha=0.25)")] == pytest.approx(5 / 16 * (1 + 3 / 8 + 1 / 4), abs=1e-15)  # beta=0.5: default
    assert got[("1", "P_IA@2")] == 2 / 4  # a and b cover s1 each: 2 / (2 x 2)
    assert got[("1", "StRecall@2")] == 1 / 2  # s1 only
    assert got[("1", "ERR_IA@2")] == pytest.approx((1 + 0.5 / 2) / (2 * (1 + 0.5 / 2)), abs=1e-15)  # alpha fixed 1/2


def test_rel_judged_only_and_a_subtopic_judged_only_non_relevant():
    ds = dataset([("1", "s1", "a", 2), ("1", "s2", "a", 1), ("1", "s3", "b", 0), ("1", "s2", "c", 1)])
    run = {"1": {"x": 3.0, "a": 2.0, "c": 1.0}}  # x unjudged
    got = values(ds, run, "P_IA@2 P_IA(judged_only=True)@2 P_IA(rel=2)@2 StRecall(rel=2)@1 StRecall(rel=2)@2")
    assert got[("1", "P_IA@2")] == 2 / 4  # s3 is no intent (b not relevant): |S| = 2; a covers s1, s2
    assert got[("1", "P_IA(judged_only=True)@2")] == 3 / 4  # x removed: a, c in the top 2
    assert got[("1", "P_IA(rel=2)@2")] == 1 / 2  # only s1 is an intent at rel 2, and a covers it: 1 / (2 x 1)
    assert got[("1", "StRecall(rel=2)@1")] == 0.0  # the one intent at rel 2 is s1; x, unjudged, covers nothing
    assert got[("1", "StRecall(rel=2)@2")] == 1.0  # a covers s1


def test_a_query_without_an_intent_is_null_under_strict_and_zero_under_ir_measures():
    ds = dataset([("1", "s1", "a", 1), ("2", "s2", "b", 0)])
    run = {"1": {"a": 1.0}, "2": {"b": 1.0}}
    assert values(ds, run, "alpha_nDCG@5")[("2", "alpha_nDCG@5")] is None
    assert values(ds, run, "alpha_nDCG@5", "ir_measures")[("2", "alpha_nDCG@5")] == 0.0


def test_parameters_as_ir_measures_spells_them():
    spelled = parse_measures("alpha_nDCG(alpha=0.5,judged_only=False)@10 NRBP(alpha=0.5,beta=0.5) alpha_ndcg@5 "
                             "err_ia@5 P_IA(rel=1)@5 StRecall@3 NRBP(beta=0.8)")
    assert [str(m) for m in spelled] == ["alpha_nDCG@10", "NRBP", "alpha_nDCG@5", "ERR_IA@5", "P_IA(rel=1)@5",
                                         "StRecall@3", "NRBP(beta=0.8)"]


@pytest.mark.parametrize("text, code", [
    ("alpha_nDCG", "E_CUTOFF"), ("NRBP@10", "E_CUTOFF"), ("ERR_IA@1", "E_CUTOFF"),
    ("P_IA@1000000001", "E_CUTOFF"), ("alpha_nDCG(alpha=1.5)@5", "E_MEASURE_PARAM"),
    ("NRBP(beta=-0.1)", "E_MEASURE_PARAM"), ("ERR_IA(alpha=0.3)@5", "E_MEASURE_PARAM"),
    ("P_IA(judged_only=1)@5", "E_MEASURE_PARAM"), ("StRecall(judged_only=True)@5", "E_MEASURE_PARAM"),
])
def test_bad_spellings_are_refused_with_their_code(text, code):
    with pytest.raises(InvalidInput) as exc:
        parse_measures(text)
    assert exc.value.code == code


def test_the_qrels_shape_must_fit_the_measure():
    ordinary = tb.read_dataset({"1": {"a": 1}})
    with pytest.raises(InvalidInput) as exc:
        tb.score(ordinary, {"1": {"a": 1.0}}, "alpha_nDCG@5")
    assert exc.value.code == "E_SUBTOPICS_UNDECLARED"
    with pytest.raises(InvalidInput) as exc:
        tb.score(TIE, {"1": {"a": 1.0}}, "nDCG@5")  # a is judged for s1 and s2: which grade?
    assert exc.value.code == "E_SUBTOPICS_AMBIGUOUS" and exc.value.where.doc == "a"
    single = dataset([("1", "s1", "a", 2), ("1", "s2", "b", 1)])  # one judgment a document: that is its grade
    got = values(single, {"1": {"b": 2.0, "a": 1.0}}, "P@1 nDCG@2 alpha_nDCG@2")
    assert got[("1", "P@1")] == 1.0 and got[("1", "alpha_nDCG@2")] == 1.0
    assert got[("1", "nDCG@2")] == pytest.approx((1 + 2 / L3) / (2 + 1 / L3))


def test_the_protocol_fingerprint_reads_the_subtopics():
    measures = parse_measures("alpha_nDCG@5")
    other = dataset([("1", "s1", "a", 1), ("1", "s2", "a", 1), ("1", "s3", "b", 1), ("1", "s4", "b", 1),
                     ("1", "s3", "c", 1), ("1", "s2", "c", 1)])  # the same pairs and grades, one intent of c moved
    assert protocol_fingerprint(TIE, measures, STRICT) != protocol_fingerprint(other, measures, STRICT)


needs_pyndeval = pytest.mark.skipif(not get("ir_measures").available() or find_spec("pyndeval") is None,
                                    reason="ir_measures or its pyndeval provider is not installed")


@needs_pyndeval
def test_crosscheck_agrees_with_pyndeval_query_by_query():
    """Two pyndeval invocations (alpha 0.3 and the default): ir_measures would hand the second an empty run."""
    ds = dataset([("1", "s1", "a", 1), ("1", "s2", "a", 1), ("1", "s1", "b", 1), ("1", "s2", "c", 2),
                  ("2", "s1", "x", 1), ("2", "s3", "y", 1), ("3", "s1", "z", 0)])
    run = tb.read_run({"1": {"a": 1.0, "b": 1.0, "c": 0.5, "u": 2.0}, "2": {"y": 1.0, "x": 1.0}, "4": {"z": 1.0}})
    measures = parse_measures("alpha_nDCG@3 alpha_nDCG(alpha=0.3)@3 ERR_IA@3 NRBP NRBP(alpha=0.2,beta=0.9) "
                              "P_IA@2 StRecall@2 P_IA(rel=2)@5 alpha_nDCG@30 P_IA(judged_only=True)@5")
    result = crosscheck(ds, run, measures, ["ir_measures"])
    assert not result.unexplained, result.unexplained
    check = result.tools[0]
    ref = check.reference
    assert set(ref.unsupported) == {"alpha_nDCG@30", "P_IA(judged_only=True)@5"}  # depth 20, the provider's crash
    emulated = {q.query_id: q for q in check.walk.final.queries}
    compared = [name for name in ref.per_query if name not in ref.failed]
    assert len(compared) == 8 and set(ref.served_by.values()) == {"pyndeval"}
    for name in compared:
        for q, value in ref.per_query[name].items():
            assert emulated[q].values[name] == pytest.approx(value, abs=1e-9), (name, q)
    assert ref.per_query["ERR_IA@3"]["1"] > 0  # the second invocation saw the run


def test_ir_measures_policy_refuses_what_pyndeval_cannot_compute():
    ds = dataset([("1", "s1", "a", 1), ("1", "s2", "b", 1)])
    for text in ("alpha_nDCG@21", "ERR_IA(judged_only=True)@5"):
        with pytest.raises(InvalidInput) as exc:
            tb.score(ds, {"1": {"a": 1.0}}, text, policy="ir_measures")
        assert exc.value.code == "E_POLICY_MEASURE"
    assert values(ds, {"1": {"a": 1.0}}, "alpha_nDCG@21")[("1", "alpha_nDCG@21")] == pytest.approx(1 / (1 + 1 / L3))


def test_score_many_reads_a_diversity_qrels_too(tmp_path):
    """--subtopics reaches score-many's worker jobs (golden/D1: P_IA@3 is 1/2 on q1 and on q3)."""
    import json
    from pathlib import Path

    from trec_bridge.cli.main import main

    d1 = Path(__file__).resolve().parents[1] / "golden" / "D1"
    code = main(["score-many", str(d1 / "qrels.txt"), str(d1 / "run.txt"), "--measures", "P_IA@3", "--subtopics",
                 "--jobs", "1", "--json-dir", str(tmp_path)])
    assert code == 0
    report = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert report["means"]["P_IA@3"]["exact"] == "1/2"
