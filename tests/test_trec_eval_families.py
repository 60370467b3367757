"""trec_eval's second group of families, worked by hand on one tiny ranking each (trec_eval 9.0.4's m_*.c).

The shared example (rel threshold 1 unless said):

    qrels  q1: d1=1 d2=0 d3=2 d4=1      -> 3 relevant (d1 d3 d4)
           q2: e1=0                     -> no relevant document (null under strict)
           q3: f1=1                     -> not in the run (missing: 0 under strict)
    run    q1: d1 d2 x d3  (x unjudged) -> 4 retrieved, 2 relevant retrieved (d1 at 1, d3 at 4)
           q2: e1 e2
"""
from __future__ import annotations

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
