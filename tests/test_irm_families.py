"""ir_measures' families that trec_eval lacks, on rankings small enough to work by hand.

One query ``1`` judged a=2, c=1, d=1 (d never retrieved), b=0, ranked
a, x (unjudged), c; query ``2`` judges nothing positive.  Each figure below
is worked from the measure's definition in its module's docstring.
"""
from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

import trec_bridge as tb
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures

QRELS = {"1": {"a": 2, "b": 0, "c": 1, "d": 1}, "2": {"z": 0}}
RUN = {"1": {"a": 3.0, "x": 2.0, "c": 1.0}, "2": {"z": 1.0}}


def value(measure: str, policy: str = "strict", qrels=QRELS, run=RUN, query="1"):
    res = tb.score(qrels, run, measure, policy=policy)
    rows = res.per_query
    return rows[(rows["query_id"] == query)]["value"].tolist()[0]


def test_err_is_the_cascade_with_gdeval_stopping_probabilities():
    # R(a) = (2^2 - 1) / 16 = 3/16 at rank 1; R(c) = 1/16 at rank 3, reached with probability 13/16
    assert value("ERR@3") == pytest.approx(float(Fraction(3, 16) + Fraction(13, 16) * Fraction(1, 16) / 3), abs=1e-15)
    assert value("ERR@1") == 3 / 16
    assert value("ERR(max_rel=2)@3") == pytest.approx(float(Fraction(3, 4) + Fraction(1, 4) * Fraction(1, 4) / 3))


def test_err_under_ir_measures_is_gdevals_five_decimal_printout():
    # 157/768 = 0.2044270833..., printed by gdeval as 0.20443; 3/16 = 0.1875 stays
    assert value("ERR@3", "ir_measures") == 0.20443
    assert value("ERR@3") != 0.20443


def test_rbp_and_its_residual():
    # p = 0.5: weights 1/2, 1/4, 1/8, ... (normalised over 1,000 positions: the same to 1e-300)
    assert value("RBP(p=0.5)") == pytest.approx(0.5 + 0.125, abs=1e-12)
    assert value("RBP(p=0.5,rel=2)") == pytest.approx(0.5, abs=1e-12)
    # residual: the weight of every position whose gain is unknown: x at 2 and everything past 3
    assert value("RBP(p=0.5,residual=True)") == pytest.approx(1 - 0.5 - 0.125, abs=1e-12)


def test_sdcg_scales_dcg_by_k_documents_of_the_top_grade():
    # gains a = 2/2, x = 0, c = 1/2: DCG@2 = 1, scale = 1 + 1/log2(3)
    assert value("SDCG(max_rel=2)@2") == pytest.approx(1 / (1 + 1 / math.log2(3)), abs=1e-12)
    three = (1 + 0.5 / 2) / (1 + 1 / math.log2(3) + 1 / 2)
    assert value("SDCG(max_rel=2)@3") == pytest.approx(three, abs=1e-12)


def test_nerr8_stops_at_a_fully_relevant_document():
    assert value("NERR8(max_rel=2)@3") == pytest.approx(1.0, abs=1e-15)  # a has gain 1: C(1) = 0, W = (1, 0, ...)
    # ranked x, a: C(1) = 1 - 0, C(2) = 0 (k = 2): W = (1/2, 1/2), value = 1/2 * 0 + 1/2 * 1
    assert value("NERR8(max_rel=2)@2", run={"1": {"x": 2.0, "a": 1.0}}) == pytest.approx(0.5, abs=1e-15)
    # NERR9: C(1) = 1/2 * (1 - 0): W = (2/3, 1/3)
    assert value("NERR9(max_rel=2)@2", run={"1": {"x": 2.0, "a": 1.0}}) == pytest.approx(1 / 3, abs=1e-15)


def test_insq_weights_follow_the_goal():
    # T = 1: C(i) = ((i + 1) / (i + 2))^2, so W(i) is proportional to (2 / (i + 1))^2
    weight = [(2 / (i + 1)) ** 2 for i in range(1, 1001)]
    assert value("INSQ(max_rel=2,T=1)") == pytest.approx((weight[0] * 1 + weight[2] * 0.5) / sum(weight), abs=1e-12)


