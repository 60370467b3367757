"""Issue 21 §2 on a real cluster: a distributed.LocalCluster of 2 worker processes scores the golden scenarios,
an official DL19 run (cut into pieces and whole), score-many's runs and a Dask DataFrame, and every report is
byte-identical to the one scored in this process; a worker killed mid-run is retried by Dask and the result is
the same, and a worker lost past the retries is E_DASK (exit 7), never a partial result.
Before this change --dask did not exist and tb.score could not take a Dask DataFrame.
"""
from __future__ import annotations

import gzip
import json
import logging
import os
from pathlib import Path

import pytest

from .conftest import run_cli
from .integration.test_golden import SCENARIOS, _resolve

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install "
                                  "'trec-bridge[dask]')")
dd = pytest.importorskip("dask.dataframe", reason="dask.dataframe is not installed (pip install 'dask[dataframe]')")
pd = pytest.importorskip("pandas")

DL19 = "trec-dl-2019-passage-official"
MEASURES = "nDCG@10 RR(rel=2) R@100 P@10 AP(rel=2) G"


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.CRITICAL) as local, distributed.Client(local) as client:
        yield local, client


def _both(tmp_path, *argv, address):
    """``trec-bridge ARGV --json`` here and on the cluster: (exit code, stdout, stderr, report bytes) of each."""
    out = []
    for name, extra in (("here", []), ("there", ["--dask", address])):
        report = tmp_path / f"{name}.json"
        code, stdout, stderr = run_cli(*argv, "--json", report, *extra)
        out.append((code, stdout, stderr, report.read_bytes() if report.exists() else None))
    return out


def test_golden_scenarios_give_the_same_bytes_on_the_cluster(cluster, tmp_path):
    local, _ = cluster
    cases = 0
    for folder in SCENARIOS:
        for case in json.loads((folder / "expected.json").read_text())["cases"]:
            here, there = _both(tmp_path, "score", *_resolve(folder, case["args"]), address=local.scheduler_address)
            assert here == there, f"{folder.name}: {case['name']}"
            assert here[0] == case["exit_code"]
            cases += 1
    assert cases >= 40


def _dl19(shared_data, tmp_path) -> tuple[Path, Path, Path]:
    qrels = shared_data / "qrels" / "anserini-tools" / "qrels.dl19-passage.txt"
    gz = sorted((shared_data / "runs" / DL19).glob("input.*.gz"))[0]
    plain = tmp_path / gz.name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    return qrels, gz, plain


