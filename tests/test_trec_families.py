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
    assert main(["score", str(qrels), str(run), "NumRet AP", "--json", str(tmp_path / "o.json"),
                 "--per-query", str(tmp_path / "pq.tsv")]) == 0
    out = capsys.readouterr().out
    assert "\nNumRet          3  3 " in out
    assert "q1\tNumRet\tranked\t3\t3\t" in (tmp_path / "pq.tsv").read_text()
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


# ---------------------------------------------------------------- interpolated precision, 11pt_avg

def test_iprec_at_trec_evals_levels():
    # q1: R = 3, relevant retrieved a (k=1, rank 2: 1/2), c (k=2, rank 5: 2/5); best from k=1 on: 1/2, from k=2: 2/5.
    # level r reaches the c-th relevant document, c = (long)(r * 3 + 0.9) in doubles:
    #   0.0 -> 0 (best overall, 1/2); 0.3 -> (long)1.8 = 1 (1/2); 0.4 -> (long)2.1 = 2 (2/5);
    #   0.7 -> 0.7 * 3 = 2.0999999999999996, + 0.9 = 2.9999999999999996 -> 2 (2/5, as trec_eval prints; 3 in exact
    #   decimals would give 0); 0.8 -> (long)3.3 = 3 > 2 retrieved -> 0.
    # q2: R = 1, y at rank 2: 1/2 at every level (1.0 -> (long)1.9 = 1).  q3 null.  q4 missing: 0.
    for level, q1 in (("0.0", Fraction(1, 2)), ("0.3", Fraction(1, 2)), ("0.4", Fraction(2, 5)),
                      ("0.7", Fraction(2, 5)), ("0.8", 0), ("1.0", 0)):
        assert exact_per_query(f"IPrec@{level}") == {"q1": q1, "q2": Fraction(1, 2), "q3": None, "q4": 0}, level


def test_iprec_interpolates_from_later_ranks():
    # hits at ranks 2 and 3: precision 1/2 then 2/3; interpolated precision at the first hit is the later 2/3
    qrels, run = {"q": {"a": 1, "b": 1}}, {"q": {"x": 3.0, "a": 2.0, "b": 1.0}}
    assert exact_per_query("IPrec@0.5", qrels, run) == {"q": Fraction(2, 3)}  # c = (long)1.9 = 1
    assert exact_per_query("IPrec@1.0", qrels, run) == {"q": Fraction(2, 3)}  # c = 2


def test_iprec_levels_are_read_with_two_decimals():
    assert str(parse_measures("IPrec@.5")[0]) == "IPrec@0.5"
    for bad in ("IPrec@1.5", "IPrec@0.125", "IPrec@-0.1", "IPrec@x", "IPrec"):
        with pytest.raises(InvalidInput) as err:
            parse_measures(bad)
        assert err.value.code == "E_CUTOFF", bad
    with pytest.raises(InvalidInput) as err:
        parse_measures("IPrec")
    assert "e.g. IPrec@0.5" in err.value.message  # a recall level, not a rank


def test_avg_iprec_is_the_mean_of_eleven_levels():
    # q1: levels 0.0-0.3 give 1/2 (4 levels), 0.4-0.7 give 2/5 (4), 0.8-1.0 give 0 (3): (2 + 8/5) / 11 = 18/55
    # q2: 1/2 at all 11 levels
    assert exact_per_query("AvgIPrec") == {"q1": Fraction(18, 55), "q2": Fraction(1, 2), "q3": None, "q4": 0}


# ---------------------------------------------------------------- Rprec_mult, relative_P

def test_rprec_mult():
    # q1: R = 3.  m = 0.2: n = (long)1.5 = 1, top 1 = b: 0.  m = 0.6: (long)2.7 = 2, top 2 = b, a: 1/2.
    #     m = 1.0: n = 3: a: 1/3.  m = 2.0: n = (long)6.9 = 6, longer than the ranking (5): a, c -> 2/6 (not padded).
    # q2: R = 1.  m = 0.2: (long)1.1 = 1: x: 0.  m = 2.0: (long)2.9 = 2: y: 1/2.
    assert exact_per_query("RprecMult@0.2") == {"q1": 0, "q2": 0, "q3": None, "q4": 0}
    assert exact_per_query("RprecMult@0.6") == {"q1": Fraction(1, 2), "q2": 0, "q3": None, "q4": 0}
    assert exact_per_query("RprecMult@1.0") == {"q1": Fraction(1, 3), "q2": 0, "q3": None, "q4": 0}
    assert exact_per_query("RprecMult@2") == {"q1": Fraction(1, 3), "q2": Fraction(1, 2), "q3": None, "q4": 0}


