"""Measure strings as users type them (issue 13 §2): commas, any letter case, repeats, suggestions."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput
from trec_bridge.measures import names, parse_measures

VALID = Path(__file__).resolve().parent / "malformed" / "valid"  # P@1 = 1/2, RR = 3/4


def texts(s: str) -> list[str]:
    return [str(m) for m in parse_measures(s)]


@pytest.mark.parametrize("typed,meant", [
    ("nDCG@10,P@10", ["nDCG@10", "P@10"]),
    ("nDCG@10, P@10", ["nDCG@10", "P@10"]),
    ("nDCG@10 ,P@10,,R@5 ", ["nDCG@10", "P@10", "R@5"]),
    ("nDCG(gains={1:1,2:3})@10,P@5", ["nDCG(gains={1:1,2:3})@10", "P@5"]),
    ("nDCG(gains={1:1, 2:3})@10, RR(rel=2)@5", ["nDCG(gains={1:1,2:3})@10", "RR(rel=2)@5"]),
])
def test_commas_separate_measures_outside_parentheses(typed, meant):
    assert texts(typed) == meant


@pytest.mark.parametrize("typed,meant", [
    ("mrr@10", "RR@10"), ("Mrr@10", "RR@10"), ("ndcg@10", "nDCG@10"), ("NDCG@10", "nDCG@10"), ("map", "AP"),
    ("Map@100", "AP@100"), ("hit@3", "Success@3"), ("success@3", "Success@3"), ("recall@100", "R@100"),
    ("r@100", "R@100"), ("p@5", "P@5"), ("rr(rel=2)@5", "RR(rel=2)@5"), ("judged@10", "Judged@10"),
    ("ap", "AP"), ("ndcg(dcg=exp-log2)@10", "nDCG(gain=exp)@10"),
])
def test_names_in_any_letter_case(typed, meant):
    assert texts(typed) == [meant]


def test_a_fold_shared_by_two_families_needs_its_exact_spelling(monkeypatch):
    monkeypatch.setitem(names.ALIASES, "Rr", "R")  # a spelling of R that folds like RR
    assert texts("RR@10 Rr@10") == ["RR@10", "R@10"]
    with pytest.raises(InvalidInput) as err:
        parse_measures("rr@10")
    assert err.value.code == "E_MEASURE_UNKNOWN"
    assert "did you mean RR@10 or " in err.value.message and " R@10" in err.value.message  # ERR@10, Rprec@10 are near


@pytest.mark.parametrize("typed,kept,note", [
    ("P@10 P@10", ["P@10"], "measure P@10 is listed twice: the repeat is dropped"),
    ("RR@10 MRR@10", ["RR@10"], "measure MRR@10 is RR@10, already listed: the repeat is dropped"),
    ("MRR@10,P@5,mrr@10", ["RR@10", "P@5"], "measure mrr@10 is RR@10, already listed as MRR@10: the repeat is dropped"),
    ("nDCG(gain=exp)@5 nDCG(dcg=exp-log2)@5", ["nDCG(gain=exp)@5"], "nDCG(dcg=exp-log2)@5 is nDCG(gain=exp)@5"),
])
def test_a_repeat_is_dropped_and_said(typed, kept, note):
    parsed = parse_measures(typed)
    assert [str(m) for m in parsed] == kept
    assert len(parsed.notes) == 1 and note in parsed.notes[0]


@pytest.mark.parametrize("typed,suggestion", [
    ("nDGC@10", "did you mean nDCG@10"), ("mrrr@10", "did you mean MRR@10"), ("succes@1", "did you mean Success@1?"),
    ("Recal@100", "did you mean Recall@100"),  # P_10 and ndcg_cut_10 are trec_eval's names now (issue 17 §2)
    ("nDGC(dcg=exp-log2)@5", "did you mean nDCG(dcg=exp-log2)@5"),
])
def test_an_unknown_name_gets_the_closest_spelling(typed, suggestion):
    with pytest.raises(InvalidInput) as err:
        parse_measures(f"R@5 {typed}")
    assert err.value.code == "E_MEASURE_UNKNOWN"
    # the closest spelling first (other close names of the trec_eval families, e.g. Rprec@100, may follow)
    assert suggestion.rstrip("?") in err.value.message, err.value.message


def test_a_bad_separator_is_named_not_taken_for_a_cutoff():
    with pytest.raises(InvalidInput) as err:
        parse_measures("nDCG@10;P@10")
    assert err.value.code == "E_CUTOFF" and "separate measures with spaces or commas" in err.value.message


def run_cli(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_score_cli_reads_commas_and_case_and_reports_a_dropped_repeat(capsys, tmp_path):
    out = tmp_path / "r.json"
    code, text, err = run_cli(capsys, "score", VALID / "qrels.txt", VALID / "run.txt", "p@1,RR, P@1,mrr", "--json", out)
    assert code == 0, err
    report = json.loads(out.read_text())
    assert report["measures"] == ["P@1", "RR"]
    assert report["means"]["P@1"]["exact"] == "1/2" and report["means"]["RR"]["exact"] == "3/4"
    assert report["notes"]["measures"] == ["measure P@1 is listed twice (first as p@1): the repeat is dropped",
                                           "measure mrr is RR, already listed: the repeat is dropped"]
    assert "trec-bridge: note: measure P@1 is listed twice (first as p@1): the repeat is dropped" in err
    assert "Traceback" not in err


def test_score_cli_suggests_a_spelling(capsys, tmp_path):
    code, _, err = run_cli(capsys, "score", VALID / "qrels.txt", VALID / "run.txt", "nDCG@10 Mrr@10 nDGC@10",
                           "--json", tmp_path / "r.json")
    assert code == 1 and not (tmp_path / "r.json").exists()
    assert err.strip().splitlines()[-1].startswith("trec-bridge: error: [E_MEASURE_UNKNOWN]")
    assert "did you mean nDCG@10" in err


def test_gate_keeps_the_notes_of_the_measure_list(capsys, tmp_path):
    kb = Path(__file__).resolve().parent.parent / "golden" / "rag" / "kb"
    out = tmp_path / "r.json"
    code, _, err = run_cli(capsys, "score", kb / "dataset.json", kb / "run_1.json", "R@3,r@3", "--gate",
                           kb / "thresholds_kb.toml", "--json", out)
    assert code == 0, err
    assert "measure r@3 is R@3, already listed" in err
    assert json.loads(out.read_text())["notes"]["measures"] == ["measure r@3 is R@3, already listed: the repeat is dropped"]


@pytest.mark.parametrize("typed,hint", [
    ("nDCG(gian=exp)@10", "did you mean gain=?"), ("nDCG(dgc=exp-log2)@10", "did you mean dcg=?"),
    ("RR(rell=2)@5", "did you mean rel=?"), ("P(gain=linear)@5", "it takes den, rel, relevant"),
])
def test_an_unknown_parameter_gets_the_closest_one(typed, hint):
    with pytest.raises(InvalidInput) as err:
        parse_measures(typed)
    assert err.value.code == "E_MEASURE_PARAM" and hint in err.value.message, err.value.message


def test_the_rag_measure_set_in_any_letter_case(capsys, tmp_path):
    kb = Path(__file__).resolve().parent.parent / "golden" / "rag" / "kb"
    out = tmp_path / "r.json"
    code, _, err = run_cli(capsys, "score", kb / "dataset.json", kb / "run_1.json", " RAG ", "--min-queries", "10",
                           "--json", out)
    assert code == 0, err
    report = json.loads(out.read_text())
    assert report["measures"] == ["R@3", "R@5", "R@10", "RR@20", "nDCG(gain=exp)@5", "nDCG(gain=exp)@10"]
    assert report["rag"]["added_measures"] == []


def test_avg_iprec_levels_round_trip_and_defaults():
    (m,) = parse_measures("AvgIPrec(levels=[0.2,0.5,0.8])")
    assert str(m) == "AvgIPrec(levels=[0.2,0.5,0.8])" and parse_measures(str(m)) == [m]
    assert parse_measures("AvgIPrec(levels=[0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1])") == parse_measures("AvgIPrec")
    assert parse_measures("11pt_avg.0.2,0.5,0.8") == [m]  # trec_eval's spelling of the same measure


@pytest.mark.parametrize("text", ["AvgIPrec(levels=[0.5,0.2])", "AvgIPrec(levels=[])", "AvgIPrec(levels=[1.5])",
                                  "AvgIPrec(levels=0.5)", "AvgIPrec(levels=[True])", "11pt_avg.0.8,0.2"])
def test_avg_iprec_levels_are_refused_out_of_order_or_range(text):
    with pytest.raises(InvalidInput) as info:
        parse_measures(text)
    assert info.value.code == "E_MEASURE_PARAM"
