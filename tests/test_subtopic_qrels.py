"""Diversity qrels (``qid subtopic docno grade``): a qrels shape of its own, declared and never guessed.

Read from TREC qrels with --subtopics (or ``subtopics=True``), from Parquet's
``iteration`` column, and from a JSON dataset's ``subtopic_judgments``; written
back to each without losing a judgment.  An ordinary qrels' second column is
never read as a subtopic, and a declared diversity qrels that cannot be one is
refused (docs/formats.md).
"""
from __future__ import annotations

import json

import pytest

from converters.detect import load_dataset_any
from converters.json_dataset import document_to_dataset, dump_dataset, load_dataset
from converters.trec_qrels import read_trec_qrels, write_trec_qrels
from trec_bridge import api
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput

LINES = "1 1 a 1\n1 2 b 1\n1 2 a 1\n1 3 c 0\n2 1 x 2\n"


@pytest.fixture
def qrels_file(tmp_path):
    path = tmp_path / "div.qrels"
    path.write_text(LINES)
    return path


def test_a_document_is_judged_once_per_subtopic(qrels_file):
    qrels = read_trec_qrels(qrels_file, subtopics=True)
    assert qrels.subtopics
    assert qrels.frame.rows() == [("1", "1", "a", 1), ("1", "2", "b", 1), ("1", "2", "a", 1), ("1", "3", "c", 0),
                                  ("2", "1", "x", 2)]


def test_read_without_the_declaration_it_is_refused_with_a_pointer(qrels_file):
    with pytest.raises(InvalidInput) as exc:
        read_trec_qrels(qrels_file)
    assert exc.value.code == "E_QRELS_DUPLICATE"
    assert exc.value.where.line == 3 and "--subtopics" in exc.value.message


def test_an_ordinary_duplicate_gets_no_subtopic_hint(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("1 0 a 1\n1 0 a 0\n")
    with pytest.raises(InvalidInput) as exc:
        read_trec_qrels(path)
    assert "subtopic" not in exc.value.message


def test_trec_round_trip_keeps_every_line(qrels_file, tmp_path):
    out = tmp_path / "back.qrels"
    write_trec_qrels(read_trec_qrels(qrels_file, subtopics=True), out)
    assert out.read_text() == LINES


def test_json_dataset_holds_subtopic_judgments(qrels_file, tmp_path):
    assert main(["convert", "qrels", str(qrels_file), str(tmp_path / "d.json"), "--dataset-id", "d",
                 "--subtopics"]) == 0
    doc = json.loads((tmp_path / "d.json").read_text())
    assert "judgments" not in doc and "trec_iteration" not in doc
    assert doc["subtopic_judgments"] == {"1": {"1": {"a": 1}, "2": {"b": 1, "a": 1}, "3": {"c": 0}},
                                         "2": {"1": {"x": 2}}}
    ds = load_dataset(tmp_path / "d.json")
    assert ds.qrels.subtopics and ds.qrels.frame.height == 5
    dump_dataset(ds, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "d.json").read_bytes()
    assert main(["convert", "qrels", str(tmp_path / "d.json"), str(tmp_path / "back.qrels")]) == 0
    assert (tmp_path / "back.qrels").read_text() == LINES


def test_parquet_keeps_the_subtopic_in_its_iteration_column(qrels_file, tmp_path):
    assert main(["convert", "qrels", str(qrels_file), str(tmp_path / "d.parquet"), "--subtopics"]) == 0
    ds = load_dataset_any(tmp_path / "d.parquet", subtopics=True)
    assert ds.qrels.subtopics and ds.qrels.frame.rows() == read_trec_qrels(qrels_file, subtopics=True).frame.rows()
    with pytest.raises(InvalidInput) as exc:
        load_dataset_any(tmp_path / "d.parquet")
    assert exc.value.code == "E_QRELS_DUPLICATE"


def _doc(**changes) -> dict:
    doc = {"format": "trec-bridge.dataset", "version": 1, "dataset_id": "d",
           "grades": {"scale": [0, 1, 2], "threshold": 1}, "completeness": "pooled", "corpus": {"kind": "open"},
           "queries": [{"query_id": "1"}], "subtopic_judgments": {"1": {"s1": {"a": 1}, "s2": {"a": 0, "b": 2}}}}
    doc.update(changes)
    return {k: v for k, v in doc.items() if v is not None}


def _refused(doc: dict) -> InvalidInput:
    with pytest.raises(InvalidInput) as exc:
        document_to_dataset(doc, "d.json")
    return exc.value


def test_a_dataset_has_judgments_or_subtopic_judgments_not_both():
    assert document_to_dataset(_doc(), "d.json").qrels.frame.height == 3
    both = _refused(_doc(judgments={"1": {"a": 1}}))
    assert both.code == "E_JSON_SCHEMA" and both.where.json_path == "$.judgments"
    assert _refused(_doc(trec_iteration="0")).where.json_path == "$.trec_iteration"
    neither = _refused(_doc(subtopic_judgments=None))
    assert neither.code == "E_JSON_SCHEMA" and "judgments" in neither.message


def test_subtopic_judgment_errors_point_into_subtopic_judgments():
    grade = _refused(_doc(subtopic_judgments={"1": {"s1": {"a": True}}}))
    assert grade.code == "E_QRELS_GRADE" and grade.where.json_path == "$.subtopic_judgments[\"1\"].s1.a"
    scale = _refused(_doc(subtopic_judgments={"1": {"s1": {"a": 1}, "s2": {"b": 5}}}))
    assert scale.code == "E_DATASET_GRADE_SCALE" and scale.where.json_path == "$.subtopic_judgments[\"1\"].s2.b"
    unknown = _refused(_doc(subtopic_judgments={"1": {"s1": {"a": 1}}, "9": {"s2": {"a": 1}}}))
    assert unknown.code == "E_DATASET_UNKNOWN_QUERY" and unknown.where.json_path == "$.subtopic_judgments[\"9\"]"
    one = _refused(_doc(subtopic_judgments={"1": {"0": {"a": 1, "b": 0}}}))
    assert one.code == "E_SUBTOPICS_AMBIGUOUS"
    bad_id = _refused(_doc(subtopic_judgments={"1": {"s 1": {"a": 1}}}))
    assert bad_id.code == "E_JSON_SCHEMA"


def test_the_python_api_declares_subtopics_too():
    qrels = api.read_qrels([("1", "a", 1, "s1"), ("1", "a", 0, "s2")], subtopics=True)
    assert qrels.subtopics and qrels.frame.height == 2
    with pytest.raises(InvalidInput) as exc:
        api.read_qrels([("1", "a", 1, "s1"), ("1", "a", 0, "s2")])
    assert exc.value.code == "E_QRELS_DUPLICATE"
    with pytest.raises(InvalidInput) as exc:
        api.read_qrels([("1", "a", 1)], subtopics=True)  # no iteration: nothing to read a subtopic from
    assert exc.value.code == "E_USAGE"
    with pytest.raises(InvalidInput) as exc:
        api.read_qrels({"1": {"a": 1}}, subtopics=True)  # {query: {doc: grade}} has no place for one
    assert exc.value.code == "E_USAGE"


def test_subtopics_is_for_trec_and_columnar_qrels(tmp_path):
    doc = _doc(subtopic_judgments=None, judgments={"1": {"a": 1}})
    (tmp_path / "d.json").write_text(json.dumps(doc))
    with pytest.raises(InvalidInput) as exc:
        load_dataset_any(tmp_path / "d.json", subtopics=True)
    assert exc.value.code == "E_USAGE"
