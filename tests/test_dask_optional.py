"""Issue 21 §2: Dask is an optional extra.  Without an address nothing imports it; without it installed, --dask
and a Dask input say what to install (E_DASK_UNAVAILABLE); an unreachable scheduler is E_DASK, exit 7, nothing
written.  (The cluster itself: tests/test_dask.py.)  Before this change --dask was an unknown argument."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import run_cli

EXAMPLES = Path(__file__).resolve().parent.parent / "trec_bridge" / "examples"


def test_nothing_imports_dask_without_an_address(tmp_path):
    ds, run = str(EXAMPLES / "dataset.json"), str(EXAMPLES / "run.json")
    script = f"""
import sys
import trec_bridge as tb
from trec_bridge.cli.main import main
tb.score({ds!r}, {run!r}, "P@3")
tb.Evaluator({ds!r}, "P@3").score_many([{run!r}, {run!r}], jobs=1)
assert main(["score", {ds!r}, {run!r}, "P@3 nDCG@3"]) == 0
assert main(["score-many", {ds!r}, {run!r}, "-m", "P@3", "--jobs", "1"]) == 0
print(sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")))
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.stdout.strip().splitlines()[-1] == "[]", p.stdout + p.stderr


def test_without_distributed_the_address_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    code, out, err = run_cli("score", EXAMPLES / "dataset.json", EXAMPLES / "run.json", "P@3", "--dask",
                             "tcp://127.0.0.1:8786", "--json", tmp_path / "r.json")
    assert code == 1 and "[E_DASK_UNAVAILABLE]" in err and "trec-bridge[dask]" in err and out == ""
    assert not (tmp_path / "r.json").exists()
    import trec_bridge as tb

    with pytest.raises(tb.InvalidInput) as raised:
        tb.score(EXAMPLES / "dataset.json", EXAMPLES / "run.json", "P@3", client="tcp://127.0.0.1:8786")
    assert raised.value.code == "E_DASK_UNAVAILABLE"


def test_an_unreachable_scheduler_is_e_dask_and_exit_7(tmp_path):
    dask = pytest.importorskip("dask", reason="the dask extra is not installed (pip install 'trec-bridge[dask]')")
    pytest.importorskip("distributed", reason="the dask extra is not installed (pip install 'trec-bridge[dask]')")
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        code, out, err = run_cli("score", EXAMPLES / "dataset.json", EXAMPLES / "run.json", "P@3", "--dask",
                                 "tcp://127.0.0.1:9", "--json", tmp_path / "r.json")
        assert code == 7 and "[E_DASK]" in err and "127.0.0.1:9" in err and out == ""
        assert not (tmp_path / "r.json").exists()
        code, out, err = run_cli("score-many", EXAMPLES / "dataset.json", EXAMPLES / "run.json", "-m", "P@3",
                                 "--dask", "tcp://127.0.0.1:9", "--json-dir", tmp_path / "reports")
        assert code == 7 and "[E_DASK]" in err and out == "" and not (tmp_path / "reports").exists()


def test_the_acceptance_options_are_not_scored_on_a_cluster(tmp_path):
    code, _, err = run_cli("score", EXAMPLES / "dataset.json", EXAMPLES / "run.json", "rag", "--rag", "--dask",
                           "tcp://127.0.0.1:9")
    assert code == 1 and "[E_USAGE]" in err and "--dask" in err