def test_relative_p():
    # q1: R = 3.  @2: b, a -> 1 / min(2, 3) = 1/2.  @10: a, c -> 2 / min(10, 3) = 2/3.
    # q2: R = 1.  @2: x, y -> 1 / min(2, 1) = 1.  @10: 1.
    assert exact_per_query("RelativeP@2") == {"q1": Fraction(1, 2), "q2": 1, "q3": None, "q4": 0}
    assert exact_per_query("RelativeP@10") == {"q1": Fraction(2, 3), "q2": 1, "q3": None, "q4": 0}


def test_trec_eval_names_are_declared_by_the_families():
    from trec_bridge.measures.base import FAMILIES
    from trec_bridge.references.base import trec_eval_name

    printed = {str(m): trec_eval_name(m)[2] for m in parse_measures(
        "NumQ NumRet NumRel NumRelRet NumNonRelJudgedRet Rprec Bpref GMAP GMBpref IPrec@0.5 IPrec@1 AvgIPrec "
        "RprecMult@0.2 RprecMult@2 RelativeP@5")}
    assert printed == {"NumQ": "num_q", "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret",
                       "NumNonRelJudgedRet": "num_nonrel_judged_ret", "Rprec": "Rprec", "Bpref": "bpref",
                       "GMAP": "gm_map", "GMBpref": "gm_bpref", "IPrec@0.5": "iprec_at_recall_0.50",
                       "IPrec@1.0": "iprec_at_recall_1.00", "AvgIPrec": "11pt_avg", "RprecMult@0.2": "Rprec_mult_0.20",
                       "RprecMult@2.0": "Rprec_mult_2.00", "RelativeP@5": "relative_P_5"}
    from trec_bridge.measures.trec_names import trec_eval_form
    (iprec,) = trec_eval_form(FAMILIES["IPrec"])
    assert [str(m) for m in iprec.to_measures(None)] == [f"IPrec@{i / 10}" for i in range(11)]  # -m iprec_at_recall
    (mult,) = trec_eval_form(FAMILIES["RprecMult"])
    assert [m.cutoff for m in mult.to_measures(None)] == [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
    # get_float_cutoffs sorts the levels (out.test.meas_params prints Rprec_mult_0.20, _0.35, _5.00 for 5.0,0.2,0.35)
    assert [str(m) for m in mult.to_measures("5.0,0.35")] == ["RprecMult@0.35", "RprecMult@5.0"]
    (rel_p,) = trec_eval_form(FAMILIES["RelativeP"])
    assert [m.cutoff for m in rel_p.to_measures(None)] == [5, 10, 15, 20, 30, 100, 200, 500, 1000]
    irm = {name: FAMILIES[name].native("ir_measures") for name in ("NumQ", "NumRet", "NumRel", "NumRelRet", "Rprec",
                                                                   "Bpref", "IPrec", "GMAP", "AvgIPrec")}
    assert irm == {"NumQ": "NumQ", "NumRet": "NumRet", "NumRel": "NumRel", "NumRelRet": "NumRelRet", "Rprec": "Rprec",
                   "Bpref": "Bpref", "IPrec": "IPrec", "GMAP": None, "AvgIPrec": None}


def test_crosscheck_table_prints_counts_as_integers(tmp_path, capsys):
    from trec_bridge.cli.main import main
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n")
    run.write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\n")
    main(["crosscheck", str(qrels), str(run), "NumRel AP", "--against", "pytrec_eval"])
    out = capsys.readouterr().out
    # strict counts q2's relevant document (2), pytrec_eval only the ranked q1 (1): the query_set axis, 1
    assert "\nNumRel                          2        1        1  yes  query_set 1\n" in out, out
