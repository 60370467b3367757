"""Real TREC runs (shared data): documented tie counts and rank disagreements, and lossless round trips.

The figures come from shared/data/runs/README.md (checked there with
trec_eval 9.0.4).  Skipped with a reason when the shared data is absent.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from converters.trec_run import read_trec_run, write_trec_run

DL19 = "trec-dl-2019-passage-official"
DL20 = "trec-dl-2020-passage-official"

# file, rows, queries, tied rows, queries whose rank column disagrees with the score order (None: not documented)
DOCUMENTED = [
    (f"{DL19}/input.bm25base_p.gz", 200000, 200, 1206, 93),
    (f"{DL19}/input.UNH_bm25.gz", 200000, 200, 130046, 200),
    (f"{DL19}/input.test1.gz", 189877, 200, 182829, 193),
    (f"{DL19}/input.runid2.gz", 188743, 200, 55132, None),
    (f"{DL19}/input.srchvrs_ps_run2.gz", 95645, 200, None, None),
    (f"{DL19}/input.ICT-BERT2.gz", 4000, 200, None, None),
    (f"{DL20}/input.1.gz", 190699, 200, 100004, None),
    (f"{DL20}/input.terrier-BM25.gz", 192786, 200, 131456, None),
    (f"{DL20}/input.CoRT-electra.gz", 200000, 200, 171612, None),
    ("dl-hard/passage.bm25_t5-zs.run.gz", 50000, 50, None, None),
    ("sigir25-annotation/colbert_monoelectra-base_msmarco-passage-trec-dl-2019-judged.run", 4300, 43, None, None),
    ("ir_measures-tests/cwl.run", 30, 3, None, None),
]


def all_runs(root: Path) -> list[Path]:
    skip = {"MD5SUMS", "README.md"}
    return sorted(p for p in (root / "runs").glob("*/*")
                  if p.name not in skip and p.suffix not in (".eval", ".tsv", ".json", ".md"))


@pytest.mark.parametrize("name,rows,queries,tied,disagree", DOCUMENTED, ids=[d[0].split("/")[-1] for d in DOCUMENTED])
def test_documented_figures(shared_data, name, rows, queries, tied, disagree):
    run = read_trec_run(shared_data / "runs" / name)
    assert run.frame.height == rows
    assert len(run.queries) == queries == len(run.order)
    if tied is not None:
        assert sum(o.ties_broken for o in run.order) == tied
    if disagree is not None:
        assert sum(o.rank_disagrees for o in run.order) == disagree


def test_rank_zero_and_odd_second_columns(shared_data):
    t5 = read_trec_run(shared_data / "runs" / "dl-hard" / "passage.bm25_t5-zs.run.gz", order="rank")
    assert t5.run_id == "T5-P" and t5.frame.get_column("rank").min() == 1
    cwl = read_trec_run(shared_data / "runs" / "ir_measures-tests" / "cwl.run")
    assert cwl.queries == ("T1", "T2", "T3") and cwl.run_id == "R1"


def test_all_shared_runs_are_found(shared_data):
    names = {p.name for p in all_runs(shared_data)}
    assert len(names) >= 20 and "run.trec" in names and "compat.run" in names


def written_in_float32_order(path: Path) -> bool:
    """Every query's scores strictly decrease as float32 in file order: then all tools read file order."""
    f = pl.read_csv(path, separator=" ", has_header=False, quote_char=None, infer_schema=False,
                    schema={"q": pl.String, "z": pl.String, "d": pl.String, "r": pl.Int64, "s": pl.String,
                            "t": pl.String})
    s32 = f.get_column("s").cast(pl.Float64).cast(pl.Float32)
    same = f.get_column("q") == f.get_column("q").shift(1)
    return bool(((~same.fill_null(False)) | (s32 < s32.shift(1))).all())


def shared_runs() -> list[str]:
    from .conftest import SHARED_DATA

    return [str(p.relative_to(SHARED_DATA / "runs")) for p in all_runs(SHARED_DATA)] if SHARED_DATA.is_dir() else []


RANK_ORDER = {f"{DL19}/input.UNH_bm25.gz", f"{DL19}/input.TUW19-p1-f.gz", "dl-hard/doc.bm25_bert-mp-zs.run.gz"}


@pytest.mark.parametrize("name", shared_runs() or ["(no shared data)"])
def test_every_shared_run_round_trips(shared_data, tmp_path, name):
    path = shared_data / "runs" / name
    for order in ("score", "rank") if name in RANK_ORDER else ("score",):
        run = read_trec_run(path, order=order)
        out = tmp_path / "out.run"
        write_trec_run(run, out)
        back = read_trec_run(out)
        assert back.frame.equals(run.frame)
        assert (back.queries, back.order, back.run_id, back.order_source, back.metadata) == \
            (run.queries, run.order, run.run_id, run.order_source, run.metadata)
        write_trec_run(run, out, sidecar=False)
        assert written_in_float32_order(out)
        bare = read_trec_run(out)
        assert bare.frame.select("query_id", "doc_id", "rank").equals(run.frame.select("query_id", "doc_id", "rank"))


@pytest.mark.parametrize("name", shared_runs() or ["(no shared data)"])
def test_every_shared_run_survives_json_and_back(shared_data, tmp_path, name):
    """read -> JSON -> TREC -> read keeps every query's order (the issue's round trip through our format)."""
    from converters.json_run import dump_run, load_run

    run = read_trec_run(shared_data / "runs" / name)
    run.dataset_id = "shared-data"
    dump_run(run, tmp_path / "run.json")
    via_json = load_run(tmp_path / "run.json")
    write_trec_run(via_json, tmp_path / "run.trec", sidecar=False)
    back = read_trec_run(tmp_path / "run.trec")
    assert back.queries == run.queries
    assert back.frame.select("query_id", "doc_id", "rank").equals(run.frame.select("query_id", "doc_id", "rank"))
