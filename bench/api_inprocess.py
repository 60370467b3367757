"""In-process speed of the Python API against the peers' calls on the same Python objects (issue 16).

A DL19-size synthetic case (200 queries x 1,000 documents, seeded; every
query has a relevant document), six measures.  Each call is timed as the
median of --repeat interleaved rounds after one warm-up; the nDCG@10 means must agree
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


def timed_rounds(fns: list, repeat: int) -> list[float]:
    """Median wall time of each function, timed in interleaved rounds (one call of each per round).

    On a shared machine the load drifts; interleaving lets every contender
    see the same drift, so the ratios hold even when the seconds do not.
    """
    for fn in fns:
        fn()  # warm-up: imports, caches
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, spent in zip(fns, times):
            t = time.perf_counter()
            fn()
            spent.append(time.perf_counter() - t)
    return [statistics.median(t) for t in times]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=7)
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
    medians = timed_rounds([fn for _, fn in rows], args.repeat)
    pytrec, irm_dict, irm_df = medians[2], medians[3], medians[4]
    print(f"| {args.queries} queries x {args.docs} documents, six measures | median s | / pytrec_eval | "
          "/ ir_measures (same input) |\n|---|---|---|---|")
    for (name, _), spent, peer in zip(rows, medians, [irm_dict, irm_df, irm_dict, irm_dict, irm_df]):
        print(f"| {name} | {spent:.3f} | {spent / pytrec:.2f}x | {spent / peer:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