def test_inst_with_its_goal_met_at_the_top():
    # a (gain 1) meets T = 1 at rank 1: T_1 = 0, C(1) = ((1 + 1 + 0 - 1) / (1 + 1 + 0))^2 = 1/4, and the rest
    # of the walk only gathers c's 1/2: value = (1 * W1 + 1/2 * W3) with W from C
    c = []
    gathered = 0.0
    for i, g in enumerate([1.0, 0.0, 0.5] + [0.0] * 997, 1):
        gathered += g
        left = 1 - gathered
        c.append(((i + 1 + left - 1) / (i + 1 + left)) ** 2)
    reach = [1.0]
    for ci in c[:-1]:
        reach.append(reach[-1] * ci)
    assert value("INST(max_rel=2)") == pytest.approx((reach[0] + 0.5 * reach[2]) / sum(reach), abs=1e-12)


def test_compat_is_rank_biased_overlap_with_the_ideal():
    # ideal a, c, d; ranking a, x, c; depth 3; overlaps 1, 1, 2
    # RBO = 1/1 + 0.5 * 1/2 + 0.25 * 2/3 = 17/12; ideal with itself: 1 + 0.5 + 0.25 = 7/4
    assert value("Compat(p=0.5)") == pytest.approx(17 / 21, abs=1e-12)
    # without normalisation: divided by sum of p^(d-1) over depth 4 (ranking a, x, c, y is longer)
    run = {"1": {"a": 4.0, "x": 3.0, "c": 2.0, "y": 1.0}}
    assert value("Compat(p=0.5,normalize=False)", run=run) == pytest.approx(
        (1 + 0.5 / 2 + 0.25 * 2 / 3 + 0.125 * 2 / 4) / (1 + 0.5 + 0.25 + 0.125), abs=1e-12)


@pytest.mark.parametrize("measure", ["ERR@3", "RBP(p=0.5)", "SDCG(max_rel=2)@3", "NERR10(max_rel=2)",
                                     "NERR11(max_rel=2)", "INST(max_rel=2)", "INSQ(max_rel=2)", "Compat"])
def test_a_query_without_a_positive_grade_is_null_under_strict_and_zero_under_ir_measures(measure):
    assert value(measure, query="2") is None or math.isnan(value(measure, query="2"))
    assert value(measure, "ir_measures", query="2") == 0.0


def test_a_grade_above_the_scale_is_refused_not_clipped(tmp_path, capsys):
    with pytest.raises(InvalidInput) as err:
        tb.score({"7": {"a": 5}}, {"7": {"a": 1.0}}, "ERR@10")
    assert err.value.code == "E_GRADE_SCALE" and "'7'" in str(err.value)
    with pytest.raises(InvalidInput) as err:
        tb.score(QRELS, RUN, "SDCG(max_rel=1)@5")
    assert err.value.code == "E_GRADE_SCALE"
    (tmp_path / "q").write_text("1 0 a 5\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1.0 r\n")
    assert main(["score", str(tmp_path / "q"), str(tmp_path / "r"), "INST(max_rel=3)"]) == 1
    assert "E_GRADE_SCALE" in capsys.readouterr().err


@pytest.mark.parametrize("text, code", [("SDCG@10", "E_MEASURE_PARAM"), ("NERR8(max_rel=3)", "E_CUTOFF"),
                                        ("RBP@10", "E_CUTOFF"), ("INST(T=0,max_rel=2)", "E_MEASURE_PARAM"),
                                        ("INST(T=1e308,max_rel=2)", "E_MEASURE_PARAM"),
                                        ("RBP(p=1)", "E_MEASURE_PARAM"), ("Compat(rel=2)", "E_MEASURE_PARAM"),
                                        ("SDCG(min_rel=3,max_rel=3)@5", "E_MEASURE_PARAM"),
                                        ("INST(max_rel=2,rel=1)", "E_MEASURE_PARAM")])
