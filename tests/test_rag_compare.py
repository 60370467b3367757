"""Comparison statistics checked against scipy on fixed data, seeds, degenerate data and refusals."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from trec_bridge.cli.main import main
from trec_bridge.rag.compare import paired_tests

KB = Path(__file__).resolve().parent.parent / "golden" / "rag" / "kb"

# RR@20 of run_1 (A) and run_b (B) in golden/rag/kb, k01..k10 (see golden/rag/README.md)
A = np.array([1, 1, 1, 1, 1, 1, 1 / 2, 1 / 3, 1 / 11, 0])
B = np.array([1, 1, 1, 1, 1 / 4, 1, 1, 1, 1 / 2, 1])


def test_t_and_wilcoxon_match_scipy_and_hand_figures():
    out = paired_tests(B - A, seed=0, resamples=10000)
    t = stats.ttest_rel(B, A)
    assert out["t_test"]["statistic"] == pytest.approx(1.1978196309477844, abs=1e-12)
    assert out["t_test"]["pvalue"] == pytest.approx(float(t.pvalue), abs=1e-15)
    # the p-value from the t distribution with the hand-computed statistic
    assert out["t_test"]["pvalue"] == pytest.approx(2 * stats.t.sf(1.1978196309477844, df=9), abs=1e-12)
    assert out["wilcoxon"]["statistic"] == 4.0
    assert out["wilcoxon"]["pvalue"] == pytest.approx(14 / 32, abs=1e-15)
    assert out["permutation"]["exact"] is True
    assert out["permutation"]["pvalue"] == pytest.approx(10 / 32, abs=1e-15)


def test_randomization_test_with_a_fixed_seed_is_scipys_and_reproducible():
    # 16 resamples < 2^10 sign patterns: a random (not exact) test, so the seed matters
    out1 = paired_tests(B - A, seed=123, resamples=16)
    out2 = paired_tests(B - A, seed=123, resamples=16)
    ref = stats.permutation_test((B - A,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples",
                                 vectorized=True, n_resamples=16, alternative="two-sided",
                                 rng=np.random.default_rng(123))
    assert out1["permutation"]["exact"] is False
    assert out1["permutation"]["pvalue"] == float(ref.pvalue) == out2["permutation"]["pvalue"]
    assert out1["permutation"]["seed"] == 123 and out1["permutation"]["resamples"] == 16


def test_bootstrap_matches_scipy_with_the_same_seed():
    out = paired_tests(B - A, seed=42, resamples=2000, confidence=0.9)
    ref = stats.bootstrap((B - A,), np.mean, n_resamples=2000, confidence_level=0.9, method="BCa",
                          rng=np.random.default_rng(42))
    assert out["bootstrap"]["method"] == "BCa"
    assert out["bootstrap"]["low"] == float(ref.confidence_interval.low)
    assert out["bootstrap"]["high"] == float(ref.confidence_interval.high)
    assert out["bootstrap"]["low"] < float(np.mean(B - A)) < out["bootstrap"]["high"]
    other = paired_tests(B - A, seed=43, resamples=2000, confidence=0.9)
    assert other["bootstrap"]["low"] != out["bootstrap"]["low"]


def test_degenerate_data_are_reported_not_computed():
    same = paired_tests(A - A)
    assert same["t_test"]["pvalue"] is None and "equal" in same["t_test"]["note"]
    assert same["wilcoxon"]["pvalue"] is None and "0" in same["wilcoxon"]["note"]
    assert same["permutation"]["pvalue"] == 1.0
    assert same["bootstrap"]["low"] == same["bootstrap"]["high"] == 0.0
    shifted = paired_tests(np.full(10, 0.25))
    assert shifted["t_test"]["pvalue"] is None
    assert shifted["wilcoxon"]["pvalue"] == pytest.approx(stats.wilcoxon(np.full(10, 0.25)).pvalue)
    assert shifted["bootstrap"]["method"] == "degenerate" and shifted["bootstrap"]["low"] == 0.25
    one = paired_tests(B[:1] - A[:1])
    assert all("at least 2" in one[k]["note"] for k in ("t_test", "wilcoxon", "permutation", "bootstrap"))


def test_nan_from_scipy_becomes_null_with_a_reason():
    out = paired_tests(np.array([1e-300, -1e-300, 0.0]))
    json.dumps(out, allow_nan=False)
    assert out["t_test"]["pvalue"] is None and "not finite" in out["t_test"]["note"]


def _score(tmp_path, run: str, measures: str = "rag", extra=()) -> str:
    out = tmp_path / f"{run}.{len(extra)}.json"
    main(["score", str(KB / "dataset.json"), str(KB / run), measures, "--json", str(out), *extra])
    return str(out)


def test_compare_cli_all_measures_text_and_json(tmp_path, capsys):
    a, b = _score(tmp_path, "run_1.json"), _score(tmp_path, "run_b.json")
    capsys.readouterr()
    out = tmp_path / "cmp.json"
    assert main(["compare", a, b, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    cmp = json.loads(out.read_text())
    assert cmp["measures"] == ["R@3", "R@5", "R@10", "RR@20", "nDCG(gain=exp)@5", "nDCG(gain=exp)@10"]
    assert [m["measure"] for m in cmp["pairs"][0]["measures"]] == cmp["measures"]
    r5 = cmp["pairs"][0]["measures"][1]
    # R@5: k09 and k10 gain 1, k05 stays in the top 5
    assert (r5["wins"], r5["losses"], r5["ties"]) == (2, 0, 8)
    assert r5["permutation"]["pvalue"] == pytest.approx(0.5)  # exact: 2 of the 4 sign patterns of (1, 1)
    assert "RR@20" in text and "4/1/5" in text and "protocol fingerprints equal" in text


def test_compare_uses_averaged_repeats(tmp_path):
    a = _score(tmp_path, "run_1.json", extra=("--repeat", str(KB / "run_2.json"), "--repeat", str(KB / "run_3.json")))
    b = _score(tmp_path, "run_1.json")
    out = tmp_path / "cmp.json"
    assert main(["compare", a, b, "--measure", "R@5", "--json", str(out)]) == 0
    cmp = json.loads(out.read_text())
    assert cmp["systems"][0]["values_from"].startswith("averaged over 3 repeats")
    k09 = {r["query_id"]: r for r in cmp["pairs"][0]["measures"][0]["per_query"]}["k09"]
    assert k09["delta_exact"] == "-1/3"  # B = 0, A averaged (0 + 0 + 1)/3
    assert cmp["warnings"]


@pytest.mark.parametrize("setup,code", [
    ("not_a_report", "E_JSON_FORMAT"),
    ("different_threshold", "E_COMPARE_PROTOCOL"),
    ("unknown_measure", "E_USAGE"),
])
def test_compare_refusals(tmp_path, capsys, setup, code):
    a = _score(tmp_path, "run_1.json")
    if setup == "not_a_report":
        b = str(KB / "run_b.json")
        args = [a, b]
    elif setup == "different_threshold":
        b = _score(tmp_path, "run_b.json", extra=("--rel", "2"))
        args = [a, b]
    else:
        b = _score(tmp_path, "run_b.json")
        args = [a, b, "--measure", "P@5"]
    out = tmp_path / "cmp.json"
    capsys.readouterr()
    assert main(["compare", *args, "--json", str(out)]) == 1
    assert f"[{code}]" in capsys.readouterr().err
    assert not out.exists()
