"""Issue 21 §3: one Parquet run file is read by row groups as parts (converters/columnar_parts.py), each query
whole in one, with the numbers, reports and errors of reading it whole.

Hand-worked figures (threshold 1): qrels q1: d1=1, d2=0, d3=2; q2: d4=1.  Run q1 d1 d2 d3 (scores 3, 2, 1),
q2 d5 d4 (2, 1): AP q1 (1/1 + 2/3)/2 = 5/6, q2 (1/2)/1 = 1/2, mean 2/3; P@1 (1 + 0)/2 = 1/2.
Before this change one file was read whole (1 GiB for W1's 7M rows).
"""
from __future__ import annotations

import json
from fractions import Fraction

import polars as pl
import pytest

import converters.columnar as columnar
import converters.columnar_parts as parts
from trec_bridge.model import QueryNotContiguous

from .conftest import run_cli

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\n"
ROWS = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q1", "d3", 1.0), ("q2", "d5", 2.0), ("q2", "d4", 1.0)]
FIGURES = {"P@1": Fraction(1, 2), "AP": Fraction(2, 3)}


def _write(path, rows, row_group_size=2):
    q, d, s = zip(*rows)
    pl.DataFrame({"query_id": q, "doc_id": d, "score": s}).write_parquet(path, row_group_size=row_group_size)
    return path


@pytest.fixture
def work(tmp_path, monkeypatch):
    (tmp_path / "qrels.txt").write_text(QRELS)
    monkeypatch.setattr(parts, "PART_ROWS", 2)  # a part of two rows: every row group boundary is a part's
    return tmp_path


def _score(work, run, *extra) -> tuple[dict, str]:
    code, _, err = run_cli("score", work / "qrels.txt", run, "P@1 AP", "--json", work / "r.json", *extra)
    assert code == 0, err
    return {k: Fraction(v["exact"]) for k, v in json.loads((work / "r.json").read_text())["means"].items()}, \
        (work / "r.json").read_text()


def _queries(path, part_rows=2) -> list[tuple[str, ...]]:
    return [run.queries for run in parts.read_parquet_file_parts(path, part_rows)]


def test_a_query_cut_by_a_row_group_boundary_is_whole_in_one_part(work, monkeypatch):
    run = _write(work / "run.parquet", ROWS)  # row groups: q1 q1 | q1 q2 | q2
    assert _queries(run) == [("q1",), ("q2",)]
    assert [r.frame.height for r in parts.read_parquet_file_parts(run, 2)] == [3, 2]
    monkeypatch.setattr(columnar, "read_columnar_run", None)  # the whole-file reader must not be called
    assert _score(work, run)[0] == FIGURES


def test_the_report_is_the_whole_reads_byte_for_byte(work, monkeypatch):
    run = _write(work / "run.parquet", ROWS)
    in_parts = _score(work, run)[1]
    monkeypatch.setattr(parts, "read_parquet_file_parts", lambda path, part_rows=None: None)  # read it whole
    assert _score(work, run)[1] == in_parts


def test_a_query_in_two_row_groups_apart_is_merged_as_the_whole_read_merges_it(work):
    # q1 d1 d2 | q2 d5 d4 | q1 d3: the whole read groups q1's rows (d1 d2 d3), as it always did
    run = _write(work / "run.parquet", [ROWS[0], ROWS[1], ROWS[3], ROWS[4], ROWS[2]])
    with pytest.raises(QueryNotContiguous):
        _queries(run)
    assert _score(work, run)[0] == FIGURES


def test_an_empty_row_group_is_skipped(work):
    pa = pytest.importorskip("pyarrow", reason="pyarrow writes the empty row group (it comes with dask[dataframe])")
    import pyarrow.parquet as pq

    table = pa.table({"query_id": [r[0] for r in ROWS], "doc_id": [r[1] for r in ROWS],
                      "score": [r[2] for r in ROWS]})
    with pq.ParquetWriter(work / "run.parquet", table.schema) as writer:
        writer.write_table(table.slice(0, 2))
        writer.write_table(table.slice(0, 0))
        writer.write_table(table.slice(2))
    assert pq.ParquetFile(work / "run.parquet").metadata.row_group(1).num_rows == 0
    assert _queries(work / "run.parquet") == [("q1",), ("q2",)]
    assert _score(work, work / "run.parquet")[0] == FIGURES
    assert list(parts.query_whole(iter([pl.DataFrame(schema={"query_id": pl.String})] * 2))) == []


