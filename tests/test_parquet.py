"""Issue 21 §3: runs and qrels in Parquet (a file or a partition folder) and Arrow IPC, with ir_measures' columns.

Hand-worked figures (threshold 1): qrels q1: d1=1, d2=0, d3=2; q2: d4=1; run q1 d1 d2 d3, q2 d4:
P@1 1, AP (5/6 + 1)/2 = 11/12.  With integer IDs 1 -> "1": the same run and figures.
Before this change a .parquet input was read as a TREC file (E_ENCODING / E_TREC_COLUMNS on its bytes) and
convert wrote TREC lines into a file named .parquet.
"""
from __future__ import annotations

import json
from fractions import Fraction

import polars as pl
import pytest

from .conftest import run_cli

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\n"
RUN = "q1 Q0 d1 1 3.5 sys\nq1 Q0 d2 2 2.25 sys\nq1 Q0 d3 3 1 sys\nq2 Q0 d4 1 0.1 sys\n"


@pytest.fixture
def work(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    return tmp_path


def exact_means(work, qrels, run) -> dict[str, Fraction]:
    out = work / "report.json"
    code, _, err = run_cli("score", qrels, run, "P@1 AP", "--json", out)
    assert code == 0, err
    return {k: Fraction(v["exact"]) for k, v in json.loads(out.read_text())["means"].items()}


@pytest.mark.parametrize("name, read", [("run.parquet", pl.read_parquet), ("run.arrow", pl.read_ipc)])
def test_trec_to_parquet_to_trec_gives_the_same_run(work, name, read):
    assert run_cli("convert", "run", work / "run.trec", work / name)[0] == 0
    frame = read(work / name)
    assert frame.columns == ["query_id", "doc_id", "score", "run_id"]
    assert frame.get_column("score").to_list() == [3.5, 2.25, 1.0, 0.1]
    assert run_cli("convert", "run", work / name, work / "back.trec", "--no-sidecar")[0] == 0
    assert (work / "back.trec").read_text() == RUN.replace(" 1 sys\nq2", " 1.0 sys\nq2")  # the score 1 as 1.0


def test_qrels_round_trip_and_scores_equal_to_trec(work):
    assert run_cli("convert", "qrels", work / "qrels.txt", work / "qrels.parquet")[0] == 0
    assert run_cli("convert", "run", work / "run.trec", work / "run.parquet")[0] == 0
    assert run_cli("convert", "qrels", work / "qrels.parquet", work / "back.qrels")[0] == 0
    assert (work / "back.qrels").read_text() == QRELS
    assert exact_means(work, work / "qrels.parquet", work / "run.parquet") == {"P@1": 1, "AP": Fraction(11, 12)}


def test_integer_ids_are_read_as_decimal_text(work):
    pl.DataFrame({"query_id": [1, 1, 1, 2], "doc_id": [1, 2, 3, 4], "relevance": [1, 0, 2, 1]}) \
        .write_parquet(work / "q.parquet")
    pl.DataFrame({"query_id": [1, 1, 1, 2], "doc_id": [1, 2, 3, 4], "score": [3.5, 2.25, 1.0, 0.1]}) \
        .write_parquet(work / "r.parquet")
    (work / "int_qrels.txt").write_text(QRELS.replace("q", "").replace(" d", " "))
    assert exact_means(work, work / "q.parquet", work / "r.parquet") == {"P@1": 1, "AP": Fraction(11, 12)}
    assert exact_means(work, work / "int_qrels.txt", work / "r.parquet") == {"P@1": 1, "AP": Fraction(11, 12)}


@pytest.mark.parametrize("shape", ["run file", "run folder", "qrels file"])
def test_an_integer_id_against_another_spelling_of_its_number_is_refused(work, shape):
    """As the Python API refuses them (E_ID_COLLISION): a Parquet run's integer 7 read as "7" would make the
    qrels' "007" a missing query and 7 an unjudged one, and score the wrong thing without a word."""
    (work / "q007.txt").write_text("007 0 d1 1\n8 0 d1 1\n")
    (work / "r007.trec").write_text("007 Q0 d1 1 1.0 sys\n8 Q0 d1 1 0.5 sys\n")
    if shape == "qrels file":
        pl.DataFrame({"query_id": [7, 8], "doc_id": ["d1", "d1"], "relevance": [1, 1]}).write_parquet(work / "q.parquet")
        qrels, run, other = work / "q.parquet", work / "r007.trec", "the run"
    else:
        rows = pl.DataFrame({"query_id": [7, 8], "doc_id": ["d1", "d1"], "score": [1.0, 0.5]})
        if shape == "run folder":
            (work / "parts").mkdir()
            rows[:1].write_parquet(work / "parts" / "a.parquet")
            rows[1:].write_parquet(work / "parts" / "b.parquet")
        run = work / ("parts" if shape == "run folder" else "r.parquet")
        if shape == "run file":
            rows.write_parquet(run)
        qrels, other = work / "q007.txt", "the qrels"
    code, out, err = run_cli("score", qrels, run, "P@1")
    assert (code, out) == (1, "")
    assert "[E_ID_COLLISION]" in err and f"{other} holds the string '007'" in err
    (work / "q7.txt").write_text("7 0 d1 1\n8 0 d1 1\n")  # the same number spelled alike: scored
    (work / "r7.trec").write_text("7 Q0 d1 1 1.0 sys\n8 Q0 d1 1 0.5 sys\n")
    same = (work / "q.parquet", work / "r7.trec") if shape == "qrels file" else (work / "q7.txt", run)
    assert run_cli("score", *same, "P@1")[0] == 0


@pytest.mark.parametrize("run_kind", ["dict", "polars DataFrame", "TREC path", "Evaluator"])
def test_a_parquet_qrels_integer_against_a_python_runs_spelling_is_refused(work, run_kind):
    """``tb.score`` with a Parquet qrels path holding the integer 7 and a run held in Python (or a TREC file)
    that spells it "007": E_ID_COLLISION, as ``score`` refuses it.  Before this change the Python API checked
    only the integers of qrels given as Python objects, and the dict and DataFrame runs (scored without the run
    checks' pass over a sorted Run) were scored with 7 unjudged and "007" missing."""
    import trec_bridge as tb

    pl.DataFrame({"query_id": [7, 8], "doc_id": ["d1", "d1"], "relevance": [1, 1]}).write_parquet(work / "q.parquet")
    rows = {"query_id": ["007", "8"], "doc_id": ["d1", "d1"], "score": [1.0, 0.5]}
    (work / "r007.trec").write_text("007 Q0 d1 1 1.0 sys\n8 Q0 d1 1 0.5 sys\n")
    run = {"dict": {"007": {"d1": 1.0}, "8": {"d1": 0.5}}, "polars DataFrame": pl.DataFrame(rows),
           "TREC path": work / "r007.trec", "Evaluator": pl.DataFrame(rows)}[run_kind]
    with pytest.raises(tb.InvalidInput) as raised:
        if run_kind == "Evaluator":
            tb.Evaluator(work / "q.parquet", "P@1").score(run)
        else:
            tb.score(work / "q.parquet", run, "P@1")
    assert raised.value.code == "E_ID_COLLISION" and "the run holds the string '007'" in str(raised.value)
    assert tb.score(work / "q.parquet", {"7": {"d1": 1.0}, "8": {"d1": 0.5}}, "P@1").means == {"P@1": 1.0}


def test_a_partition_folder_is_one_run(work):
    run = work / "run.parquet"
    assert run_cli("convert", "run", work / "run.trec", run)[0] == 0
    folder = work / "parts"
    folder.mkdir()
    frame = pl.read_parquet(run)
    for q in ("q1", "q2"):
        frame.filter(pl.col("query_id") == q).write_parquet(folder / f"{q}.parquet")
    assert exact_means(work, work / "qrels.txt", folder) == {"P@1": 1, "AP": Fraction(11, 12)}


def test_arrow_ipc_is_read_too(work):
    pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d3", "d4"], "score": [1.0, 1.0]}).write_ipc(work / "r.arrow")
    assert exact_means(work, work / "qrels.txt", work / "r.arrow") == {"P@1": 1, "AP": Fraction(3, 4)}


@pytest.mark.parametrize("rows, code", [
    ({"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"], "score": [1.0, 2.0]}, "E_RUN_DUPLICATE_DOC"),
    ({"query_id": ["q1", "q2"], "doc_id": ["d1", "d4"], "score": [1.0, float("nan")]}, "E_RUN_SCORE"),
    ({"query_id": ["q1"], "doc_id": ["d1"]}, "E_COLUMNAR"),
])
def test_the_strict_checks_apply_to_parquet_runs(work, rows, code):
    pl.DataFrame(rows).write_parquet(work / "bad.parquet")
    status, _, err = run_cli("score", work / "qrels.txt", work / "bad.parquet", "P@1", "--json", work / "o.json")
    assert status == 1 and f"[{code}]" in err and "bad.parquet" in err
    assert not (work / "o.json").exists()


