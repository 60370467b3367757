"""Issue 20 §2: compare of N systems — every pair, the multiple-testing correction, the winner table,
intersection of measure lists, protocol mismatches named by part, the footnote and p-values as printed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from trec_bridge.multitest import adjust
from .conftest import run_cli

KB = Path(__file__).resolve().parent.parent / "golden" / "rag" / "kb"
RUNS = ["run_1.json", "run_b.json", "run_2.json"]


def read_json(path: Path) -> dict:
    from converters.strict_json import parse_json

    return parse_json(path.read_bytes(), str(path))


# ------------------------------------------------------------------ the corrections

P = [0.01, 0.04, 0.03, 0.005, None, 0.2]


def test_holm_by_hand():
    # sorted: 0.005 (x5), 0.01 (x4), 0.03 (x3), 0.04 (x2), 0.2 (x1) -> 0.025, 0.04, 0.09, 0.08 -> running max 0.09, 0.2
    assert adjust(P, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.025, None, 0.2])
    assert adjust(P, "holm")[4] is None


def test_bonferroni_by_hand_and_capped():
    assert adjust(P, "bonferroni") == pytest.approx([0.05, 0.2, 0.15, 0.025, None, 1.0])


def test_benjamini_hochberg_is_scipys():
    family = [p for p in P if p is not None]
    expected = stats.false_discovery_control(family, method="bh")
    got = [p for p in adjust(P, "bh") if p is not None]
    assert got == pytest.approx(list(expected), abs=1e-15)
    rng = np.random.default_rng(3)
    many = list(rng.uniform(0, 0.2, 57))
    assert adjust(many, "bh") == pytest.approx(list(stats.false_discovery_control(many)), abs=1e-15)


def test_none_leaves_the_p_values():
    assert adjust(P, "none") == P


# ------------------------------------------------------------------ N systems


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reports")
    out = []
    for run in RUNS:
        path = folder / f"{run}.report.json"
        assert run_cli("score", KB / "dataset.json", KB / run, "R@5 RR@20", "--json", path)[0] == 0
        out.append(path)
    return out


def test_three_systems_every_pair_corrected_together(reports, tmp_path):
    out = tmp_path / "c.json"
    code, text, err = run_cli("compare", *reports, "--json", out, "--resamples", "200")
    assert code == 0, err
    cmp = read_json(out)
    assert [s["label"] for s in cmp["systems"]] == ["run_1", "run_b", "run_2"]
    assert [(p["a"], p["b"]) for p in cmp["pairs"]] == [("run_1", "run_b"), ("run_1", "run_2"), ("run_b", "run_2")]
    assert cmp["correction"]["method"] == "holm" and cmp["correction"]["family"] == 6
    for key in ("t_test", "wilcoxon", "permutation"):
        cells = [m[key] for p in cmp["pairs"] for m in p["measures"]]
        assert [c.get("pvalue_adjusted") for c in cells] == adjust([c.get("pvalue") for c in cells], "holm")
    assert "Holm" in text and "6 tests" in text  # the choice is printed


def test_winner_marks_follow_the_adjusted_p_values(reports, tmp_path):
    out = tmp_path / "c.json"
    assert run_cli("compare", *reports, "--json", out, "--resamples", "200", "--correction", "none",
                   "--alpha", "0.5")[0] == 0
    cmp = read_json(out)
    for w in cmp["winners"]:
        for cell in w["cells"]:
            for loser in cell["better_than"]:
                pair = next(p for p in cmp["pairs"] if {p["a"], p["b"]} == {cell["system"], loser})
                m = next(m for m in pair["measures"] if m["measure"] == w["measure"])
                assert m["t_test"]["pvalue_adjusted"] < 0.5
                assert (m["mean_delta"] > 0) == (pair["b"] == cell["system"])
    assert any(c["better_than"] for w in cmp["winners"] for c in w["cells"])


def test_markdown_and_latex_winner_tables(reports, tmp_path):
    code, _, err = run_cli("compare", *reports, "--resamples", "200", "--latex", tmp_path / "t.tex",
                           "--markdown", tmp_path / "t.md", "--label", "base", "--label", "B_1", "--label", "two")
    assert code == 0, err
    tex = (tmp_path / "t.tex").read_text()
    assert "\\begin{tabular}{lrr}" in tex and "(b) B\\_1 &" in tex and "Holm" in tex
    md = (tmp_path / "t.md").read_text().splitlines()
    assert md[0] == "| system | R@5 | RR@20 |" and md[2].startswith("| (a) base |")


def test_measure_lists_that_differ_are_compared_on_their_intersection(tmp_path, reports):
    other = tmp_path / "other.json"
    assert run_cli("score", KB / "dataset.json", KB / "run_b.json", "RR@20 R@10", "--json", other)[0] == 0
    code, text, err = run_cli("compare", reports[0], other, "--json", tmp_path / "c.json", "--resamples", "50")
    assert code == 0, err
    assert read_json(tmp_path / "c.json")["measures"] == ["RR@20"]
    assert "measures they share" in text


def test_a_protocol_mismatch_names_the_part_that_differs(tmp_path, reports):
    other = tmp_path / "rel2.json"
    assert run_cli("score", KB / "dataset.json", KB / "run_b.json", "R@5 RR@20", "--rel", "2", "--json", other)[0] == 0
    code, _, err = run_cli("compare", reports[0], other)
    assert code == 1 and "[E_COMPARE_PROTOCOL]" in err
    assert "differ in threshold" in err and "relevance threshold 1 vs relevance threshold 2" in err
    assert "queries" not in err.split("differ in")[1].split("(")[0]


def test_dataset_and_runs_directly_equal_the_reports(reports, tmp_path):
    direct, via = tmp_path / "direct.json", tmp_path / "via.json"
    assert run_cli("compare", "--dataset", KB / "dataset.json", *[KB / r for r in RUNS], "--measure", "R@5 RR@20",
                   "--resamples", "100", "--json", direct)[0] == 0
    assert run_cli("compare", *reports, "--resamples", "100", "--json", via)[0] == 0
    a, b = read_json(direct), read_json(via)
    assert a["pairs"] == b["pairs"] and a["winners"] == b["winners"]


def test_exact_footnote_only_when_a_row_is_marked(reports):
    # 10 queries: 2^10 = 1024 sign patterns; 200 resamples is a random test, no row is exact
    text = run_cli("compare", *reports[:2], "--resamples", "200")[1]
    assert "exact randomization" not in text
    text = run_cli("compare", *reports[:2], "--resamples", "2000")[1]
    assert "exact randomization" in text


def test_html_prints_p_values_as_the_text_does(reports, tmp_path):
    from trec_bridge.compare_text import pair_rows

    page = tmp_path / "c.html"
    assert run_cli("compare", *reports, "--resamples", "200", "--html", page, "--json", tmp_path / "c.json")[0] == 0
    html = page.read_text()
    cmp = read_json(tmp_path / "c.json")
    for row in pair_rows(cmp):
        assert f">{row[8]}<" in html  # the t-test p exactly as the terminal prints it
    from trec_bridge.html_page import cell_html
    from trec_bridge.html_report import _p

    assert cell_html(_p({"pvalue": 2.054e-08})) == '<td class="num" data-sort="2.054e-08">2.054e-08</td>'  # was 0.0000
    assert cell_html(_p({"pvalue": None})).endswith(">n/a</td>")
