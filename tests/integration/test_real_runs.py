"""Real TREC runs (shared data): documented tie counts and rank disagreements, and lossless round trips.

The figures come from shared/data/runs/README.md (checked there with
trec_eval 9.0.4).  Skipped with a reason when the shared data is absent.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from converters.trec_run import read_trec_run, write_trec_run
from trec_bridge.files import read_input_bytes

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
    from ..conftest import SHARED_DATA

    return [str(p.relative_to(SHARED_DATA / "runs")) for p in all_runs(SHARED_DATA)] if SHARED_DATA.is_dir() else []


RANK_ORDER = {f"{DL19}/input.UNH_bm25.gz", f"{DL19}/input.TUW19-p1-f.gz", "dl-hard/doc.bm25_bert-mp-zs.run.gz"}


def file_scores(path: Path) -> dict[tuple[str, str], float]:
    """(query, document) -> the score as a double, straight from the file's text (as every tool parses it)."""
    frame = read_trec_run(path, use_sidecar=False).frame
    return dict(zip(zip(frame.get_column("query_id").to_list(), frame.get_column("doc_id").to_list()),
                    frame.get_column("score").to_list()))


@pytest.mark.parametrize("name", shared_runs() or ["(no shared data)"])
def test_every_shared_run_round_trips(shared_data, tmp_path, name):
    path = shared_data / "runs" / name
    for order in ("score", "rank") if name in RANK_ORDER else ("score",):
        run = read_trec_run(path, order=order)
        out = tmp_path / "out.run"
        write_trec_run(run, out)
        back = read_trec_run(out)
        assert back.own_frame().equals(run.own_frame())
        assert (back.queries, back.order, back.run_id, back.order_source, back.metadata) == \
            (run.queries, run.order, run.run_id, run.order_source, run.metadata)
        write_trec_run(run, out, sidecar=False)
        if order == "score":  # the run's own scores, line for line: every tool reads the file as the original
            assert file_scores(out) == file_scores(path)
        else:  # the rank column's order, which the scores do not give: n..1 where needed, so every tool reads it
            assert written_in_float32_order(out)
        bare = read_trec_run(out)
        assert bare.frame.select("query_id", "doc_id", "rank").equals(run.frame.select("query_id", "doc_id", "rank"))


def judge_some(path: Path, out: Path) -> None:
    """Qrels judging every document of the run, a deterministic third of them relevant (grades 0-2)."""
    import zlib

    frame = read_trec_run(path, use_sidecar=False).frame
    lines = [f"{q} 0 {d} {zlib.crc32(f'{q} {d}'.encode()) % 3}\n"
             for q, d in frame.select("query_id", "doc_id").iter_rows()]
    out.write_text("".join(lines), encoding="utf-8")


