"""trec_eval's second group of families on the TREC DL runs (shared data): the 3-tool cross-check explains all.

One official DL 2019 passage run (threshold 2, the passages-eval level) and
two DL-HARD runs, whose qrels have queries without a relevant document at
threshold 2: the strict nulls then differ from trec_eval's zeros, and every
such difference must be put on an axis.  Each tool computes what it can
(ir_measures only SetP, SetRelP, SetR, SetAP, SetF, infAP; pytrec_eval no
gain map and no comma in a parameter) and says why for the rest.
"""
from __future__ import annotations

import pytest

from converters.detect import load_dataset_any
from converters.trec_run import read_trec_run
from trec_bridge.crosscheck import crosscheck, tolerance
from trec_bridge.measures import parse_measures
from trec_bridge.references import get

from ..conftest import SHARED_DATA

MEASURES = parse_measures("SetP SetRelP SetR SetAP SetF SetF(beta=0.5) binG G nDCG_rel RnDCG Utility "
                          "Utility(a=2,c=-1) infAP G(gains={1:0,2:1,3:3}) RnDCG(gains={2:1,3:3})")
TOOLS = ["trec_eval", "pytrec_eval", "ir_measures"]
CASES = [("trec-dl-2019-passage-official/input.ICT-BERT2.gz", "anserini-tools/qrels.dl19-passage.txt"),
         ("dl-hard/passage.bm25.run.gz", "dl-hard/dl_hard-passage.qrels"),
         ("dl-hard/doc.bm25.run.gz", "dl-hard/dl_hard-doc.qrels")]


@pytest.mark.parametrize("run_name,qrels_name", CASES if SHARED_DATA.is_dir() else [("", "")],
                         ids=[c[0] for c in CASES] if SHARED_DATA.is_dir() else ["(no shared data)"])
def test_crosscheck_of_the_new_families_explains_every_difference(shared_data, run_name, qrels_name):
    missing = [t for t in TOOLS if not get(t).available()]
    if missing:
        pytest.skip(f"reference tools not installed: {missing} (CI installs them)")
    dataset = load_dataset_any(shared_data / "qrels" / qrels_name, None, 2)
    run = read_trec_run(shared_data / "runs" / run_name)
    result = crosscheck(dataset, run, MEASURES, TOOLS)
    assert not result.unexplained, [u.to_json() for u in result.unexplained[:10]]
    compared = {t.tool: {row["measure"] for row in t.rows} for t in result.tools}
    every = {str(m) for m in MEASURES}
    assert compared["trec_eval"] == every  # trec_eval computes every one of them
    assert compared["pytrec_eval"] == every - {"Utility(a=2,c=-1)", "G(gains={1:0,2:1,3:3})", "RnDCG(gains={2:1,3:3})"}
    assert compared["ir_measures"] == {"SetP", "SetRelP", "SetR", "SetAP", "SetF", "SetF(beta=0.5)", "infAP"}
    attributed = 0
    for t in result.tools:
        tol = tolerance(t.reference.precision)
        for row in t.rows:
            assert row["agrees"], row
            strict = row["strict"]
            if not (isinstance(strict, float) and abs(strict - row["reference"]) <= tol):
                assert row.get("parts"), row  # the difference is put on an axis (no-relevant: null vs 0)
                attributed += 1
        for name, agg in t.aggregates.items():
            assert agg["agrees"], (t.tool, name, agg)
            if agg["strict"] is None or abs(agg["strict"] - agg["reference"]) > tol:
                assert agg["parts"], (t.tool, name, agg)
    if run_name.startswith("dl-hard"):
        assert attributed > 0  # queries without a relevant document at threshold 2: strict null, the tools' 0
