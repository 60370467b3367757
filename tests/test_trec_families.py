"""The trec_eval families of issue 17 §1 on tiny rankings, every figure worked by hand in the comments.

One qrels and run serve most tests (scores decide the order, no ties):

    q1 judged: a 2, b 0, c 1, d 1, e -1 (a negative grade: unjudged, as trec_eval reads it), f 0
       ranked: b, a, u (unjudged), e, c       -> ranks 1..5
       R = 3 (a, c, d), N = 2 judged non-relevant (b, f)
    q2 judged: x 0, y 1       ranked: x, y    -> R = 1, N = 1
    q3 judged: z 0            ranked: z       -> no relevant document (strict: null where R divides)
    q4 judged: w 1            not ranked      -> missing (strict: scored as an empty ranking)
"""
from __future__ import annotations

import math
from fractions import Fraction

import pytest

import trec_bridge as tb
from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures

QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1, "f": 0}, "q2": {"x": 0, "y": 1}, "q3": {"z": 0},
         "q4": {"w": 1}}
RUN = {"q1": {"b": 5.0, "a": 4.0, "u": 3.0, "e": 2.5, "c": 2.0}, "q2": {"x": 2.0, "y": 1.0}, "q3": {"z": 3.0}}


def per_query(measure: str, policy: str = "strict", qrels=QRELS, run=RUN, rel=None) -> dict:
    res = tb.score(qrels, run, measure, policy=policy, rel=rel).result
    (name,) = [str(m) for m in res.measures]
    return {q.query_id: q.values[name] for q in res.queries}


def exact_per_query(measure: str, qrels=QRELS, run=RUN) -> dict:
    res = tb.score(qrels, run, measure).result
    (name,) = [str(m) for m in res.measures]
    return {q.query_id: q.exact[name] for q in res.queries}


def mean(measure: str, policy: str = "strict", qrels=QRELS, run=RUN):
    res = tb.score(qrels, run, measure, policy=policy).result
    (value,) = res.means.values()
    return value.value


# ---------------------------------------------------------------- counts: never null, summed

def test_counts_per_query_and_summed():
    # NumQ: 1 for every query of the set, the missing q4 too
    assert per_query("NumQ") == {"q1": 1, "q2": 1, "q3": 1, "q4": 1}
    # NumRet: ranked documents, judged or not (q1 has 5 with the unjudged u)
    assert per_query("NumRet") == {"q1": 5, "q2": 2, "q3": 1, "q4": 0}
    # NumRel: grade >= 1, retrieved or not; e (-1) is not relevant
    assert per_query("NumRel") == {"q1": 3, "q2": 1, "q3": 0, "q4": 1}
    # NumRelRet: a and c in q1, y in q2
    assert per_query("NumRelRet") == {"q1": 2, "q2": 1, "q3": 0, "q4": 0}
    # NumNonRelJudgedRet: grade in [0, 1): b in q1 (e's -1 is unjudged, u is not judged), x, z
    assert per_query("NumNonRelJudgedRet") == {"q1": 1, "q2": 1, "q3": 1, "q4": 0}
    # summed, not averaged, and exact
    res = tb.score(QRELS, RUN, "NumQ NumRet NumRel NumRelRet NumNonRelJudgedRet")
    assert res.exact == {"NumQ": 4, "NumRet": 8, "NumRel": 5, "NumRelRet": 3, "NumNonRelJudgedRet": 3}


def test_counts_follow_the_threshold():
    # at rel=2 only q1's a is relevant: NumRel 1 (q1); NumRelRet 1 (a ranked); b and c are then judged non-relevant
    assert per_query("NumRel(rel=2)") == {"q1": 1, "q2": 0, "q3": 0, "q4": 0}
    assert per_query("NumRelRet(rel=2)") == {"q1": 1, "q2": 0, "q3": 0, "q4": 0}
    assert per_query("NumNonRelJudgedRet(rel=2)") == {"q1": 2, "q2": 2, "q3": 1, "q4": 0}


def test_counts_under_the_tools_query_sets():
    # trec_eval: only queries ranked and judged (q1..q3): 3 queries, 4 relevant, 8 retrieved
    assert mean("NumQ", "trec_eval") == 3 and mean("NumRel", "trec_eval") == 4 and mean("NumRet", "trec_eval") == 8
    # trec_eval -c: every judged query; the missing q4 counts as a query with its relevant document (as the binary)
    assert mean("NumQ", "trec_eval_c") == 4 and mean("NumRel", "trec_eval_c") == 5
    # ir_measures fills the missing q4 with 0 in every measure (missing_score axis)
    assert per_query("NumQ", "ir_measures")["q4"] == 0 and mean("NumRel", "ir_measures") == 4


def test_num_ret_refuses_rel_and_points_to_num_rel_ret():
    with pytest.raises(InvalidInput) as err:
        parse_measures("NumRet(rel=1)")
    assert err.value.code == "E_MEASURE_PARAM" and "NumRelRet(rel=k)" in err.value.message
    for name in ("NumQ@5", "Rprec@5", "Bpref@10", "GMAP@10"):
        with pytest.raises(InvalidInput) as err:
            parse_measures(name)
        assert err.value.code == "E_CUTOFF"


