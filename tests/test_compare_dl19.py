"""Issue 20, done-when: compare of the 9 official TREC DL 2019 passage runs gives the corrected table and LaTeX.

The Holm adjustment is checked against a hand computation written here
independently (Holm 1979: the i-th smallest p times m - i + 1, then the
running maximum), Benjamini-Hochberg against scipy.stats.false_discovery_control
on the same family of real p-values, and the LaTeX rows against the JSON.
"""
from __future__ import annotations

import contextlib
import io
import re

import pytest
from scipy import stats

from trec_bridge.cli.main import main
from trec_bridge.multitest import adjust

RUNS = "runs/trec-dl-2019-passage-official"
QRELS = "qrels/anserini-tools/qrels.dl19-passage.txt"
IDS = ["ICT-BERT2", "TUA1-1", "TUW19-p1-f", "UNH_bm25", "bm25base_p", "idst_bert_p1", "runid2", "srchvrs_ps_run2",
       "test1"]


def holm_by_hand(pvalues: list[float]) -> list[float]:
    m = len(pvalues)
    out = []
    for p in pvalues:
        out.append(max(min(1.0, q * (m - rank)) for rank, q in enumerate(sorted(pvalues)) if q <= p))
    return out


@pytest.fixture(scope="module")
def dl19(shared_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("dl19")
    runs = sorted((shared_data / RUNS).glob("input.*.gz"))
    assert len(runs) == 9
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["compare", "--dataset", str(shared_data / QRELS), "--rel", "2", *map(str, runs),
                     "--measure", "nDCG@10 AP", "--resamples", "200", "--json", str(folder / "c.json"),
                     "--latex", str(folder / "c.tex"), "--markdown", str(folder / "c.md")])
    assert code == 0, err.getvalue()
    from converters.strict_json import parse_json

    return parse_json((folder / "c.json").read_bytes()), (folder / "c.tex").read_text(), out.getvalue()


def test_every_pair_of_the_nine_runs_by_run_id(dl19):
    cmp, _, text = dl19
    assert [s["label"] for s in cmp["systems"]] == IDS
    assert len(cmp["pairs"]) == 36 and cmp["correction"]["family"] == 72
    assert "/" not in " ".join(s["label"] for s in cmp["systems"])
    assert "Holm" in text


def test_holm_is_the_hand_computation_and_bh_is_scipys(dl19):
    cmp, _, _ = dl19
    cells = [m["t_test"] for p in cmp["pairs"] for m in p["measures"]]
    raw = [c["pvalue"] for c in cells]
    assert None not in raw
    assert [c["pvalue_adjusted"] for c in cells] == pytest.approx(holm_by_hand(raw), abs=1e-15)
    assert adjust(raw, "bh") == pytest.approx(list(stats.false_discovery_control(raw, method="bh")), abs=1e-15)
    # the correction matters on these data: some raw p < 0.05 is not significant after Holm
    assert any(c["pvalue"] < 0.05 <= c["pvalue_adjusted"] for c in cells)


def test_latex_rows_carry_the_means_and_marks_of_the_json(dl19):
    cmp, tex, _ = dl19
    rows = [line for line in tex.splitlines() if re.match(r"\(\w\) ", line)]
    assert len(rows) == 9
    for i, (system, row) in enumerate(zip(cmp["systems"], rows)):
        for w, cell in zip(cmp["winners"], row.rstrip(" \\").split(" & ")[1:]):
            c = w["cells"][i]
            marks = "".join(next(s["mark"] for s in cmp["systems"] if s["label"] == x) for x in c["better_than"])
            assert f"{c['mean']:.4f}" in cell
            assert (f"$^{{{marks}}}$" in cell) if marks else "$^" not in cell
            assert ("\\textbf" in cell) == (system["label"] in w["best"])
    best = {w["measure"]: w["best"] for w in cmp["winners"]}
    assert best["nDCG@10"] == ["idst_bert_p1"]
