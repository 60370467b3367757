"""Issue 20: outputs people and pipelines read — the version, numbers that read well, summary formats,
per-query files.  Small inputs from tests/malformed/valid and golden/rag/kb; every command runs in-process."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from trec_bridge import __version__
from .conftest import run_cli

REPO = Path(__file__).resolve().parent.parent
VALID = REPO / "tests" / "malformed" / "valid"
KB = REPO / "golden" / "rag" / "kb"


def read_json(path: Path) -> dict:
    from converters.strict_json import parse_json

    return parse_json(path.read_bytes(), str(path))


def test_version_option_prints_the_package_version():
    code, out, err = run_cli("--version")
    assert code == 0, err
    assert out.strip() == f"trec-bridge {__version__}"


def test_every_json_report_names_the_version(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run_cli("score", KB / "dataset.json", KB / "run_1.json", "R@10 RR@20", "--json", a)[0] == 0
    assert run_cli("score", KB / "dataset.json", KB / "run_b.json", "R@10 RR@20", "--json", b)[0] == 0
    cmp, st = tmp_path / "cmp.json", tmp_path / "st.json"
    assert run_cli("compare", a, b, "--json", cmp, "--resamples", "100")[0] == 0
    assert run_cli("stages", KB / "dataset.json", "--stage", f"v={KB / 'stage_vector.json'}",
                   "--stage", f"m={KB / 'stage_merged.json'}", "--json", st)[0] in (0, 2)
    for path in (a, b, cmp, st):
        assert read_json(path)["tool"] == {"name": "trec-bridge", "version": __version__}, path


# ------------------------------------------------------------------ numbers that read well


def test_readable_exact_shows_short_fractions_and_the_float_otherwise():
    from fractions import Fraction

    from trec_bridge.numtext import readable_exact

    assert readable_exact("19/24", 19 / 24) == "19/24"
    assert readable_exact(Fraction(7, 10), 0.7) == "7/10"
    assert readable_exact("123456789/123456", 123456789 / 123456) == repr(123456789 / 123456)  # 16 characters
    long = Fraction(7033562522293845, 10**16 + 1)
    assert readable_exact(long, float(long)) == repr(float(long))
    assert readable_exact(None, 0.5) == ""


def test_floats_only_nulls_every_exact_value_and_says_so():
    from trec_bridge.numtext import floats_only

    report = {"means": {"AP": {"value": 0.5, "exact": "1/2"}}, "per_query": [{"exact": {"AP": "1/2"}}],
              "measures": [{"mean_delta_exact": "1/3", "mean_delta": 1 / 3, "per_query": [{"delta_exact": "1"}]}]}
    out = floats_only(report)
    assert out["numbers"] == "float"
    assert out["means"]["AP"] == {"value": 0.5, "exact": None}
    assert out["per_query"] == [{"exact": {"AP": None}}]
    assert out["measures"][0]["mean_delta_exact"] is None and out["measures"][0]["mean_delta"] == 1 / 3
    assert out["measures"][0]["per_query"] == [{"delta_exact": None}]
    assert report["means"]["AP"]["exact"] == "1/2"  # the input is not changed


def long_fraction_inputs(tmp_path: Path) -> tuple[Path, Path]:
    """AP over 7 queries with 1..7 relevant documents: the exact mean has a long denominator."""
    qrels, run = [], []
    for q in range(1, 8):
        for d in range(1, 31):
            qrels.append(f"q{q} 0 d{d} {1 if d % (q + 1) == 1 else 0}")
            run.append(f"q{q} Q0 d{d} {d} {40 - d} sys")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run.txt").write_text("\n".join(run) + "\n")
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


def test_terminal_shows_the_float_for_a_long_fraction_and_json_keeps_it(tmp_path):
    qrels, run = long_fraction_inputs(tmp_path)
    out_json = tmp_path / "r.json"
    code, out, err = run_cli("score", qrels, run, "AP P@3", "--json", out_json)
    assert code == 0, err
    exact = read_json(out_json)["means"]["AP"]["exact"]
    assert len(exact) > 15 and "/" in exact  # the JSON keeps the honest exact value
    ap_line = next(line for line in out.splitlines() if line.startswith("AP "))
    assert exact not in ap_line and "..." not in ap_line
    assert repr(read_json(out_json)["means"]["AP"]["value"]) in ap_line
    # P@3: q1 has d1 and d3 relevant (2/3), q2..q7 only d1 (1/3): (2/3 + 6/3) / 7 = 8/21, short: shown exactly
    assert "8/21" in next(line for line in out.splitlines() if line.startswith("P@3"))
    floats = tmp_path / "f.json"
    assert run_cli("score", qrels, run, "AP P@3", "--json", floats, "--json-floats")[0] == 0
    data = read_json(floats)
    assert data["numbers"] == "float" and data["means"]["AP"]["exact"] is None
    assert all(v is None for q in data["per_query"] for v in q["exact"].values())
    assert run_cli("compare", floats, out_json, "--resamples", "100")[0] == 0  # still a valid report


# ------------------------------------------------------------------ summary formats and per-query files
# tests/malformed/valid: q1 ranks d2 d1 d3 (d1 grade 1, d3 grade 2), q2 ranks d4 d5 (d4 grade 1):
# P@2 is 1/2 for both queries; AP is (1/2 + 2/3)/2 = 7/12 for q1 and 1 for q2, mean 19/24.


def test_summary_formats():
    args = ("score", VALID / "qrels.txt", VALID / "run.txt", "P@2 AP")
    tsv = run_cli(*args, "--format", "tsv")[1]
    assert tsv == "measure\tmean\texact\teligible\nP@2\t0.5\t1/2\t2\nAP\t0.7916666666666666\t19/24\t2\n"
    assert run_cli(*args, "--format", "csv")[1].splitlines()[2] == "AP,0.7916666666666666,19/24,2"
    md = run_cli(*args, "--format", "markdown")[1].splitlines()
    assert md[0] == "| measure | mean | exact | eligible |" and md[3] == "| AP | 0.7917 | 19/24 | 2 |"
    latex = run_cli(*args, "--format", "latex")[1]
    assert "\\begin{tabular}{lrrr}" in latex and "AP & 0.7917 & 19/24 & 2 \\\\" in latex
    from converters.strict_json import parse_json

    assert parse_json(run_cli(*args, "--format", "json")[1].encode())["means"]["AP"]["exact"] == "19/24"


def test_latex_and_markdown_escape_text_from_the_inputs():
    from trec_bridge.tables import render

    assert "q\\_1 \\& \\%x" in render(["query"], [["q_1 & %x"]], "latex")
    assert "| a\\|b |" in render(["query"], [["a|b"]], "markdown")


@pytest.mark.parametrize("name", ["pq.tsv", "pq.csv", "pq.parquet"])
def test_per_query_file_by_extension_leaves_stdout_alone(tmp_path, name):
    args = ("score", VALID / "qrels.txt", VALID / "run.txt", "P@2 AP")
    plain = run_cli(*args)[1]
    code, out, err = run_cli(*args, "--per-query", tmp_path / name)
    assert code == 0, err
    assert out == plain
    expected = [["q1", "P@2", "ranked", 0.5, "1/2", 2, 3], ["q1", "AP", "ranked", 7 / 12, "7/12", 2, 3],
                ["q2", "P@2", "ranked", 0.5, "1/2", 1, 2], ["q2", "AP", "ranked", 1.0, "1", 1, 2]]
    if name.endswith(".parquet"):
        import polars as pl

        frame = pl.read_parquet(tmp_path / name)
        assert frame.columns == ["query_id", "measure", "status", "value", "exact", "relevant", "retrieved"]
        assert [list(r) for r in frame.iter_rows()] == expected
    else:
        sep = "\t" if name.endswith(".tsv") else ","
        lines = (tmp_path / name).read_text().splitlines()
        assert lines[0] == sep.join(["query_id", "measure", "status", "value", "exact", "relevant", "retrieved"])
        assert lines[1:] == [sep.join(repr(v) if isinstance(v, float) else str(v) for v in row) for row in expected]


def test_per_query_file_shows_nulls_and_statuses(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 0\nq3 0 d3 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.0 s\nq2 Q0 d2 1 1.0 s\n")
    code, _, err = run_cli("score", qrels, run, "P@1", "--per-query", tmp_path / "pq.tsv")
    assert code == 2, err  # q3 missing
    assert (tmp_path / "pq.tsv").read_text().splitlines()[1:] == [
        "q1\tP@1\tranked\t1.0\t1\t1\t1", "q2\tP@1\tranked\t\t\t0\t1", "q3\tP@1\tmissing\t0.0\t0\t1\t0"]


def test_per_query_file_with_an_unknown_extension_is_refused_before_reading(tmp_path):
    code, out, err = run_cli("score", VALID / "qrels.txt", VALID / "run.txt", "P@2", "--per-query", tmp_path / "pq.xlsx")
    assert code == 1 and "E_USAGE" in err and ".parquet" in err
    assert not (tmp_path / "pq.xlsx").exists()


def test_crosscheck_summary_formats_name_each_tool_and_measure(tmp_path):
    code, out, err = run_cli("crosscheck", VALID / "qrels.txt", VALID / "run.txt", "P@2 AP", "--against",
                             "pytrec_eval", "--format", "tsv", "--repro-dir", tmp_path / "repro")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split("\t")[:3] == ["tool", "measure", "strict"]
    assert lines[2].split("\t")[:6] == ["pytrec_eval", "AP", "0.7916666666666666", "0.7916666666666666",
                                        "0.7916666666666666", "yes"]


def test_stages_text_shows_a_long_fraction_as_its_float():
    from trec_bridge.rag.stages import StageAnalysis, render_text

    long = "7033562522293845123/10000000000000000001"
    stage = {"name": "vector", "run": "v.json", "outcome": "complete", "missing_queries": [], "failed_queries": {},
             "recall": {"value": 0.7033562522293845, "exact": long, "eligible": 3}}
    short = {**stage, "name": "rerank", "recall": {"value": 0.5, "exact": "1/2", "eligible": 3}}
    data = {"measure": "R@10", "k": 10, "eligible": 3, "stages": [stage, short], "transitions": [], "per_query": []}
    text = render_text(StageAnalysis(10, ["vector", "rerank"], [], data))
    assert long not in text and "0.7033562522293845" in text and "1/2" in text