def test_a_null_score_is_named_null_not_nan(work):
    """A missing score was reported as "score nan": polars' array of a float column with a null holds NaN there."""
    pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d4"], "score": [1.0, None]}).write_parquet(
        work / "null.parquet")
    status, _, err = run_cli("score", work / "qrels.txt", work / "null.parquet", "P@1")
    assert status == 1 and "[E_RUN_SCORE]" in err and "score None (item 2) is not a finite number" in err, err


def test_a_duplicate_judgment_in_parquet_qrels_is_refused(work):
    pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"], "relevance": [1, 0]}) \
        .write_parquet(work / "q.parquet")
    status, _, err = run_cli("score", work / "q.parquet", work / "run.trec", "P@1")
    assert status == 1 and "[E_QRELS_DUPLICATE]" in err


def test_score_many_takes_parquet_runs(work):
    assert run_cli("convert", "run", work / "run.trec", work / "run.parquet")[0] == 0
    code, out, err = run_cli("score-many", work / "qrels.txt", work / "run.trec", work / "run.parquet", "-m", "AP",
                             "--format", "tsv", "--jobs", "1")
    assert code == 0, err
    assert [line.split("\t")[1:] for line in out.splitlines()[1:]] == [["complete", repr(11 / 12)]] * 2


def test_a_parquet_run_query_outside_a_json_dataset_is_refused(work):
    from pathlib import Path

    dataset = Path(__file__).parent / "malformed" / "valid" / "dataset.json"
    pl.DataFrame({"query_id": ["q1", "q9"], "doc_id": ["d1", "d1"], "score": [1.0, 2.0]}) \
        .write_parquet(work / "unk.parquet")
    status, _, err = run_cli("score", dataset, work / "unk.parquet", "P@1")
    assert status == 1 and "[E_RUN_UNKNOWN_QUERY]" in err and "unk.parquet" in err and "q9" in err


