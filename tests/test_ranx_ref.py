"""ranx as a reference tool: each of its readings checked against the installed ranx, and the policy reproducing it.

Slow tier (tests/conftest.py SLOW_FILES): every cross-check forks a child
that imports ranx (numba), and the hypothesis test runs ranx in this process.
The pure-Python tie rule (``ordering.quicksort_order``) is checked against
ranx's own ``Run`` sorting; the readings (query set, no-relevant queries,
empty rankings, threshold and nDCG, gains) by ``crosscheck --against ranx``
on tiny inputs whose figures are worked out in each test.
"""
from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trec_bridge.crosscheck import crosscheck
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Dataset, Qrels, Query, Run
from trec_bridge.ordering import SMALL_SORT, quicksort_order, quicksort_ranks
from trec_bridge.policy import get_policy
from trec_bridge.references import get
from trec_bridge.references.ranx_ref import RANX, ranx_metric
from trec_bridge.scorer import score

ranx = pytest.importorskip("ranx")


def dataset(judgments, threshold=1) -> Dataset:
    qrels = Qrels(pl.DataFrame([(q, "0", d, g) for q, d, g in judgments], schema=QRELS_SCHEMA, orient="row"))
    return Dataset(queries=tuple(Query(q) for q in qrels.query_ids()), qrels=qrels, threshold=threshold,
                   query_source="qrels")


def run_of(rankings) -> Run:
    rows = [(q, d, s, i) for q, docs in rankings for i, (d, s) in enumerate(docs, 1)]
    return Run(pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), queries=tuple(q for q, _ in rankings))


def check(judgments, rankings, measures, threshold=1):
    """crosscheck against ranx: no unexplained difference; returns the ranx ToolCheck."""
    result = crosscheck(dataset(judgments, threshold), run_of(rankings), parse_measures(measures), ["ranx"])
    assert result.unexplained == [], result.unexplained
    return result.tools[0]


# ---------------------------------------------------------------- the tie rule

def ranx_order(scores: list[float]) -> list[int]:
    docs = [f"d{i:04d}" for i in range(len(scores))]
    got = list(ranx.Run({"q": dict(zip(docs, scores))}).run["q"].keys())
    return [int(d[1:]) for d in got]


def ranx_orders(rankings: list[list[float]]) -> list[list[int]]:
    """ranx's order of each score list, all sorted by one ``Run`` (one query each): numba is called once."""
    run = ranx.Run({f"q{k:03d}": {f"d{i:04d}": s for i, s in enumerate(scores)} for k, scores in enumerate(rankings)})
    return [[int(d[1:]) for d in run.run[f"q{k:03d}"].keys()] for k in range(len(rankings))]


def test_quicksort_order_is_ranx_own_order():
    rng = random.Random(7)
    rankings = []
    for _ in range(60):
        n = rng.randint(1, 200)
        top = rng.choice([1, 3, 10, 10 ** 6])
        rankings.append([float(rng.randint(0, top)) for _ in range(n)])
    theirs = ranx_orders(rankings)
    for scores, order in zip(rankings, theirs):
        assert quicksort_order([-s for s in scores]) == order


def test_ties_keep_their_order_up_to_fifteen_documents_and_move_beyond():
    assert quicksort_order([0.0] * SMALL_SORT) == list(range(SMALL_SORT))
    moved = quicksort_order([0.0] * 40)
    assert sorted(moved) == list(range(40)) and moved != list(range(40))
    assert moved == ranx_order([1.0] * 40)


def test_make_comparable_sorts_again_so_ties_move_twice():
    scores = [1.0] * 40
    qrels = ranx.Qrels({"q": {"d0000": 1}})
    run = ranx.Run({"q": {f"d{i:04d}": s for i, s in enumerate(scores)}})
    run.make_comparable(qrels)
    twice = [int(d[1:]) for d in run.run["q"].keys()]
    once = quicksort_order([-s for s in scores])
    assert twice == [once[i] for i in quicksort_order([-scores[i] for i in once])] and twice != once
    ranks = quicksort_ranks(np.array([0]), np.array(scores), np.arange(1, 41), passes=2)
    assert [int(i) for i in np.argsort(ranks)] == twice


