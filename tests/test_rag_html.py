"""The HTML reports: self-contained, and their tables read back (html.parser) equal the JSON figures."""
from __future__ import annotations

import base64
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from trec_bridge.cli.main import main

KB = Path(__file__).resolve().parent.parent / "golden" / "rag" / "kb"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class Tables(HTMLParser):
    """Every <table id=...> as a list of rows (header row first), plus every <img src>."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.images: list[str] = []
        self.external: list[str] = []
        self.scripts = 0
        self._table = None
        self._row = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(a["id"], [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "img":
            self.images.append(a["src"])
        elif tag == "script":
            self.scripts += 1
        for key in ("src", "href"):
            if key in a and not a[key].startswith("data:"):
                self.external.append(a[key])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse(path: Path, scripts: bool = False) -> Tables:
    """``scripts``: the page may hold inline scripts (the reports with sortable tables); never an external one."""
    p = Tables()
    p.feed(path.read_text(encoding="utf-8"))
    assert (scripts or p.scripts == 0) and p.external == [], "the page must be self-contained"
    for src in p.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == PNG_MAGIC
    return p


def rows_as_dicts(table: list[list[str]]) -> list[dict]:
    header, *rows = table
    return [dict(zip(header, r)) for r in rows]


def f4(v) -> str:
    return "null" if v is None else f"{v:.4f}"


@pytest.fixture(scope="module")
def score_outputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    code = main(["score", str(KB / "dataset.json"), str(KB / "run_1.json"), "rag", "--gate", str(KB / "thresholds_kb.toml"),
                 "--repeat", str(KB / "run_2.json"), "--repeat", str(KB / "run_3.json"),
                 "--json", str(tmp / "r.json"), "--html", str(tmp / "r.html"), "--png-dir", str(tmp / "png")])
    assert code == 0
    return tmp, json.loads((tmp / "r.json").read_text())


def test_score_html_tables_equal_the_json(score_outputs):
    tmp, report = score_outputs
    page = parse(tmp / "r.html")
    rag = report["rag"]
    tiers = rows_as_dicts(page.tables["tiers"])
    assert [(t["measure"], t["mean"], t["exact"], t["tier"], t["excellent"], t["good"], t["pass"]) for t in tiers] == [
        (t["measure"], f4(t["value"]), t["exact"] or "", t["tier"], t["levels"]["excellent"], t["levels"]["good"],
         t["levels"]["pass"]) for t in rag["tiers"]]
    # and the hand figures of golden/rag/README.md
    assert [(t["measure"], t["exact"], t["tier"]) for t in tiers][:4] == [
        ("R@3", "7/10", "excellent"), ("R@5", "11/15", "good"), ("R@10", "11/15", "pass"), ("RR@20", "899/1320", "pass")]
    sample = rows_as_dicts(page.tables["sample"])
    assert sample == [{"eligible queries": "10", "minimum": "10", "statistically meaningful": "yes"}]
    repeats = rows_as_dicts(page.tables["repeats"])
    assert [r["measure"] for r in repeats] == report["measures"]
    r5 = repeats[1]
    assert (r5["run 1"], r5["run 2"], r5["run 3"], r5["mean"]) == ("0.7000", "0.7000", "0.8000", "0.7333")
    changed = rows_as_dicts(page.tables["changed"])
    assert [(c["query"], c["measure"]) for c in changed] == [
        (q["query_id"], m) for q in rag["repeats"]["changed_queries"] for m in q["measures"]]
    rr = next(c for c in changed if c["query"] == "k04" and c["measure"] == "RR@20")
    assert (rr["values by run"], rr["min"], rr["max"], rr["stdev"]) == ("1.0000 / 0.5000 / 1.0000", "0.5000", "1.0000", "0.2887")
    breakdown = rows_as_dicts(page.tables["breakdown"])
    assert [(b["tag"], b["queries"], b["eligible"]) for b in breakdown] == [
        (b["tag"], str(b["queries"]), str(b["eligible"])) for b in rag["breakdown"]]
    for row, b in zip(breakdown, rag["breakdown"]):
        assert [row[m] for m in report["measures"]] == [f4(b["means"][m]["value"]) for m in report["measures"]]
    for table_id, key in (("triage-recall", "recall"), ("triage-ndcg", "ndcg")):
        rows = rows_as_dicts(page.tables[table_id])
        expected = rag["triage"][key]["queries"]
        assert [r["query"] for r in rows] == [e["query_id"] for e in expected]
        assert [r["first relevant rank"] for r in rows] == [
            "none retrieved" if e["first_relevant_rank"] is None else str(e["first_relevant_rank"]) for e in expected]
    assert len(page.images) == 1
    assert "gate: PASS" in (tmp / "r.html").read_text()


def test_png_dir_holds_the_chart(score_outputs):
    tmp, _ = score_outputs
    png = (tmp / "png" / "tiers.png").read_bytes()
    assert png[:8] == PNG_MAGIC and len(png) > 5000


def test_stages_html(tmp_path):
    code = main(["stages", str(KB / "dataset.json"), "--stage", f"vector={KB / 'stage_vector.json'}",
                 "--stage", f"merged={KB / 'stage_merged.json'}", "--stage", f"rerank={KB / 'run_1.json'}", "--k", "3",
                 "--html", str(tmp_path / "s.html"), "--png-dir", str(tmp_path / "png")])
    assert code == 0
    page = parse(tmp_path / "s.html")
    recall = rows_as_dicts(page.tables["stage-recall"])
    assert [(r["stage"], r["exact"]) for r in recall] == [("vector", "3/5"), ("merged", "7/10"), ("rerank", "7/10")]
    loss = rows_as_dicts(page.tables["stage-loss"])
    assert [(r["from"], r["to"], r["relevant lost"], r["relevant gained"]) for r in loss] == [
        ("vector", "merged", "1", "2"), ("merged", "rerank", "1", "1")]
    lost = rows_as_dicts(page.tables["lost-docs"])
    assert [(r["query"], r["transition"], r["documents"]) for r in lost] == [
        ("k07", "merged -> rerank", "b07"), ("k09", "vector -> merged", "a09")]
    assert (tmp_path / "png" / "stages.png").read_bytes()[:8] == PNG_MAGIC
    assert len(page.images) == 1


def test_compare_html(tmp_path):
    reports = []
    for run in ("run_1.json", "run_b.json"):
        out = tmp_path / f"{run}.report.json"
        main(["score", str(KB / "dataset.json"), str(KB / run), "R@5 RR@20", "--json", str(out)])
        reports.append(str(out))
    assert main(["compare", *reports, "--html", str(tmp_path / "c.html"), "--json", str(tmp_path / "c.json"),
                 "--png-dir", str(tmp_path / "png")]) == 0
    cmp = json.loads((tmp_path / "c.json").read_text())
    page = parse(tmp_path / "c.html", scripts=True)
    pairs = rows_as_dicts(page.tables["pairs"])
    measures = cmp["pairs"][0]["measures"]
    assert [(s["measure"], s["wins"], s["losses"], s["ties"], s["mean delta"]) for s in pairs] == [
        (m["measure"], str(m["wins"]), str(m["losses"]), str(m["ties"]), f4(m["mean_delta"])) for m in measures]
    assert pairs[1]["Wilcoxon p"] == "0.4375" and pairs[1]["permutation p"] == "0.3125"
    per_query = rows_as_dicts(page.tables["per-query-RR@20"])
    assert [(r["query"], r["delta"]) for r in per_query] == [
        (r["query_id"], f4(r["delta"])) for r in measures[1]["per_query"]]
    assert len(page.images) == 2
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == ["delta_RR_20.png", "delta_R_5.png"]
