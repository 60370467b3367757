"""Issue 21 §1: many runs against one dataset in one command (score-many) and in the API (Evaluator.score_many).

Hand-worked figures (threshold 1; qrels q1: d1=1, d2=0, d3=2; q2: d4=1):
  run a: q1 d1 d2 d3, q2 d4 -> P@1 (1+1)/2 = 1; RR 1; AP q1 (1/1 + 2/3)/2 = 5/6, q2 1 -> 11/12
  run b: q1 d2 d3, q2 d5 d4 -> P@1 0; RR (1/2 + 1/2)/2 = 1/2; AP q1 (1/2)/2 = 1/4, q2 1/2 -> 3/8
  run c: q1 lists d2 twice -> invalid, E_RUN_DUPLICATE_DOC
Before this change `score-many` did not exist (argparse: invalid choice) and Evaluator had no score_many.
"""
from __future__ import annotations

import json
from fractions import Fraction

import pytest

from .conftest import run_cli

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\n"
RUNS = {
    "a.trec": "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\nq2 Q0 d4 1 1.0 a\n",
    "b.trec": "q1 Q0 d2 1 3.0 b\nq1 Q0 d3 2 2.0 b\nq2 Q0 d5 1 1.0 b\nq2 Q0 d4 2 0.5 b\n",
}
BAD = "q1 Q0 d2 1 3.0 c\nq1 Q0 d2 2 2.0 c\n"
MEASURES = "P@1 RR AP"