def test_an_official_dl19_run_in_pieces_and_whole(cluster, shared_data, tmp_path, monkeypatch):
    import converters.trec_run_parts as trp
    from trec_bridge.run_pieces import pieces_of

    local, _ = cluster
    qrels, gz, plain = _dl19(shared_data, tmp_path)
    monkeypatch.setattr(trp, "PART_BYTES", plain.stat().st_size // 10)  # about ten pieces, here and there
    assert len(pieces_of(str(plain)).pieces) >= 8
    for run in (plain, gz):  # pieces on both workers; the gzip file whole on one
        for policy in ("strict", "trec_eval"):
            here, there = _both(tmp_path, "score", qrels, run, MEASURES, "--policy", policy,
                                address=local.scheduler_address)
            assert here == there and here[0] == 0 and here[3] is not None, (run.name, policy, here[2], there[2])


def test_a_parquet_folder_is_scored_one_partition_file_a_worker(cluster, shared_data, tmp_path):
    import polars as pl

    from trec_bridge.run_pieces import pieces_of

    local, _ = cluster
    qrels, gz, _ = _dl19(shared_data, tmp_path)
    folder = tmp_path / "run.parquet"
    folder.mkdir()
    for n, chunk in enumerate(_by_query(_frame_of(gz), 5)):
        pl.from_pandas(chunk).write_parquet(folder / f"part-{n}.parquet")
    assert len(pieces_of(str(folder)).pieces) == 5
    here, there = _both(tmp_path, "score", qrels, folder, MEASURES, address=local.scheduler_address)
    assert here == there and here[0] == 0 and here[3] is not None, (here[2], there[2])


def test_score_many_on_the_cluster_equals_local_workers(cluster, shared_data, tmp_path):
    local, _ = cluster
    qrels = shared_data / "qrels" / "anserini-tools" / "qrels.dl19-passage.txt"
    runs = sorted((shared_data / "runs" / DL19).glob("input.*.gz"))[:3]
    (tmp_path / "bad.trec").write_text("19335 Q0 d1 1 1.0 x\n19335 Q0 d1 2 0.5 x\n")
    outputs = []
    for name, extra in (("here", ["--jobs", "1"]), ("there", ["--dask", local.scheduler_address])):
        reports = tmp_path / name
        code, out, err = run_cli("score-many", qrels, *runs, tmp_path / "bad.trec", "-m", MEASURES,
                                 "--json-dir", reports, *extra)
        outputs.append((code, out, err, {p.name: p.read_bytes() for p in reports.iterdir()}))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 1 and "invalid E_RUN_DUPLICATE_DOC" in outputs[0][1] and len(outputs[0][3]) == 3


def test_the_python_api_on_the_cluster_equals_it_here(cluster, shared_data, tmp_path):
    import trec_bridge as tb

    local, client = cluster
    qrels, gz, plain = _dl19(shared_data, tmp_path)
    ev = tb.Evaluator(qrels, MEASURES)
    for run in (plain, gz):
        here, there = ev.score(run), ev.score(run, client=local.scheduler_address)  # an address works too
        here.to_json(tmp_path / "here.json")
        there.to_json(tmp_path / "there.json")
        assert (tmp_path / "here.json").read_bytes() == (tmp_path / "there.json").read_bytes(), run.name
    runs = {"plain": plain, "gz": gz, "bad": {"19335": {"d1": float("nan")}}}
    many_here, many_there = ev.score_many(runs, jobs=1), ev.score_many(runs, client=client)
    assert many_there.errors == many_here.errors and many_there.errors["bad"]["code"] == "E_RUN_SCORE"
    assert {k: r.exact for k, r in many_there.results.items()} == {k: r.exact for k, r in many_here.results.items()}


def _frame_of(path: Path):
    return pd.read_csv(path, sep=r"\s+", header=None, names=["query_id", "q0", "doc_id", "rank", "score", "tag"],
                       dtype={"query_id": str, "doc_id": str})[["query_id", "doc_id", "score"]]


def _by_query(frame, n: int) -> list:
    """``frame`` in ``n`` pieces, each query whole in one (queries dealt round-robin)."""
    ids = list(dict.fromkeys(frame["query_id"]))
    return [frame[frame["query_id"].isin(ids[i::n])] for i in range(n)]


def test_a_dask_dataframe_run_gives_the_report_of_the_same_rows_here(cluster, shared_data, tmp_path):
    import trec_bridge as tb

    _, client = cluster
    qrels, gz, _ = _dl19(shared_data, tmp_path)
    chunks = _by_query(_frame_of(gz), 4)
    here = tb.score(qrels, pd.concat(chunks), MEASURES)
    there = tb.score(qrels, dd.concat([dd.from_pandas(c, npartitions=1) for c in chunks]), MEASURES, client=client)
    here.to_json(tmp_path / "here.json")
    there.to_json(tmp_path / "there.json")
    assert (tmp_path / "here.json").read_bytes() == (tmp_path / "there.json").read_bytes()
    assert there.exact == here.exact and there.outcome == "complete"


def test_a_query_in_two_partitions_is_refused(cluster, tmp_path):
    import trec_bridge as tb

    _, client = cluster
    run = pd.DataFrame({"query_id": ["q1", "q2", "q1"], "doc_id": ["d1", "d2", "d3"], "score": [3.0, 2.0, 1.0]})
    ddf = dd.concat([dd.from_pandas(run.iloc[:2], npartitions=1), dd.from_pandas(run.iloc[2:], npartitions=1)])
    with pytest.raises(tb.InvalidInput) as raised:
        tb.score({"q1": {"d1": 1}, "q2": {"d2": 1}}, ddf, "P@1", client=client)
    assert raised.value.code == "E_RUN_QUERY_SPLIT" and raised.value.where.query == "q1"
    with pytest.raises(tb.InvalidInput) as raised:  # a NaN score: the partition's reader says where
        bad = run.assign(score=[3.0, float("nan"), 1.0]).iloc[:2]
        tb.score({"q1": {"d1": 1}, "q2": {"d2": 1}}, dd.from_pandas(bad, npartitions=1), "P@1", client=client)
    assert raised.value.code == "E_RUN_SCORE" and "Dask DataFrame partition 0" in str(raised.value)


def test_integer_ids_against_another_spelling_are_refused_on_the_cluster_as_here(cluster, tmp_path):
    """A Parquet folder's integer 7 against the qrels' "007" (and a Parquet qrels' 7 against a Dask DataFrame's
    "007"): E_ID_COLLISION on the cluster as in this process, never 7 scored unjudged and "007" missing.  Before
    this change the workers checked no partition's integers."""
    import polars as pl

    import trec_bridge as tb

    local, client = cluster
    (tmp_path / "q007.txt").write_text("007 0 d1 1\n8 0 d1 1\n")
    folder = tmp_path / "parts"
    folder.mkdir()
    pl.DataFrame({"query_id": [7], "doc_id": ["d1"], "score": [1.0]}).write_parquet(folder / "a.parquet")
    pl.DataFrame({"query_id": [8], "doc_id": ["d1"], "score": [0.5]}).write_parquet(folder / "b.parquet")
    here, there = _both(tmp_path, "score", tmp_path / "q007.txt", folder, "P@1", address=local.scheduler_address)
    assert here == there and here[0] == 1, (here[2], there[2])
    assert "[E_ID_COLLISION]" in here[2] and "the qrels holds the string '007'" in here[2]

    pl.DataFrame({"query_id": [7, 8], "doc_id": ["d1", "d1"], "relevance": [1, 1]}).write_parquet(
        tmp_path / "q.parquet")
    run = pd.DataFrame({"query_id": ["007", "8"], "doc_id": ["d1", "d1"], "score": [1.0, 0.5]})
    raised = []
    for extra in ({}, {"client": client}):
        frame = run if not extra else dd.from_pandas(run, npartitions=1)
        with pytest.raises(tb.InvalidInput) as caught:
            tb.score(tmp_path / "q.parquet", frame, "P@1", **extra)
        raised.append(caught.value.code)
    assert raised == ["E_ID_COLLISION", "E_ID_COLLISION"]
    run7 = run.assign(query_id=["7", "8"])  # the same number spelled alike: scored, here and there
    assert tb.score(tmp_path / "q.parquet", dd.from_pandas(run7, npartitions=1), "P@1", client=client).means == \
        tb.score(tmp_path / "q.parquet", run7, "P@1").means == {"P@1": 1.0}


def _killing_frame(chunks: list, folder: Path, mode: str):
    """A Dask DataFrame whose partition 2 kills the worker loading it (``once``: the first time only)."""
    paths = []
    for n, chunk in enumerate(chunks):
        paths.append(folder / f"part{n}.pkl")
        chunk.to_pickle(paths[-1])
    marker = folder / "killed"

    def load(path):
        if path.name == "part2.pkl" and (mode == "always" or not marker.exists()):
            marker.touch()
            os._exit(1)  # the worker process dies mid-run, holding this task
        return pd.read_pickle(path)

    return dd.from_map(load, paths, meta=chunks[0].iloc[:0], enforce_metadata=False)


def test_a_worker_killed_mid_run_is_retried_and_the_result_is_the_same(cluster, shared_data, tmp_path):
    import trec_bridge as tb

    local, client = cluster
    qrels, gz, _ = _dl19(shared_data, tmp_path)
    chunks = _by_query(_frame_of(gz), 4)
    here = tb.score(qrels, pd.concat(chunks), MEASURES)
    there = tb.score(qrels, _killing_frame(chunks, tmp_path, "once"), MEASURES, client=client)
    assert (tmp_path / "killed").exists(), "a worker must have died"
    here.to_json(tmp_path / "here.json")
    there.to_json(tmp_path / "there.json")
    assert (tmp_path / "here.json").read_bytes() == (tmp_path / "there.json").read_bytes()
    client.wait_for_workers(2, timeout=120)


def test_a_worker_lost_past_the_retries_is_e_dask_not_a_partial_result(cluster, shared_data, tmp_path):
    import trec_bridge as tb
    from trec_bridge.errors import ClusterFailed

    local, client = cluster
    qrels, gz, _ = _dl19(shared_data, tmp_path)
    chunks = _by_query(_frame_of(gz), 4)
    allowed, local.scheduler.allowed_failures = local.scheduler.allowed_failures, 0
    try:
        with pytest.raises(ClusterFailed) as raised:
            tb.score(qrels, _killing_frame(chunks, tmp_path, "always"), MEASURES, client=client)
    finally:
        local.scheduler.allowed_failures = allowed
        client.wait_for_workers(2, timeout=120)
    assert raised.value.code == "E_DASK" and raised.value.exit_code == 7
    assert "worker died" in str(raised.value) and "nothing was scored" in str(raised.value)
