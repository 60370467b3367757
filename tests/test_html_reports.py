"""Issue 20 §1: one HTML report for any evaluation (score, crosscheck, compare), self-contained, escaped.

Before: ``score --html`` on an ordinary evaluation turned into the RAG acceptance report (adding R@3 ...
and a FAIL verdict); crosscheck had no --html at all.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_rag_html import f4, parse, rows_as_dicts
from .conftest import run_cli

HOSTILE = ['<script>alert(1)</script>', '"><img/src=x/onerror=alert(2)>', "q&amp;1", "q'x/\\y"]


@pytest.fixture
def hostile(tmp_path):
    """Qrels with hostile query IDs: the first has no relevant document (null), the last is missing from the run."""
    grades = [0, 1, 1, 1]
    (tmp_path / "qrels.txt").write_text("".join(f"{q}\t0\td{i}\t{g}\n" for i, (q, g) in enumerate(zip(HOSTILE, grades))))
    (tmp_path / "run<b>.txt").write_text("".join(f"{q}\tQ0\td{i}\t1\t2.0\tsys\n{q}\tQ0\tx{i}\t2\t1.0\tsys\n"
                                                 for i, q in enumerate(HOSTILE[:3])))
    return tmp_path


def read_json(path: Path) -> dict:
    from converters.strict_json import parse_json

    return parse_json(path.read_bytes(), str(path))


def test_score_html_is_the_evaluation_report_not_the_acceptance_one(hostile):
    html, js = hostile / "r.html", hostile / "r.json"
    code, _, err = run_cli("score", hostile / "qrels.txt", hostile / "run<b>.txt", "P@1 AP", "--html", html, "--json", js)
    assert code == 2, err  # the last query is missing
    report = read_json(js)
    assert report["measures"] == ["P@1", "AP"] and "rag" not in report  # nothing added
    page = parse(html, scripts=True)
    assert "acceptance" not in html.read_text().lower()
    assert {"inputs", "statuses", "summary", "per-query"} <= set(page.tables)
    summary = rows_as_dicts(page.tables["summary"])
    assert [(r["measure"], r["mean"]) for r in summary] == [(n, f4(report["means"][n]["value"])) for n in report["measures"]]
    rows = rows_as_dicts(page.tables["per-query"])
    assert [r["query"] for r in rows] == HOSTILE  # the IDs read back exactly as written
    assert [r["status"] for r in rows] == ["ranked", "ranked", "ranked", "missing"]
    assert rows[0]["P@1"] == "null" and rows[3]["AP"] == "0.0000"
    assert len(page.images) == 1
    assert all(len(r["sha256"]) == 64 for r in rows_as_dicts(page.tables["inputs"]))  # the inputs' fingerprints
    text = html.read_text()
    assert 'id="system"' in text  # the place for the system's description (issue 23)


def test_nothing_from_the_inputs_becomes_markup(hostile):
    html = hostile / "r.html"
    run_cli("score", hostile / "qrels.txt", hostile / "run<b>.txt", "P@1", "--html", html, "--json", hostile / "r.json")
    page = parse(html, scripts=True)
    assert page.scripts == 1  # only the page's own sorting script
    text = html.read_text()
    assert "<script>alert" not in text and "<img/src=x" not in text and "run<b>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "q&amp;amp;1" in text


def test_rag_options_still_choose_the_acceptance_report(tmp_path):
    kb = Path(__file__).resolve().parent.parent / "golden" / "rag" / "kb"
    html = tmp_path / "r.html"
    code, _, err = run_cli("score", kb / "dataset.json", kb / "run_1.json", "R@10", "--rag", "--min-queries", "1",
                           "--html", html)
    assert code == 0, err
    assert "RAG retrieval acceptance report" in html.read_text()


def test_crosscheck_html_shows_each_tool_and_each_differences_axis(hostile):
    html = hostile / "x.html"
    code, _, err = run_cli("crosscheck", hostile / "qrels.txt", hostile / "run<b>.txt", "P@1 AP", "--against",
                           "pytrec_eval", "--html", html, "--json", hostile / "x.json", "--repro-dir", hostile / "repro")
    assert code == 2, err  # explained, but the run is incomplete under strict
    report = read_json(hostile / "x.json")
    page = parse(html, scripts=True)
    assert [(r["input"], len(r["sha256"])) for r in rows_as_dicts(page.tables["inputs"])] == [("dataset", 64), ("run", 64)]
    tools = rows_as_dicts(page.tables["tools"])
    assert [t["tool"] for t in tools] == ["pytrec_eval"]
    summary = rows_as_dicts(page.tables["crosscheck-summary"])
    agg = report["references"]["pytrec_eval"]["aggregates"]
    assert [(r["measure"], r["strict"], r["reference"], r["axes"]) for r in summary] == [
        (m, f4(agg[m]["strict"]), f4(agg[m]["reference"]), ", ".join(p["axis"] for p in agg[m]["parts"]) or "-")
        for m in report["strict"]["measures"]]
    assert any(r["axes"] != "-" for r in summary)  # the missing query: strict counts it, pytrec_eval does not
    differences = rows_as_dicts(page.tables["differences"])
    assert differences and all(r["axes"] != "-" for r in differences)
    assert {r["query"] for r in differences} <= set(HOSTILE)
