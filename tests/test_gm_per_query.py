"""Under float arithmetic (Policy.arithmetic, what the trec_eval drop-in prints from) the pytrec_eval policy's
per-query values are the very doubles pytrec_eval returns, for the families whose kernels form them in trec_eval's
order: gm_map and gm_bpref included, as log of the kernel's AP and bpref (measures/base.py geometric).

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
