"""Issue 21 §3: a partitioned Parquet run is read one partition file at a time (bounded memory), fsspec URLs are
read like paths (memory:// here, no network), and the strict checks are the same either way.

Hand-worked figures (threshold 1): qrels q1: d1=1, d2=0, d3=2; q2: d4=1; q3: d5=1.  Run, one query a file:
q1 d1 d2 d3 (AP (1 + 2/3)/2 = 5/6), q2 d4 (AP 1), q3 d9 (AP 0) -> AP (5/6 + 1 + 0)/3 = 11/18, P@1 2/3.
Before this change a folder was read whole (one polars scan of every file) and a URL was E_FILE_NOT_FOUND.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

from .conftest import run_cli

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\nq3 0 d5 1\n"
ROWS = {"q1": (["d1", "d2", "d3"], [3.0, 2.0, 1.0]), "q2": (["d4"], [1.0]), "q3": (["d9"], [0.5])}


def _write_parts(write, prefix: str) -> None:
    for n, (q, (docs, scores)) in enumerate(ROWS.items()):
        write(f"{prefix}/part-{n}.parquet", pl.DataFrame({"query_id": [q] * len(docs), "doc_id": docs,
                                                          "score": scores}))


@pytest.fixture
def work(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    folder = tmp_path / "run.parquet"
    folder.mkdir()
    _write_parts(lambda name, frame: frame.write_parquet(tmp_path / name), "run.parquet")
    return tmp_path


def _exact(work, run, measures="P@1 AP") -> dict:
    code, _, err = run_cli("score", work / "qrels.txt", run, measures, "--json", work / "r.json")
    assert code == 0, err
    return {k: Fraction(v["exact"]) for k, v in json.loads((work / "r.json").read_text())["means"].items()}


def test_a_folder_is_read_one_partition_at_a_time(work, monkeypatch):
    import converters.columnar as columnar

    read = []
    real = columnar.read_partition
    monkeypatch.setattr(columnar, "read_partition", lambda folder, part: read.append(part.path) or real(folder, part))
    monkeypatch.setattr(columnar, "read_columnar_run", None)  # the whole-folder reader must not be called
    assert _exact(work, work / "run.parquet") == {"P@1": Fraction(2, 3), "AP": Fraction(11, 18)}
    assert [Path(p).name for p in read] == ["part-0.parquet", "part-1.parquet", "part-2.parquet"]


def test_a_query_in_two_files_reads_the_folder_whole_with_the_same_numbers(work):
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["d5"], "score": [0.1]}).write_parquet(work / "run.parquet" / "z.parquet")
    # q1 gains d5 (judged 0 for q1? no: unjudged) at rank 4: AP q1 still (1 + 2/3)/2
    assert _exact(work, work / "run.parquet") == {"P@1": Fraction(2, 3), "AP": Fraction(11, 18)}


@pytest.mark.parametrize("rows, code", [
    ({"query_id": ["q2", "q2"], "doc_id": ["d4", "d4"], "score": [1.0, 2.0]}, "E_RUN_DUPLICATE_DOC"),
    ({"query_id": ["q2"], "doc_id": ["d4"], "score": [float("nan")]}, "E_RUN_SCORE"),
    ({"query_id": ["q2"], "doc_id": ["d4"]}, "E_COLUMNAR"),
])
def test_a_bad_partition_is_refused_naming_its_file(work, rows, code):
    pl.DataFrame(rows).write_parquet(work / "run.parquet" / "part-1.parquet")
    status, _, err = run_cli("score", work / "qrels.txt", work / "run.parquet", "AP", "--json", work / "o.json")
    assert status == 1 and f"[{code}]" in err and "part-1.parquet" in err
    assert not (work / "o.json").exists()


def test_an_unknown_query_names_the_folder(work):
    pl.DataFrame({"query_id": ["q9"], "doc_id": ["d1"], "score": [1.0]}).write_parquet(work / "run.parquet" / "x.parquet")
    (work / "ids.txt").write_text("q1\nq2\nq3\n")
    status, _, err = run_cli("score", work / "qrels.txt", work / "run.parquet", "AP", "--queries", work / "ids.txt")
    assert status == 1 and "[E_RUN_UNKNOWN_QUERY]" in err and "q9" in err and "run.parquet" in err


def _memory_write(name: str, frame: pl.DataFrame) -> None:
    import fsspec

    with fsspec.filesystem("memory").open(name, "wb") as fh:
        frame.write_parquet(fh)


def test_fsspec_urls_are_read_like_paths(work):
    pytest.importorskip("fsspec", reason="fsspec is not installed (it comes with 'trec-bridge[dask]')")
    import fsspec

    import trec_bridge as tb

    _write_parts(_memory_write, "/tb-test/run")
    _memory_write("/tb-test/qrels.parquet", pl.DataFrame({"query_id": ["q1", "q1", "q1", "q2", "q3"],
                                                          "doc_id": ["d1", "d2", "d3", "d4", "d5"],
                                                          "relevance": [1, 0, 2, 1, 1]}))
    try:
        assert _exact(work, "memory://tb-test/run") == {"P@1": Fraction(2, 3), "AP": Fraction(11, 18)}
        report = json.loads((work / "r.json").read_text())
        assert report["fingerprints"]["inputs"]["run"]["sha256"] == _local_folder_sha(work)
        res = tb.score("memory://tb-test/qrels.parquet", "memory://tb-test/run/part-0.parquet", "AP")
        assert res.exact == {"AP": Fraction(5, 18)}  # q1 5/6, q2 and q3 missing (0): (5/6)/3
        _memory_write("/tb-test/run/part-1.parquet", pl.DataFrame({"query_id": ["q2"], "doc_id": ["d4"],
                                                                   "score": [float("nan")]}))
        status, _, err = run_cli("score", work / "qrels.txt", "memory://tb-test/run", "AP")
        assert status == 1 and "[E_RUN_SCORE]" in err and "memory://tb-test/run/part-1.parquet" in err
        status, _, err = run_cli("score", work / "qrels.txt", "memory://tb-test/nothing.parquet", "AP")
        assert status == 1 and "[E_FILE_NOT_FOUND]" in err
    finally:
        fsspec.filesystem("memory").rm("/tb-test", recursive=True)


def _local_folder_sha(work) -> str:
    from trec_bridge.files import sha256_file

    return sha256_file(work / "run.parquet")  # the same files under the same relative names


PEAK = textwrap.dedent("""
    import sys
    import converters.columnar_parts
    from trec_bridge.cli.main import main
    converters.columnar_parts.PART_ROWS = 50_000  # one file read in parts of a third of a partition
    code = main(sys.argv[1:])
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
    sys.stderr.write("HWM %s\\n" % hwm)
    sys.exit(code)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_partitioned_run_is_scored_in_the_memory_of_one_partition(tmp_path):
    """Partitions of 150,000 rows: doubling them from 4 to 8 adds less than one partition's cost to the peak
    (measured: +27 MiB one partition, +60 MiB four, +64 MiB eight; once, in CI, +49 four and +66 eight), where
    reading the folder whole would add about four partitions' (+130 MiB).  The same eight in one file, read in
    parts of 50,000 rows (converters/columnar_parts.py), costs no more than four partitions (+48 MiB against
    +48; read whole, as before, it cost +267 MiB). One malloc arena and one polars thread: the peak of a
    multi-threaded reader varies by how many arenas its threads happened to touch, which is noise here."""
    (tmp_path / "qrels.txt").write_text("".join(f"q{q} 0 d{q}-1 1\n" for q in range(800)))
    frames = [pl.DataFrame({"query_id": [f"q{q}" for q in range(n * 100, n * 100 + 100) for _ in range(1500)],
                            "doc_id": [f"d{q}-{d}-{'x' * 40}" for q in range(100) for d in range(1500)],
                            "score": [float(i % 1500) for i in range(150_000)]}) for n in range(8)]
    for name, files in (("one", frames[:1]), ("four", frames[:4]), ("eight", frames)):
        (tmp_path / name).mkdir()
        for n, frame in enumerate(files):
            frame.write_parquet(tmp_path / name / f"part-{n}.parquet")
    pl.concat(frames).write_parquet(tmp_path / "whole.parquet")
    frames[0].head(1).write_parquet(tmp_path / "tiny.parquet")
    peak = {name: _peak(tmp_path, run) for name, run in (("tiny", "tiny.parquet"), ("one", "one"), ("four", "four"),
                                                       ("eight", "eight"), ("whole", "whole.parquet"))}
    one, four, eight, whole = (peak[k] - peak["tiny"] for k in ("one", "four", "eight", "whole"))
    assert eight - four < one and whole - four < one, {k: v >> 20 for k, v in peak.items()}


def _peak(tmp_path, run: str) -> int:
    """Peak resident memory (VmHWM) of ``score`` on ``run`` in a new process."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent), "MALLOC_ARENA_MAX": "1",
           "POLARS_MAX_THREADS": "1"}
    argv = ["score", str(tmp_path / "qrels.txt"), str(tmp_path / run), "P@10"]
    p = subprocess.run([sys.executable, "-c", PEAK, *argv], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode in (0, 2), p.stderr
    return int(p.stderr.split("HWM ")[-1].split()[0]) * 1024
