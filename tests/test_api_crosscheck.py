"""tb.crosscheck: the CLI's cross-check from Python objects, every difference explained by a named axis."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import trec_bridge as tb

from .conftest import REPO

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1}}
RUN = {"q1": {"b": 0.9, "a": 0.5}, "q2": {"c": 1.0}}  # q3 missing: strict scores it 0, the tools drop it


def test_differences_are_attributed_to_axes_in_a_table():
    cc = tb.crosscheck(QRELS, RUN, "RR P@1", against="pytrec_eval,ir_measures")
    assert cc.outcome == "explained" and cc.unexplained == []
    rows = cc.table.set_index(["tool", "measure"])
    assert rows.loc[("pytrec_eval", "RR"), "strict"] == 0.5            # (1/2 + 1 + 0) / 3
    assert rows.loc[("pytrec_eval", "RR"), "reference"] == 0.75         # q3 left out of the mean
    assert rows.loc[("pytrec_eval", "RR"), "axes"] == "query_set"
    assert rows["agrees"].all()
    mean_rr = [e for e in cc.explanations if e["tool"] == "pytrec_eval" and e["measure"] == "RR"]
    assert [p["axis"] for p in mean_rr[0]["parts"]] == ["query_set"] and mean_rr[0]["parts"][0]["delta"] == -0.25
    assert cc.strict.means["RR"] == 0.5
    assert "cross-check: every difference is explained" in repr(cc)
    assert "<table" in cc._repr_html_()


def test_report_is_the_one_the_cli_writes(tmp_path):
    dataset, run = str(REPO / "trec_bridge/examples/dataset.json"), str(REPO / "trec_bridge/examples/run.json")
    tb.crosscheck(dataset, run, "nDCG@5 AP", against=["pytrec_eval"]).to_json(tmp_path / "api.json")
    subprocess.run([sys.executable, "-m", "trec_bridge.cli.main", "crosscheck", dataset, run, "nDCG@5 AP",
                    "--against", "pytrec_eval", "--json", str(tmp_path / "cli.json")], check=True, capture_output=True,
                   cwd=tmp_path)
    api, cli = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("api", "cli"))
    assert api == cli and api["outcome"] == "explained"


def test_evaluator_cross_checks_many_runs_and_unknown_tools_are_refused():
    ev = tb.Evaluator(QRELS, "RR")
    assert ev.crosscheck(RUN, "pytrec_eval").outcome == "explained"
    with pytest.raises(tb.InvalidInput) as exc:
        ev.crosscheck(RUN, "trec_evil")
    assert exc.value.code == "E_USAGE" and "trec_evil" in exc.value.message


def test_the_name_stays_the_function_after_the_engine_module_is_imported():
    import importlib

    engine = importlib.import_module("trec_bridge.crosscheck")  # sets the package attribute, were it plain
    assert callable(tb.crosscheck) and tb.crosscheck.__module__ == "trec_bridge.api"
    assert engine.crosscheck is not tb.crosscheck and "crosscheck" in tb.__all__
