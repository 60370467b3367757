"""``explain`` on hand-made figures: each named variant behind home-grown values, the closest when nothing
reproduces them, summary figures, bad input (the real tools' outputs: test_explain_tools.py).

The inputs are built so that every axis shows: q1 has a score tie between a
relevant and a non-relevant document (tie order), q2 two scores equal only as
float32 (score precision), q3 a rank column that disagrees with the scores,
q4 is judged but missing from the run (query set), q5 has no relevant
document (the no-relevant rule), q6 is in the run but not judged, q7's first
relevant document is at rank 3 (RR's cutoff).
"""
import json

import pytest

import trec_bridge as tb
from trec_bridge.cli.main import main

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 e1 0\nq2 0 e2 1\nq3 0 f1 2\nq3 0 f2 1\nq3 0 f3 0\nq4 0 g1 1\nq5 0 h1 0\nq7 0 k1 1\n"
RUN = ("q1 Q0 d2 1 1.0 r\nq1 Q0 d1 2 1.0 r\nq1 Q0 d3 3 0.5 r\nq1 Q0 x1 4 0.4 r\n"
       "q2 Q0 e1 1 0.30000001 r\nq2 Q0 e2 2 0.3 r\n"
       "q3 Q0 f3 1 0.1 r\nq3 Q0 f1 2 0.9 r\nq3 Q0 f2 3 0.5 r\n"
       "q5 Q0 h1 1 1.0 r\nq5 Q0 h2 2 0.5 r\nq6 Q0 z1 1 1.0 r\n"
       "q7 Q0 k8 1 1.0 r\nq7 Q0 k9 2 0.9 r\nq7 Q0 k1 3 0.8 r\n")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


def _tools_at_zero(ex, measure):
    return {b["tool"] for b in ex.best(measure) if not b["differs"]}


def test_rank_column_order_is_found(files):
    their = {"RR": {"q1": 0.5, "q2": 0.5, "q3": 0.5, "q7": 1 / 3}}  # q3: f3 (grade 0) first, as its rank column says
    ex = tb.explain(files / "qrels", files / "run", their)
    assert ex.explained
    assert ex.decided("RR")["tie_break"] == ["rank"]


def test_the_mean_over_the_runs_queries_is_found(files):
    """Home-grown code averaging over every query of the run: q6 (not judged) scores 0 and counts, q4
    (judged, not in the run) does not."""
    their = {"RR": {"q1": 0.5, "q2": 0.5, "q3": 1.0, "q5": 0.0, "q6": 0.0, "q7": 1 / 3}}
    ex = tb.explain(files / "qrels", files / "run", their)
    assert ex.decided("RR")["query_set"] == ["run"] and ex.decided("RR")["no_relevant"] == ["zero"]
    mean = tb.explain(files / "qrels", files / "run", f"RR={(0.5 + 0.5 + 1 + 1 / 3) / 6:.4f}")
    assert "run" in mean.decided("RR")["query_set"]


def test_nothing_reproduces_gives_closest_and_exit_5(files, capsys):
    (files / "theirs").write_text("recip_rank\tq1\t0.5000\nrecip_rank\tq2\t0.5000\nrecip_rank\tq3\t0.2500\n"
                                  "recip_rank\tq7\t0.3333\n")
    code = main(["explain", str(files / "qrels"), str(files / "run"), str(files / "theirs"),
                 "--json", str(files / "out.json")])
    assert code == 5
    text = capsys.readouterr().out
    assert "NOT reproduced" in text and "q3: 0.25 vs 1" in text
    report = json.loads((files / "out.json").read_text())
    closest = report["measures"][0]["closest"]
    assert closest["mismatched"] == [{"query_id": "q3", "theirs": 0.25, "ours": 1.0}]


def test_summary_figures_on_the_command_line(files, capsys):
    ours = tb.score(files / "qrels", files / "run", "RR@2", policy="ir_measures").means["RR@2"]
    code = main(["explain", str(files / "qrels"), str(files / "run"), f"MRR@2={ours:.3f}"])
    assert code == 0
    assert "ir_measures' RR@2 (its defaults)" in capsys.readouterr().out


@pytest.mark.parametrize("theirs, code", [("no-such-file", "E_FILE_NOT_FOUND"), ("nDCG@10=abc x=1", "E_THEIRS_FORMAT"),
                                          ("frobnicate=0.5", "E_THEIRS_FORMAT")])
