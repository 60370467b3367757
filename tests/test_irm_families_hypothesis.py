"""Property: under --policy ir_measures, the families ir_measures routes to gdeval, cwl_eval and compat
(ERR, RBP, SDCG, NERR8-11, INST, INSQ, Compat) equal ir_measures' own numbers on every query (1e-9).

The inputs go through ``crosscheck`` against ir_measures, which runs the
provider ir_measures itself picks (references/ir_measures_ref.py), so the
comparison is the one users get.  Generated cases: numeric and other query
IDs (gdeval reads only numbers: ERR is then "not run", never compared
wrongly), score ties (cwl_eval keeps the run's order, gdeval sorts by docno
descending), grades -2..3, missing queries, queries without relevant
documents, rankings shorter than the cutoffs.  Compat's ideal orders equally
graded documents by run score, unretrieved ones as score 0: scores are kept
positive and untied among relevant documents for it (docs/policy.md says
what differs otherwise).
"""
from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trec_bridge.crosscheck import crosscheck
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Dataset, Qrels, Query, Run
from trec_bridge.references import get

from .examples_budget import DIFFERENTIAL_EXAMPLES

CASCADE = parse_measures("ERR@3 ERR@10 RBP(rel=1) RBP(p=0.5,rel=2) RBP(p=0.95) SDCG(max_rel=3)@3 "
                         "NERR8(max_rel=3)@3 NERR9(max_rel=3)@5 NERR10(max_rel=3,p=0.7) NERR11(max_rel=3,T=2.0) "
                         "INST(max_rel=3) INST(max_rel=3,T=2.0) INSQ(max_rel=3,T=1.5) SDCG(min_rel=1,max_rel=3)@5")
COMPAT = parse_measures("Compat Compat(p=0.8,normalize=False)")
QUERY_IDS = ["1", "2", "10", "35", "q1", "ü"]
DOC_IDS = ["a", "b", "c", "d1", "d9", "d10", "9", "B", "é"]


@st.composite
def cases(draw, ties: bool):
    qids = draw(st.lists(st.sampled_from(QUERY_IDS[:4] if draw(st.booleans()) else QUERY_IDS),
                         min_size=1, max_size=4, unique=True))
    judgments, rankings = {}, {}
    for q in qids:
        docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=6, unique=True))
        judgments[q] = {d: draw(st.integers(-2, 3)) for d in docs}
        if q == qids[0] or draw(st.integers(0, 4)):
            ranked = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=8, unique=True))
            pool = st.sampled_from([1.0, 2.0, 3.0]) if ties else st.floats(0.001, 100, allow_nan=False)
            scores = draw(st.lists(pool, min_size=len(ranked), max_size=len(ranked), unique=not ties))
            rankings[q] = list(zip(ranked, scores))
    qrels = Qrels(pl.DataFrame([(q, "0", d, g) for q, docs in sorted(judgments.items()) for d, g in sorted(docs.items())],
                               schema=QRELS_SCHEMA, orient="row"))
    dataset = Dataset(queries=tuple(Query(q) for q in judgments), qrels=qrels, threshold=1, query_source="qrels")
    rows = [(q, d, s, i) for q, docs in rankings.items() for i, (d, s) in enumerate(docs, 1)]
    return dataset, Run(pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), queries=tuple(rankings))


def check(dataset: Dataset, run: Run, measures) -> None:
    result = crosscheck(dataset, run, measures, ["ir_measures"])
    assert not result.unexplained, "\n".join(str(u) for u in result.unexplained)
    ref = result.tools[0].reference
    compared = [name for name in ref.per_query if name not in ref.failed]
    assert compared, (ref.failed, ref.unsupported)
    emulated = {q.query_id: q for q in result.tools[0].walk.final.queries}
    for name in compared:
        for q, value in ref.per_query[name].items():
            assert abs(emulated[q].values[name] - value) <= 1e-9, (name, q, emulated[q].values[name], value)


SETTINGS = settings(max_examples=DIFFERENTIAL_EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
needs_providers = pytest.mark.skipif(not get("ir_measures").available(), reason="ir_measures is not installed")


@needs_providers
@SETTINGS
@given(cases(ties=True))
def test_cascade_families_equal_their_ir_measures_provider(case):
    check(*case, CASCADE)


@needs_providers
@SETTINGS
@given(cases(ties=False))
def test_compat_equals_ir_measures_compat_provider(case):
    check(*case, COMPAT)
