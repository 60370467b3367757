"""Under float arithmetic (Policy.arithmetic, what the trec_eval drop-in prints from) the pytrec_eval policy's
per-query values are the very doubles pytrec_eval returns, for every measure it computes: each kernel forms its
value in trec_eval's order of operations (nDCG's gain / log2(i + 2), not times its reciprocal; infAP's product
in m_infap.c's order; running sums added one after another from each query's first, not a cumulative sum less
the queries before; gm_map and gm_bpref as log of the kernel's AP and bpref, measures/base.py geometric).

pytrec_eval (trec_eval's C code) returns log(AP) per query, AP being the double its loop sums; the exact AP
correctly rounded is another double in about four queries of ten here, so under exact arithmetic (the policies'
default) the logs differ in the last bit, as the other values do (never beyond a double's last bits).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval-terrier is not installed")

import trec_bridge as tb  # noqa: E402
from trec_bridge.policy import get_policy  # noqa: E402

# pytrec_eval's measure (as asked, as returned) -> ours
FAMILIES = {("map", "map"): "AP", ("bpref", "bpref"): "Bpref", ("map_cut.10", "map_cut_10"): "AP@10",
            ("P.10", "P_10"): "P@10", ("recall.100", "recall_100"): "R@100", ("recip_rank", "recip_rank"): "RR",
            ("Rprec", "Rprec"): "Rprec", ("gm_map", "gm_map"): "GMAP", ("gm_bpref", "gm_bpref"): "GMBpref"}


def random_case(rng):
    qrels, run = {}, {}
    docs = [f"d{i}" for i in range(200)]
    for q in range(30):
        qid = f"q{q}"
        qrels[qid] = {str(d): int(rng.integers(0, 4)) for d in rng.choice(docs, 80, replace=False)}
        qrels[qid].setdefault(docs[0], 1)
        run[qid] = {str(d): float(rng.random()) for d in rng.choice(docs, 120, replace=False)}
    return qrels, run


def every_measure_case(rng):
    """Grades -1 to 3 (pooled but unjudged, non-relevant, graded), float32 scores (ties as trec_eval reads
    them), unjudged documents retrieved."""
    qrels, run = {}, {}
    docs = [f"d{i}" for i in range(300)]
    for q in range(30):
        qid = f"q{q}"
        qrels[qid] = {str(d): int(rng.integers(-1, 4)) for d in rng.choice(docs, 120, replace=False)}
        qrels[qid].setdefault(docs[0], 1)
        run[qid] = {str(d): float(np.float32(rng.random())) for d in rng.choice(docs, 200, replace=False)}
    return qrels, run


def test_float_arithmetic_gives_every_pytrec_eval_double():
    """Every measure pytrec_eval returns (its names: P_10, ndcg_cut_10, iprec_at_recall_0.10, Rndcg, ...) but
    runid and relstring (labels), scored under its own name: every query's value equal as a double."""
    qrels, run = every_measure_case(np.random.default_rng(11))
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(pytrec_eval.supported_measures)).evaluate(run)
    names = sorted(set(next(iter(ref.values()))) - {"runid", "relstring"})
    policy = get_policy("pytrec_eval").with_axis(arithmetic="float")
    differ = {}
    for name in names:
        frame = tb.score(qrels, run, name, policy=policy).per_query
        ours = dict(zip(frame["query_id"], frame["value"]))
        wrong = [q for q in ref if ref[q][name] != ours[q]]
        if wrong:
            differ[name] = (len(wrong), wrong[0], ref[wrong[0]][name], ours[wrong[0]])
    assert len(names) > 80 and not differ, differ


def per_query(qrels, run, policy) -> dict:
    frame = tb.score(qrels, run, " ".join(FAMILIES.values()), policy=policy).per_query
    return {(r.query_id, r.measure): r.value for r in frame.itertuples()}


@pytest.mark.parametrize("seed", range(3))
def test_float_arithmetic_gives_pytrec_evals_doubles(seed):
    qrels, run = random_case(np.random.default_rng(seed))
    ref = pytrec_eval.RelevanceEvaluator(qrels, {asked for asked, _ in FAMILIES}).evaluate(run)
    ours = per_query(qrels, run, get_policy("pytrec_eval").with_axis(arithmetic="float"))
    differ = [(qid, returned, ref[qid][returned], ours[(qid, name)]) for qid in ref
              for (_, returned), name in FAMILIES.items() if ref[qid][returned] != ours[(qid, name)]]
    assert len(ref) == 30 and not differ, differ[:5]


def test_exact_arithmetic_takes_the_log_of_the_exact_value_rounded():
    """Under the policy's default (exact) arithmetic gm_map's per-query value is log of AP's per-query value."""
    qrels, run = random_case(np.random.default_rng(7))
    ours = per_query(qrels, run, "pytrec_eval")
    for qid in qrels:
        assert ours[(qid, "GMAP")] == math.log(max(ours[(qid, "AP")], 1e-5))
        assert ours[(qid, "GMBpref")] == math.log(max(ours[(qid, "Bpref")], 1e-5))
