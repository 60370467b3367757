"""ir_measures' own test data for its cwl_eval and compat providers, and an official DL19 run: the families
beyond trec_eval agree with the provider ir_measures picks, query by query (the cross-check's comparison)."""
from __future__ import annotations

import pytest

from trec_bridge.api import read_dataset, read_run
from trec_bridge.crosscheck import crosscheck
from trec_bridge.measures import parse_measures

CWL = ("RBP(rel=1) RBP(p=0.5,rel=1) SDCG(max_rel=1)@5 NERR8(max_rel=1)@5 NERR9(max_rel=1)@5 NERR10(max_rel=1) "
       "NERR11(max_rel=1) INST(max_rel=1) INSQ(max_rel=1) INST(max_rel=1,T=2)")
COMPAT = "Compat Compat(p=0.8) Compat(normalize=False)"
DL19 = "ERR@20 RBP(p=0.8,rel=2) SDCG(max_rel=3)@10 NERR8(max_rel=3)@10 INST(max_rel=3) Compat"


def agree(qrels, run, measures: str, expected_providers: set[str]) -> None:
    result = crosscheck(read_dataset(str(qrels)), read_run(str(run)), parse_measures(measures), ["ir_measures"])
    assert not result.unexplained, "\n".join(str(u) for u in result.unexplained)
    ref = result.tools[0].reference
    assert not ref.failed and not ref.unsupported, (ref.failed, ref.unsupported)
    assert set(ref.served_by.values()) == expected_providers
    emulated = {q.query_id: q for q in result.tools[0].walk.final.queries}
    for name, per_query in ref.per_query.items():
        assert per_query
        for q, value in per_query.items():
            assert emulated[q].values[name] == pytest.approx(value, abs=1e-9), (name, q)


@pytest.mark.parametrize("name, measures, providers", [("cwl", CWL, {"cwl_eval"}), ("compat", COMPAT, {"compat"})])
def test_ir_measures_own_test_data(shared_data, name, measures, providers):
    agree(shared_data / f"qrels/ir_measures-tests/{name}.qrels", shared_data / f"runs/ir_measures-tests/{name}.run",
          measures, providers)


def test_an_official_dl19_run(shared_data):
    agree(shared_data / "qrels/anserini-tools/qrels.dl19-passage.txt",
          shared_data / "runs/trec-dl-2019-passage-official/input.UNH_bm25.gz", DL19, {"gdeval", "cwl_eval", "compat"})
