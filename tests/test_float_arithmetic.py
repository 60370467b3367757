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


def random_case(seed: int, lowest_grade: int, float32: bool):
    """30 queries of 120 judged documents among 300 (grades ``lowest_grade`` to 3: -1 is pooled but unjudged),
    200 retrieved (unjudged ones among them), scores as float32 values (ties as trec_eval reads them) or not."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    docs = [f"d{i}" for i in range(300)]
    for q in range(30):
        qid = f"q{q}"
        qrels[qid] = {str(d): int(rng.integers(lowest_grade, 4)) for d in rng.choice(docs, 120, replace=False)}
        qrels[qid].setdefault(docs[0], 1)
        scores = rng.random(200)
        run[qid] = {str(d): float(s) for d, s in zip(rng.choice(docs, 200, replace=False),
                                                      scores.astype(np.float32) if float32 else scores)}
    return qrels, run


def per_query(qrels, run, measures: str, policy) -> dict:
    frame = tb.score(qrels, run, measures, policy=policy).per_query
    return {(r.query_id, r.measure): r.value for r in frame.itertuples()}


@pytest.mark.parametrize("seed, lowest_grade, float32", [(11, -1, True), (0, 0, False), (1, 0, False)])
def test_float_arithmetic_gives_every_pytrec_eval_double(seed, lowest_grade, float32):
    """Every measure pytrec_eval returns (its names: P_10, ndcg_cut_10, iprec_at_recall_0.10, gm_map, Rndcg, ...)
    but runid and relstring (labels), scored under its own name: every query's value equal as a double."""
    qrels, run = random_case(seed, lowest_grade, float32)
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
    assert len(ref) == 30 and len(names) > 80 and not differ, differ


def test_exact_arithmetic_takes_the_log_of_the_exact_value_rounded():
    """Under the policy's default (exact) arithmetic gm_map's per-query value is log of AP's per-query value."""
    qrels, run = random_case(7, 0, False)
    ours = per_query(qrels, run, "AP Bpref GMAP GMBpref", "pytrec_eval")
    for qid in qrels:
        assert ours[(qid, "GMAP")] == math.log(max(ours[(qid, "AP")], 1e-5))
        assert ours[(qid, "GMBpref")] == math.log(max(ours[(qid, "Bpref")], 1e-5))
