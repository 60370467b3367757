"""trec_eval's second group of families, worked by hand on one tiny ranking each (trec_eval 9.0.4's m_*.c).

The shared example (rel threshold 1 unless said):

    qrels  q1: d1=1 d2=0 d3=2 d4=1      -> 3 relevant (d1 d3 d4)
           q2: e1=0                     -> no relevant document (null under strict)
           q3: f1=1                     -> not in the run (missing: 0 under strict)
    run    q1: d1 d2 x d3  (x unjudged) -> 4 retrieved, 2 relevant retrieved (d1 at 1, d3 at 4)
           q2: e1 e2
"""
from __future__ import annotations

import math
from fractions import Fraction

import pytest

import trec_bridge as tb
from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2, "d4": 1}, "q2": {"e1": 0}, "q3": {"f1": 1}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "x": 1.5, "d3": 1.0}, "q2": {"e1": 1.0, "e2": 0.5}}


def per_query(measure: str, policy: str = "strict", qrels=QRELS, run=RUN) -> dict:
    res = tb.score(qrels, run, measure, policy=policy)
    rows = res.per_query
    return {q: (None if v != v else v) for q, v in zip(rows["query_id"], rows["value"])}


def exact(measure: str, policy: str = "strict", qrels=QRELS, run=RUN) -> Fraction:
    return tb.score(qrels, run, measure, policy=policy).exact[measure]


# ------------------------------------------------------------------ set measures (m_set_*.c)

@pytest.mark.parametrize("measure, q1, mean", [
    ("SetP", Fraction(2, 4), Fraction(1, 4)),            # a/n = 2/4; mean over q1, q3 (q2 null): (1/2 + 0) / 2
    ("SetRelP", Fraction(2, 3), Fraction(1, 3)),         # a/min(n, R) = 2/min(4, 3)
    ("SetR", Fraction(2, 3), Fraction(1, 3)),            # a/R = 2/3
    ("SetAP", Fraction(1, 3), Fraction(1, 6)),           # a²/(n·R) = 4/12
    ("SetF", Fraction(4, 7), Fraction(2, 7)),            # (β+1)·a/(β·R + n) = 2·2/(3 + 4)
    ("SetF(beta=0.5)", Fraction(6, 11), Fraction(3, 11)),  # 1.5·2/(1.5 + 4) = 3/5.5
    ("SetF(beta=0)", Fraction(1, 2), Fraction(1, 4)),    # β = 0 is the set precision
])
def test_set_measures_by_hand(measure, q1, mean):
    values = per_query(measure)
    assert values["q1"] == float(q1)
    assert values["q2"] is None  # no relevant document: null under strict, whatever the denominator
    assert values["q3"] == 0.0  # missing: 0, in the mean
    assert exact(measure) == mean


def test_set_measures_at_another_threshold():
    """rel=2: only d3 is relevant in q1 (a = 1, R = 1); q3's only judgment is grade 1, so q3 is null too."""
    assert per_query("SetP(rel=2)") == {"q1": 0.25, "q2": None, "q3": None}
    assert per_query("SetR(rel=2)")["q1"] == 1.0
    assert exact("SetF(rel=2)") == Fraction(2 * 1, 1 + 4)  # (β+1)·a/(β·R + n) with a = R = 1, n = 4


@pytest.mark.parametrize("measure, q2", [("SetP", 0.0), ("SetRelP", 0.0), ("SetR", 0.0), ("SetAP", 0.0),
                                         ("SetF", 0.0)])
def test_set_measures_trec_eval_counts_a_no_relevant_query_as_zero(measure, q2):
    values = per_query(measure, "trec_eval")
    assert values["q2"] == q2
    assert "q3" not in values  # trec_eval without -c: only queries of the run


def test_set_measures_take_no_cutoff_and_read_beta():
    with pytest.raises(InvalidInput) as err:
        parse_measures("SetP@10")
    assert err.value.code == "E_CUTOFF"
    for bad in ("SetF(beta=-1)", "SetF(beta=x)", "SetF(beta=nan)", "SetF(beta=1e400)", "SetF(beta=10**400)",
                "SetF(beta=True)", f"SetF(beta={10 ** 400})"):
        with pytest.raises(InvalidInput) as err:
            parse_measures(bad)
        assert err.value.code == "E_MEASURE_PARAM", bad
    assert str(parse_measures("SetF(beta=0.5)")[0]) == "SetF(beta=0.5)"
    with pytest.raises(InvalidInput) as err:
        parse_measures("SetP(relative=True)")  # ir_measures' spelling: pointed to its other name
    assert err.value.code == "E_MEASURE_PARAM" and "SetRelP" in err.value.message