def test_counts_print_as_integers(tmp_path, capsys):
    import json

    from trec_bridge.cli.main import main
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\n")
    run.write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\nq1 Q0 c 3 0.5 r\n")
    assert main(["score", str(qrels), str(run), "NumRet AP", "--json", str(tmp_path / "o.json"), "--per-query"]) == 0
    out = capsys.readouterr().out
    assert "\nNumRet          3  3 " in out and "q1\tranked\t3\t1.0000" in out
    report = json.loads((tmp_path / "o.json").read_text())
    assert report["means"]["NumRet"]["value"] == 3 and isinstance(report["means"]["NumRet"]["value"], int)
    assert isinstance(report["per_query"][0]["values"]["NumRet"], int)
    assert isinstance(report["per_query"][0]["values"]["AP"], float)


# ---------------------------------------------------------------- Rprec

def test_rprec():
    # q1: R = 3, top 3 = b, a, u -> a only: 1/3.  q2: R = 1, top 1 = x -> 0.  q3: no relevant: null.
    # q4 missing: 0/1.
    assert exact_per_query("Rprec") == {"q1": Fraction(1, 3), "q2": 0, "q3": None, "q4": 0}
    # a ranking shorter than R still divides by R: 2 relevant, one ranked first -> 1/2
    assert exact_per_query("Rprec", {"q": {"a": 1, "b": 1}}, {"q": {"a": 1.0}}) == {"q": Fraction(1, 2)}


# ---------------------------------------------------------------- bpref, gm_bpref, gm_map

def test_bpref():
    # q1: R = 3, N = 2 (b, f), min(N, R) = 2.  Ranked: b (non-rel, n = 1), a (rel: 1 - min(1, 3)/2 = 1/2),
    #     u and e skipped, c (rel, n = 1: 1/2).  bpref = (1/2 + 1/2) / 3 = 1/3.
    # q2: x (non-rel), y (rel, n = 1, min(N, R) = 1: 1 - 1/1 = 0) -> 0.  q3: null.  q4 missing: 0.
    assert exact_per_query("Bpref") == {"q1": Fraction(1, 3), "q2": 0, "q3": None, "q4": 0}
    # a relevant document above every judged non-relevant one adds 1: a, then b (non-rel): 1 / R = 1/2
    assert exact_per_query("Bpref", {"q": {"a": 1, "b": 0, "c": 1}}, {"q": {"a": 2.0, "b": 1.0}}) == {"q": Fraction(1, 2)}
    # min(n, R): R = 1, N = 3, three non-relevant above the relevant one: 1 - min(3, 1)/min(3, 1) = 0
    assert exact_per_query("Bpref", {"q": {"a": 1, "b": 0, "c": 0, "d": 0}},
                           {"q": {"b": 4.0, "c": 3.0, "d": 2.0, "a": 1.0}}) == {"q": 0}
    # N = 3, R = 4: relevant after 1 non-relevant: 1 - 1/3 = 2/3; other relevant first: 1 each.  (1 + 1 + 2/3) / 4
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1, "x": 0, "y": 0, "z": 0}}
    assert exact_per_query("Bpref", qrels, {"q": {"a": 5.0, "b": 4.0, "x": 3.0, "c": 2.0}}) == {"q": Fraction(2, 3)}


def test_gmap_per_query_and_geometric_summary():
    # AP: q1: a at 2 (1/2), c at 5 (2/5): (1/2 + 2/5) / 3 = 3/10.  q2: y at 2: 1/2.  q3: null.  q4: 0.
    assert exact_per_query("GMAP") == {"q1": Fraction(3, 10), "q2": Fraction(1, 2), "q3": None, "q4": 0}
    # strict: geometric mean over q1, q2, q4 with q4 floored at 1e-5
    expected = math.exp((math.log(0.3) + math.log(0.5) + math.log(1e-5)) / 3)
    assert mean("GMAP") == pytest.approx(expected, rel=1e-12)
    res = tb.score(QRELS, RUN, "GMAP").result
    assert res.means["GMAP"].exact is None  # a geometric mean is not rational


def test_gmap_under_trec_eval_keeps_logs_per_query():
    # trec_eval's C code keeps log(max(AP, 1e-5)); q3 counts (no_relevant = zero) with AP 0
    values = per_query("GMAP", "pytrec_eval")
    assert values == pytest.approx({"q1": math.log(0.3), "q2": math.log(0.5), "q3": math.log(1e-5)}, rel=1e-12)
    assert mean("GMAP", "trec_eval") == pytest.approx(math.exp(sum(values.values()) / 3), rel=1e-12)
    # -c: the missing q4 adds log(1e-5) too
    assert mean("GMAP", "trec_eval_c") == pytest.approx(math.exp((sum(values.values()) + math.log(1e-5)) / 4))


def test_gm_bpref():
    # bpref: q1 1/3, q2 0 (floored), q4 0 (floored); q3 null
    assert exact_per_query("GMBpref") == {"q1": Fraction(1, 3), "q2": 0, "q3": None, "q4": 0}
    assert mean("GMBpref") == pytest.approx(math.exp((math.log(1 / 3) + 2 * math.log(1e-5)) / 3), rel=1e-12)
