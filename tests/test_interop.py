"""ir_measures namedtuples and DataFrames: same policy coming in, the run's order going out."""
from __future__ import annotations

import ir_measures
import numpy as np
import pandas as pd
import polars as pl
import pytest

from converters.interop import (
    qrels_from_dataframe, qrels_from_ir_measures, qrels_to_dataframe, qrels_to_ir_measures, run_from_dataframe,
    run_from_ir_measures, run_to_dataframe, run_to_ir_measures,
)
from trec_bridge.errors import InvalidInput, UsageError
from trec_bridge.model import RUN_SCHEMA, QueryOrder, Run

SD, QR = ir_measures.ScoredDoc, ir_measures.Qrel


def list_run(rankings: dict[str, list[str]]) -> Run:
    """A run whose order is its list order (like a JSON run), no scores."""
    q, d, r = [], [], []
    for qid, docs in rankings.items():
        for i, doc in enumerate(docs, 1):
            q.append(qid), d.append(doc), r.append(i)
    frame = pl.DataFrame({"query_id": q, "doc_id": d, "score": [None] * len(q), "rank": r}, schema=RUN_SCHEMA)
    return Run(frame=frame, queries=tuple(rankings))


def test_scored_docs_are_ordered_like_trec_eval():
    run = run_from_ir_measures([SD("q1", "a", 1.0), SD("q1", "b", 1.0), SD("q1", "c", 3), SD("q2", "x", 0.5)],
                               run_id="sys")
    assert run.frame.rows() == [("q1", "c", 3.0, 1), ("q1", "b", 1.0, 2), ("q1", "a", 1.0, 3), ("q2", "x", 0.5, 1)]
    assert run.queries == ("q1", "q2") and run.run_id == "sys" and run.order_source == "score"
    assert run.order == (QueryOrder("q1", 2, False), QueryOrder("q2", 0, False))


def test_plain_tuples_and_numpy_numbers_accepted():
    run = run_from_ir_measures([("q", "a", np.float32(0.5)), ("q", "b", np.int64(2))])
    assert run.frame.get_column("doc_id").to_list() == ["b", "a"]


def test_run_to_scored_docs_keeps_the_list_order_for_every_provider():
    run = list_run({"q1": ["d1", "d9", "d5"], "q2": ["z", "a"]})
    docs = run_to_ir_measures(run)
    assert [(x.query_id, x.doc_id, x.score) for x in docs] == [
        ("q1", "d1", 3.0), ("q1", "d9", 2.0), ("q1", "d5", 1.0), ("q2", "z", 2.0), ("q2", "a", 1.0)]
    back = run_from_ir_measures(docs)
    assert back.frame.select("query_id", "doc_id", "rank").equals(run.frame.select("query_id", "doc_id", "rank"))
    # pytrec_eval (RR) and msmarco (RR@10) providers agree because no score ties remain
    qrels = [QR("q1", "d5", 1), QR("q2", "a", 1)]
    rr = ir_measures.calc_aggregate([ir_measures.RR, ir_measures.RR @ 10], qrels, docs)
    assert rr[ir_measures.RR] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert rr[ir_measures.RR @ 10] == pytest.approx(rr[ir_measures.RR])


def test_real_scores_kept_when_they_order_the_query():
    run = run_from_ir_measures([SD("q", "a", 2.5), SD("q", "b", -1.0)])
    assert [x.score for x in run_to_ir_measures(run)] == [2.5, -1.0]
    tied = run_from_ir_measures([SD("q", "a", 1.0), SD("q", "b", 1.0)])
    assert [(x.doc_id, x.score) for x in run_to_ir_measures(tied)] == [("b", 2.0), ("a", 1.0)]
    assert [x.score for x in run_to_ir_measures(tied, exact_order=False)] == [1.0, 1.0]
    with pytest.raises(InvalidInput) as err:
        run_to_ir_measures(list_run({"q": ["a"]}), exact_order=False)
    assert err.value.code == "E_RUN_SCORE"


