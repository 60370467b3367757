"""bench/api_inprocess.py runs on a tiny workload and its nDCG@10 agrees with pytrec_eval's (exit 0); no timing."""
from __future__ import annotations

import importlib.util
import sys

from .conftest import REPO


def test_api_bench_runs_and_agrees(capsys):
    spec = importlib.util.spec_from_file_location("api_inprocess", REPO / "bench" / "api_inprocess.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    assert bench.main(["--queries", "4", "--docs", "30", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "Evaluator.score(dict run)" in out and "x |" in out