def test_bad_parameters_are_refused_with_their_code(text, code):
    with pytest.raises(InvalidInput) as err:
        parse_measures(text)
    assert err.value.code == code


def test_ir_measures_spellings_are_read():
    rbp, sdcg, nerr, inst = parse_measures("RBP(p=0.8,rel=1) SDCG(max_rel=3)@10 NERR8(max_rel=3)@10 INST(T=1,max_rel=3)")
    assert rbp.rel == 1 and str(rbp) == "RBP(rel=1)"  # p=0.8 is the default
    assert sdcg.param("max_rel") == 3 and sdcg.cutoff == 10 and nerr.family == "NERR8"
    assert str(inst) == "INST(max_rel=3)"  # T=1 (an int) is the default T=1.0
    (rbp,) = parse_measures("RBP(p=0.5,rel=1)")
    assert rbp.param("p") == 0.5


def test_crosscheck_names_the_provider_and_explains_err(tmp_path, capsys):
    (tmp_path / "q").write_text("1 0 a 2\n1 0 c 1\n1 0 d 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 3.0 r\n1 Q0 x 2 2.0 r\n1 Q0 c 3 1.0 r\n")
    out = tmp_path / "cc.json"
    code = main(["crosscheck", str(tmp_path / "q"), str(tmp_path / "r"), "ERR@3 RBP(p=0.5) Compat(p=0.5)",
                 "--against", "ir_measures", "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "every difference is explained" in printed and "printed_digits" in printed
    text = json.dumps(json.loads(out.read_text()))
    assert "gdeval" in text and "cwl_eval" in text and "compat" in text


def test_compat_ideal_puts_the_better_grade_first():
    # judged a=1, c=2, ranked a, c: ideal c, a; overlaps 0 then 2: (0 + 0.5 * 2/2) / (1 + 0.5 * 2/2) = 1/3
    assert value("Compat(p=0.5)", qrels={"1": {"a": 1, "c": 2}}, run={"1": {"a": 2.0, "c": 1.0}}) == \
        pytest.approx(1 / 3, abs=1e-12)



def test_cwl_eval_ties_stay_in_the_runs_row_order_under_ir_measures():
    """Tie order ``input`` (cwl_eval's stable sort): re-sorted by score, tied rows keep the run's row order."""
    import polars as pl

    from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Dataset, Qrels, Query, Run
    from trec_bridge.policy import IR_MEASURES
    from trec_bridge.scorer import score

    qrels = Qrels(pl.DataFrame([("1", "0", "a", 1), ("2", "0", "b", 1)], schema=QRELS_SCHEMA, orient="row"))
    dataset = Dataset(queries=(Query("1"), Query("2")), qrels=qrels, threshold=1, query_source="qrels")
    rows = [("1", "x", 1.0, 1), ("1", "a", 2.0, 2), ("1", "b", 2.0, 3),  # docno descending would put b first
            ("2", "x", 1.0, 1), ("2", "b", 2.0, 2), ("2", "a", 2.0, 3)]  # docno ascending would put a first
    run = Run(pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), queries=("1", "2"))
    (m,) = parse_measures("RBP(p=0.5,rel=1)")
    result = score(dataset, run, [m], IR_MEASURES)
    assert result.means[str(m)].value == pytest.approx(0.5, abs=1e-12)  # the relevant document first in both


def test_a_parameter_at_its_default_names_the_same_measure():
    """As in ir_measures: RBP(p=0.8) is RBP, INST(T=1,max_rel=3) is INST(max_rel=3); a repeat is dropped."""
    measures = parse_measures("RBP RBP(p=0.8) INST(T=1,max_rel=3) INST(max_rel=3,min_rel=0) Compat(p=0.95) ERR(max_rel=4)@5")
    assert [str(m) for m in measures] == ["RBP", "INST(max_rel=3)", "Compat", "ERR@5"]
    assert len(measures.notes) == 2
