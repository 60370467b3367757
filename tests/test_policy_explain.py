"""crosscheck --explain-policy: strict walked to the leaderboard scripts' policies (msmarco, beir), which no tool
can be run for, on golden/L1's inputs, whose figures golden/L1/expected.json works by hand from the scripts."""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

import trec_bridge as tb
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput

L1 = Path(__file__).resolve().parents[1] / "golden" / "L1"


def report(tmp_path, *args) -> tuple[int, dict]:
    out = tmp_path / "cc.json"
    code = main(["crosscheck", *args, "--json", str(out), "--repro-dir", str(tmp_path / "repro")])
    return code, json.loads(out.read_text())


def exact_sum(parts) -> Fraction:
    return sum(Fraction(p["exact"]) for p in parts)


def test_msmarco_walk_reads_the_rank_column_then_any_judgment_relevant(tmp_path):
    code, rep = report(tmp_path, str(L1 / "msmarco_qrels.txt"), str(L1 / "msmarco_run.txt"), "RR@10 AP",
                       "--explain-policy", "msmarco", "--against", "none")
    assert code == 2  # q3 is missing: incomplete under strict, every difference explained
    e = rep["explanations"]["msmarco"]
    rr = e["aggregates"]["RR@10"]
    # strict 2/3 (scores order the run); the script's 1/6 (golden/L1): the rank column alone takes
    # (1 + 1 + 0)/3 to (1/3 + 0 + 0)/3, and grade 0 passage 11 made relevant adds (1/2 - 1/3)/3
    assert rr["strict"] == pytest.approx(2 / 3) and rr["policy"] == pytest.approx(1 / 6)
    assert [(p["axis"], p["exact"]) for p in rr["parts"]] == [("run_order", "5/9"), ("relevance", "-1/18")]
    assert exact_sum(rr["parts"]) == Fraction(2, 3) - Fraction(1, 6)
    assert "AP" in e["not_computed"] and "AP" not in e["aggregates"]
    rows = {r["query_id"]: r for r in e["per_query"]}
    assert set(rows) == {"1", "2"}
    assert [p["axis"] for p in rows["1"]["parts"]] == ["run_order", "relevance"]
    assert rep["references"] == {} and "explanations" in rep


def test_beir_walk_drops_the_identical_ids(tmp_path):
    code, rep = report(tmp_path, str(L1 / "beir_qrels.txt"), str(L1 / "beir_run.txt"), "R@2 R_cap@2 P@2 nDCG@2",
                       "--explain-policy", "beir,msmarco", "--against", "pytrec_eval")
    assert code == 0
    beir = rep["explanations"]["beir"]["aggregates"]
    # golden/L1's beir means: R@2 5/8, R_cap@2 3/4, P@2 1/2 (q1 retrieved itself first; BEIR removes it)
    for measure, strict, script in (("R@2", "3/4", "5/8"), ("R_cap@2", "1", "3/4"), ("P@2", "3/4", "1/2")):
        agg = beir[measure]
        assert [p["axis"] for p in agg["parts"]] == ["identical_ids"]
        assert exact_sum(agg["parts"]) == Fraction(strict) - Fraction(script)
        assert agg["policy"] == pytest.approx(float(Fraction(script)))
    assert beir["nDCG@2"]["policy"] == pytest.approx(0.622038473168458)
    assert set(rep["explanations"]["msmarco"]["not_computed"]) == {"R@2", "R_cap@2", "P@2", "nDCG@2"}
    assert rep["references"]["pytrec_eval"]["available"]


def test_a_report_without_explain_policy_keeps_its_shape(tmp_path):
    _, rep = report(tmp_path, str(L1 / "beir_qrels.txt"), str(L1 / "beir_run.txt"), "P@2", "--against",
                    "pytrec_eval")
    assert "explanations" not in rep


@pytest.mark.parametrize("args", [["--explain-policy", "ir_measures"], ["--explain-policy", "nope"],
                                  ["--against", "none"], ["--explain-policy", ","]])
def test_what_explain_policy_refuses(args, tmp_path, capsys):
    code = main(["crosscheck", str(L1 / "beir_qrels.txt"), str(L1 / "beir_run.txt"), "P@2", *args,
                 "--repro-dir", str(tmp_path)])
    assert code == 1
    err = capsys.readouterr().err
    assert "[E_USAGE]" in err and "Traceback" not in err
    if args[1] == "ir_measures":
        assert "--against ir_measures" in err


def test_the_python_api_reads_a_run_file_by_rank_for_msmarco():
    by_path = tb.crosscheck(str(L1 / "msmarco_qrels.txt"), str(L1 / "msmarco_run.txt"), "RR@10", against="none",
                            explain_policy="msmarco")
    assert by_path.policy_table.to_dict("records") == [
        {"policy": "msmarco", "measure": "RR@10", "strict": pytest.approx(2 / 3), "value": pytest.approx(1 / 6),
         "axes": "run_order, relevance"}]
    # a Run object has no file to read again: the walk keeps the score reading and says so
    read = tb.crosscheck(str(L1 / "msmarco_qrels.txt"), tb.read_run(str(L1 / "msmarco_run.txt")), "RR@10",
                         against="none", explain_policy=["msmarco"])
    e = read.result.explanations[0]
    assert e.aggregates["RR@10"]["policy"] == pytest.approx(2 / 3)
    assert "disagrees with the scores on 2 queries (1, 2)" in e.notes[0]
    with pytest.raises(InvalidInput) as exc:
        tb.crosscheck({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, "RR@10", against="none")
    assert exc.value.code == "E_USAGE"


def test_an_explicit_order_is_the_walks_reading(tmp_path):
    _, rep = report(tmp_path, str(L1 / "msmarco_qrels.txt"), str(L1 / "msmarco_run.txt"), "RR@10",
                    "--explain-policy", "msmarco", "--against", "none", "--order", "rank")
    rr = rep["explanations"]["msmarco"]["aggregates"]["RR@10"]
    assert rr["strict"] == pytest.approx(1 / 9)  # strict on the rank-column reading: (1/3 + 0 + 0) / 3
    assert [p["axis"] for p in rr["parts"]] == ["relevance"]
