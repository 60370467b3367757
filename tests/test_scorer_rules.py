"""Policy rules of the scorer, exercised through the API on models built in the test.

The loaders reject most bad input before the scorer sees it; these tests make
sure the scorer's own checks hold for API callers who build models directly.
"""
from __future__ import annotations

from fractions import Fraction

import polars as pl
import pytest

from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Dataset, Qrels, Query, Run
from trec_bridge.policy import get_policy
from trec_bridge.scorer import score


def make_dataset(judgments: dict[str, dict[str, int]], queries=None, **kw) -> Dataset:
    rows = [(q, "0", d, g) for q, docs in judgments.items() for d, g in docs.items()]
    ids = queries if queries is not None else list(judgments)
    return Dataset(queries=tuple(Query(q) for q in ids),
                   qrels=Qrels(pl.DataFrame(rows, schema=QRELS_SCHEMA, orient="row")), **kw)


def make_run(rankings: dict[str, list], failures=None) -> Run:
    rows = []
    for q, docs in rankings.items():
        for i, d in enumerate(docs, 1):
            doc, s = d if isinstance(d, tuple) else (d, None)
            rows.append((q, doc, s, i))
    return Run(pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), queries=tuple(rankings),
               failures=failures or {})


S1 = {"q2": {"d3": 1, "d4": 1, "d1": 0}, "q3": {"d5": 1}, "q4": {"d6": 1}, "q5": {"d1": 0}}


def test_duplicate_past_the_cutoff_is_rejected_not_deduplicated():
    run = make_run({"q2": ["d3", "d1", "d3"], "q3": [], "q4": [], "q5": []})
    with pytest.raises(InvalidInput) as err:
        score(make_dataset(S1), run, parse_measures("R@2"))
    assert err.value.code == "E_RUN_DUPLICATE_DOC"
    assert err.value.where.query == "q2" and err.value.where.doc == "d3"


def test_duplicate_inside_the_cutoff_is_rejected():
    run = make_run({"q2": ["d3", "d3"], "q3": [], "q4": [], "q5": []})
    with pytest.raises(InvalidInput) as err:
        score(make_dataset(S1), run, parse_measures("R@2"))
    assert err.value.code == "E_RUN_DUPLICATE_DOC"


def test_missing_failed_and_empty_statuses():
    run = make_run({"q2": ["d3"], "q5": []}, failures={"q3": "timeout"})
    result = score(make_dataset(S1), run, parse_measures("R@2"))
    status = {q.query_id: q.status for q in result.queries}
    assert status == {"q2": "ranked", "q3": "failed", "q4": "missing", "q5": "empty"}
    assert result.failed == {"q3": "timeout"}
    assert not result.complete
    # q2 1/2, q3 0 (failed counts like missing), q4 0, q5 null
    assert result.means["R@2"].exact == Fraction(1, 6)
    assert result.means["R@2"].eligible == 3


def test_query_outside_the_set_is_rejected_in_strict_and_ignored_by_trec_eval():
    run = make_run({"q2": ["d3"], "q3": [], "q4": [], "q5": [], "q999": ["d1"]})
    with pytest.raises(InvalidInput) as err:
        score(make_dataset(S1), run, parse_measures("R@2"))
    assert err.value.code == "E_RUN_UNKNOWN_QUERY" and err.value.where.query == "q999"
    result = score(make_dataset(S1), run, parse_measures("R@2"), get_policy("trec_eval"))
    assert "q999" not in [q.query_id for q in result.queries]


def test_queries_the_dataset_declares_unjudged_are_listed_and_excluded_not_rejected():
    """Policy §1: as with TREC qrels, a run query the benchmark never judged is unjudged, not an error."""
    dataset = make_dataset(S1, unjudged_queries=("q7", "q8"))
    run = make_run({"q2": ["d3"], "q3": ["d5"], "q4": [], "q5": [], "q8": ["d1"], "q7": []}, failures={})
    result = score(dataset, run, parse_measures("R@2"))
    assert result.unjudged_queries == ["q8", "q7"]  # in run order, as for TREC qrels
    assert [q.query_id for q in result.queries] == ["q2", "q3", "q4", "q5"]
    assert result.means["R@2"].exact == Fraction(1, 2) and result.means["R@2"].eligible == 3  # (1/2 + 1 + 0) / 3
    assert result.complete
    # trec_eval ignores run-only queries anyway
    te = score(dataset, run, parse_measures("R@2"), get_policy("trec_eval"))
    assert [q.query_id for q in te.queries] == ["q2", "q3"]