# ---------------------------------------------------------------- the readings, through the cross-check

def test_ties_are_attributed_to_the_ordering_axis():
    # 32 tied documents: after ranx's two sorts the first listed (d00) is 15th (30 tied ones come back as given)
    docs = tuple((f"d{i:02d}", 1.0) for i in range(32))
    t = check([("q1", "d00", 1)], [("q1", docs)], "RR AP P@10")
    agg = t.aggregates["RR"]
    assert agg["strict"] == 1.0 and agg["reference"] == pytest.approx(1 / 15)
    assert [p["axis"] for p in agg["parts"]] == ["ordering"]


def test_missing_and_no_relevant_queries_score_zero_and_count():
    # q1: RR 1; q2 judged, not in the run -> 0 (make_comparable); q3 only grade 0 -> 0 (no relevant); mean 1/3
    t = check([("q1", "a", 1), ("q2", "b", 1), ("q3", "c", 0)],
              [("q1", (("a", 2.0),)), ("q3", (("c", 1.0),)), ("q9", (("a", 1.0),))], "RR P@1")
    assert t.aggregates["RR"]["reference"] == pytest.approx(1 / 3)
    # strict (qrels define the set): q2 missing also scores 0, q3 is null: (1 + 0) / 2; only no_relevant differs
    assert t.aggregates["RR"]["strict"] == 0.5 and [p["axis"] for p in t.aggregates["RR"]["parts"]] == ["no_relevant"]
    assert set(t.reference.per_query["RR"]) == {"q1", "q2", "q3"}  # q9 (run only) is dropped


def test_an_explicit_empty_ranking_scores_zero():
    t = check([("q1", "a", 1), ("q2", "b", 1)], [("q1", (("a", 1.0),)), ("q2", ())], "AP nDCG@5")
    assert t.reference.per_query["AP"] == {"q1": 1.0, "q2": 0.0}


def test_the_threshold_limits_ndcg_gains_and_ideal():
    # threshold 2: ranx drops grade 1 (a) before nDCG: DCG = 2/log2(3) for b at rank 2, ideal 2/log2(2) = 2
    t = check([("q1", "a", 1), ("q1", "b", 2)], [("q1", (("a", 2.0), ("b", 1.0)))], "nDCG@2 P@2", threshold=2)
    assert t.aggregates["nDCG@2"]["reference"] == pytest.approx(1 / np.log2(3))
    assert [p["axis"] for p in t.aggregates["nDCG@2"]["parts"]] == ["ndcg_gain_floor"]
    assert t.reference.native["nDCG@2"] == "ndcg@2-l2"


def test_exponential_gain_is_ndcg_burges():
    t = check([("q1", "a", 1), ("q1", "b", 3)], [("q1", (("a", 2.0), ("b", 1.0)))], "nDCG(gain=exp)@2 nDCG@2")
    assert t.reference.native["nDCG(gain=exp)@2"] == "ndcg_burges@2"
    ideal = 7 + 1 / np.log2(3)
    assert t.aggregates["nDCG(gain=exp)@2"]["reference"] == pytest.approx((1 + 7 / np.log2(3)) / ideal)


def test_measures_ranx_lacks_are_not_compared():
    ref = get("ranx")
    for text in ("Judged@10", "nDCG(gains={1:5})@10"):
        assert ref.supports(parse_measures(text)[0]) is not None
    assert "negative" in ref.supports(parse_measures("P(rel=-1)@5")[0])
    assert ranx_metric(parse_measures("R(rel=2)@100")[0], 2) == "recall@100-l2"
    assert ranx_metric(parse_measures("RR")[0], 1) == "mrr" and ranx_metric(parse_measures("Success@3")[0], 1) == "hit_rate@3"


