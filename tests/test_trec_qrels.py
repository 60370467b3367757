"""TREC qrels reader/writer: accepted forms, each rejection with its code and line, round trips."""
from __future__ import annotations

import gzip

import polars as pl
import pytest

from converters.trec_qrels import read_trec_qrels, write_trec_qrels
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput
from trec_bridge.model import QRELS_SCHEMA, Qrels

GOOD = "q1 0 a 1\nq1 0 b 0\nq2 Q0 c 2\nq2 0 d -1\n"


def put(tmp_path, content, name="qrels.txt") -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(path)


@pytest.mark.parametrize("variant", [
    GOOD, GOOD.replace(" ", "\t"), GOOD.replace(" ", "  \t"), GOOD.replace("\n", "\r\n"),
    " " + GOOD.replace("\n", " \n ").rstrip(" "), GOOD.rstrip("\n"),
])
def test_accepted_forms(tmp_path, variant):
    qrels = read_trec_qrels(put(tmp_path, variant))
    assert qrels.frame.rows() == [("q1", "0", "a", 1), ("q1", "0", "b", 0), ("q2", "Q0", "c", 2), ("q2", "0", "d", -1)]
    assert qrels.frame.schema == pl.Schema(QRELS_SCHEMA)
    assert qrels.query_ids() == ["q1", "q2"]


def test_negative_grades_and_iterations_kept(tmp_path):
    qrels = read_trec_qrels(put(tmp_path, "q 7 a -2\nq X b +3\nq 0 c 0\n"))
    assert qrels.frame.get_column("grade").to_list() == [-2, 3, 0]
    assert qrels.frame.get_column("iteration").to_list() == ["7", "X", "0"]


def test_gzip(tmp_path):
    path = tmp_path / "q.gz"
    path.write_bytes(gzip.compress(GOOD.encode()))
    assert read_trec_qrels(path).frame.height == 4


REJECTIONS = [
    ("3 columns", "q1 0 a 1\nq1 a 1\n", "E_TREC_COLUMNS", 2),
    ("5 columns", "q1 0 a 1\nq1 0 b 1 extra\n", "E_TREC_COLUMNS", 2),
    ("5 columns tab", "q1\t0\ta\t1\nq1\t0\tb\t1\tx\n", "E_TREC_COLUMNS", 2),
    ("comment", "# judged\nq1 0 a 1\n", "E_TREC_COLUMNS", 1),
    ("comment with 4 words", "q1 0 a 1\n# judged by NIST\n", "E_QRELS_GRADE", 2),
    ("grade 1.0", "q1 0 a 1\nq1 0 b 1.0\n", "E_QRELS_GRADE", 2),
    ("grade 0.5", "q1 0 a 0.5\n", "E_QRELS_GRADE", 1),
    ("grade true", "q1 0 a 1\nq1 0 b 0\nq1 0 c true\n", "E_QRELS_GRADE", 3),
    ("grade empty-ish", "q1 0 a 1\nq1 0 b -\n", "E_QRELS_GRADE", 2),
    ("grade too large", "q1 0 a 99999999999999999999\n", "E_QRELS_GRADE", 1),
    ("duplicate", "q1 0 a 1\nq2 0 a 1\nq1 0 b 0\nq1 1 a 0\n", "E_QRELS_DUPLICATE", 4),
    ("blank line", "q1 0 a 1\n\nq1 0 b 0\n", "E_TREC_BLANK_LINE", 2),
    ("whitespace line", "q1 0 a 1\nq1 0 b 0\n \t\n", "E_TREC_BLANK_LINE", 3),
    ("trailing blank line", "q1 0 a 1\n\n", "E_TREC_BLANK_LINE", 2),
    ("leading blank line", "\nq1 0 a 1\n", "E_TREC_BLANK_LINE", 1),
    ("bom", "\ufeffq1 0 a 1\n", "E_BOM", 1),
    ("nul", "q1 0 a 1\nq1 0 b\x00 1\n", "E_NUL_BYTE", 2),
    ("invalid utf-8", b"q1 0 a 1\nq1 0 b\xc3 1\n", "E_ENCODING", 2),
    ("no-break space", "q1 0 a\u00a0b 1\n", "E_TREC_COLUMNS", 1),
    ("empty", "", "E_FILE_EMPTY", None),
    ("only newlines", "\n\n", "E_FILE_EMPTY", None),
]