def test_a_query_outside_both_the_query_set_and_the_declared_unjudged_is_still_rejected():
    dataset = make_dataset(S1, unjudged_queries=("q7",))
    run = make_run({"q2": ["d3"], "q3": [], "q4": [], "q5": [], "q7": ["d1"], "q999": ["d1"], "q998": []})
    with pytest.raises(InvalidInput) as err:
        score(dataset, run, parse_measures("R@2"))
    assert err.value.code == "E_RUN_UNKNOWN_QUERY" and err.value.where.query == "q999"
    assert "nor declared unjudged by the dataset; 2 such queries" in err.value.message


def test_a_query_of_another_split_is_rejected_even_when_the_dataset_declares_unjudged_queries():
    dataset = Dataset(**{**make_dataset(S1, unjudged_queries=("q7",)).__dict__,
                         "queries": (Query("q2", split="test"), Query("q3", split="test"), Query("q4", split="dev"),
                                     Query("q5", split="test"))})
    run = make_run({"q2": ["d3"], "q3": [], "q5": [], "q7": [], "q4": ["d6"]})
    with pytest.raises(InvalidInput) as err:
        score(dataset, run, parse_measures("R@2"), split="test")
    assert err.value.code == "E_RUN_UNKNOWN_QUERY" and err.value.where.query == "q4"
    result = score(dataset, make_run({"q2": ["d3"], "q7": []}), parse_measures("R@2"), split="test")
    assert result.unjudged_queries == ["q7"] and result.missing == ["q3", "q5"]


def test_no_relevant_query_is_null_in_strict_and_zero_in_trec_eval_c():
    run = make_run({"q2": ["d3", "d4"], "q3": ["d5"], "q4": ["d6"], "q5": ["d1"]})
    strict = score(make_dataset(S1), run, parse_measures("AP"))
    assert strict.means["AP"].exact == 1 and strict.means["AP"].eligible == 3
    te_c = score(make_dataset(S1), run, parse_measures("AP"), get_policy("trec_eval_c"))
    assert te_c.means["AP"].exact == Fraction(3, 4) and te_c.means["AP"].eligible == 4


def test_trec_eval_policy_averages_only_queries_in_the_run():
    run = make_run({"q2": ["d3", "d4"]})
    te = score(make_dataset(S1), run, parse_measures("R@2"), get_policy("trec_eval"))
    assert [q.query_id for q in te.queries] == ["q2"] and te.means["R@2"].exact == 1
    te_c = score(make_dataset(S1), run, parse_measures("R@2"), get_policy("trec_eval_c"))
    assert te_c.means["R@2"].exact == Fraction(1, 4)


def test_trec_eval_policy_reads_scores_as_float32_with_ties_by_docno_descending():
    # 1.00000002 and 1.00000001 are one float32: b wins the tie on docno, a drops to rank 2
    judgments = {"q1": {"a": 1, "b": 0}}
    run = make_run({"q1": [("a", 1.00000002), ("b", 1.00000001)]})
    strict = score(make_dataset(judgments), run, parse_measures("RR"))
    te = score(make_dataset(judgments), run, parse_measures("RR"), get_policy("trec_eval"))
    assert strict.means["RR"].exact == 1
    assert te.means["RR"].exact == Fraction(1, 2)


def test_ir_measures_policy_sorts_rr_at_k_ties_by_docno_ascending():
    judgments = {"q1": {"a": 1, "b": 0, "c": 0}}
    run = make_run({"q1": [("a", 1.0), ("b", 1.0), ("c", 1.0)]})
    irm = score(make_dataset(judgments), run, parse_measures("RR RR@10"), get_policy("ir_measures"))
    assert irm.queries[0].exact["RR"] == Fraction(1, 3)  # pytrec_eval: docno descending
    assert irm.queries[0].exact["RR@10"] == 1  # msmarco provider: docno ascending


