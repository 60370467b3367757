"""The leaderboard policies' readings one by one (golden/L1 holds the hand-worked script figures)."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from trec_bridge.cli.main import main
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Dataset, Qrels, Query, Run
from trec_bridge.policy import get_policy
from trec_bridge.scorer import score

L1 = Path(__file__).resolve().parent.parent / "golden" / "L1"


def dataset(judgments) -> Dataset:
    qrels = Qrels(pl.DataFrame([(q, "0", d, g) for q, d, g in judgments], schema=QRELS_SCHEMA, orient="row"))
    return Dataset(queries=tuple(Query(q) for q in qrels.query_ids()), qrels=qrels, query_source="qrels")


def run_of(rankings) -> Run:
    rows = [(q, d, s, i) for q, docs in rankings for i, (d, s) in enumerate(docs, 1)]
    return Run(pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), queries=tuple(q for q, _ in rankings))


def values(result, measure: str) -> dict:
    return {q.query_id: q.exact[measure] for q in result.queries}


def test_capped_recall_divides_by_the_smaller_of_relevant_and_k():
    ds = dataset([("a", f"d{i}", 1) for i in range(5)] + [("b", "x", 1), ("c", "y", 0)])
    run = run_of([("a", (("d0", 3.0), ("d1", 2.0), ("z", 1.0))), ("b", (("z", 2.0), ("x", 1.0))),
                  ("c", (("y", 1.0),))])
    got = values(score(ds, run, parse_measures("R_cap@2 R@2")), "R_cap@2")
    assert got["a"] == 1 and got["b"] == 1 and got["c"] is None  # 2/min(5,2); 1/min(1,2); no relevant: null
    assert values(score(ds, run, parse_measures("R@2")), "R@2")["a"] == pytest.approx(2 / 5)


def test_identical_ids_are_dropped_and_the_rest_moves_up():
    ds = dataset([("q", "q", 1), ("q", "d", 1)])
    run = run_of([("q", (("q", 2.0), ("x", 1.5), ("d", 1.0)))])
    assert values(score(ds, run, parse_measures("RR@2")), "RR@2")["q"] == 1
    beir = score(ds, run, parse_measures("RR@2 P@2"), get_policy("beir"))
    assert values(beir, "RR@2")["q"] == pytest.approx(0.5) and values(beir, "P@2")["q"] == pytest.approx(0.5)
    assert beir.queries[0].retrieved == 2  # the ranking's length lost the query itself


def test_any_judgment_is_relevant_under_msmarco_even_grade_zero_and_negative():
    ds = dataset([("q", "a", 0), ("q", "b", -1), ("p", "c", 2)])
    run = run_of([("q", (("z", 3.0), ("b", 2.0), ("a", 1.0))), ("p", (("c", 1.0),))])
    got = values(score(ds, run, parse_measures("RR@10"), get_policy("msmarco")), "RR@10")
    assert got == {"q": pytest.approx(0.5), "p": 1}
    assert values(score(ds, run, parse_measures("RR@10")), "RR@10")["q"] is None  # strict: no relevant document


def test_msmarco_reads_the_rank_column_unless_order_says_otherwise(tmp_path, capsys):
    qrels, run = str(L1 / "msmarco_qrels.txt"), str(L1 / "msmarco_run.txt")
    means = {}
    for extra in ([], ["--order", "score"]):
        out = tmp_path / f"r{len(extra)}.json"
        assert main(["score", qrels, run, "RR@10", "--policy", "msmarco", "--json", str(out)] + extra) == 2
        means[tuple(extra)] = json.loads(out.read_text())["means"]["RR@10"]["exact"]
    capsys.readouterr()
    assert means[()] == "1/6" and means[("--order", "score")] == "2/3"  # by score: 10 and 20 come first


def test_ranx_is_a_known_policy_for_score(tmp_path, capsys):
    qrels, run = str(L1 / "beir_qrels.txt"), str(L1 / "beir_run.txt")
    assert main(["score", qrels, run, "P@2", "--policy", "ranx"]) == 0
    assert "policy ranx" in capsys.readouterr().out
