"""Two installs of trec-bridge timed interleaved on W1's run formats: each command before, then after, in the
same iteration, so that a shared machine's drifting load weighs on both alike.

    python bench/before_after.py --before VENV_A/bin/trec-bridge --after VENV_B/bin/trec-bridge \
        --work /work/tb-bench --tools score,score-json,score-jsonl,convert-json,convert-trec --repeats 3

Prints each run (wall, CPU = user + sys of the process and its threads, peak RSS, the load average) and, per
command, the medians and the after/before ratio of each pair; the standard output of the score commands and
the files the convert commands write must be byte-identical between the two installs (exit 1 otherwise).
The workloads are run_bench.py's (W1.run, W1.run.json, W1.run.jsonl, W1.run.parquet, W1.run.16parts.parquet,
W1.qrels in --work).  With ``score`` among the tools, each other score command's wall is also shown as a ratio
to ``score`` on the TREC text of the same install in the same iteration (issue 21 §3's ratio).
"""
from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEASURES = "nDCG@10 RR@10 R@100 R@1000 P@10 AP"  # run_bench.py's STRICT_MEASURES


def commands(tool: str, exe: str, work: Path, out: Path) -> tuple[list[str], Path | None]:
    """The command of ``tool`` and the file it writes (None: its standard output is compared)."""
    qrels, run = work / "W1.qrels", work / "W1.run"
    if tool.startswith("score"):
        source = {"score": run, "score-json": work / "W1.run.json", "score-jsonl": work / "W1.run.jsonl",
                  "score-parquet": work / "W1.run.parquet",
                  "score-parquet-parts": work / "W1.run.16parts.parquet"}[tool]
        return [exe, "score", str(qrels), str(source), MEASURES], None
    if tool == "convert-json":
        return [exe, "convert", "run", str(run), str(out / "converted.json"), "--dataset-id", "bench"], \
            out / "converted.json"
    if tool == "convert-jsonl":
        return [exe, "convert", "run", str(run), str(out / "converted.jsonl"), "--dataset-id", "bench"], \
            out / "converted.jsonl"
    if tool == "convert-trec":
        return [exe, "convert", "run", str(work / "W1.run.json"), str(out / "back.trec"), "--no-sidecar"], \
            out / "back.trec"
    if tool == "convert-trec-sidecar":  # the default: the TREC file and its sidecar (the TREC bytes compared)
        return [exe, "convert", "run", str(work / "W1.run.json"), str(out / "back-sidecar.trec")], \
            out / "back-sidecar.trec"
    raise SystemExit(f"unknown tool {tool!r}")


def timed(argv: list[str], stdout: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS MiB) of one child process, from its own resource usage (``os.wait4``)."""
    start = time.perf_counter()
    with open(stdout, "wb") as fh:
        child = subprocess.Popen(argv, stdout=fh, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 2):
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024  # ru_maxrss: KiB on Linux


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--tools", default="score,score-json,score-jsonl,convert-json,convert-trec")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    same = True
    with tempfile.TemporaryDirectory(prefix="tb-before-after-") as tmp:
        for i in range(args.repeats):
            for tool in args.tools.split(","):
                written = {}
                for side, exe in (("before", args.before), ("after", args.after)):
                    out = Path(tmp, side)
                    out.mkdir(exist_ok=True)
                    argv, target = commands(tool, exe, args.work, out)
                    sample = timed(argv, out / f"{tool}.stdout")
                    rows.setdefault((tool, side), []).append(sample)
                    written[side] = target or out / f"{tool}.stdout"
                    print(f"{i + 1} {tool:13s} {side:6s} wall {sample[0]:6.2f} cpu {sample[1]:6.2f} "
                          f"rss {sample[2]:5d} MiB load {os.getloadavg()[0]:.1f}", flush=True)
                if not filecmp.cmp(written["before"], written["after"], shallow=False):
                    print(f"{tool}: the two installs' outputs differ", file=sys.stderr)
                    same = False
    print("\ncommand        before: wall med / min / CPU med   after: wall med / min / CPU med   "
          "after/before per pair: wall; CPU")
    for tool in args.tools.split(","):
        b, a = rows[(tool, "before")], rows[(tool, "after")]
        walls = [round(y[0] / x[0], 2) for x, y in zip(b, a)]
        cpus = [round(y[1] / x[1], 2) for x, y in zip(b, a)]
        print(f"{tool:13s}  {_summary(b)}        {_summary(a)}        {walls}; {cpus}")
    _ratios_to_text(rows, args.tools.split(","))
    return 0 if same else 1


def _ratios_to_text(rows: dict, tools: list[str]) -> None:
    """Each score command's wall over ``score`` on the TREC text of the same install and iteration."""
    if "score" not in tools:
        return
    print("\ncommand        wall / the TREC text's, same install and iteration: before (median; each)   after")
    for tool in (t for t in tools if t.startswith("score-")):
        line = []
        for side in ("before", "after"):
            ratios = [round(x[0] / t[0], 2) for x, t in zip(rows[(tool, side)], rows[("score", side)])]
            line.append(f"{statistics.median(ratios):.2f} {ratios}")
        print(f"{tool:20s}  {line[0]}   {line[1]}")


def _summary(samples: list[tuple[float, float, int]]) -> str:
    """Median wall, least wall (the least disturbed run on a shared machine), median CPU."""
    walls = [s[0] for s in samples]
    return f"{statistics.median(walls):6.2f} / {min(walls):6.2f} / {statistics.median(s[1] for s in samples):5.2f}"


if __name__ == "__main__":
    sys.exit(main())