def test_trec_eval_policy_ignores_the_rr_cutoff():
    judgments = {"q1": {"z": 1}}
    run = make_run({"q1": ["x", "y", "z"]})
    strict = score(make_dataset(judgments), run, parse_measures("RR@2"))
    te = score(make_dataset(judgments), run, parse_measures("RR@2"), get_policy("trec_eval"))
    assert strict.means["RR@2"].exact == 0
    assert te.means["RR@2"].exact == Fraction(1, 3)


def test_ndcg_ignores_the_threshold_in_strict_as_in_trec_eval():
    """Was: strict raised nDCG's grade floor to the threshold (only a earned gain); -l never touches ndcg."""
    judgments = {"q1": {"a": 2, "b": 1, "c": 0}}
    run = make_run({"q1": ["b", "a"]})
    strict = score(make_dataset(judgments, threshold=2), run, parse_measures("nDCG@2"))
    te = score(make_dataset(judgments, threshold=2), run, parse_measures("nDCG@2"), get_policy("trec_eval"))
    # b=1 and a=2 earn gain: DCG = 1 + 2/log2(3), IDCG = 2 + 1/log2(3)
    want = (1 + 2 / 1.584962500721156) / (2 + 1 / 1.584962500721156)
    assert strict.queries[0].values["nDCG@2"] == pytest.approx(want, abs=1e-12)
    assert te.queries[0].values["nDCG@2"] == pytest.approx(want, abs=1e-12)


def test_ndcg_is_null_only_without_a_positive_gain_whatever_the_threshold():
    """Threshold 2: q1 (grade 1 only) has no relevant document for R, but its grade-1 document earns nDCG gain."""
    judgments = {"q1": {"a": 1, "b": 0}, "q2": {"c": 0}, "q3": {"d": 2}}
    run = make_run({"q1": ["a"], "q2": ["c"], "q3": ["d"]})
    result = score(make_dataset(judgments, threshold=2), run, parse_measures("R@2 nDCG@2 nDCG(gains={1:0})@2"))
    values = {q.query_id: q.values for q in result.queries}
    assert values["q1"] == {"R@2": None, "nDCG@2": 1.0, "nDCG(gains={1:0})@2": None}
    assert values["q2"] == {"R@2": None, "nDCG@2": None, "nDCG(gains={1:0})@2": None}
    assert values["q3"] == {"R@2": 1.0, "nDCG@2": 1.0, "nDCG(gains={1:0})@2": 1.0}
    assert result.means["nDCG@2"].eligible == 2 and result.means["R@2"].eligible == 1
    zero = score(make_dataset(judgments, threshold=2), run, parse_measures("nDCG@2"), get_policy("trec_eval"))
    assert [q.values["nDCG@2"] for q in zero.queries] == [1.0, 0.0, 1.0]


def test_no_eligible_query_gives_null_means():
    run = make_run({"q5": []})
    result = score(make_dataset({"q5": {"d1": 0}}), run, parse_measures("R@2 nDCG@2"))
    assert result.means["R@2"].value is None and result.means["nDCG@2"].value is None


def test_empty_split_is_rejected():
    with pytest.raises(InvalidInput) as err:
        score(make_dataset(S1), make_run({}), parse_measures("R@2"), split="nope")
    assert err.value.code == "E_QUERY_SET_EMPTY"


def test_ir_measures_policy_lets_the_last_repeat_win_as_its_dict_does():
    # b 3.0, a 2.0, b 1.0: the dict keeps b=1.0, so a (relevant) ranks first
    judgments = {"q1": {"a": 1, "b": 0}}
    run = make_run({"q1": [("b", 3.0), ("a", 2.0), ("b", 1.0)]})
    irm = score(make_dataset(judgments), run, parse_measures("RR"), get_policy("ir_measures"))
    assert irm.queries[0].exact["RR"] == 1
    with pytest.raises(InvalidInput):
        score(make_dataset(judgments), run, parse_measures("RR"))