def test_policy_ranx_refuses_what_ranx_does_not_compute():
    from trec_bridge.errors import UsageError

    with pytest.raises(UsageError) as err:
        score(dataset([("q1", "a", 1)]), run_of([("q1", (("a", 1.0),))]), parse_measures("Judged@10"), RANX)
    assert err.value.code == "E_POLICY_MEASURE"
    assert get_policy("ranx") is RANX


def test_numba_stays_out_of_our_process():
    script = """
import sys
import polars as pl
from trec_bridge.crosscheck import crosscheck
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Dataset, Qrels, Query, Run
q = Qrels(pl.DataFrame([("q1", "0", "a", 1)], schema=QRELS_SCHEMA, orient="row"))
ds = Dataset(queries=(Query("q1"),), qrels=q, query_source="qrels")
run = Run(pl.DataFrame([("q1", "a", 1.0, 1)], schema=RUN_SCHEMA, orient="row"), queries=("q1",))
r = crosscheck(ds, run, parse_measures("RR"), ["ranx"])
assert r.unexplained == [] and r.tools[0].reference.aggregate["RR"] == 1.0
print(sorted(m for m in ("ranx", "numba") if m in sys.modules))
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert p.stdout.strip().splitlines()[-1] == "[]", p.stdout + p.stderr


# ---------------------------------------------------------------- hypothesis against ranx (in this process)

grades = st.integers(min_value=-1, max_value=3)
scores = st.sampled_from([0.0, 1.0, 1.5, 2.0, -1.0])


@st.composite
def inputs(draw):
    docs = [f"d{i}" for i in range(draw(st.integers(1, 25)))]
    judgments, rankings = [], []
    for q in ("q1", "q2", "q3"):
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=6))
        judgments += [(q, d, draw(grades)) for d in judged]
        if draw(st.booleans()):
            ranked = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
            rankings.append((q, tuple((d, draw(scores)) for d in ranked)))
    if not judgments:
        judgments = [("q1", docs[0], 1)]
    if not any(docs_ for _, docs_ in rankings):
        rankings.append(("q9", ((docs[0], 1.0),)))
    return judgments, rankings, draw(st.integers(1, 2))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs())
def test_policy_ranx_reproduces_ranx(case):
    judgments, rankings, threshold = case
    ds, run = dataset(judgments, threshold), run_of(rankings)
    measures = parse_measures("AP AP@5 RR RR@3 P@5 R@10 Success@3 nDCG nDCG@5 nDCG(gain=exp)@5")
    ours = score(ds, run, measures, RANX)
    theirs = get("ranx").evaluate(ds.qrels, run, measures, rel=threshold)
    for m in measures:
        name = str(m)
        assert ours.means[name].value == pytest.approx(theirs.aggregate[name], abs=1e-9), name
        for q in ours.queries:
            assert q.values[name] == pytest.approx(theirs.per_query[name][q.query_id], abs=1e-9), (name, q.query_id)


# ---------------------------------------------------------------- the official DL runs

@pytest.mark.parametrize("year", ["2019", "2020"])
def test_crosscheck_against_ranx_agrees_on_the_dl_runs(shared_data, year):
    from converters.detect import load_dataset_any
    from converters.trec_run import read_trec_run

    folder = {"2019": ("trec-dl-2019-passage-official", "qrels.dl19-passage.txt"),
              "2020": ("trec-dl-2020-passage-official", "qrels.dl20-passage.txt")}[year]
    ds = load_dataset_any(shared_data / "qrels" / "anserini-tools" / folder[1])
    measures = parse_measures("AP RR RR@10 P@10 R@100 Success@10 nDCG nDCG@10 nDCG(gain=exp)@10")
    for path in sorted((shared_data / "runs" / folder[0]).glob("input.*.gz"))[:3]:
        result = crosscheck(ds, read_trec_run(path), measures, ["ranx"])
        assert result.unexplained == [], (path.name, result.unexplained[:3])
        for name, agg in result.tools[0].aggregates.items():
            parts = sum(p["delta"] for p in agg["parts"] if p["delta"] is not None)
            assert agg["strict"] - agg["emulation"] == pytest.approx(parts, abs=1e-9), (path.name, name)