def test_set_f_beta_is_trec_eval_x_not_squared():
    """β = 2: trec_eval's (x+1)PR/(xP+R) = 3·2/(2·3 + 4) = 3/5; van Rijsbergen's F_2 would be 5PR/(4P+R) = 10/16."""
    assert exact("SetF(beta=2)") == Fraction(3, 5) / 2


def test_set_measures_trec_eval_names():
    from trec_bridge.references.base import trec_eval_name
    assert trec_eval_name(parse_measures("SetP")[0]) == ("set_P", None, "set_P")
    assert trec_eval_name(parse_measures("SetRelP")[0]) == ("set_relative_P", None, "set_relative_P")
    assert trec_eval_name(parse_measures("SetR")[0]) == ("set_recall", None, "set_recall")
    assert trec_eval_name(parse_measures("SetAP")[0]) == ("set_map", None, "set_map")
    assert trec_eval_name(parse_measures("SetF")[0]) == ("set_F", None, "set_F")
    assert trec_eval_name(parse_measures("SetF(beta=0.5)")[0]) == ("set_F", "0.5", "set_F_0.5")


# ------------------------------------------------------------------ gain families (m_binG.c, m_G.c, m_ndcg_rel.c, m_Rndcg.c)
# q1 by rank: d1 (grade 1), d2 (0), x (unjudged), d3 (2); d4 (1) not retrieved.  Gains = grades: the ideal is 2, 1, 1.
LOG3 = math.log2(3)


def test_bin_g_by_hand():
    # d1 at rank 1: 0 non-relevant above -> 1/log2(2) = 1; d3 at rank 4, 2nd relevant: 2 above -> 1/log2(4) = 1/2
    assert per_query("binG") == pytest.approx({"q1": 1.5 / 3, "q2": None, "q3": 0.0}, abs=1e-15)
    # rel=2: only d3, 3 documents above it -> 1/log2(5), over 1 relevant; q3 has no grade-2 document: null
    assert per_query("binG(rel=2)")["q1"] == pytest.approx(1 / math.log2(5), abs=1e-15)


def test_g_by_hand():
    # cost(i) = sum over ideal positions <= i of max(ideal gain, 1): 2, 3, 4, 5; gathered gain: 1, 1, 1, 3
    # d1 (gain 1) at rank 1: 1/log2(2 + 2 - 1) = 1/log2(3); d3 (gain 2) at rank 4: 2/log2(2 + 5 - 3) = 1
    # over the total ideal gain 2 + 1 + 1 = 4
    values = per_query("G")
    assert values["q1"] == pytest.approx((1 / LOG3 + 1) / 4, abs=1e-15)
    assert values["q2"] is None and values["q3"] == 0.0
    # gains={1:3,2:9}: ideal 9, 3, 3 -> cost 9, 12, 15, 16; gathered 3, 3, 3, 12 -> 3/log2(2+9-3) + 9/log2(2+16-12)
    assert per_query("G(gains={1:3,2:9})")["q1"] == pytest.approx((3 / 3 + 9 / math.log2(6)) / 15, abs=1e-15)


def test_ndcg_rel_by_hand():
    # IDCG down to 1, 3: 2, 2 + 1/log2(3) + 1/2; DCG down to 1, 4: 1, 1 + 2/log2(5)
    # d1: 1/2; d3 at 4: DCG(4)/IDCG(3); d4 not retrieved: the whole ranking's nDCG, the same; over 3 relevant
    idcg3, dcg4 = 2 + 1 / LOG3 + 0.5, 1 + 2 / math.log2(5)
    assert per_query("nDCG_rel") == pytest.approx({"q1": (0.5 + 2 * dcg4 / idcg3) / 3, "q2": None, "q3": 0.0},
                                                  abs=1e-15)


def test_rndcg_by_hand():
    # the ideal's gain drops after position 1 (2 -> 1) and ends after 3: nDCG@1 = 1/2, nDCG@3 = 1/IDCG(3)
    idcg3 = 2 + 1 / LOG3 + 0.5
    assert per_query("RnDCG") == pytest.approx({"q1": (0.5 + 1 / idcg3) / 2, "q2": None, "q3": 0.0}, abs=1e-15)