@pytest.mark.parametrize("items,code", [
    ([SD("q", "a", 1.0), SD("q", "a", 0.5)], "E_RUN_DUPLICATE_DOC"),
    ([SD("q", "a", float("nan"))], "E_RUN_SCORE"),
    ([SD("q", "a", float("inf"))], "E_RUN_SCORE"),
    ([SD("q", "a", None)], "E_RUN_SCORE"),
    ([SD("q", "a", True)], "E_RUN_SCORE"),
    ([SD("q", "a", "1.0")], "E_RUN_SCORE"),
])
def test_run_rejections(items, code):
    with pytest.raises(InvalidInput) as err:
        run_from_ir_measures(items)
    assert err.value.code == code
    assert err.value.where.query == "q" and err.value.where.doc == "a"


def test_ids_must_be_strings():
    with pytest.raises(UsageError):
        run_from_ir_measures([SD(7, "a", 1.0)])
    with pytest.raises(UsageError):
        qrels_from_ir_measures([QR("q", 7, 1)])


def test_dataframes_round_trip():
    run = list_run({"q1": ["a", "b"], "q2": ["c"]})
    df = run_to_dataframe(run)
    assert list(df.columns) == ["query_id", "doc_id", "score"]
    assert run_from_dataframe(df).frame.select("query_id", "doc_id").rows() == [("q1", "a"), ("q1", "b"), ("q2", "c")]
    assert run_from_dataframe(pl.DataFrame(df.to_dict("list"))).frame.height == 3  # polars too
    assert ir_measures.calc_aggregate([ir_measures.P @ 1], [QR("q1", "a", 1), QR("q2", "c", 1)], df)[
        ir_measures.P @ 1] == 1.0


def test_dataframe_rejections():
    with pytest.raises(UsageError) as err:
        run_from_dataframe(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"]}))
    assert "score" in err.value.message
    with pytest.raises(InvalidInput) as err:
        run_from_dataframe(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, np.nan]}))
    assert err.value.code == "E_RUN_SCORE"
    with pytest.raises(InvalidInput) as err:
        qrels_from_dataframe(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1.0]}))
    assert err.value.code == "E_QRELS_GRADE"
    with pytest.raises(InvalidInput) as err:
        qrels_from_dataframe(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [True]}))
    assert err.value.code == "E_QRELS_GRADE"


def test_qrels_round_trip_keeps_iteration_and_negative_grades():
    items = [QR("q1", "a", 2, "0"), QR("q1", "b", -1, "Q0"), QR("q2", "c", 0, "7")]
    qrels = qrels_from_ir_measures(items)
    assert qrels.frame.rows() == [("q1", "0", "a", 2), ("q1", "Q0", "b", -1), ("q2", "7", "c", 0)]
    assert qrels_to_ir_measures(qrels) == items
    df = qrels_to_dataframe(qrels)
    assert list(df.columns) == ["query_id", "doc_id", "relevance", "iteration"]
    assert qrels_from_dataframe(df).frame.equals(qrels.frame)
    assert qrels_from_ir_measures([("q", "d", np.int64(1))]).frame.rows() == [("q", "0", "d", 1)]


@pytest.mark.parametrize("items,code", [
    ([QR("q", "a", 1, "0"), QR("q", "a", 0, "1")], "E_QRELS_DUPLICATE"),
    ([QR("q", "a", 1.0, "0")], "E_QRELS_GRADE"),
    ([QR("q", "a", 0.5, "0")], "E_QRELS_GRADE"),
    ([QR("q", "a", True, "0")], "E_QRELS_GRADE"),
    ([QR("q", "a", "1", "0")], "E_QRELS_GRADE"),
])
def test_qrels_rejections(items, code):
    with pytest.raises(InvalidInput) as err:
        qrels_from_ir_measures(items)
    assert err.value.code == code
    assert (err.value.where.query, err.value.where.doc) == ("q", "a")


def test_empty_inputs():
    assert run_from_ir_measures([]).frame.height == 0
    assert qrels_from_ir_measures([]).frame.height == 0
