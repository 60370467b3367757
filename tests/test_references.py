"""Reference adapters on the divergence reproducers (values copied from research/divergences.md).

Frames are built directly with polars so these tests do not depend on the TREC
readers.  Tests that need the real trec_eval binary skip when none is found.
"""
from __future__ import annotations

import stat

import polars as pl
import pytest

from trec_bridge.errors import ReferenceUnavailable
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Qrels, Run
from trec_bridge.references import IrMeasures, Options, PytrecEval, TrecEval, find_binary, get
from trec_bridge.references.trec_eval import parse_output

needs_trec_eval = pytest.mark.skipif(
    find_binary() is None,
    reason="trec_eval binary not found: run `trec-bridge tools install-trec-eval` or set TREC_EVAL")


def qrels(text: str) -> Qrels:
    rows = [line.split() for line in text.strip().splitlines()]
    return Qrels(pl.DataFrame({"query_id": [r[0] for r in rows], "iteration": ["0"] * len(rows),
                               "doc_id": [r[1] for r in rows], "grade": [int(r[2]) for r in rows]},
                              schema=QRELS_SCHEMA))


def run(text: str, empty: tuple[str, ...] = ()) -> Run:
    """Lines ``query doc score`` in file order (rank = position; tools ignore it); ``-`` is a null score."""
    rows = [line.split() for line in text.strip().splitlines()]
    order = list(dict.fromkeys(r[0] for r in rows))
    rows.sort(key=lambda r: order.index(r[0]))
    ranks, seen = [], {}
    for r in rows:
        seen[r[0]] = seen.get(r[0], 0) + 1
        ranks.append(seen[r[0]])
    frame = pl.DataFrame({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                          "score": [None if r[2] == "-" else float(r[2]) for r in rows], "rank": ranks},
                         schema=RUN_SCHEMA)
    return Run(frame, tuple(order) + tuple(empty))


def M(text: str):
    return parse_measures(text)


B1_TIES = (qrels("q1 a 1\nq1 b 0\nq1 c 0\nq2 y 0\nq2 z 1"),
           run("q1 a 1.0\nq1 b 1.0\nq1 c 1.0\nq2 z 1.0\nq2 y 2.0"))
B1_TIES_REVERSED = run("q1 c 1.0\nq1 b 1.0\nq1 a 1.0\nq2 z 1.0\nq2 y 2.0")
B1_FLOAT32 = (qrels("q1 a 1\nq1 b 0\nq2 a 1\nq2 b 0"),
              run("q1 a 1.00000002\nq1 b 1.00000001\nq2 a 16777217\nq2 b 16777216"))
B2 = (qrels("both1 d1 1\nboth1 d2 0\nboth2 d1 1\nboth2 d2 0\nzero d1 0\nzero d2 0\nmiss1 d1 1\nmiss2 d1 1"),
      run("both1 d1 2.0\nboth1 d2 1.0\nboth2 d2 2.0\nboth2 d1 1.0\nzero d1 2.0\n"
          "runonly1 d1 2.0\nrunonly2 d1 2.0\nrunonly3 d1 2.0"))
B3 = (qrels("q1 a 2\nq1 b 1\nq1 c 0\nq1 d -1\nq1 e 1"), run("q1 d 5\nq1 c 4\nq1 b 3\nq1 a 2"))
B4 = (qrels("101 a 3\n101 b 1\n101 c 2\n101 d 0"), run("101 b 4\n101 a 3\n101 d 2\n101 x 1"))
B5 = (qrels("q1 a 1\nq1 b 2\nq2 z 1"), run("q1 x 3\nq1 a 2\nq1 b 1\nq2 y1 3\nq2 y2 2\nq2 z 1"))
B6 = (qrels("q1 a 1\nq1 b 1\nq1 c 1\nq2 z 0"), run("q1 a 2.0\nq1 x 1.0\nq2 z 1.0"))


# ------------------------------------------------------------------ trec_eval

@needs_trec_eval
def test_trec_eval_ties_break_by_docno_descending_and_ignore_file_order():
    te = TrecEval()
    res = te.evaluate(*B1_TIES, M("RR nDCG@3"))
    assert res.version == "9.0.4" and res.precision == 4
    assert res.per_query["RR"] == {"q1": 0.3333, "q2": 0.5}
    assert res.aggregate["RR"] == 0.4167
    assert res.per_query["nDCG@3"] == {"q1": 0.5, "q2": 0.6309}
    assert res.aggregate["nDCG@3"] == 0.5655
    again = te.evaluate(B1_TIES[0], B1_TIES_REVERSED, M("RR nDCG@3"))
    assert again.aggregate == res.aggregate


