"""W-many (issue 21): N DL19-size runs against one qrels in one `score-many` command, against N sequential
trec_eval processes and N sequential `trec-bridge score` processes, paired in one iteration, median of repeats.

    python bench/w_many.py --work /tmp/tb-wmany --runs 20 --repeats 3

The runs: run_bench.py's W2 (43 queries x 1,000 documents, graded qrels), and N-1 variants whose documents are
shuffled within each query (seeded) under the same scores, so that every run has W2's size and the same qrels.
score-many's numbers are checked against each run's own `score` report (the means, exact).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_bench  # noqa: E402  (the W2 generator)

MEASURES = "nDCG@10 RR@10 R@100 R@1000 P@10 AP"
TREC_EVAL = ["-m", "map", "-m", "P.10", "-m", "recall.100,1000", "-m", "ndcg_cut.10", "-m", "recip_rank"]


def make_runs(work: Path, n: int) -> tuple[Path, list[Path]]:
    qrels, base, _ = run_bench.ensure_workload(run_bench.WORKLOADS["W2"], work, None)
    lines = base.read_text().splitlines()
    runs = [base]
    for i in range(1, n):
        path = work / f"W2.v{i:03d}.run"
        if not path.is_file():
            rng = np.random.default_rng(i)
            out, at = [], 0
            while at < len(lines):
                q = lines[at].split()[0]
                end = at
                while end < len(lines) and lines[end].split()[0] == q:
                    end += 1
                block = [ln.split() for ln in lines[at:end]]
                docs = [b[2] for b in block]
                rng.shuffle(docs)
                out += [f"{b[0]} Q0 {d} {b[3]} {b[4]} v{i}" for b, d in zip(block, docs)]
                at = end
            path.write_text("\n".join(out) + "\n")
        runs.append(path)
    return qrels, runs


def timed(argvs: list[list[str]]) -> float:
    t0 = time.perf_counter()
    for argv in argvs:
        subprocess.run(argv, check=argv[0] != "trec-bridge-many", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/tb-wmany"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--skip-score", action="store_true", help="leave out the N `score` processes (slow)")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    qrels, runs = make_runs(args.work, args.runs)
    tb = [sys.executable, "-m", "trec_bridge.cli.main"]
    many = tb + ["score-many", str(qrels), *map(str, runs), "-m", MEASURES]
    many += ["--jobs", str(args.jobs)] if args.jobs else []
    arms = {"trec_eval x N": [["trec_eval", *TREC_EVAL, str(qrels), str(r)] for r in runs],
            "score x N": [tb + ["score", str(qrels), str(r), MEASURES] for r in runs],
            "score-many (table)": [many],
            "score-many --json-dir": [many + ["--json-dir", str(args.work / "reports")]]}
    if args.skip_score:
        del arms["score x N"]
    load = [os.getloadavg()[0]]
    times: dict[str, list[float]] = {k: [] for k in arms}
    for _ in range(args.repeats):
        for name, argvs in arms.items():
            times[name].append(timed(argvs))
    load.append(os.getloadavg()[0])
    for r in runs:  # score-many's reports against score alone
        alone = args.work / "alone.json"
        subprocess.run(tb + ["score", str(qrels), str(r), MEASURES, "--json", str(alone)], check=True,
                       stdout=subprocess.DEVNULL)
        mine = json.loads((args.work / "reports" / f"{r.name}.json").read_text())["means"]
        assert mine == json.loads(alone.read_text())["means"], r
    _table(args.runs, times, load)
    print(f"score-many's means equal each run's own score report: yes ({args.runs}/{args.runs})")
    return 0


def _table(n: int, times: dict[str, list[float]], load: list[float]) -> None:
    """Each arm's median, and its ratios to the trec_eval and score arms of the same iterations (median)."""
    def paired(ts, ref):
        return f"{statistics.median(t / r for t, r in zip(ts, times[ref])):.3f}" if ref in times else ""

    print(f"| W-many ({n} W2 runs, {os.cpu_count()} cores) | median wall s | ratio vs trec_eval x N | "
          "ratio vs score x N |")
    print("|---|---:|---:|---:|")
    for name, ts in times.items():
        print(f"| {name} | {statistics.median(ts):.2f} | {paired(ts, 'trec_eval x N')} | {paired(ts, 'score x N')} |")
    print(f"load average (1 min) before / after: {load[0]:.1f} / {load[1]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
