"""Property: the trec_eval families of issue 17 §1 under each tool's policy equal the tool, query by query.

The generated cases are the cross-check property's (tests/test_crosscheck_hypothesis.py: score ties and
float32 near-ties, missing queries, run-only queries, queries without relevant documents, negative grades,
rankings shorter than every cutoff, thresholds 1 and 2, trec_eval with and without -c); every example
scores every family group below at once, so each group meets every generated example per tool (the real
trec_eval 9.0.4 binary, pytrec_eval, ir_measures where it has the measure).
"""
from __future__ import annotations

import pytest
from hypothesis import given

from trec_bridge.measures import parse_measures

from .test_crosscheck_hypothesis import SETTINGS, _available, cases, check, with_named_cases

GROUPS = {
    "counts and Rprec": "NumQ NumRet NumRel NumRelRet NumNonRelJudgedRet NumRelRet(rel=2) NumNonRelJudgedRet(rel=2) "
                        "Rprec Rprec(rel=2)",
    "bpref and geometric means": "Bpref Bpref(rel=2) GMAP GMBpref GMAP(rel=2)",
    "interpolated precision": "IPrec@0.0 IPrec@0.1 IPrec@0.3 IPrec@0.5 IPrec@0.7 IPrec@1.0 IPrec(rel=2)@0.2 AvgIPrec",
    "multiples of R and relative precision": "RprecMult@0.2 RprecMult@0.6 RprecMult@1.0 RprecMult@1.4 RprecMult@2.0 "
                                             "RelativeP@1 RelativeP@2 RelativeP@5 RelativeP(rel=2)@3",
}
MEASURES = parse_measures(" ".join(GROUPS.values()))


def _property(tool: str):
    @pytest.mark.skipif(not _available(tool), reason=f"{tool} is not installed (CI installs it)")
    @SETTINGS
    @with_named_cases
    @given(cases())
    def test(case) -> None:
        check(case, tool, MEASURES)

    test.__name__ = f"test_trec_families_equal_{tool}"
    test.__doc__ = f"Our {tool} policy reproduces {tool} on the trec_eval families of issue 17 §1."
    return test


test_trec_families_equal_trec_eval = _property("trec_eval")
test_trec_families_equal_pytrec_eval = _property("pytrec_eval")
test_trec_families_equal_ir_measures = _property("ir_measures")