@needs_trec_eval
def test_trec_eval_reads_scores_as_float32():
    res = TrecEval().evaluate(*B1_FLOAT32, M("RR P@1"))
    assert res.per_query["RR"] == {"q1": 0.5, "q2": 0.5}
    assert res.per_query["P@1"] == {"q1": 0.0, "q2": 0.0}


@needs_trec_eval
def test_trec_eval_query_set_default_and_complete():
    res = TrecEval().evaluate(*B2, M("AP P@1 nDCG"))
    assert res.aggregate == {"AP": 0.5, "P@1": 0.3333, "nDCG": 0.5436}
    assert set(res.per_query["AP"]) == {"both1", "both2", "zero"}  # no run-only, no missing query
    full = TrecEval().evaluate(*B2, M("AP P@1 nDCG"), options=Options(complete=True))
    assert full.aggregate == {"AP": 0.3, "P@1": 0.2, "nDCG": 0.3262}
    assert set(full.per_query["AP"]) == {"both1", "both2", "zero"}  # 9.0.4 -c does not print missing queries
    assert full.command == ["trec_eval -q -c -m map -m P.1 -m ndcg QRELS RUN"]


@needs_trec_eval
def test_trec_eval_threshold_and_ndcg_ignores_it():
    te = TrecEval()
    one = te.evaluate(*B3, M("P@4 R@4 AP nDCG"))
    assert one.aggregate == {"P@4": 0.5, "R@4": 0.6667, "AP": 0.2778, "nDCG": 0.4348}
    two = te.evaluate(*B3, M("P@4 R@4 AP nDCG"), rel=2)
    assert two.aggregate == {"P@4": 0.25, "R@4": 1.0, "AP": 0.25, "nDCG": 0.4348}
    assert "-l2" in two.command[0]
    zero = te.evaluate(*B3, M("P@4 R@4 AP"), rel=0)
    assert zero.aggregate == {"P@4": 0.75, "R@4": 0.75, "AP": 0.4792}
    per_measure = te.evaluate(*B3, M("P(rel=2)@4 P@4"))
    assert per_measure.aggregate == {"P(rel=2)@4": 0.25, "P@4": 0.5}
    assert len(per_measure.command) == 2  # one call per relevance level


@needs_trec_eval
def test_trec_eval_ndcg_gains():
    res = TrecEval().evaluate(*B4, M("nDCG nDCG@2 nDCG(gain=exp) nDCG(gains={1:1,2:3,3:7}) nDCG(gain=exp)@2"))
    assert res.aggregate == {"nDCG": 0.6075, "nDCG@2": 0.6788, "nDCG(gain=exp)": 0.5767,
                             "nDCG(gains={1:1,2:3,3:7})": 0.5767}
    assert res.served_by["nDCG(gain=exp)"] == "ndcg_1=1,2=3,3=7"
    assert "nDCG(gain=exp)@2" in res.unsupported
    assert "trec_eval -q -m ndcg.1=1,2=3,3=7 QRELS RUN" in res.command
    bad = TrecEval().evaluate(*B4, M("nDCG(gains={1:0.5,2:1.25})"))
    assert "comp_rel_gain" in bad.unsupported["nDCG(gains={1:0.5,2:1.25})"]


@needs_trec_eval
def test_trec_eval_rr_cutoff_ignored_or_emulated():
    te = TrecEval()
    res = te.evaluate(*B5, M("RR RR@2 RR(rel=2) RR(rel=2)@2"))
    assert res.aggregate == {"RR": 0.4167, "RR@2": 0.4167, "RR(rel=2)": 0.1667, "RR(rel=2)@2": 0.1667}
    assert res.served_by["RR@2"] == "recip_rank (cutoff ignored)"
    assert res.served_by["RR"] == "recip_rank"
    emu = te.evaluate(*B5, M("RR RR@2 RR(rel=2)@2"), options=Options(rr_cutoff="emulate"))
    assert emu.aggregate == {"RR": 0.4167, "RR@2": 0.25, "RR(rel=2)@2": 0.0}
    assert emu.served_by["RR@2"] == "recip_rank (-M 2)"
    assert "trec_eval -q -l2 -M 2 -m recip_rank QRELS RUN" in emu.command


@needs_trec_eval
def test_trec_eval_cutoffs_joined_in_one_m():
    res = TrecEval().evaluate(*B6, M("P@5 P@1 R@5 Success@1 AP"))
    assert res.aggregate == {"P@5": 0.1, "P@1": 0.5, "R@5": 0.1667, "Success@1": 0.5, "AP": 0.1667}
    assert res.command == ["trec_eval -q -m P.5,1 -m recall.5 -m success.1 -m map QRELS RUN"]


