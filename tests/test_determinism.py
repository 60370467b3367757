"""The same inputs give byte-identical JSON reports, whatever the process.

Two separate processes with different hash seeds (set and dict order of
strings) and different polars thread counts (group-by order) must write the
same bytes for ``score --json`` and ``crosscheck --json``.  The input has
score ties, queries out of order, unjudged and missing queries, so every
ordering decision of the scorer shows in the report.
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MEASURES = "nDCG@10 RR@10 R@100 AP P@5 Success@3 Judged@10 nDCG(gain=linear)@5"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    rnd = random.Random(8)
    folder = tmp_path_factory.mktemp("det")
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    with open(qrels, "w") as fh:
        for q in range(40):
            for d in rnd.sample(range(200), 15):
                fh.write(f"q{q} 0 d{d} {rnd.choice([-1, 0, 0, 1, 2, 3])}\n")
    lines = []
    for q in range(45):  # q40..q44 are unjudged
        if q % 7 == 3:
            continue  # missing queries
        for rank, d in enumerate(rnd.sample(range(200), 60), 1):
            lines.append(f"q{q} Q0 d{d} {rank} {rnd.choice([1.0, 2.0, 2.5, 3.0, 0.25 * rnd.randint(0, 40)])} det\n")
    rnd.shuffle(lines)  # queries interleaved, scores unsorted
    run.write_text("".join(lines))
    return qrels, run


def _cli(args: list[str], seed: str, threads: str | None, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": seed,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("POLARS_MAX_THREADS", None)
    if threads:
        env["POLARS_MAX_THREADS"] = threads
    return subprocess.run([sys.executable, "-m", "trec_bridge.cli.main", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def test_score_json_is_byte_identical(inputs, tmp_path):
    qrels, run = inputs
    outputs = []
    for i, (seed, threads) in enumerate([("1", None), ("2", "1")]):
        out = tmp_path / f"report{i}.json"
        p = _cli(["score", str(qrels), str(run), MEASURES, "--json", str(out), "--per-query",
                  str(tmp_path / f"pq{i}.tsv")], seed, threads, tmp_path)
        assert p.returncode == 2, p.stderr  # missing queries: incomplete, report still written
        outputs.append(out.read_bytes() + (tmp_path / f"pq{i}.tsv").read_bytes())
    assert outputs[0] == outputs[1]


def test_crosscheck_json_is_byte_identical(inputs, tmp_path):
    from trec_bridge.references.trec_eval import find_binary

    qrels, run = inputs
    against = "pytrec_eval,ir_measures" + (",trec_eval" if find_binary() else "")
    outputs = []
    for i, (seed, threads) in enumerate([("1", None), ("2", "1")]):
        out = tmp_path / f"cross{i}.json"
        p = _cli(["crosscheck", str(qrels), str(run), "nDCG@10 RR@10 R@100 AP P@5", "--against", against,
                  "--json", str(out), "--repro-dir", str(tmp_path / "repro")], seed, threads, tmp_path)
        assert p.returncode in (0, 2), p.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_in_process_reports_are_identical(inputs, tmp_path):
    """Twice in one process: no state (caches, counters) leaks into the report."""
    import contextlib
    import io

    from trec_bridge.cli.main import main

    qrels, run = inputs
    data = []
    for i in range(2):
        out = tmp_path / f"r{i}.json"
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["score", str(qrels), str(run), MEASURES, "--json", str(out)]) == 2
        data.append(out.read_bytes())
    assert data[0] == data[1]
