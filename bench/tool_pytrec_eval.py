#!/usr/bin/env python3
"""pytrec_eval as a user runs it: parse the TREC files in Python, evaluate, average.

    python tool_pytrec_eval.py QRELS RUN

Prints one JSON object: trec_eval's measure names -> mean over the queries
pytrec_eval returns (run ∩ qrels, like trec_eval without -c), plus ``num_q``.
Measures: map, P_10, recall_100, recall_1000, ndcg_cut_10, recip_rank.
"""
from __future__ import annotations

import json
import sys

import pytrec_eval

MEASURES = {"map", "P.10", "recall.100", "recall.1000", "ndcg_cut.10", "recip_rank"}
OUTPUT = ["map", "P_10", "recall_100", "recall_1000", "ndcg_cut_10", "recip_rank"]


def read_qrels(path: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as f:
        for line in f:
            q, _, d, r = line.split()
            qrels.setdefault(q, {})[d] = int(r)
    return qrels


def read_run(path: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open(path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    return run


def main(argv: list[str]) -> int:
    qrels, run = read_qrels(argv[1]), read_run(argv[2])
    per_query = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    out: dict[str, float | int] = {"num_q": len(per_query)}
    for name in OUTPUT:
        vals = [v[name] for v in per_query.values()]
        out[name] = pytrec_eval.compute_aggregated_measure(name, vals) if vals else float("nan")
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
