"""``score --json`` on many tiny queries: the JSON report's cost against the same score without it, paired.

    python bench/json_report.py --work /tmp/jr [--queries 30000] [--repeats 5] [--src OLD_CHECKOUT]

The workload is tests/test_memory_bound.py's JSON-report case: ``--queries`` queries of one document each, the 36
measures (P, R, nDCG, RR, AP at 1..100, and AP).  Each iteration runs, in a shuffled order, ``score`` without and
with ``--json`` for this install and (``--src``: a checkout, e.g. ``git archive main | tar -x -C DIR``, put first
on sys.path) for another version; the report's cost is the ratio of the two within an iteration.  Medians of
wall and CPU (user + system) seconds and the peak resident memory are printed; the reports of both versions must
be byte-identical (exit 1 otherwise).
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

MEASURES = " ".join(f"{f}@{k}" for f in ("P", "R", "nDCG", "RR", "AP") for k in (1, 3, 5, 10, 20, 50, 100)) + " AP"
ENTRY = "import sys; sys.path.insert(0, sys.argv.pop(1)); from trec_bridge.cli.main import entry; entry()"


def workload(work: Path, n: int) -> tuple[Path, Path]:
    qrels, run = work / f"tiny{n}.qrels", work / f"tiny{n}.run"
    if not run.exists():
        qrels.write_text("".join(f"q{q} 0 d{q} 1\n" for q in range(n)))
        run.write_text("".join(f"q{q} Q0 d{q} 1 1.0 r\n" for q in range(n)))
    return qrels, run


def timed(argv: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of one child; a failed run stops the bench."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"{argv} exited {child.returncode}: {err.decode(errors='replace')[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def commands(work: Path, qrels: Path, run: Path, src: str | None) -> dict[str, list[str]]:
    versions = {"this install": [sys.executable, "-m", "trec_bridge.cli.main"]}
    if src:
        versions[f"--src {src}"] = [sys.executable, "-c", ENTRY, src]
    out = {}
    for i, (label, head) in enumerate(versions.items()):
        base = [*head, "score", str(qrels), str(run), MEASURES]
        out[(label, "score")] = base
        out[(label, "score --json")] = [*base, "--json", str(work / f"report{i}.json")]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=30_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--src", help="another version's checkout, timed in the same iterations")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    cmds = commands(args.work, *workload(args.work, args.queries), args.src)
    for argv in cmds.values():  # byte-code caches warmed, untimed
        timed(argv)
    samples: dict = {key: [] for key in cmds}
    for _ in range(args.repeats):
        for key in random.sample(list(cmds), len(cmds)):
            samples[key].append(timed(cmds[key]))
    print(f"{args.queries} queries x 36 measures, {args.repeats} iterations, load {os.getloadavg()[0]:.2f}")
    print("| version | command | wall s | CPU s | peak MiB | CPU / score's |")
    print("|---|---|---|---|---|---|")
    for (label, what), rows in samples.items():
        ratio = statistics.median(r[1] / b[1] for r, b in zip(rows, samples[(label, "score")]))
        print(f"| {label} | {what} | {statistics.median(r[0] for r in rows):.2f} | "
              f"{statistics.median(r[1] for r in rows):.2f} | {max(r[2] for r in rows):.0f} | {ratio:.2f}x |")
    reports = sorted(args.work.glob("report*.json"))
    if len({p.read_bytes() for p in reports}) > 1:
        print("the versions' reports differ: " + ", ".join(map(str, reports)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