@pytest.mark.parametrize("content,code,line", [r[1:] for r in REJECTIONS], ids=[r[0] for r in REJECTIONS])
def test_rejections(tmp_path, content, code, line):
    path = put(tmp_path, content)
    with pytest.raises(InvalidInput) as err:
        read_trec_qrels(path)
    assert err.value.code == code
    assert err.value.where.line == line
    assert err.value.where.file == path
    assert main(["convert", "qrels", path, str(tmp_path / "out.qrels")]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qrels.txt"]


def test_duplicate_names_both_lines(tmp_path):
    with pytest.raises(InvalidInput) as err:
        read_trec_qrels(put(tmp_path, "q1 0 a 1\n\tq1 0 b 0\nq1 0 a 2\n".replace("\n\t", "\n")))
    assert (err.value.where.query, err.value.where.doc, err.value.where.line) == ("q1", "a", 3)
    assert "line 1" in err.value.message


def test_round_trip_is_byte_identical_for_canonical_files(tmp_path):
    src = put(tmp_path, GOOD)
    out = tmp_path / "out.qrels"
    write_trec_qrels(read_trec_qrels(src), out)
    assert out.read_text() == GOOD
    gz = tmp_path / "out.qrels.gz"
    write_trec_qrels(read_trec_qrels(src), gz)
    assert gzip.decompress(gz.read_bytes()).decode() == GOOD


def test_writer_fills_null_iteration_and_refuses_whitespace(tmp_path):
    frame = pl.DataFrame({"query_id": ["q"], "iteration": [None], "doc_id": ["a"], "grade": [1]}, schema=QRELS_SCHEMA)
    write_trec_qrels(Qrels(frame), tmp_path / "a.qrels", iteration="Q0")
    assert (tmp_path / "a.qrels").read_text() == "q Q0 a 1\n"
    bad = frame.with_columns(doc_id=pl.lit("a b"))
    with pytest.raises(InvalidInput) as err:
        write_trec_qrels(Qrels(bad), tmp_path / "b.qrels")
    assert err.value.code == "E_TREC_COLUMNS" and err.value.where.doc == "a b"
    assert not (tmp_path / "b.qrels").exists()
    with pytest.raises(InvalidInput) as err:
        write_trec_qrels(Qrels.empty(), tmp_path / "c.qrels")
    assert err.value.code == "E_FILE_EMPTY"


def test_real_qrels_round_trip(shared_data, tmp_path):
    for path in sorted((shared_data / "qrels").glob("*/*")):
        if path.name in ("MD5SUMS",) or path.suffix in (".json", ".readme", ".md", ".tsv"):
            continue
        try:
            qrels = read_trec_qrels(path)
        except InvalidInput as exc:  # a file the strict policy refuses must say why, with a line
            assert exc.where.line is not None or exc.code == "E_FILE_EMPTY", exc
            continue
        out = tmp_path / "q.txt"
        write_trec_qrels(qrels, out)
        assert read_trec_qrels(out).frame.equals(qrels.frame), path


def test_convert_through_json_keeps_every_judgment(tmp_path):
    src = put(tmp_path, "q2 0 a 1\nq2 0 c 0\nq1 X b -1\n")  # JSON nests by query: keep queries contiguous
    mid, out = tmp_path / "d.json", tmp_path / "out.qrels"
    assert main(["convert", "qrels", src, str(mid)]) == 1  # a JSON dataset needs its ID
    assert not mid.exists()
    assert main(["convert", "qrels", src, str(mid), "--dataset-id", "ds"]) == 0
    assert main(["convert", "qrels", str(mid), str(out)]) == 0
    assert out.read_text() == "q2 0 a 1\nq2 0 c 0\nq1 X b -1\n"
    assert main(["convert", "qrels", str(mid), str(out), "--dataset-id", "ds"]) == 1  # JSON names its own


def test_convert_only_non_relevant_grades(tmp_path):
    src = put(tmp_path, "q 0 a 0\n")
    assert main(["convert", "qrels", src, str(tmp_path / "d.json"), "--dataset-id", "ds"]) == 0