def test_rndcg_adds_the_whole_ranking_only_two_past_the_ideal():
    """One relevant document a (ideal length 1, R-level 1).  Ranked second of three: nDCG@1 = 0 and the
    implied level at the end, 1/log2(3), averaged; ranked second of two (one past the ideal): only nDCG@1 = 0,
    as trec_eval 9.0.4's loop gives (m_Rndcg.c adds the end only when a ranked document is left after the ideal's)."""
    qrels = {"qa": {"a": 1}, "qb": {"a": 1}}
    run = {"qa": {"u1": 3.0, "a": 2.0, "u2": 1.0}, "qb": {"u1": 3.0, "a": 2.0}}
    assert per_query("RnDCG", qrels=qrels, run=run) == pytest.approx({"qa": (0 + 1 / LOG3) / 2, "qb": 0.0}, abs=1e-15)


def test_gain_families_refuse_a_threshold_they_do_not_read():
    for text in ("G(rel=2)", "nDCG_rel(rel=2)"):
        with pytest.raises(InvalidInput) as err:
            parse_measures(text)
        assert err.value.code == "E_MEASURE_PARAM", text
    assert str(parse_measures("rndcg(gains={1:3})")[0]) == "RnDCG(gains={1:3})"


def test_gain_families_trec_eval_names():
    from trec_bridge.references.base import trec_eval_name
    assert trec_eval_name(parse_measures("binG")[0]) == ("binG", None, "binG")
    assert trec_eval_name(parse_measures("G(gains={1:3,2:9})")[0]) == ("G", "1=3,2=9", "G_1=3,2=9")
    assert trec_eval_name(parse_measures("nDCG_rel")[0]) == ("ndcg_rel", None, "ndcg_rel")
    assert trec_eval_name(parse_measures("RnDCG(gains={1:4.5})")[0]) == ("Rndcg", "1=4.5", "Rndcg_1=4.5")


def test_rndcg_with_no_positive_gain_is_refused_under_trec_eval_which_prints_nan():
    """A gain map can leave a query with a relevant document but no positive gain: trec_eval's Rndcg is 0/0 there
    (m_Rndcg.c divides by a count of R-levels that stays 0) and prints nan; strict says null, trec_eval's
    policy refuses rather than print a number trec_eval does not."""
    qrels, run = {"q0": {"d0": 1}}, {"q0": {"d0": 1.0}}
    assert per_query("RnDCG(gains={1:0})", qrels=qrels, run=run) == {"q0": None}
    with pytest.raises(InvalidInput) as err:
        tb.score(qrels, run, "RnDCG(gains={1:0})", policy="trec_eval")
    assert err.value.code == "E_POLICY_MEASURE" and "nan" in err.value.message


# ------------------------------------------------------------------ utility (m_utility.c)
# q1: a = 2 relevant retrieved, n - a = 2 non-relevant retrieved, R - a = 1 relevant not retrieved

def test_utility_by_hand():
    assert per_query("Utility") == {"q1": 1 * 2 - 1 * 2, "q2": None, "q3": 0.0}  # default coefficients 1, -1, 0
    # 2·2 − 1·2 − 0.5·1 = 1.5; q3 (missing) scores 0 although c·R would be −0.5: trec_eval -c's missing query
    assert per_query("Utility(a=2,c=-0.5)") == {"q1": 1.5, "q2": None, "q3": 0.0}
    assert exact("Utility(a=2,c=-0.5)") == Fraction(3, 4)
    # q1: 0.1·2 − 0.2·2 = −1/5, decimals read exactly; the mean with q3 (0): −1/10
    assert exact("Utility(a=0.1,b=-0.2)") == (Fraction(1, 10) * 2 - Fraction(2, 10) * 2) / 2
    assert per_query("Utility", "trec_eval") == {"q1": 0.0, "q2": -2.0}  # q2: 0 relevant, 2 non-relevant retrieved


def test_utility_refuses_a_coefficient_it_cannot_compute():
    for bad in ("Utility(d=1)", "Utility(a=nan)", "Utility(b=1e300)", "Utility(a=0.1234567)", "Utility(a=x)",
                "Utility@10"):
        with pytest.raises(InvalidInput) as err:
            parse_measures(bad)
        assert err.value.code in ("E_MEASURE_PARAM", "E_CUTOFF"), bad


def test_utility_trec_eval_names():
    from trec_bridge.references.base import trec_eval_name
    from trec_bridge.measures.trec_names import trec_eval_form
    from trec_bridge.measures.base import FAMILIES
    assert trec_eval_name(parse_measures("Utility")[0]) == ("utility", None, "utility")
    assert trec_eval_name(parse_measures("Utility(a=2)")[0]) == ("utility", "2,-1,0,0", "utility_2,-1,0,0")
    [form] = trec_eval_form(FAMILIES["Utility"])
    assert [str(m) for m in form.to_measures("2,-1,0.5,0")] == ["Utility(a=2,b=-1,c=0.5,d=0)"]
    with pytest.raises(InvalidInput):
        form.to_measures("1,-1,0,1")  # the collection-size coefficient


