"""In-process speed of the Python API against the peers' calls on the same Python objects (issue 16).

A DL19-size synthetic case (200 queries x 1,000 documents, seeded; every
query has a relevant document), six measures.  Each call is timed as the
median of --repeat runs after one warm-up; the nDCG@10 means must agree
with pytrec_eval's (exit 1 otherwise).  Run: python bench/api_inprocess.py
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

OURS = "nDCG@10 RR@10 R@100 AP P@10 nDCG"
PYTREC = {"ndcg_cut.10", "recip_rank", "recall.100", "map", "P.10", "ndcg"}


def workload(queries: int, docs: int, seed: int = 1):
    rng = random.Random(seed)
    qrels = {f"q{i}": {f"d{j}": rng.randint(0, 3) for j in range(0, docs, 7)} for i in range(queries)}
    for judged in qrels.values():
        judged["d0"] = 3
    run = {f"q{i}": {f"d{j}": rng.random() for j in range(docs)} for i in range(queries)}
    return qrels, run


def timed(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    import ir_measures
    import pandas as pd
    import pytrec_eval

    import trec_bridge as tb

    qrels, run = workload(args.queries, args.docs)
    run_df = pd.DataFrame([(q, d, s) for q, ds in run.items() for d, s in ds.items()],
                          columns=["query_id", "doc_id", "score"])
    ev = tb.Evaluator(qrels, OURS)
    pt = pytrec_eval.RelevanceEvaluator(qrels, PYTREC)
    irm = [ir_measures.parse_measure(m) for m in OURS.split()]
    ours = ev.score(run).means["nDCG@10"]
    theirs = statistics.fmean(v["ndcg_cut_10"] for v in pt.evaluate(run).values())
    if abs(ours - theirs) > 1e-9:
        print(f"nDCG@10 disagrees: ours {ours!r}, pytrec_eval {theirs!r}", file=sys.stderr)
        return 1
    rows = [("trec-bridge Evaluator.score(dict run)", lambda: ev.score(run)),
            ("trec-bridge Evaluator.score(DataFrame run)", lambda: ev.score(run_df)),
            ("pytrec_eval RelevanceEvaluator.evaluate(dict run)", lambda: pt.evaluate(run)),
            ("ir_measures calc_aggregate(dict run)", lambda: ir_measures.calc_aggregate(irm, qrels, run)),
            ("ir_measures calc_aggregate(DataFrame run)", lambda: ir_measures.calc_aggregate(irm, qrels, run_df))]
    print(f"| {args.queries} queries x {args.docs} documents, six measures | median s |\n|---|---|")
    for name, fn in rows:
        print(f"| {name} | {timed(fn, args.repeat):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
