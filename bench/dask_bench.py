"""Scoring on a Dask cluster (issue 21 §2): a local cluster of 2 worker processes against `score` in one process,
the numbers byte-identical, and what is shipped to the client.

    python bench/dask_bench.py --work /tmp/tb-bench --w3 /tmp/w3    # W1 (and its depth-100 cut), W3

For each case: `trec-bridge score QRELS RUN MEASURES --json` in one process and the same command with
`--dask ADDRESS` (a distributed.LocalCluster of 2 worker processes, 1 thread each, started once outside the
timing), paired in each iteration; the two reports must be byte-identical.  "Shipped" is what the workers
send back to the client for the run's pieces: the pickled size of each piece's PartScores (per-query terms and
values, records, row findings), gathered here through the same functions `--dask` calls.  The cases vary the
queries, the run lines (a depth-100 cut of the same queries) and the measures, so that the figures show what
the bytes grow with.
"""
from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIX = "nDCG@10 RR@10 R@100 R@1000 P@10 AP"
TWELVE = SIX + " nDCG@100 P@5 P@20 R@10 Success@10 Bpref"


def cut_depth(run: Path, depth: int, out: Path) -> Path:
    """The first ``depth`` lines of each query (TREC rank column <= depth): same queries, fewer lines."""
    if not out.is_file():
        subprocess.run(["awk", f"$4 <= {depth}", str(run)], stdout=out.open("wb"), check=True)
    return out


def lines_of(path: Path) -> int:
    return int(subprocess.run(["wc", "-l", str(path)], capture_output=True, text=True, check=True).stdout.split()[0])


def timed(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def shipped(client, qrels: Path, run: Path, measures: str) -> tuple[int, int, int]:
    """(bytes the pieces' results pickle to, pieces, queries scored) for ``run`` on ``client``'s cluster."""
    from converters.detect import load_dataset_any
    from trec_bridge.cluster import run_on
    from trec_bridge.measures import parse_measures
    from trec_bridge.part_scores import job_for
    from trec_bridge.policy import get_policy
    from trec_bridge.run_pieces import pieces_of, score_piece

    job = job_for(load_dataset_any(qrels), parse_measures(measures), get_policy("strict"))
    cut = pieces_of(str(run))
    parts = run_on(client, score_piece, job, cut.pieces)
    size = sum(len(pickle.dumps(p, protocol=5)) for p in parts)
    return size, len(cut.pieces), sum(len(p.record.queries) for p in parts if p.record is not None)


def cases(work: Path, scratch: Path) -> list[tuple[str, Path, Path, str]]:
    out = []
    w1, q1 = work / "W1.run", work / "W1.qrels"
    if w1.is_file():
        out += [("W1", q1, w1, SIX), ("W1 depth 100", q1, cut_depth(w1, 100, scratch / "W1.d100.run"), SIX),
                ("W1, 12 measures", q1, w1, TWELVE)]
    w3, q3 = work / "W3.run", work / "W3.qrels"
    if w3.is_file():
        out += [("W3", q3, w3, SIX)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/tb-bench"))
    ap.add_argument("--w3", type=Path, help="folder holding W3.run and W3.qrels (default: --work)")
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/tb-dask-bench"), help="where the depth-100 cut goes")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    import distributed

    args.scratch.mkdir(parents=True, exist_ok=True)
    todo = cases(args.work, args.scratch) + ([c for c in cases(args.w3, args.scratch) if c[0] == "W3"]
                                             if args.w3 else [])
    tb = [sys.executable, "-m", "trec_bridge.cli.main"]
    rows = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            distributed.Client(cl) as client, tempfile.TemporaryDirectory() as tmp:
        load = [os.getloadavg()[0]]
        for name, qrels, run, measures in todo:
            here, there = Path(tmp) / "here.json", Path(tmp) / "there.json"
            times = {"here": [], "there": []}
            for _ in range(args.repeats):
                times["here"].append(timed(tb + ["score", str(qrels), str(run), measures, "--json", str(here)]))
                times["there"].append(timed(tb + ["score", str(qrels), str(run), measures, "--json", str(there),
                                                  "--dask", cl.scheduler_address]))
            same = here.read_bytes() == there.read_bytes()
            size, pieces, queries = shipped(client, qrels, run, measures)
            rows.append((name, queries, lines_of(run), len(measures.split()), statistics.median(times["here"]),
                         statistics.median(times["there"]), same, size, pieces))
        load.append(os.getloadavg()[0])
    print("| case | queries | run lines | measures | one process s | cluster of 2 s | reports identical | "
          "shipped to the client | per query x measure | pieces |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for name, q, lines, m, here, there, same, size, pieces in rows:
        print(f"| {name} | {q:,} | {lines:,} | {m} | {here:.2f} | {there:.2f} | {'yes' if same else '**no**'} | "
              f"{size / 1e6:.2f} MB | {size / (q * m):.0f} B | {pieces} |")
    print(f"load average (1 min) before / after: {load[0]:.1f} / {load[1]:.1f}")
    return 0 if all(r[6] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