def trec_eval_output(binary: str, qrels: Path, run: Path) -> str:
    import subprocess

    return subprocess.run([binary, "-q", "-m", "map", "-m", "ndcg_cut.10", "-m", "recip_rank", "-m", "P.5",
                           str(qrels), str(run)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("name", shared_runs() or ["(no shared data)"])
def test_every_shared_run_survives_json_and_back(shared_data, tmp_path, name, trec_eval_binary):
    """TREC -> JSON -> TREC gives back every line's score (the same double), so trec_eval prints the same.

    Before, queries with ties or float32-equal scores came back as n..1 (7 of 50 queries of an RRF run), and
    trec_eval then read the round-tripped file in another order than the original.
    """
    from trec_bridge.cli.main import main

    path = shared_data / "runs" / name
    json_path, trec_path = tmp_path / "run.json", tmp_path / "run.trec"
    assert main(["convert", "run", str(path), str(json_path), "--dataset-id", "shared-data"]) == 0
    assert main(["convert", "run", str(json_path), str(trec_path), "--no-sidecar"]) == 0
    assert file_scores(trec_path) == file_scores(path)
    run, back = read_trec_run(path), read_trec_run(trec_path)
    assert back.queries == run.queries
    assert back.frame.equals(run.frame)
    judge_some(path, tmp_path / "qrels.txt")
    plain = tmp_path / "original.run"  # trec_eval does not read gzip
    plain.write_bytes(read_input_bytes(path))
    assert trec_eval_output(trec_eval_binary, tmp_path / "qrels.txt", trec_path) == \
        trec_eval_output(trec_eval_binary, tmp_path / "qrels.txt", plain)


def rrf(paths: list[Path], out: Path, k: int = 60) -> None:
    """Reciprocal-rank fusion of runs (sum of 1/(k + rank), rank in trec_eval's order), the top 100 per query."""
    parts = []
    for path in paths:
        f = read_trec_run(path).frame
        parts.append(f.select("query_id", "doc_id", (1.0 / (k + pl.col("rank"))).alias("s")))
    fused = (pl.concat(parts).group_by("query_id", "doc_id").agg(pl.col("s").sum())
             .sort(["query_id", "s", "doc_id"], descending=[False, True, True])
             .with_columns(rank=pl.int_range(1, pl.len() + 1).over("query_id"))
             .filter(pl.col("rank") <= 100))
    fused.select("query_id", pl.lit("Q0").alias("q0"), "doc_id", "rank", "s", pl.lit("rrf").alias("tag")).write_csv(
        out, separator=" ", include_header=False, quote_style="never")


def test_real_rrf_run_round_trip_is_read_by_the_emulation_as_by_trec_eval(shared_data, tmp_path, trec_eval_binary):
    """The issue's case on real data: an RRF run of two official DL19 runs, TREC -> JSON -> TREC.

    trec_eval, --policy trec_eval and the cross-check's reference column must read the round-tripped file as
    trec_eval reads the original, per query, though many RRF scores are distinct doubles and equal float32s.
    """
    import subprocess

    from trec_bridge.cli.main import main

    runs = shared_data / "runs" / DL19
    qrels = shared_data / "qrels" / "anserini-tools" / "qrels.dl19-passage.txt"
    fused = tmp_path / "rrf.run"
    rrf([runs / "input.bm25base_p.gz", runs / "input.idst_bert_p1.gz"], fused)
    f = read_trec_run(fused).frame
    s64, s32 = f.get_column("score"), f.get_column("score").cast(pl.Float32)
    same_q = f.get_column("query_id") == f.get_column("query_id").shift(1)
    collisions = (same_q & (s32 == s32.shift(1)) & (s64 != s64.shift(1))).sum()
    assert collisions > 0  # the case at hand: distinct doubles, one float32
    assert main(["convert", "run", str(fused), str(tmp_path / "rrf.json"), "--dataset-id", "dl19"]) == 0
    back = tmp_path / "back.run"
    assert main(["convert", "run", str(tmp_path / "rrf.json"), str(back)]) == 0
    assert file_scores(back) == file_scores(fused)

    def te(run: Path) -> str:
        return subprocess.run([trec_eval_binary, "-q", "-m", "map", str(qrels), str(run)], capture_output=True,
                              text=True, check=True).stdout
    printed = te(back)
    assert printed == te(fused)
    per_query = {q: float(v) for _, q, v in (line.split() for line in printed.splitlines()) if q != "all"}
    report = tmp_path / "te.json"
    assert main(["score", str(qrels), str(back), "AP", "--policy", "trec_eval", "--json", str(report)]) in (0, 2)
    import json

    ours = {q["query_id"]: q["values"]["AP"] for q in json.loads(report.read_text())["per_query"]}
    assert set(ours) == set(per_query)
    assert all(abs(ours[q] - v) <= 5e-5 + 1e-12 for q, v in per_query.items())
    cc = tmp_path / "cc.json"
    code = main(["crosscheck", str(qrels), str(back), "AP", "--against", "trec_eval", "--json", str(cc),
                 "--repro-dir", str(tmp_path / "repro")])
    assert code in (0, 2)
    rows = json.loads(cc.read_text())["references"]["trec_eval"]["per_query"]
    assert {r["query_id"]: r["reference"] for r in rows} == per_query and all(r["agrees"] for r in rows)
