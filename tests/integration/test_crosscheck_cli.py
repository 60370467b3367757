"""`trec-bridge crosscheck` end to end on small TREC files written in the test (no shared data).

Exit codes: 0 every difference explained; 1 usage or invalid input or a
missing tool; 2 incomplete run, all explained; 3 unexplained difference, with
a minimal reproducer (qrels.txt + run.txt of the smallest query) in --repro-dir.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from converters.trec_qrels import read_trec_qrels
from converters.trec_run import read_trec_run
from trec_bridge.cli.main import main
from trec_bridge.references import PytrecEval, find_binary, get

ALL = ["trec_eval", "pytrec_eval", "ir_measures"]
AVAILABLE = [t for t in ALL if get(t).available()]
needs_all = pytest.mark.skipif(len(AVAILABLE) < 3, reason=f"reference tools missing: {set(ALL) - set(AVAILABLE)}")

# q1: a tie (a, b at 1.0) and grades 0-2; q2: a float32 tie; q3: no relevant document; q9 is run-only
QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\nq2 0 y 0\nq3 0 z 0\n"
RUN = ("q1 Q0 a 1 1.0 r\nq1 Q0 b 2 1.0 r\nq1 Q0 c 3 0.5 r\nq2 Q0 y 1 1.00000002 r\nq2 Q0 x 2 1.00000001 r\n"
       "q3 Q0 z 1 3 r\nq9 Q0 z 1 3 r\n")
MEASURES = "P@5 RR RR@1 nDCG@5 AP Judged@5"


def files(tmp_path: Path, qrels: str = QRELS, run: str = RUN) -> tuple[str, str]:
    (tmp_path / "qrels.txt").write_text(qrels)
    (tmp_path / "run.txt").write_text(run)
    return str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")


@needs_all
def test_every_difference_explained_exits_0(tmp_path, capsys):
    q, r = files(tmp_path)
    code = main(["crosscheck", q, r, MEASURES, "--repro-dir", str(tmp_path / "repro")])
    out = capsys.readouterr().out
    assert code == 0
    assert out.rstrip().endswith("cross-check: every difference is explained")
    for tool in ALL:
        assert f"== {tool} " in out
    assert "RR@1 [msmarco]" in out and "measure_orderings" in out  # ir_measures' provider switch, attributed
    assert "rr_cutoff" in out and "no_relevant" in out
    assert "gain" not in out  # a plain nDCG is the tools' nDCG: no gain or gain-floor part any more
    assert "Judged@5                 not compared: trec_eval has no judged-fraction measure" in out
    assert not (tmp_path / "repro").exists()


@needs_all
def test_incomplete_run_exits_2_with_everything_explained(tmp_path, capsys):
    q, r = files(tmp_path, run="".join(line + "\n" for line in RUN.splitlines() if not line.startswith("q2 ")))
    code = main(["crosscheck", q, r, "P@5 AP nDCG@5"])
    out = capsys.readouterr().out
    assert code == 2
    assert "cross-check: every difference is explained" in out
    assert "query_set" in out  # trec_eval drops the missing q2 from its mean, ir_measures counts it 0


@needs_all
def test_json_report(tmp_path):
    q, r = files(tmp_path)
    out = tmp_path / "report.json"
    assert main(["crosscheck", q, r, MEASURES, "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["format"] == "trec-bridge.crosscheck" and report["version"] == 1
    assert report["outcome"] == "explained" and report["unexplained"] == []
    assert report["strict"]["missing_queries"] == [] and report["strict"]["unjudged_queries"] == ["q9"]
    assert set(report["references"]) == set(ALL)
    te, pte, irm = (report["references"][t] for t in ALL)
    assert te["policy"] == "trec_eval" and te["version"] == "9.0.4" and te["precision"] == 4
    assert pte["policy"] == "pytrec_eval" and pte["precision"] is None
    assert irm["policy"] == "ir_measures" and irm["served_by"]["RR@1"] == "msmarco"
    assert te["unsupported"] == {"Judged@5": "trec_eval has no judged-fraction measure"}
    assert te["served_by"]["RR@1"] == "recip_rank (cutoff ignored)"
    assert te["command"] and te["command"][0].startswith("trec_eval -q ")
    # aggregates: strict, reference, emulation, difference = strict - reference, and the parts that make it up
    for tool in ALL:
        for name, agg in report["references"][tool]["aggregates"].items():
            assert set(agg) == {"strict", "reference", "emulation", "agrees", "difference", "parts"}
            assert agg["agrees"]
            if agg["difference"] is not None and agg["parts"] and all(p["delta"] is not None for p in agg["parts"]):
                assert sum(p["delta"] for p in agg["parts"]) == pytest.approx(agg["difference"], abs=1e-4)
    ap = te["aggregates"]["AP"]
    # strict: q1 (ties by docno descending: b, a, c -> 7/12) and q2 (y, x -> 1/2) -> 13/24; q3 has no relevant
    # document: null for strict, 0 and counted for trec_eval -> 13/36
    assert ap["strict"] == pytest.approx(13 / 24) and ap["reference"] == pytest.approx(0.3611, abs=5e-5)
    assert [p["axis"] for p in ap["parts"]] == ["no_relevant"]
    assert ap["parts"][0]["exact"] == "13/72" and ap["parts"][0]["reason"] == "scored 0 and counted in the mean"
    rr1 = te["aggregates"]["RR@1"]
    assert [p["axis"] for p in rr1["parts"]] == ["rr_cutoff"]  # q3 is 0 at RR@1 either way
    # per-query rows: every row agrees; rows where strict differs carry their parts
    rows = te["per_query"]
    assert {(r_["query_id"], r_["measure"]) for r_ in rows} >= {("q1", "AP"), ("q2", "AP"), ("q3", "AP")}
    q3 = next(r_ for r_ in rows if r_["query_id"] == "q3" and r_["measure"] == "AP")
    assert q3["strict"] is None and q3["reference"] == 0 and q3["parts"] == [
        {"axis": "no_relevant", "reason": "scored 0 and counted in the mean", "delta": None, "from": None, "to": 0.0}]
    q2 = next(r_ for r_ in rows if r_["query_id"] == "q2" and r_["measure"] == "nDCG@5")
    assert "parts" not in q2 or q2["parts"]
    assert all(r_["agrees"] for t in ALL for r_ in report["references"][t]["per_query"])


def test_unexplained_difference_exits_3_and_writes_a_minimal_reproducer(tmp_path, monkeypatch, capsys):
    if "pytrec_eval" not in AVAILABLE:
        pytest.skip("pytrec_eval is not installed")
    original = PytrecEval.evaluate

    def tampered(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        result.per_query["AP"]["q2"] += 0.25  # a value our emulation cannot reproduce
        return result

    monkeypatch.setattr(PytrecEval, "evaluate", tampered)
    q, r = files(tmp_path)
    repro = tmp_path / "repro"
    report = tmp_path / "report.json"
    code = main(["crosscheck", q, r, "AP P@5", "--against", "pytrec_eval", "--repro-dir", str(repro),
                 "--json", str(report)])
    captured = capsys.readouterr()
    assert code == 3
    assert "cross-check: 1 UNEXPLAINED" in captured.out
    assert f"minimal reproducer in {repro / 'pytrec_eval'}/" in captured.err
    data = json.loads(report.read_text())
    assert data["outcome"] == "unexplained"
    assert data["unexplained"] == [{"tool": "pytrec_eval", "measure": "AP", "query_id": "q2", "reference": 0.75,
                                    "emulation": 0.5, "why": "values differ"}]
    # the reproducer holds only the query with the unexplained difference, as valid TREC files
    qrels_text = (repro / "pytrec_eval" / "qrels.txt").read_text()
    run_text = (repro / "pytrec_eval" / "run.txt").read_text()
    assert qrels_text == "q2 0 x 1\nq2 0 y 0\n"
    assert [line.split()[:3] for line in run_text.splitlines()] == [["q2", "Q0", "y"], ["q2", "Q0", "x"]]
    assert read_trec_qrels(repro / "pytrec_eval" / "qrels.txt").query_ids() == ["q2"]
    back = read_trec_run(repro / "pytrec_eval" / "run.txt")
    assert back.queries == ("q2",) and back.frame.get_column("score").to_list() == [1.00000002, 1.00000001]


def test_unknown_reference_tool_is_a_usage_error(tmp_path, capsys):
    q, r = files(tmp_path)
    code = main(["crosscheck", q, r, "AP", "--against", "trec_eval,no_such_tool"])
    err = capsys.readouterr().err
    assert code == 1
    assert "[E_USAGE]" in err and "no_such_tool" in err


def test_missing_trec_eval_binary_exits_1(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TREC_EVAL", str(tmp_path / "no-such-trec_eval"))
    q, r = files(tmp_path)
    code = main(["crosscheck", q, r, "AP", "--against", "trec_eval"])
    err = capsys.readouterr().err
    assert code == 1
    assert "[E_REFERENCE_UNAVAILABLE]" in err and "trec_eval" in err


@pytest.mark.skipif(find_binary() is None, reason="trec_eval binary not found")
def test_complete_flag_runs_trec_eval_with_c(tmp_path):
    q, r = files(tmp_path, run="".join(line + "\n" for line in RUN.splitlines() if not line.startswith("q2 ")))
    out = tmp_path / "report.json"
    assert main(["crosscheck", q, r, "AP", "--against", "trec_eval", "--complete", "--json", str(out)]) == 2
    te = json.loads(out.read_text())["references"]["trec_eval"]
    assert te["policy"] == "trec_eval_c" and te["command"][0].startswith("trec_eval -q -c ")
    # -c: the missing q2 counts 0 in the mean, like strict; only the no-relevant q3 differs
    assert [p["axis"] for p in te["aggregates"]["AP"]["parts"]] == ["no_relevant"]


# ---------------------------------------------------------------- emulations read the bytes the tool reads (issue 13 §3)

# Reciprocal-rank fusion: 1/12 as two doubles that are one float32. trec_eval reads them tied and puts the
# larger docno (the non-relevant NCT01109771) first: AP 0.5; read as doubles the relevant one is first: AP 1.
RRF_QRELS = "20 0 NCT00471692 2\n20 0 NCT01109771 0\n"
RRF_RUN = "20 Q0 NCT00471692 1 0.08333333333333334 rrf\n20 Q0 NCT01109771 2 0.08333333333333333 rrf\n"
needs_trec_eval = pytest.mark.skipif(find_binary() is None, reason="trec_eval binary not found")


def real_trec_eval_map(qrels: str, run: str) -> str:
    """What the real binary prints for map on these exact files."""
    import subprocess

    out = subprocess.run([find_binary(), "-m", "map", qrels, run], capture_output=True, text=True, check=True).stdout
    return out.split()[2]


def score_cli(capsys, *argv) -> dict:
    """``score ... --json``: the JSON report (exit code checked by the caller through the report)."""
    out = Path(argv[-1])
    assert main(["score", *argv[:-1], "--json", str(out)]) == 0
    capsys.readouterr()
    return json.loads(out.read_text())


def crosscheck_map(tmp_path, capsys, qrels: str, run: str) -> dict:
    report = tmp_path / "cc.json"
    code = main(["crosscheck", qrels, run, "AP", "--against", "trec_eval", "--json", str(report),
                 "--repro-dir", str(tmp_path / "repro")])
    capsys.readouterr()
    assert code == 0
    return json.loads(report.read_text())["references"]["trec_eval"]["aggregates"]["AP"]


@needs_trec_eval
def test_trec_json_trec_round_trip_is_read_by_trec_eval_as_the_original(tmp_path, capsys):
    """TREC -> JSON -> TREC keeps the scores, so trec_eval, --policy trec_eval and crosscheck all read 0.5."""
    q, r = files(tmp_path, RRF_QRELS, RRF_RUN)
    assert real_trec_eval_map(q, r) == "0.5000"
    json_run, back = tmp_path / "rrf.json", tmp_path / "back.run"
    assert main(["convert", "run", r, str(json_run), "--dataset-id", "trials"]) == 0
    assert main(["convert", "run", str(json_run), str(back)]) == 0
    assert back.read_text() == RRF_RUN  # line for line, here even byte for byte
    assert real_trec_eval_map(q, str(back)) == "0.5000"
    report = score_cli(capsys, q, str(back), "AP", "--policy", "trec_eval", str(tmp_path / "te.json"))
    assert report["means"]["AP"]["value"] == 0.5
    strict = score_cli(capsys, q, str(back), "AP", str(tmp_path / "strict.json"))
    assert strict["means"]["AP"]["value"] == 1.0  # the strict reading: doubles, the relevant document first
    agg = crosscheck_map(tmp_path, capsys, q, str(back))
    assert (agg["reference"], agg["emulation"], agg["strict"], agg["agrees"]) == (0.5, 0.5, 1.0, True)


@needs_trec_eval
def test_emulation_reads_the_file_not_the_sidecar(tmp_path, capsys):
    """A JSON run (its list order is its own) written to TREC gets n..1; the sidecar keeps the JSON scores.

    trec_eval reads the file's n..1 (AP 1); so must --policy trec_eval and the cross-check's reference column,
    not the sidecar's float32-equal originals (which read AP 0.5: the old, wrong emulation).
    """
    q, _ = files(tmp_path, RRF_QRELS, RRF_RUN)
    json_run, trec = tmp_path / "rrf.json", tmp_path / "rrf.run"
    json_run.write_text(json.dumps({"format": "trec-bridge.run", "version": 1, "dataset_id": "trials", "run_id": "rrf",
                                    "rankings": {"20": [{"doc_id": "NCT00471692", "score": 0.08333333333333334},
                                                        {"doc_id": "NCT01109771", "score": 0.08333333333333333}]}}))
    assert main(["convert", "run", str(json_run), str(trec)]) == 0
    err = capsys.readouterr().err
    assert "1 query written with scores n..1" in err and "'20'" in err and "float32" in err
    assert trec.read_text().split("\n")[0].split()[4] == "2"
    assert json.loads((tmp_path / "rrf.run.manifest.json").read_text())["original_scores"] == {
        "20": [0.08333333333333334, 0.08333333333333333]}
    assert real_trec_eval_map(q, str(trec)) == "1.0000"
    for policy in ("trec_eval", "trec_eval_c", "pytrec_eval", "ir_measures"):
        report = score_cli(capsys, q, str(trec), "AP", "--policy", policy, str(tmp_path / f"{policy}.json"))
        assert report["means"]["AP"]["value"] == 1.0, policy
    agg = crosscheck_map(tmp_path, capsys, q, str(trec))
    assert (agg["reference"], agg["emulation"], agg["agrees"]) == (1.0, 1.0, True)
    # and back to JSON, the sidecar gives the JSON's own scores again
    again = tmp_path / "again.json"
    assert main(["convert", "run", str(trec), str(again)]) == 0
    assert json.loads(again.read_text())["rankings"] == json.loads(json_run.read_text())["rankings"]


@needs_trec_eval
def test_convert_scores_option_chooses(tmp_path, capsys):
    """--scores keep writes the JSON's float32-equal scores (trec_eval then reads 0.5); order rewrites a TREC run's."""
    q, r = files(tmp_path, RRF_QRELS, RRF_RUN)
    json_run = tmp_path / "rrf.json"
    json_run.write_text(json.dumps({"format": "trec-bridge.run", "version": 1, "dataset_id": "trials", "run_id": "rrf",
                                    "rankings": {"20": [{"doc_id": "NCT00471692", "score": 0.08333333333333334},
                                                        {"doc_id": "NCT01109771", "score": 0.08333333333333333}]}}))
    kept = tmp_path / "kept.run"
    assert main(["convert", "run", str(json_run), str(kept), "--scores", "keep"]) == 0
    assert "keep their own scores" in capsys.readouterr().err
    assert kept.read_text() == RRF_RUN
    assert real_trec_eval_map(q, str(kept)) == "0.5000"
    ordered = tmp_path / "ordered.run"
    assert main(["convert", "run", r, str(ordered), "--scores", "order"]) == 0
    assert [line.split()[4] for line in ordered.read_text().splitlines()] == ["2", "1"]
    assert real_trec_eval_map(q, str(ordered)) == "1.0000"
    assert main(["convert", "run", r, str(tmp_path / "x.json"), "--dataset-id", "d", "--scores", "keep"]) == 1
