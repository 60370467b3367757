"""A small run as a whole process (issue 21 §4): ``trec-bridge score`` on W2 against pytrec_eval's and ir_measures'
processes, paired, with the floor every Python process pays.

    python bench/small_inputs.py --work /work/tb-bench [--repeats 15] [--full] [--trec-bridge PATH] [--before PATH]

Each iteration runs every command once, in a shuffled order, so the load of the moment falls on all of them;
the ratio of a command to pytrec_eval is taken within each iteration and its median reported, next to the median
wall and CPU (user + system) seconds.  pytrec_eval, ir_measures and the floor run with this interpreter;
``--trec-bridge`` may name another install's console script.  ``--full`` adds ``score`` with its small-input path switched off (the
full command: polars and its readers), for a before/after of cli/quick.py; ``--before`` adds ``score`` of another
install (the code before a change; strict and --policy trec_eval) in the same iterations, so that a before/after
is paired too.  Byte-code caches are warmed by one untimed round.  W2.qrels / W2.run must be in --work
(``python ../shared/bench/gen.py --out DIR W2``).
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
MEASURES = "nDCG@10 RR@10 R@100 R@1000 P@10 AP"  # run_bench.py's STRICT_MEASURES
FULL = "from trec_bridge.cli import quick; quick.attempt = lambda argv: None; from trec_bridge.cli.main import entry; entry()"


def commands(work: Path, trec_bridge: str, python: str, full: bool, before: str | None = None
             ) -> dict[str, list[str]]:
    q, r = str(work / "W2.qrels"), str(work / "W2.run")
    out = {
        "trec-bridge score (strict)": [trec_bridge, "score", q, r, MEASURES],
        "trec-bridge score --policy trec_eval": [trec_bridge, "score", q, r, MEASURES, "--policy", "trec_eval"],
        "pytrec_eval (parse in Python + evaluate)": [python, str(BENCH_DIR / "tool_pytrec_eval.py"), q, r],
        "ir_measures CLI": [python, "-m", "ir_measures", q, r, MEASURES],
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import numpy'": [python, "-c", "import numpy"],
        "python -c 'import polars'": [python, "-c", "import polars"],
    }
    if full:  # with the interpreter of trec-bridge's own install (a regular one, say), not this one
        own = Path(shutil.which(trec_bridge) or trec_bridge).read_text(errors="replace").splitlines()[0][2:].strip()
        out["trec-bridge score (strict), full path"] = [own, "-c", FULL, "score", q, r, MEASURES]
    if before:
        out["trec-bridge score (strict), --before install"] = [before, "score", q, r, MEASURES]
        out["trec-bridge score --policy trec_eval, --before install"] = [before, "score", q, r, MEASURES, "--policy",
                                                                          "trec_eval"]
    return out


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s of the child) of one run; a failed run stops the bench."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2):
        sys.exit(f"{argv} exited {done.returncode}: {done.stderr.decode(errors='replace')[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--full", action="store_true", help="also time score with its small-input path switched off")
    ap.add_argument("--trec-bridge", default=shutil.which("trec-bridge") or "trec-bridge")
    ap.add_argument("--before", help="another install's trec-bridge, timed in the same iterations")
    args = ap.parse_args()
    cmds = commands(args.work, args.trec_bridge, sys.executable, args.full, args.before)
    for argv in cmds.values():  # warm byte-code caches and the page cache, untimed
        timed(argv)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for _ in range(args.repeats):
        for name in random.sample(list(cmds), len(cmds)):
            samples[name].append(timed(cmds[name]))
    reference = samples["pytrec_eval (parse in Python + evaluate)"]
    print(f"W2, {args.repeats} paired iterations, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print("| process | median wall s | median CPU s | wall / pytrec_eval's (paired median) | CPU / pytrec_eval's |")
    print("|---|---:|---:|---:|---:|")
    for name, runs in samples.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        ratio = statistics.median(w / ref[0] for (w, _), ref in zip(runs, reference))
        cpu_ratio = statistics.median(c / ref[1] for (_, c), ref in zip(runs, reference))
        print(f"| {name} | {wall:.3f} | {cpu:.3f} | {ratio:.2f}× | {cpu_ratio:.2f}× |")
    if args.before:
        print()
        for command in ("score (strict)", "score --policy trec_eval"):
            new, old = samples[f"trec-bridge {command}"], samples[f"trec-bridge {command}, --before install"]
            print(f"{command} / the --before install's, paired median: wall "
                  f"{statistics.median(a[0] / b[0] for a, b in zip(new, old)):.2f}×, CPU "
                  f"{statistics.median(a[1] / b[1] for a, b in zip(new, old)):.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
