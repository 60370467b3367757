"""Property: under --policy ir_measures, the diversity family (alpha_nDCG, ERR_IA, NRBP, P_IA, StRecall) equals
ir_measures' own numbers (its pyndeval provider, ndeval inside) on every query, to 1e-9.

The inputs go through ``crosscheck`` against ir_measures, so the comparison
is the one users get.  Generated cases: several subtopics a query (IDs shared
across queries, as in TREC's diversity qrels), a document judged for several
subtopics, subtopics judged only non-relevant, grades -1..2 (rel=2 too),
queries without an intent, missing queries, unjudged and tied documents
(pyndeval sorts ties by docno ascending), rankings shorter and longer than
the cutoffs, alpha and beta away from 1/2 (the greedy ideal then compares
sums that are not exact in binary, added in ndeval's order).
"""
from __future__ import annotations

from importlib.util import find_spec

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from trec_bridge.crosscheck import crosscheck
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Dataset, Qrels, Query, Run
from trec_bridge.references import get

from .examples_budget import DIFFERENTIAL_EXAMPLES

MEASURES = parse_measures("alpha_nDCG@3 alpha_nDCG@10 alpha_nDCG(alpha=0.3)@5 alpha_nDCG(alpha=1)@4 ERR_IA@2 "
                          "ERR_IA@10 ERR_IA(rel=2)@5 NRBP NRBP(alpha=0.7,beta=0.8) NRBP(rel=2) P_IA@5 P_IA(rel=2)@3 "
                          "StRecall@2 StRecall@20")
QUERY_IDS = ["1", "2", "10", "q1"]
SUBTOPICS = ["1", "2", "3", "0", "s4"]
DOC_IDS = ["a", "b", "c", "d1", "d10", "9", "B", "é"]


@st.composite
def cases(draw):
    qids = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=3, unique=True))
    rows, rankings = [], {}
    for q in qids:
        for s in draw(st.lists(st.sampled_from(SUBTOPICS), min_size=1, max_size=4, unique=True)):
            for d in draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=5, unique=True)):
                rows.append((q, s, d, draw(st.integers(-1, 2))))
        if q == qids[0] or draw(st.integers(0, 4)):
            ranked = draw(st.lists(st.sampled_from(DOC_IDS), min_size=0, max_size=8, unique=True))
            scores = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 0.5]), min_size=len(ranked), max_size=len(ranked)))
            rankings[q] = list(zip(ranked, scores))
    assume(len({r[1] for r in rows}) > 1)  # one subtopic everywhere is an iteration column (refused)
    qrels = Qrels(pl.DataFrame(rows, schema=QRELS_SCHEMA, orient="row"), subtopics=True)
    dataset = Dataset(queries=tuple(Query(q) for q in qids), qrels=qrels, threshold=1, query_source="qrels")
    run_rows = [(q, d, s, i) for q, docs in rankings.items() for i, (d, s) in enumerate(docs, 1)]
    return dataset, Run(pl.DataFrame(run_rows, schema=RUN_SCHEMA, orient="row"), queries=tuple(rankings))


SETTINGS = settings(max_examples=DIFFERENTIAL_EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


@pytest.mark.skipif(not get("ir_measures").available() or find_spec("pyndeval") is None,
                    reason="ir_measures or its pyndeval provider is not installed")
@SETTINGS
@given(cases())
def test_diversity_family_equals_ir_measures_pyndeval_provider(case):
    dataset, run = case
    result = crosscheck(dataset, run, MEASURES, ["ir_measures"])
    assert not result.unexplained, "\n".join(str(u) for u in result.unexplained)
    ref = result.tools[0].reference
    assert not ref.failed and not ref.unsupported, (ref.failed, ref.unsupported)
    emulated = {q.query_id: q for q in result.tools[0].walk.final.queries}
    for name in ref.per_query:
        for q, value in ref.per_query[name].items():
            assert abs(emulated[q].values[name] - value) <= 1e-9, (name, q, emulated[q].values[name], value)
