"""CI smoke version of bench/run_bench.py: tiny workloads, one repeat; checks that the numbers agree, not time.

Only the tools whose numbers are checked against trec_eval's run here (the
crosscheck and ir_measures have their own tests); the full benchmark (W1, W2,
W3, every tool) is run by hand: see bench/README.md.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from trec_bridge.references import find_binary

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench" / "run_bench.py"

needs_trec_eval = pytest.mark.skipif(
    find_binary() is None,
    reason="trec_eval binary not found: run `trec-bridge tools install-trec-eval` or set TREC_EVAL")


@pytest.fixture(scope="module")
def rb():
    spec = importlib.util.spec_from_file_location("run_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bench")  # shared: the tiny workloads are generated once


def _run(rb, work: Path, *args: str) -> tuple[int, dict]:
    out = work / "bench.json"
    rc = rb.main(["--work", str(work), "--repeats", "1", "--no-warmup", "--json", str(out),
                  "--markdown", str(work / "bench.md"), *args])
    return rc, json.loads(out.read_text())


def _assert_agreement(report: dict, tools: set[str]) -> None:
    seen = {(r["workload"], r["tool"]) for r in report["rows"]}
    for w in report["meta"]["workloads"]:
        assert {(w, t) for t in tools} <= seen
    for r in report["rows"]:
        assert not r["agree"].startswith("**"), r
        assert all(s["rc"] in (0, 2) for s in r["samples"]), r


def test_quick_numbers_agree_without_trec_eval(rb, work):
    """score --policy trec_eval against pytrec_eval (trec_eval's C code), strict where it must agree."""
    rc, report = _run(rb, work, "--quick", "--workloads", "Q1", "--tools", "score,score-te,pytrec_eval")
    assert rc == 0
    _assert_agreement(report, {"score", "score-te", "pytrec_eval"})
    cells = {(r["workload"], r["tool"]): r["agree"] for r in report["rows"]}
    assert cells[("Q1", "score-te")] == "yes (6/6 vs pytrec_eval)"
    assert cells[("Q1", "score")] == "yes (5/5 vs pytrec_eval)"  # binary qrels: nDCG@10 too


@needs_trec_eval
def test_quick_numbers_agree_with_trec_eval(rb, work):
    tools = "trec_eval,score,score-te"
    rc, report = _run(rb, work, "--quick", "--workloads", "Q1d,Q2", "--tools", tools)
    assert rc == 0
    _assert_agreement(report, set(tools.split(",")))
    cells = {(r["workload"], r["tool"]): r["agree"] for r in report["rows"]}
    assert cells[("Q1d", "score-te")] == "yes (6/6 vs trec_eval)"  # score ties and a missing query
    assert cells[("Q1d", "score")].startswith("n/a")  # the missing query: strict keeps it at 0
    assert cells[("Q2", "score")] == "yes (4/4 vs trec_eval)"  # graded: exp vs linear nDCG gain differs
    assert all(r["ratios"] for r in report["rows"])  # paired with trec_eval in the same iteration
    assert (work / "bench.md").read_text().count("| Q2 |") == len(tools.split(","))


def test_a_disagreement_is_reported(rb):
    facts = {"missing": [], "no_relevant": [], "run_only": [], "f32_moved": [], "f64_tie_moved": [],
             "max_grade": 1, "max_depth": 1000}
    te = {"AP": "0.1522", "P@10": "0.0317", "R@100": "0.5673", "R@1000": "0.8538", "nDCG@10": "0.1802",
          "RR": "0.1583"}
    ours = dict(te, AP="0.1523")
    cell, bad = rb.agreement("score-te", {"trec_eval": te, "score-te": ours}, facts, 0)
    assert cell.startswith("**NO**") and bad == ["AP 0.1523 != trec_eval AP 0.1522"]
    cell, bad = rb.agreement("score-te", {"trec_eval": te, "score-te": {k: v for k, v in te.items() if k != "RR"}},
                             facts, 0)
    assert bad and "RR: missing" in bad[0]
    cell, bad = rb.agreement("crosscheck", {}, facts, 3)
    assert cell == "NO" and bad


def test_strict_is_compared_only_where_it_must_agree(rb):
    te = {"AP": "0.1", "P@10": "0.2", "R@100": "0.3", "R@1000": "0.4", "nDCG@10": "0.5", "RR": "0.6"}
    strict = {"AP": "0.1", "P@10": "0.2", "R@100": "0.3", "R@1000": "0.4", "nDCG@10": "0.9", "RR@10": "0.5"}
    base = {"missing": [], "no_relevant": [], "run_only": [], "f32_moved": [], "f64_tie_moved": [],
            "max_grade": 3, "max_depth": 1000}
    cell, bad = rb.agreement("score", {"trec_eval": te, "score": strict}, base, 0)
    assert not bad and cell == "yes (4/4 vs trec_eval)"  # graded qrels: nDCG gains differ, not compared
    cell, bad = rb.agreement("score", {"trec_eval": te, "score": strict}, dict(base, max_grade=1), 0)
    assert bad == ["nDCG@10 0.9 != trec_eval nDCG@10 0.5"]
    cell, bad = rb.agreement("score", {"trec_eval": te, "score": dict(strict, AP="0.7")},
                             dict(base, f32_moved=["q1"]), 0)
    assert not bad and cell == "yes (1/1 vs trec_eval)"  # float32 moves: only the order-free R@1000
    cell, bad = rb.agreement("score", {"trec_eval": te, "score": strict}, dict(base, missing=["q9"]), 0)
    assert not bad and cell.startswith("n/a")


def test_workload_facts_find_float32_and_tie_moves(rb, tmp_path):
    # q1: 16777217 and 16777216 are one C float, so trec_eval puts z (docno descending) above the relevant a;
    # q2: an exact tie; docno ascending (ir_measures' msmarco) puts the relevant b first, descending does not.
    (tmp_path / "t.qrels").write_text("q1 0 a 1\nq1 0 z 0\nq2 0 b 2\nq3 0 n 0\n")
    (tmp_path / "t.run").write_text("q1 Q0 a 1 16777217 x\nq1 Q0 z 2 16777216 x\nq1 Q0 c 3 1.5 x\n"
                                    "q2 Q0 b 1 2.0 x\nq2 Q0 y 2 2.0 x\nq4 Q0 e 1 1.0 x\n")
    f = rb.workload_facts(tmp_path / "t.qrels", tmp_path / "t.run")
    assert f["f32_moved"] == ["q1"] and f["f64_tie_moved"] == ["q2"]
    assert f["missing"] == ["q3"] and f["run_only"] == ["q4"] and f["no_relevant"] == ["q3"]
    assert f["max_grade"] == 2 and f["max_depth"] == 3
    assert (tmp_path / "t.facts.json").is_file()  # cached for the next run


def test_output_parsers(rb):
    te = "map                   \tall\t0.1238\nrecip_rank            \tall\t0.8527\nP_10 \t301\t0.5\n"
    assert rb.parse_trec_eval(te) == {"AP": "0.1238", "RR": "0.8527"}
    table = ("measure      mean  exact          eligible\nnDCG@10    0.2938                 43\n"
             "RR         0.8527  110/129        43\n\nqueries: 43 in the set (qrels)\n")
    assert rb.parse_score_table(table) == {"nDCG@10": "0.2938", "RR": "0.8527"}
    assert rb.parse_ir_measures("nDCG@10\t0.3912\nRR@10\t0.85274\n") == {"nDCG@10": "0.3912", "RR@10": "0.8527"}


@needs_trec_eval
def test_w2_floor_times_trec_eval_and_the_python_floor(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("w2_floor", REPO / "bench" / "w2_floor.py")
    floor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(floor)
    (tmp_path / "W2.qrels").write_text("q1 0 d1 1\nq2 0 d3 2\n")
    (tmp_path / "W2.run").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 0.5 t\n")
    assert floor.main(["--work", str(tmp_path), "--repeats", "1", "--trec-eval", find_binary()]) == 0
    table = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[0] for line in table[1:]] == [
        "trec_eval 9.0.4, whole run (the target)", "python -I -S -c pass (bare interpreter)",
        "python -c pass (with site-packages)", "python -c 'import numpy'", "python -c 'import polars'",
        "python -I -S: read, split, float() and a duplicate set of W2.run, nothing else"]
    assert all(float(line.rsplit(" ", 1)[1]) > 0 for line in table[1:])


@needs_trec_eval
def test_quick_dropin_rows_are_paired_with_the_binary_and_byte_identical(rb, work):
    """Issue 17 §4: the drop-in's rows, each paired with the binary on the same arguments (registered measures)."""
    tools = "te-default,dropin-default,te-all,dropin-all"
    rc, report = _run(rb, work, "--quick", "--workloads", "Q1d", "--tools", tools, "--dropin-registered")
    assert rc == 0
    cells = {r["tool"]: r["agree"] for r in report["rows"]}
    assert cells["dropin-default"] == cells["dropin-all"] == "yes (stdout byte-identical to the binary's)"

    assert all(r["ratios"] for r in report["rows"] if r["tool"].startswith("dropin-"))  # vs its paired binary