def test_hive_partition_values_are_ids_as_written(work):
    """query_id=007 folders: the ID is "007", not the number 7 polars would infer (which would match no judgment)."""
    (work / "q.txt").write_text("007 0 d1 1\n7 0 d2 1\n")
    for qid, doc in (("007", "d1"), ("7", "d9")):
        part = work / "hive" / f"query_id={qid}"
        part.mkdir(parents=True)
        pl.DataFrame({"doc_id": [doc], "score": [1.0]}).write_parquet(part / "0.parquet")
    out = work / "report.json"
    code, _, err = run_cli("score", work / "q.txt", work / "hive", "P@1", "--json", out)
    assert code == 0, err
    per_query = {q["query_id"]: q["values"]["P@1"] for q in json.loads(out.read_text())["per_query"]}
    assert per_query == {"007": 1.0, "7": 0.0}


@pytest.mark.parametrize("names, expected", [(["sys"] * 4, "sys"), (["sys", "sys", "other", "sys"], None),
                                             (["sys", None, "sys", "sys"], None), ([None] * 4, None),
                                             ([7] * 4, "7"), ([7, 7, 8, 7], None)])
def test_the_run_id_column_names_the_run_only_when_it_holds_one_value(work, names, expected):
    from converters.columnar import read_columnar_run

    frame = pl.DataFrame({"query_id": ["q1", "q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3", "d4"],
                          "score": [3.5, 2.25, 1.0, 0.1], "run_id": names})
    frame.write_parquet(work / "named.parquet")
    assert read_columnar_run(work / "named.parquet", "parquet").run_id == expected


@pytest.mark.parametrize("kind, name, codec", [("run", "run.parquet", "snappy"), ("run", "run.parquet", "lz4"),
                                               ("run", "run.parquet", "uncompressed"), ("run", "run.arrow", "zstd"),
                                               ("qrels", "qrels.parquet", "gzip")])
def test_compression_is_the_codec_asked_and_the_numbers_do_not_move(work, kind, name, codec):
    """--compression picks the codec (the file says it where pyarrow can read its metadata); the run and the
    judgments read back the same, and score the hand-worked P@1 1, AP 11/12."""
    source = work / ("run.trec" if kind == "run" else "qrels.txt")
    code, _, err = run_cli("convert", kind, source, work / name, "--compression", codec)
    assert code == 0, err
    qrels = work / name if kind == "qrels" else work / "qrels.txt"
    run = work / name if kind == "run" else work / "run.trec"
    assert exact_means(work, qrels, run) == {"P@1": 1, "AP": Fraction(11, 12)}
    if name.endswith(".parquet"):
        parquet = pytest.importorskip("pyarrow.parquet", reason="pyarrow reads the codec from the file's metadata")
        assert parquet.ParquetFile(work / name).metadata.row_group(0).column(0).compression == codec.upper()


@pytest.mark.parametrize("output, codec, why", [
    ("out.trec", "zstd", "applies to a Parquet or Arrow IPC output"),
    ("run.json", "snappy", "applies to a Parquet or Arrow IPC output"),
    ("run.arrow", "snappy", "Arrow IPC takes uncompressed, zstd, lz4"),
    ("run.parquet", "zip", "Parquet takes zstd, snappy, lz4, gzip, brotli, uncompressed"),
])
def test_a_codec_the_output_cannot_take_is_refused_and_nothing_is_written(work, output, codec, why):
    code, out, err = run_cli("convert", "run", work / "run.trec", work / output, "--compression", codec)
    assert (code, out) == (1, "") and "[E_USAGE]" in err and why in err, err
    assert not (work / output).exists()