@needs_trec_eval
def test_trec_eval_empty_ranking_synthetic_scores_and_errors():
    q = qrels("q1 a 1\nq2 a 1\nq3 a 1")
    r = run("q1 a -\nq1 b -\nq4 a 1.0", empty=("q2",))
    res = TrecEval().evaluate(q, r, M("RR Judged@5"))
    assert res.per_query["RR"] == {"q1": 1.0}  # q2 (empty) cannot be written; q4 has no qrels
    assert "Judged@5" in res.unsupported
    assert any("q2" in n for n in res.notes) and any("synthetic" in n for n in res.notes)
    dup = run("q1 a 2.0\nq1 a 1.0")
    with pytest.raises(ReferenceUnavailable, match="exited with 4.*duplicate docs"):
        TrecEval().evaluate(q, dup, M("RR"))
    spaced = Run(r.frame.with_columns(pl.lit("a b").alias("doc_id")), r.queries)
    with pytest.raises(ReferenceUnavailable, match="cannot carry"):
        TrecEval().evaluate(q, spaced, M("RR"))


def test_trec_eval_binary_lookup(tmp_path, monkeypatch):
    fake = tmp_path / "my_trec_eval"
    fake.write_text("#!/bin/sh\necho 'trec_eval version 9.0.4'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("TREC_EVAL", str(fake))
    assert find_binary() == str(fake)
    assert TrecEval().version() == "9.0.4"
    monkeypatch.setenv("TREC_EVAL", str(tmp_path / "absent"))
    assert find_binary() is None  # an explicit setting is never silently replaced
    assert not TrecEval().available()
    with pytest.raises(ReferenceUnavailable, match="install-trec-eval"):
        TrecEval().evaluate(*B5, M("RR"))


def test_trec_eval_output_parsing_keeps_a_query_named_all():
    text = "P_5                   \tall\t0.2000\nP_5                   \tq2\t0.4000\nP_5                   \tall\t0.3000\n"
    assert parse_output(text) == {"P_5": ({"all": 0.2, "q2": 0.4}, 0.3)}


# ------------------------------------------------------------------ pytrec_eval

def test_pytrec_eval_matches_trec_eval_behaviour():
    pte = PytrecEval()
    ties = pte.evaluate(*B1_TIES, M("RR RR@10 nDCG@3"))
    assert ties.per_query["RR"] == pytest.approx({"q1": 1 / 3, "q2": 0.5})
    assert ties.served_by["RR@10"] == "recip_rank (cutoff ignored)"
    assert ties.aggregate["nDCG@3"] == pytest.approx(0.5655, abs=5e-5)
    f32 = pte.evaluate(*B1_FLOAT32, M("RR"))
    assert f32.per_query["RR"] == {"q1": 0.5, "q2": 0.5}
    b2 = pte.evaluate(*B2, M("AP P@1"))
    assert b2.aggregate["AP"] == pytest.approx(0.5) and set(b2.per_query["AP"]) == {"both1", "both2", "zero"}
    assert b2.precision is None


def test_pytrec_eval_threshold_gains_and_cutoffs():
    pte = PytrecEval()
    two = pte.evaluate(*B3, M("P@4 R@4 AP nDCG"), rel=2)
    assert two.aggregate == pytest.approx({"P@4": 0.25, "R@4": 1.0, "AP": 0.25, "nDCG": 0.4348079399})
    zero = pte.evaluate(*B3, M("P@4 nDCG"), rel=0)
    assert "relevance_level 0" in zero.unsupported["P@4"] and "nDCG" in zero.aggregate
    b4 = pte.evaluate(*B4, M("nDCG nDCG@2 nDCG(gain=exp)"))
    assert b4.aggregate == pytest.approx({"nDCG": 0.607491518, "nDCG@2": 0.6787622295})
    assert "nDCG(gain=exp)" in b4.unsupported
    b6 = pte.evaluate(*B6, M("P@5 P@1 R@5 Success@1 AP"))
    assert b6.aggregate == pytest.approx({"P@5": 0.1, "P@1": 0.5, "R@5": 1 / 6, "Success@1": 0.5, "AP": 1 / 6})
    assert pte.supports(M("Judged@10")[0]) is not None


def test_pytrec_eval_empty_ranking_is_handed_over():
    q = qrels("q1 a 1\nq2 a 1\nq3 a 1")
    res = PytrecEval().evaluate(q, run("q1 b 2\nq1 a 1", empty=("q2",)), M("RR"))
    assert res.per_query["RR"] == {"q1": 0.5, "q2": 0.0}  # q3 (missing) absent
    assert res.aggregate["RR"] == 0.25
    with pytest.raises(ReferenceUnavailable, match="duplicate"):
        PytrecEval().evaluate(q, run("q1 a 2.0\nq1 a 1.0"), M("RR"))


# ------------------------------------------------------------------ ir_measures

def test_ir_measures_providers_and_tie_orders():
    irm = IrMeasures()
    res = irm.evaluate(*B1_TIES, M("RR RR@10 nDCG@3 Judged@2"))
    assert res.served_by == {"RR": "pytrec_eval", "RR@10": "msmarco", "nDCG@3": "pytrec_eval", "Judged@2": "judged"}
    assert res.per_query["RR@10"] == {"q1": 1.0, "q2": 0.5}  # msmarco: docno ascending
    assert res.aggregate["RR@10"] == 0.75
    assert res.aggregate["RR"] == pytest.approx(0.4167, abs=5e-5)
    f32 = irm.evaluate(*B1_FLOAT32, M("RR RR@10"))
    assert f32.per_query == {"RR": {"q1": 0.5, "q2": 0.5}, "RR@10": {"q1": 1.0, "q2": 1.0}}


def test_ir_measures_fills_missing_queries_like_dash_c():
    res = IrMeasures().evaluate(*B2, M("AP P@1 nDCG"))
    assert res.aggregate == pytest.approx({"AP": 0.3, "P@1": 0.2, "nDCG": 0.3262, }, abs=5e-5)
    assert res.per_query["AP"]["miss1"] == 0.0 and "runonly1" not in res.per_query["AP"]


def test_ir_measures_threshold_gains_and_rr_cutoff():
    irm = IrMeasures()
    two = irm.evaluate(*B3, M("P@4 R@4 AP"), rel=2)
    assert two.aggregate == pytest.approx({"P@4": 0.25, "R@4": 1.0, "AP": 0.25})
    assert two.native["P@4"] == "P(rel=2)@4"
    zero = irm.evaluate(*B3, M("P@4 RR@2"), rel=0)
    assert "P@4" in zero.unsupported and zero.served_by["RR@2"] == "msmarco"
    b4 = irm.evaluate(*B4, M("nDCG nDCG@2 nDCG(gain=exp) nDCG(gain=exp)@2"))
    assert b4.aggregate == pytest.approx({"nDCG": 0.607491518, "nDCG@2": 0.6787622295,
                                          "nDCG(gain=exp)": 0.5766666455, "nDCG(gain=exp)@2": 0.6090899173})
    assert b4.native["nDCG(gain=exp)@2"] == "nDCG(gains={1:1,2:3,3:7})@2"
    assert b4.served_by["nDCG(gain=exp)@2"] == "pytrec_eval"  # never gdeval
    b5 = irm.evaluate(*B5, M("RR RR@2 RR(rel=2) RR(rel=2)@2"))
    assert b5.aggregate == pytest.approx({"RR": 0.4167, "RR@2": 0.25, "RR(rel=2)": 0.1667, "RR(rel=2)@2": 0.0},
                                         abs=5e-5)
    b6 = irm.evaluate(*B6, M("P@5 R@5 Success@1 AP"))
    assert b6.aggregate == pytest.approx({"P@5": 0.1, "R@5": 1 / 6, "Success@1": 0.5, "AP": 1 / 6})


def test_ir_measures_empty_ranking_breaks_judged_provider_only():
    q = qrels("q1 a 1\nq2 a 1")
    res = IrMeasures().evaluate(q, run("q1 a 1.0", empty=("q2",)), M("RR Judged@1"))
    assert res.per_query["RR"] == {"q1": 1.0, "q2": 0.0}
    assert "ZeroDivisionError" in res.failed["Judged@1"] and "q2" in res.failed["Judged@1"]


def test_ir_measures_never_routes_to_ranx(monkeypatch):
    irm = IrMeasures()

    class Ranx:
        NAME = "ranx"

    monkeypatch.setattr(IrMeasures, "provider_for", lambda self, obj: Ranx())
    assert "ranx" in irm.supports(M("nDCG@10")[0])


def test_registry():
    assert get("pytrec_eval").name == "pytrec_eval"
    with pytest.raises(Exception, match="unknown reference tool"):
        get("no_such_tool")


@needs_trec_eval
def test_all_three_agree_without_ties():
    """No ties, no float32 collisions, every query in both: the three agree to trec_eval's 4 decimals."""
    ms = M("P@5 R@5 Success@1 AP nDCG nDCG@2 RR")
    results = [ref.evaluate(*B6, ms) for ref in (TrecEval(), PytrecEval(), IrMeasures())]
    for key in map(str, ms):
        values = [r.aggregate[key] for r in results]
        assert max(values) - min(values) <= 5e-5, (key, values)