def test_bad_figures_exit_1(files, capsys, theirs, code):
    assert main(["explain", str(files / "qrels"), str(files / "run"), theirs]) == 1
    assert code in capsys.readouterr().err


# ------------------------------------------------------------ home-grown variants, one each

VARIANT_QRELS = {"qa": {"a1": 2, "a2": 1, "a3": 1, "a4": 0, "a5": -1, "a6": 1}, "qb": {"b1": 1}}
VARIANT_RUN = {"qa": {"a4": 0.9, "a1": 0.8, "a5": 0.7, "a2": 0.6}, "qb": {"b1": 0.5, "b9": 0.4}}


@pytest.mark.parametrize("standard, variant, rel", [
    ("R@2", "R(den=min_k)@2", 1), ("R@2", "R(den=k)@2", 1), ("P@10", "P(den=retrieved)@10", 1),
    ("AP", "AP(den=retrieved)", 1), ("nDCG@3", "nDCG(ideal=retrieved)@3", 1), ("nDCG@3", "nDCG(ideal=top_k)@3", 1),
    ("nDCG@4", "nDCG(discount=log2_rank)@4", 1), ("nDCG@4", "nDCG(discount=log2_rank2)@4", 1),
    ("nDCG@4", "nDCG(discount=ln_rank)@4", 1), ("R@4", "R(relevant=positive)@4", 2),
    ("R@4", "R(relevant=judged)@4", 1),
])
def test_explain_names_each_variant(standard, variant, rel):
    res = tb.score(VARIANT_QRELS, VARIANT_RUN, variant, rel=rel)
    their = {standard: {q.query_id: q.values[variant] for q in res.result.queries if q.values[variant] is not None}}
    ex = tb.explain(VARIANT_QRELS, VARIANT_RUN, their, rel=rel)
    assert ex.explained, variant
    param, value = variant[variant.index("(") + 1:variant.index(")")].split("=")
    assert {"tool": "strict", "differs": {param: value}} in ex.best(standard), ex.best(standard)
    assert ex.decided(standard)[param] == [value]


def test_rounding_before_the_mean_is_found():
    res = tb.score(VARIANT_QRELS, VARIANT_RUN, "nDCG@4")
    values = [q.values["nDCG@4"] for q in res.result.queries]
    rounded_mean = sum(round(v, 2) for v in values) / len(values)
    assert abs(rounded_mean - sum(values) / len(values)) > 1e-4  # the inputs tell the two apart
    ex = tb.explain(VARIANT_QRELS, VARIANT_RUN, f"nDCG@4={rounded_mean:.6f}")
    assert ex.decided("nDCG@4")["rounding"] == ["2"]


def test_check_metric_on_the_hard_cases_alone():
    """The fast tier's check of tb.testing.check_metric (tests/test_check_metric.py: one broken implementation
    per variant, with hypothesis cases too): recall divided by min(relevant, k) is named, with its case."""
    from trec_bridge.testing import check_metric

    def capped_recall(qrels, run):
        out = {}
        for q, judged in qrels.items():
            relevant = {d for d, g in judged.items() if g >= 1}
            if relevant:
                top = sorted(run.get(q, {}).items(), key=lambda x: (-x[1], x[0]))[:10]
                out[q] = len(relevant & {d for d, _ in top}) / min(len(relevant), 10)
        return out

    report = check_metric(capped_recall, "R@10", examples=0)
    assert report.convention["den"] == ["min_k"]
    departure = next(d for d in report.departures if d.axis == "den")
    assert len(departure.case.qrels["q1"]) == 12 and departure.case.theirs == {"q1": 2 / 10}
    assert "departure on den: min_k instead of rel" in str(report)


def test_duplicates_rule_is_found_for_a_run_that_repeats_a_document():
    import polars as pl

    from trec_bridge.model import RUN_SCHEMA, Run

    frame = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "z", "a"], "rank": [1, 2, 3],
                          "score": [3.0, 2.0, 1.0]}, schema=RUN_SCHEMA)
    run = Run(frame, ("q1",))
    qrels = {"q1": {"a": 1, "b": 1}}
    last = tb.explain(qrels, run, {"RR": {"q1": 0.5}})  # a's last line (rank 3) wins, after z
    assert last.decided("RR")["duplicates"] == ["last_wins"]
    both = tb.explain(qrels, run, {"R@3": {"q1": 1.0}})  # a counted twice: 2 of 2 relevant
    assert both.decided("R@3")["duplicates"] == ["keep_all"]
