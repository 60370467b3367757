"""`nDCG@k` means what it means in trec_eval and ir_measures (policy §4, issue 13 §1).

The grade is the gain; exponential gain is asked for by name; the relevance
threshold never changes nDCG; the RAG acceptance method names its exponential
nDCG explicitly and says so when a linear one is given.  Figures: golden S4
(worked by hand in the shared spec) and NIST's DL19 summary.
"""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from converters.detect import load_dataset_any, load_run_any
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures
from trec_bridge.rag.tiers import default_thresholds
from trec_bridge.scorer import score

ROOT = Path(__file__).resolve().parent.parent
S4 = ROOT / "golden" / "S4"
S4_LINEAR, S4_EXP = 0.5799960084920718, 0.5741414090136012  # golden-scenarios.md S4, k = 3 (and 5: c is at ideal rank 3)
DL19 = "trec-dl-2019-passage-official"


def cli(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_spelling_of_a_gain_names_one_measure():
    linear = ["nDCG(dcg=log2)@3", "nDCG(dcg='log2')@3", "nDCG(gain=linear)@3"]
    exp = ["nDCG(dcg=exp-log2)@3", "nDCG(dcg='exp-log2')@3", "nDCG(gain=exp)@3", "nDCG(gain=EXP)@3"]
    assert {str(parse_measures(s)[0]) for s in linear} == {"nDCG(gain=linear)@3"}
    assert {str(parse_measures(s)[0]) for s in exp} == {"nDCG(gain=exp)@3"}
    result = score(load_dataset_any(S4 / "dataset.json"), load_run_any(S4 / "run.json"),
                   parse_measures("nDCG@3 nDCG(gain=linear)@3 nDCG(gain=exp)@3 nDCG(gains={1:1,2:3,3:7})@3"))
    by_name = {name: mean.value for name, mean in result.means.items()}
    assert by_name["nDCG@3"] == pytest.approx(S4_LINEAR, abs=1e-12)
    assert by_name["nDCG(gain=linear)@3"] == pytest.approx(S4_LINEAR, abs=1e-12)
    assert by_name["nDCG(gain=exp)@3"] == pytest.approx(S4_EXP, abs=1e-12)
    assert by_name["nDCG(gains={1:1,2:3,3:7})@3"] == pytest.approx(S4_EXP, abs=1e-12)


def test_ndcg_takes_no_rel_parameter():
    """ir_measures' nDCG has no rel (KeyError there); ours said nothing and raised the grade floor."""
    with pytest.raises(InvalidInput) as err:
        parse_measures("nDCG(rel=2)@10")
    assert err.value.code == "E_MEASURE_PARAM" and "gains={1:0}" in err.value.message


def test_the_threshold_changes_binary_measures_not_ndcg(capsys, tmp_path):
    values = []
    for rel in ("1", "2", "3"):
        out = tmp_path / f"r{rel}.json"
        code, _, err = cli(capsys, "score", S4 / "dataset.json", S4 / "run.json", "nDCG@3 nDCG(gain=exp)@3 P@3",
                           "--rel", rel, "--json", out)
        assert code == 0, err
        values.append({k: v["value"] for k, v in json.loads(out.read_text())["means"].items()})
    assert [v["P@3"] for v in values] == pytest.approx([2 / 3, 2 / 3, 1 / 3])
    assert [v["nDCG@3"] for v in values] == pytest.approx([S4_LINEAR] * 3, abs=1e-12)
    assert [v["nDCG(gain=exp)@3"] for v in values] == pytest.approx([S4_EXP] * 3, abs=1e-12)


def test_the_rag_method_names_its_exponential_ndcg():
    names = [str(m) for m in default_thresholds().measures()]
    assert names == ["R@3", "R@5", "R@10", "RR@20", "nDCG(gain=exp)@5", "nDCG(gain=exp)@10"]
    assert [str(m) for m in default_thresholds().triage.measures()] == ["R@10", "nDCG(gain=exp)@10"]


def test_gate_given_a_linear_ndcg_adds_the_methods_and_says_so(capsys, tmp_path):
    out = tmp_path / "r.json"
    code, text, err = cli(capsys, "score", S4 / "dataset.json", S4 / "run.json", "nDCG@5", "--gate",
                          "--min-queries", "1", "--json", out)
    report = json.loads(out.read_text())
    assert report["means"]["nDCG@5"]["value"] == pytest.approx(S4_LINEAR, abs=1e-12)
    rag = report["rag"]
    assert "nDCG(gain=exp)@5" in rag["added_measures"] and "nDCG@5" not in rag["added_measures"]
    tier = {t["measure"]: t for t in rag["tiers"]}
    assert "nDCG@5" not in tier
    assert tier["nDCG(gain=exp)@5"]["value"] == pytest.approx(S4_EXP, abs=1e-12)
    assert rag["triage"]["ndcg"]["measure"] == "nDCG(gain=exp)@10"
    assert any("nDCG@5" in w and "linear" in w and "nDCG(gain=exp)@5" in w for w in rag["warnings"]), rag["warnings"]
    assert "nDCG@5 in MEASURES has linear gain" in text
    assert code == 4  # S4's exponential nDCG@5 = 0.574 is below pass (0.65)


def test_a_thresholds_file_gating_a_linear_ndcg_is_said(capsys, tmp_path):
    table = tmp_path / "t.toml"
    table.write_text('min_queries = 1\n[measures."nDCG@3"]\nexcellent = 0.9\ngood = 0.7\npass = 0.5\n')
    out = tmp_path / "r.json"
    code, _, _ = cli(capsys, "score", S4 / "dataset.json", S4 / "run.json", "nDCG@3", "--gate", table, "--json", out)
    rag = json.loads(out.read_text())["rag"]
    assert code == 0 and [t["measure"] for t in rag["tiers"]] == ["nDCG@3"]
    assert rag["tiers"][0]["value"] == pytest.approx(S4_LINEAR, abs=1e-12)
    assert any("gates nDCG@3, with linear gain" in w for w in rag["warnings"]), rag["warnings"]


def _nist(shared: Path, run_id: str, measure: str) -> str:
    with open(shared / "runs" / DL19 / "nist_summary.tsv", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if (row["run_id"], row["summary"], row["measure"]) == (run_id, "trec_eval", measure):
                return row["value"]
    raise KeyError((run_id, measure))


def test_strict_ndcg_at_10_on_an_official_dl19_run_is_trec_evals(shared_data, capsys, tmp_path):
    """input.bm25base_p answers every judged query, so the strict query set is trec_eval's: 0.5058 (NIST)."""
    qrels = shared_data / "qrels" / "anserini-tools" / "qrels.dl19-passage.txt"
    run = shared_data / "runs" / DL19 / "input.bm25base_p.gz"
    assert _nist(shared_data, "bm25base_p", "ndcg_cut_10") == "0.5058"
    means = []
    for extra in ([], ["--rel", "2"]):
        out = tmp_path / "r.json"
        code, text, err = cli(capsys, "score", qrels, run, "nDCG@10 nDCG", *extra, "--json", out)
        assert code == 0, err
        report = json.loads(out.read_text())
        assert report["outcome"] == "complete" and report["means"]["nDCG@10"]["eligible"] == 43
        means.append(report["means"])
        assert re.search(r"^nDCG@10 +0\.5058 ", text, re.M), text
    assert f"{means[0]['nDCG@10']['value']:.4f}" == "0.5058"
    assert f"{means[0]['nDCG']['value']:.4f}" == _nist(shared_data, "bm25base_p", "ndcg")
    assert means[1] == means[0]  # --rel 2 (NIST's passages-eval level) does not change nDCG
    strict = score(load_dataset_any(qrels), load_run_any(run), parse_measures("nDCG@10"))
    from trec_bridge.references import get

    te = get("trec_eval")
    if not te.available():
        pytest.skip("trec_eval binary not found; the NIST figure above was checked")
    ref = te.evaluate(load_dataset_any(qrels).qrels, load_run_any(run), parse_measures("nDCG@10"))
    assert ref.served_by["nDCG@10"] == "ndcg_cut_10"
    per_query = ref.per_query["nDCG@10"]
    assert len(per_query) == 43
    for q in strict.queries:
        assert q.values["nDCG@10"] == pytest.approx(per_query[q.query_id], abs=5e-5), q.query_id


def test_the_ideal_ranking_is_the_best_gain_first_as_in_the_tools(capsys, tmp_path):
    """gains={1:3,2:1} is not monotone in the grade: the ideal puts grade 1 first (trec_eval sorts by gain).

    The old ideal sorted by grade, so nDCG was 1.0 where trec_eval prints 0.8056: an unexplained difference.
    """
    from trec_bridge.references import get

    missing = [t for t in ("trec_eval", "ir_measures") if not get(t).available()]
    if missing:
        pytest.skip(f"reference tools not installed: {missing}")
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq1 0 b 2\nq1 0 c 1\nq2 0 x 2\nq2 0 y 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 b 1 3 r\nq1 Q0 a 2 2 r\nq1 Q0 c 3 1 r\nq2 Q0 x 1 2 r\nq2 Q0 y 2 1 r\n")
    code, text, err = cli(capsys, "crosscheck", tmp_path / "q.txt", tmp_path / "r.txt",
                          "nDCG(gains={1:3,2:1}) nDCG(gains={1:3,2:1})@2", "--against", "trec_eval,ir_measures",
                          "--repro-dir", tmp_path / "repro")
    assert code == 0, text + err
    assert re.search(r"^nDCG\(gains=\{1:3,2:1\}\) +0\.8056 +0\.8056 +0\.8056 +yes", text, re.M), text
