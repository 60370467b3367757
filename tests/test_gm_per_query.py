"""gm_map and gm_bpref per query under the pytrec_eval policy: the very double pytrec_eval returns.

pytrec_eval (trec_eval's C code) returns log(AP) per query, AP being the double its loop sums; the exact AP
correctly rounded is another double in about four queries of ten here, and its log differs in the last bit.
The emulation takes the log of the kernel's double, formed in trec_eval's order (measures/base.py geometric).
"""
from __future__ import annotations

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval-terrier is not installed")

import trec_bridge as tb  # noqa: E402


def random_case(rng):
    qrels, run = {}, {}
    docs = [f"d{i}" for i in range(60)]
    for q in range(40):
        qid = f"q{q}"
        qrels[qid] = {str(d): int(rng.integers(0, 3)) for d in rng.choice(docs, 25, replace=False)}
        qrels[qid].setdefault(docs[0], 1)
        run[qid] = {str(d): float(rng.random()) for d in rng.choice(docs, 40, replace=False)}
    return qrels, run


@pytest.mark.parametrize("seed", range(4))
def test_gm_per_query_values_are_pytrec_evals_doubles(seed):
    qrels, run = random_case(np.random.default_rng(seed))
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map", "gm_bpref"}).evaluate(run)
    per_query = tb.score(qrels, run, "gm_map gm_bpref", policy="pytrec_eval").per_query
    ours = {(r.query_id, r.measure): r.value for r in per_query.itertuples()}
    differ = [(qid, m, ref[qid][m], ours[(qid, name)]) for qid in ref
              for m, name in (("gm_map", "GMAP"), ("gm_bpref", "GMBpref")) if ref[qid][m] != ours[(qid, name)]]
    assert len(ref) == 40 and not differ, differ[:5]