def test_a_file_of_one_row_group_gives_the_whole_reads_rows(work):
    run = _write(work / "run.parquet", ROWS, row_group_size=None)
    got = list(parts.read_parquet_file_parts(run, 1000))  # one batch: its last query is a part of its own
    whole = columnar.read_columnar_run(run, "parquet")
    assert [r.queries for r in got] == [("q1",), ("q2",)]
    assert pl.concat([r.frame for r in got]).equals(whole.frame)


@pytest.mark.parametrize("rows, message", [
    # a NaN in the second part: numbered as the whole file's fifth row, not the part's second
    (ROWS[:4] + [("q2", "d4", float("nan"))], "(item 5) is not a finite number"),
    (ROWS[:4] + [("q2", "d5", 1.0)], "document listed twice for this query (items 4 and 5)"),
])
def test_a_row_error_in_a_later_part_is_the_whole_reads(work, rows, message):
    run = _write(work / "run.parquet", rows)
    status, _, err = run_cli("score", work / "qrels.txt", run, "AP")
    assert status == 1 and message in err and "run.parquet" in err


def test_integer_ids_and_urls_are_read_whole(work):
    pl.DataFrame({"query_id": [1], "doc_id": [1], "score": [1.0]}).write_parquet(work / "int.parquet")
    assert parts.read_parquet_file_parts(work / "int.parquet") is None
    assert parts.read_parquet_file_parts("memory://nothing/run.parquet") is None


def test_results_come_in_order_and_an_error_in_its_turn():
    def fail():
        raise ValueError("third")

    got = []
    with pytest.raises(ValueError, match="third"):
        for value in parts.in_order_ahead(iter([lambda: 1, lambda: 2, fail, lambda: 4]), workers=2):
            got.append(value)
    assert got == [1, 2]


def test_parts_are_checked_two_at_a_time_unless_polars_has_fewer_threads(monkeypatch):
    monkeypatch.setattr(parts.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.delenv("POLARS_MAX_THREADS", raising=False)
    assert parts.default_workers() == 2
    monkeypatch.setenv("POLARS_MAX_THREADS", "1")  # score-many's workers sharing the cores
    assert parts.default_workers() == 1



def _top3_rows(repeat_at: tuple[int, int] | None = None) -> list[tuple[str, str, float]]:
    """Queries q1, q2, q4, q5 of three rows each and q3 of two; ``repeat_at``: (row, of row): that row's document
    is the earlier row's (scores stay falling, so only the duplicate check can object)."""
    rows = [(f"q{q}", f"d{q}{i}", float(10 - i)) for q in range(1, 6) for i in range(2 if q == 3 else 3)]
    if repeat_at:
        row, of = repeat_at
        rows[row] = (rows[row][0], rows[of][1], rows[row][2])
    return rows


@pytest.mark.parametrize("part_rows, repeat_at, items", [
    # one part of q1-q4 (lengths 3, 3, 2, 3), q5 carried to a part of its own:
    (100, (5, 3), "items 4 and 6"),  # q2, of the common length: its rows sorted as one row of a 2-D block
    (100, (7, 6), "items 7 and 8"),  # q3, the query of another length: sorted with the part's other such rows
    (100, (10, 8), "items 9 and 11"),  # q4, the part's last query
    # parts of two rows: every query a part of its own, cut by row groups and slices
    (2, (4, 3), "items 4 and 5"),  # q2's first two rows in two row groups and two slices
    (2, (13, 11), "items 12 and 14"),  # q5, the file's last query
])
def test_a_document_twice_is_found_in_a_query_of_any_length_across_part_boundaries(work, monkeypatch, part_rows,
                                                                                   repeat_at, items):
    monkeypatch.setattr(parts, "PART_ROWS", part_rows)
    clean = _write(work / "clean.parquet", _top3_rows())
    expected = [("q1", "q2", "q3", "q4"), ("q5",)] if part_rows == 100 else [(f"q{q}",) for q in range(1, 6)]
    assert _queries(clean, part_rows) == expected
    run = _write(work / "run.parquet", _top3_rows(repeat_at))
    with pytest.raises(parts.ReadWhole):  # found by the part's own check, then the whole read says it
        _queries(run, part_rows)
    status, _, err = run_cli("score", work / "qrels.txt", run, "AP")
    assert status == 1 and "E_RUN_DUPLICATE_DOC" in err and f"document listed twice for this query ({items})" in err
