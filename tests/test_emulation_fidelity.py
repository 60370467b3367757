"""An emulated policy prints a number only where the tool prints that number (issue 13 §3).

One rule decides both the cross-check's "not compared" and a policy's refusal
(``Reference.refusal``): these tests check that the two never part, over a
grid of measures and parameters, and that what an emulation does print agrees
with the real tool.
"""
from __future__ import annotations

import math

import pytest

from converters.detect import load_dataset_any, load_run_any
from trec_bridge.crosscheck import crosscheck, reference_policy
from trec_bridge.errors import UsageError
from trec_bridge.measures import parse_measures
from trec_bridge.policy import POLICIES, STRICT
from trec_bridge.references import get
from trec_bridge.scorer import score

TOOLS = ["trec_eval", "pytrec_eval", "ir_measures"]
AVAILABLE = [t for t in TOOLS if get(t).available()]

# grades -1..3 (negative: junk), unjudged documents, exact and float32 ties
QRELS = ("q1 0 a 3\nq1 0 b 1\nq1 0 c 0\nq1 0 d -1\nq1 0 e 2\n"
         "q2 0 f 1\nq2 0 g 0\nq2 0 h 2\nq2 0 i -1\n")
RUN = ("q1 Q0 d 1 4 r\nq1 Q0 u 2 3.5 r\nq1 Q0 c 3 3 r\nq1 Q0 b 4 2 r\nq1 Q0 a 5 1.00000002 r\nq1 Q0 e 6 1.00000001 r\n"
       "q2 Q0 i 1 2 r\nq2 Q0 g 2 2 r\nq2 Q0 f 3 1 r\nq2 Q0 v 4 0.5 r\nq2 Q0 h 5 0.25 r\n")
GRID = [f"{name}{'' if rel is None else f'(rel={rel})'}{cut}"
        for name, cut in (("P", "@5"), ("R", "@5"), ("Success", "@3"), ("RR", ""), ("RR", "@3"), ("AP", ""),
                          ("AP", "@5"))
        for rel in (None, -1, 0, 2)] + [
    "nDCG", "nDCG@5",  # nDCG takes no rel= (its gains do not depend on the threshold)
    "Judged@5", "nDCG(gain=exp)@5", "nDCG(gain=exp)", "nDCG(gains={0:0,1:1,2:3,3:7})",
    "nDCG(gains={1:2,2:1})", "nDCG(gains={1:0.5,2:2})", "nDCG(gains={-1:1,1:1})", "nDCG(gains={1:1.5,2:3})@5"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("emulation")
    (folder / "qrels.txt").write_text(QRELS)
    (folder / "run.txt").write_text(RUN)
    return str(folder / "qrels.txt"), str(folder / "run.txt")


@pytest.mark.skipif(len(AVAILABLE) < 3, reason=f"reference tools missing: {set(TOOLS) - set(AVAILABLE)}")
@pytest.mark.parametrize("threshold", [1, 2])
def test_every_policy_refuses_exactly_what_its_tool_does_not_print(inputs, threshold):
    check_policies_against(inputs, threshold, TOOLS)


@pytest.mark.skipif(not get("ranx").available(), reason="ranx is not installed (pip install 'trec-bridge[ranx]')")
@pytest.mark.parametrize("threshold", [1, 2])
def test_policy_ranx_refuses_exactly_what_ranx_does_not_print(inputs, threshold):
    """The same rule for ranx (slow: its child imports numba; conftest SLOW_TESTS)."""
    check_policies_against(inputs, threshold, ["ranx"])


def check_policies_against(inputs, threshold: int, tools: list[str]) -> None:
    dataset, run = load_dataset_any(inputs[0], threshold=threshold), load_run_any(inputs[1])
    measures = parse_measures(" ".join(GRID))
    checked = crosscheck(dataset, run, measures, tools)
    assert not checked.unexplained, checked.unexplained[:3]
    for name, policy in POLICIES.items():
        if policy.emulates not in tools:  # a script's policy (msmarco, beir), or a tool checked in another test
            continue
        tool = next(t for t in checked.tools if t.tool == policy.emulates)
        for m in measures:
            if str(m) in tool.reference.unsupported:
                with pytest.raises(UsageError) as err:
                    score(dataset, run, [m], policy)
                assert err.value.code == "E_POLICY_MEASURE" and str(m) in err.value.message
                continue
            value = score(dataset, run, [m], policy).means[str(m)].value
            if reference_policy(policy.emulates) == policy:  # trec_eval -c has no cross-check of its own here
                reference = tool.reference.aggregate[str(m)]
                assert (value is None and math.isnan(reference)) or \
                    value == pytest.approx(reference, abs=5e-5 if policy.emulates == "trec_eval" else 1e-9), (name, m)


@pytest.mark.skipif("trec_eval" not in AVAILABLE, reason="trec_eval binary not found")
def test_negative_threshold_is_refused_from_the_command_line(inputs, capsys):
    """trec_eval -l-1 -m P.5 prints 0.4000 where the old emulation printed 0.3000: refused now."""
    from trec_bridge.cli.main import main

    assert main(["score", inputs[0], inputs[1], "P(rel=-1)@5", "--policy", "trec_eval"]) == 1
    err = capsys.readouterr().err
    assert "E_POLICY_MEASURE" in err and "Traceback" not in err
    assert main(["score", inputs[0], inputs[1], "P(rel=-1)@5"]) == 0  # the strict policy defines it


def test_ndcg_ideal_is_sorted_by_gain_not_grade(tmp_path):
    """gains={1:2,2:1} ranks grade 1 above grade 2 in the ideal, as trec_eval and ir_measures do.

    Run b (grade 2, gain 1) then a (grade 1, gain 2): DCG = 1/log2 2 + 2/log2 3;
    ideal a then b: 2/log2 2 + 1/log2 3.  (Sorting the ideal by grade gave 1.0.)
    """
    (tmp_path / "q.txt").write_text("q 0 a 1\nq 0 b 2\n")
    (tmp_path / "r.txt").write_text("q Q0 b 1 2 r\nq Q0 a 2 1 r\n")
    dataset, run = load_dataset_any(tmp_path / "q.txt"), load_run_any(tmp_path / "r.txt")
    value = score(dataset, run, parse_measures("nDCG(gains={1:2,2:1})"), STRICT).means["nDCG(gains={1:2,2:1})"].value
    assert value == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)), abs=1e-15)