@pytest.fixture
def work(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, text in RUNS.items():
        (runs / name).write_text(text)
    return tmp_path


def _rows(tsv: str) -> dict[str, list[str]]:
    lines = tsv.splitlines()
    assert lines[0] == "run\tstatus\tP@1\tRR\tAP"
    return {line.split("\t")[0].rsplit("/", 1)[-1]: line.split("\t")[1:] for line in lines[1:]}


def test_hand_worked_means_and_reports_equal_to_score_alone(work):
    runs = [work / "runs" / n for n in RUNS]
    code, out, err = run_cli("score-many", work / "qrels.txt", *runs, "-m", MEASURES, "--format", "tsv",
                             "--json-dir", work / "reports", "--jobs", "1")
    assert code == 0, err
    rows = _rows(out)
    assert rows["a.trec"] == ["complete", "1.0", "1.0", repr(11 / 12)]
    assert rows["b.trec"] == ["complete", "0.0", "0.5", "0.375"]
    for run in runs:
        alone = work / f"{run.name}.alone.json"
        assert run_cli("score", work / "qrels.txt", run, MEASURES, "--json", alone)[0] == 0
        assert (work / "reports" / f"{run.name}.json").read_bytes() == alone.read_bytes()
    report = json.loads((work / "reports" / "a.trec.json").read_text())
    assert Fraction(report["means"]["AP"]["exact"]) == Fraction(11, 12)


def test_a_bad_run_is_reported_and_the_others_are_scored(work):
    (work / "runs" / "c.trec").write_text(BAD)
    code, out, err = run_cli("score-many", work / "qrels.txt", work / "runs", "-m", MEASURES, "--format", "tsv",
                             "--json-dir", work / "reports", "--jobs", "1")
    assert code == 1
    rows = _rows(out)
    assert rows["c.trec"] == ["invalid E_RUN_DUPLICATE_DOC", "", "", ""]
    assert rows["b.trec"][:3] == ["complete", "0.0", "0.5"]
    assert "E_RUN_DUPLICATE_DOC" in err and "c.trec" in err
    assert sorted(p.name for p in (work / "reports").iterdir()) == ["a.trec.json", "b.trec.json"]


def test_an_incomplete_run_exits_2(work):
    (work / "runs" / "a.trec").write_text("q1 Q0 d1 1 3.0 a\n")  # q2 missing
    code, out, _ = run_cli("score-many", work / "qrels.txt", work / "runs", "-m", "P@1", "--format", "tsv",
                           "--jobs", "1")
    assert code == 2
    assert _rows_p1(out)["a.trec"] == ["incomplete", "0.5"]


def _rows_p1(tsv: str) -> dict[str, list[str]]:
    return {line.split("\t")[0].rsplit("/", 1)[-1]: line.split("\t")[1:] for line in tsv.splitlines()[1:]}


def test_a_bad_dataset_scores_nothing(work):
    (work / "qrels.txt").write_text("q1 0 d1 x\n")
    code, out, err = run_cli("score-many", work / "qrels.txt", work / "runs", "-m", "P@1", "--json-dir",
                             work / "reports", "--jobs", "1")
    assert code == 1 and out == "" and "E_QRELS_GRADE" in err
    assert not (work / "reports").exists()


def test_jobs_1_and_2_give_the_same_output(work):
    (work / "runs" / "c.trec").write_text(BAD)
    outputs = []
    for jobs in ("1", "2"):
        reports = work / f"reports{jobs}"
        code, out, err = run_cli("score-many", work / "qrels.txt", f"{work}/runs/*.trec", "-m", MEASURES,
                                 "--json-dir", reports, "--jobs", jobs)
        assert code == 1
        outputs.append((out, err, {p.name: p.read_bytes() for p in reports.iterdir()}))
    assert outputs[0] == outputs[1]
    assert len(outputs[0][2]) == 2


def test_a_glob_that_matches_nothing_is_refused(work):
    code, _, err = run_cli("score-many", work / "qrels.txt", f"{work}/runs/*.nothing", "-m", "P@1")
    assert code == 1 and "E_FILE_NOT_FOUND" in err


def test_two_runs_with_one_file_name_cannot_share_the_report_folder(work):
    (work / "other").mkdir()
    (work / "other" / "a.trec").write_text(RUNS["a.trec"])
    code, _, err = run_cli("score-many", work / "qrels.txt", work / "runs" / "a.trec", work / "other" / "a.trec",
                           "-m", "P@1", "--json-dir", work / "reports", "--jobs", "1")
    assert code == 1 and "E_USAGE" in err and "same file" in err


def test_api_score_many_in_two_processes_equals_scoring_each_alone(work):
    import trec_bridge as tb

    ev = tb.Evaluator(work / "qrels.txt", MEASURES)
    runs = {"a": work / "runs" / "a.trec", "b": {"q1": {"d2": 3.0, "d3": 2.0}, "q2": {"d5": 1.0, "d4": 0.5}},
            "bad": {"q1": {"d1": float("nan")}}}
    many = ev.score_many(runs, jobs=2)
    assert set(many.results) == {"a", "b"}
    assert many.errors["bad"]["code"] == "E_RUN_SCORE"
    assert many.results["a"].exact == ev.score(runs["a"]).exact == {"P@1": 1, "RR": 1, "AP": Fraction(11, 12)}
    assert many.results["b"].exact == {"P@1": 0, "RR": Fraction(1, 2), "AP": Fraction(3, 8)}
    assert many.results["a"].result.protocol_fingerprint == ev.score(runs["a"]).result.protocol_fingerprint


def test_a_report_that_cannot_be_written_leaves_no_report_and_no_temporary_file(work, monkeypatch):
    """The reports are written in parallel (outputs.Outputs.stage_many); one failing write writes none of them."""
    from trec_bridge import outputs

    real = outputs.Outputs._write

    def failing(fd, tmp, shown, content, mode):
        if shown.endswith("b.trec.json"):
            content = lambda fh: (_ for _ in ()).throw(OSError(28, "No space left on device"))  # noqa: E731
        real(fd, tmp, shown, content, mode)

    monkeypatch.setattr(outputs.Outputs, "_write", staticmethod(failing))
    code, out, err = run_cli("score-many", work / "qrels.txt", work / "runs", "-m", MEASURES, "--json-dir",
                             work / "reports", "--jobs", "1")
    assert code == 1 and "[E_OUTPUT]" in err and "No space left on device" in err and "b.trec.json" in err
    assert not (work / "reports").exists()
    assert not [p for p in work.rglob("*.tmp")]