# ------------------------------------------------------------------ infAP (m_infap.c)
# q1 by rank: d1 (1), p (-1: pooled, not judged), d2 (0), x (no judgment: outside the pool), d3 (2), d4 (1)
INFAP_QRELS = {"q1": {"d1": 1, "p": -1, "d2": 0, "d3": 2, "d4": 1}, "q2": {"e1": 0}, "q3": {"f1": 1}}
INFAP_RUN = {"q1": {"d1": 6.0, "p": 5.0, "d2": 4.0, "x": 3.0, "d3": 2.0, "d4": 1.0}, "q2": {"e1": 1.0}}
EPS = 1e-5


def test_infap_by_hand():
    # d1 at rank 1: 1.  d3 at rank 5, 2nd relevant: 1 relevant, 1 non-relevant (d2), 1 pooled-unjudged (p) above:
    # 1/5 + (1+1+1)/5 · (1+ε)/(1+1+2ε) = 1/5 + 3/5 · 1/2.  d4 at rank 6, 3rd: 1/6 + (2+1+1)/6 · (2+ε)/(2+1+2ε).
    # x takes rank 4 but counts nowhere else.  Over 3 relevant.
    d4 = 1 / 6 + 4 / 6 * (2 + EPS) / (3 + 2 * EPS)
    values = per_query("infAP", qrels=INFAP_QRELS, run=INFAP_RUN)
    assert values == pytest.approx({"q1": (1 + 0.5 + d4) / 3, "q2": None, "q3": 0.0}, abs=1e-15)


def test_infap_tells_a_pooled_unjudged_document_from_one_outside_the_pool():
    """p judged -1 counts in the pooled share above d3; without its judgment it is outside the pool:
    d3 then adds 1/5 + (1+1)/5 · 1/2 = 2/5 instead of 1/2 (and d4 1/6 + 3/6 · (2+ε)/(3+2ε))."""
    qrels = {**INFAP_QRELS, "q1": {d: g for d, g in INFAP_QRELS["q1"].items() if d != "p"}}
    d4 = 1 / 6 + 3 / 6 * (2 + EPS) / (3 + 2 * EPS)
    assert per_query("infAP", qrels=qrels, run=INFAP_RUN)["q1"] == pytest.approx((1 + 0.4 + d4) / 3, abs=1e-15)


def test_infap_at_another_threshold():
    # rel=2: only d3 is relevant; above it: d1 and d2 judged non-relevant, p pooled: 1/5 + 3/5 · ε/(2+2ε)
    assert per_query("infAP(rel=2)", qrels=INFAP_QRELS, run=INFAP_RUN)["q1"] == pytest.approx(
        1 / 5 + 3 / 5 * EPS / (2 + 2 * EPS), abs=1e-15)


def test_gain_families_refuse_gains_whose_sums_leave_the_double_range():
    qrels, run = {"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}
    with pytest.raises(InvalidInput) as err:
        tb.score(qrels, run, "G(gains={1:1e308})")
    assert err.value.code == "E_GAIN_OVERFLOW"


def test_trec_eval_gets_one_call_per_own_parameter():
    """trec_eval 9.0.4 takes one β (one coefficient list, one gain map) per -m name and call and ignores a second
    -m set_F: each goes to a call of its own; cutoffs (P.5,10) still share one -m."""
    from trec_bridge.references.base import Options, ReferenceResult
    from trec_bridge.references.trec_eval import TrecEval

    qrels = tb.read_qrels([("q1", "d1", 1), ("q1", "d2", 2)])
    measures = parse_measures("SetF SetF(beta=0.5) P@5 P@10 Utility(a=2) G(gains={1:3}) G")
    calls = TrecEval()._plan([(m, 1) for m in measures], qrels, Options(), ReferenceResult("trec_eval", "9.0.4"))
    families = sorted(sorted(f"{base}.{','.join(p)}" if p else base for base, p in call["families"].items())
                      for call in calls.values())
    assert families == [["G", "P.5,10", "set_F"], ["G.1=3"], ["set_F.0.5"], ["utility.2,-1,0,0"]]


def test_ir_measures_gets_a_family_parameter_by_its_name_or_says_it_has_none():
    from trec_bridge.measures.base import Measure
    from trec_bridge.references.ir_measures_ref import IrMeasures

    tool = IrMeasures()
    assert str(tool.to_ir_measure(parse_measures("SetF(beta=0.5)")[0], 1)) == "SetF(beta=0.5)"
    assert tool.to_ir_measure(Measure("SetF", extra=(("alpha", 1.0),)), 1) == "ir_measures' SetF has no parameter alpha"
