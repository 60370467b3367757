#!/usr/bin/env python3
"""ranx as a user runs it: read the TREC files with ranx, evaluate six measures.

    python tool_ranx.py QRELS RUN

Prints one JSON object keyed by ranx's metric names. run_bench.py runs this
only when ``ranx`` is importable; its numbers are shown, not checked (ranx
breaks score ties its own way). The first call after installing ranx also
compiles its numba kernels (a cold cache is several times slower).
"""
from __future__ import annotations

import json
import sys

from ranx import Qrels, Run, evaluate

METRICS = ["ndcg@10", "mrr@10", "recall@100", "recall@1000", "precision@10", "map"]


def main(argv: list[str]) -> int:
    qrels = Qrels.from_file(argv[1], kind="trec")
    run = Run.from_file(argv[2], kind="trec")
    scores = evaluate(qrels, run, METRICS, make_comparable=True)
    json.dump({k: float(v) for k, v in scores.items()}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
