"""The memory estimate bounds the real peak on adversarial shapes (issue 14, item 7).

The guard promises: a command's peak resident memory stays below what the
process used when it checked its first input, plus the estimate of every
input (``FIXED + ratio x size``), plus what ``check_queries`` was asked to
let it hold per query and measure.  Each shape below is scored in a subprocess that records those
checks and its own peak (VmHWM, which a new program starts afresh) and must
keep the promise.  Sizes are kept small enough for seconds; the large
versions of the issue's shapes are marked ``slow``.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
ENV.pop("TREC_BRIDGE_MEMORY_GUARD", None)
ENV.pop("TREC_BRIDGE_MEMORY_LIMIT", None)
MiB = 1 << 20
SIX = "nDCG@10 RR@10 R@100 R@1000 P@10 AP"
MANY = " ".join(f"{f}@{k}" for f in ("P", "R", "nDCG", "RR", "AP") for k in (1, 3, 5, 10, 20, 50, 100)) + " AP"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# The promise is the guard's: the peak stays within what was resident at the first file check plus the
# estimates, for the program loaded. Since small plain files are scored without polars (cli/quick.py) and the
# full readers import polars where they build a frame, the first check can come before polars and the readers
# are loaded (their import, +35 MiB resident, and, in a fresh checkout, compiling them): they are loaded here
# first, as they were by the command itself before.
PROMISE = textwrap.dedent("""
    import atexit, sys
    import polars, converters.trec_qrels, converters.trec_run, converters.trec_plain, trec_bridge.cli.score
    from trec_bridge import memory_guard as mg
    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    seen = {"rss0": None, "files": {}, "queries": 0}  # queries: the largest per-query need checked
    estimate = mg.estimate
    def recording_estimate(size, kind):  # one file of each kind per command here; a growing one keeps its largest
        if seen["rss0"] is None:
            seen["rss0"] = status("VmRSS")
        need = estimate(size, kind)
        seen["files"][kind] = max(seen["files"].get(kind, 0), need)
        return need
    mg.estimate = recording_estimate
    check_queries = getattr(mg, "check_queries", None)
    def recording_queries(count, measures, source):
        seen["queries"] = max(seen["queries"], count * mg.per_query(measures))
        return check_queries(count, measures, source)
    if check_queries is not None:
        mg.check_queries = recording_queries
    def report():
        promise = seen["rss0"] + sum(seen["files"].values()) + seen["queries"]
        sys.stderr.write("PROMISE %d %d\\n" % (status("VmHWM"), promise))
    atexit.register(report)
    from trec_bridge.cli.main import main
    sys.exit(main(sys.argv[1:]))
