"""What a Python process must spend before scoring W2, next to trec_eval's whole run on it.

Issue 7 asks for W2 (43 queries x 1,000 documents, 43,000 run lines) in at
most trec_eval's wall time. This script times, as whole processes (median of
``--repeats``), the fixed costs any Python evaluator pays first: starting the
interpreter, importing numpy and polars, and the least Python can do with the
run, reading and splitting its lines, converting scores and screening
duplicates with no validation at all. When that floor alone is above
trec_eval's time, the target cannot be met by Python code, only by a compiled
scorer of our own.

    python bench/w2_floor.py --work /tmp/tb-bench [--trec-eval PATH] [--repeats 7]

W2.run / W2.qrels must be in --work (``run_bench.py --workloads W2`` makes them).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

# the least a Python scorer does with a run before any measure: no validation, no error messages
MINIMAL_PARSE = """
import sys
rows = [line.split() for line in open(sys.argv[1], "rb").read().splitlines()]
scores = [float(r[4]) for r in rows]
pairs = {(r[0], r[2]) for r in rows}
"""


def wall(argv: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True, help="folder holding W2.run and W2.qrels")
    ap.add_argument("--trec-eval", default=None, help="the trec_eval binary (default: trec-bridge's or PATH's)")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    run, qrels = args.work / "W2.run", args.work / "W2.qrels"
    if not (run.is_file() and qrels.is_file()):
        raise SystemExit(f"{run} or {qrels} missing: python bench/run_bench.py --work {args.work} --workloads W2")
    trec_eval = args.trec_eval or shutil.which("trec_eval")
    if trec_eval is None:
        from trec_bridge.references.trec_eval import find_binary
        trec_eval = find_binary()
    py = sys.executable
    rows = []
    if trec_eval:
        rows.append(("trec_eval 9.0.4, whole run (the target)",
                     wall([trec_eval, "-m", "map", "-m", "P.10", "-m", "recall.100,1000", "-m", "ndcg_cut.10",
                           "-m", "recip_rank", str(qrels), str(run)], args.repeats)))
    rows += [
        ("python -I -S -c pass (bare interpreter)", wall([py, "-I", "-S", "-c", "pass"], args.repeats)),
        ("python -c pass (with site-packages)", wall([py, "-c", "pass"], args.repeats)),
        ("python -c 'import numpy'", wall([py, "-c", "import numpy"], args.repeats)),
        ("python -c 'import polars'", wall([py, "-c", "import polars"], args.repeats)),
        ("python -I -S: read, split, float() and a duplicate set of W2.run, nothing else",
         wall([py, "-I", "-S", "-c", MINIMAL_PARSE, str(run)], args.repeats)),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'process':<{width}}  median wall (s)")
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