""")


def _peak_and_promise(args: list[str]) -> tuple[int, int, subprocess.CompletedProcess]:
    p = subprocess.run([sys.executable, "-c", PROMISE, *args], capture_output=True, text=True, env=ENV, timeout=600)
    assert "Traceback" not in p.stderr, p.stderr
    line = next(line for line in p.stderr.splitlines() if line.startswith("PROMISE"))
    return int(line.split()[1]), int(line.split()[2]), p


def _write_lines(path: Path, lines) -> Path:
    with open(path, "w") as fh:
        fh.writelines(lines)
    return path


def tiny_queries(folder: Path, n: int) -> tuple[Path, Path, str]:
    """``n`` queries of one document each: per-query state outweighs the bytes."""
    run = _write_lines(folder / "tiny.run", (f"q{q} Q0 d{q} 1 1.0 r\n" for q in range(n)))
    qrels = _write_lines(folder / "tiny.qrels", (f"q{q} 0 d{q} 1\n" for q in range(n)))
    return qrels, run, SIX


def tiny_queries_many_measures(folder: Path, n: int) -> tuple[Path, Path, str]:
    qrels, run, _ = tiny_queries(folder, n)
    return qrels, run, MANY


def wide_first_line(folder: Path, columns: int) -> tuple[Path, Path, str]:
    """One line of ``columns`` fields first in the run (refused: E_TREC_COLUMNS)."""
    run = folder / "wide.run"
    run.write_text(" ".join(["x"] * columns) + "\nq1 Q0 d1 1 1.0 r\n")
    qrels = _write_lines(folder / "wide.qrels", ["q1 0 d1 1\n"])
    return qrels, run, "P@1"


def wide_qrels_line(folder: Path, columns: int) -> tuple[Path, Path, str]:
    qrels = folder / "wideq.qrels"
    qrels.write_text(" ".join(["x"] * columns) + "\n")
    run = _write_lines(folder / "one.run", ["q1 Q0 d1 1 1.0 r\n"])
    return qrels, run, "P@1"


def wide_later_line(folder: Path, columns: int) -> tuple[Path, Path, str]:
    run = folder / "wide2.run"
    run.write_text("q1 Q0 d1 1 1.0 r\n" + " ".join(["x"] * columns) + "\n")
    qrels = _write_lines(folder / "wide2.qrels", ["q1 0 d1 1\n"])
    return qrels, run, "P@1"


def long_ids(folder: Path, n: int) -> tuple[Path, Path, str]:
    """``n`` queries of 20 documents whose IDs are 1,000 characters long."""
    pad = "x" * 990
    run = _write_lines(folder / "long.run", (f"q{q}{pad} Q0 d{d}{pad} {d + 1} {20 - d} r\n"
                                             for q in range(n) for d in range(20)))
    qrels = _write_lines(folder / "long.qrels", (f"q{q}{pad} 0 d{q % 20}{pad} 1\n" for q in range(n)))
    return qrels, run, SIX


SHAPES = [
    pytest.param(tiny_queries, 100_000, id="tiny-queries-100k"),
    pytest.param(tiny_queries_many_measures, 30_000, id="tiny-queries-36-measures"),
    pytest.param(wide_first_line, 1_000_000, id="wide-first-line-1M-columns"),
    pytest.param(wide_qrels_line, 1_000_000, id="wide-qrels-line-1M-columns"),
    pytest.param(wide_later_line, 1_000_000, id="wide-later-line-1M-columns"),
    pytest.param(long_ids, 300, id="long-ids"),
    pytest.param(tiny_queries, 400_000, id="tiny-queries-400k", marks=pytest.mark.slow),
    pytest.param(wide_first_line, 10_000_000, id="wide-first-line-10M-columns", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("make, size", SHAPES)
def test_peak_stays_within_the_estimate(make, size, tmp_path):
    qrels, run, measures = make(tmp_path, size)
    peak, promise, p = _peak_and_promise(["score", str(qrels), str(run), measures])
    assert p.returncode in (0, 1, 2), p.stderr
    print(f"{make.__name__}({size}): peak {peak / MiB:.0f} MiB, estimate {promise / MiB:.0f} MiB")
    assert peak <= promise, f"peak {peak / MiB:.0f} MiB > estimate {promise / MiB:.0f} MiB\n{p.stderr[-500:]}"


@pytest.mark.parametrize("n", [30_000, pytest.param(60_000, marks=pytest.mark.slow)])  # twice the quick one
def test_json_report_of_many_queries_stays_within_the_estimate(n, tmp_path):
    qrels, run, _ = tiny_queries(tmp_path, n)
    peak, promise, p = _peak_and_promise(["score", str(qrels), str(run), MANY, "--json", str(tmp_path / "r.json")])
    assert p.returncode == 0, p.stderr
    assert peak <= promise, f"peak {peak / MiB:.0f} MiB > estimate {promise / MiB:.0f} MiB"


def test_index_lookup_settles_hash_collisions_exactly(monkeypatch):
    """The query lookup trusts a 64-bit hash only once the strings agree; a collision falls back to a join."""
    import polars as pl

    from trec_bridge.ranking import _IndexLookup, query_index

    monkeypatch.setattr(_IndexLookup, "SMALL", 0)  # the hashed lookup of a large index, not the small one's dict
    lookup = _IndexLookup(query_index(["a", "b", "c"]))
    assert lookup(["c", "x", "a", "b"]).tolist() == [2, -1, 0, 1]
    monkeypatch.setattr(pl.Series, "hash", lambda self, seed=0: pl.Series([7] * self.len(), dtype=pl.UInt64))
    colliding = _IndexLookup(query_index(["a", "b", "c"]))  # every ID hashes alike
    assert colliding(["b", "c", "zz", "a"]).tolist() == [1, 2, -1, 0]
