"""Runs as JSON Lines (converters/json_run_lines.py): the run document's meaning, one query a line.

A run written as JSON Lines reads back as the same run as its JSON document;
every refusal names the file's line and the path inside it; a query never
straddles two parts; ``score`` reads it in parts, with the numbers of the
whole run.
"""
from __future__ import annotations

import json

import pytest

from converters import json_run, json_run_fast, json_run_lines
from converters.detect import is_run_lines, load_run_any
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput

HEADER = '{"format": "trec-bridge.run-lines", "version": 1, "dataset_id": "d", "run_id": "r"}\n'
RUN = {"format": "trec-bridge.run", "version": 1, "dataset_id": "d", "run_id": "r", "system": {"ef": 64},
       "rankings": {"q1": [{"doc_id": "a", "score": 2.5}, {"doc_id": "b:1", "score": 1}], "q2": ["p", "q"], "q3": [],
                    "q 4".replace(" ", "_"): [{"doc_id": "caf\u00e9"}]},
       "failures": {"q5": {"reason": "timeout", "kind": "timeout"}}}


def _same_run(a, b):
    assert a.frame.equals(b.frame) and a.queries == b.queries and a.failures == b.failures
    assert (a.run_id, a.dataset_id, a.metadata, a.order_source) == (b.run_id, b.dataset_id, b.metadata, b.order_source)


def test_json_lines_round_trip_is_the_run_document(tmp_path):
    doc = tmp_path / "run.json"
    doc.write_text(json.dumps(RUN))
    run = json_run.load_run(doc)
    lines = tmp_path / "run.jsonl"
    json_run_lines.dump_run_lines(run, lines)
    assert is_run_lines(lines) and not is_run_lines(doc)
    _same_run(json_run_lines.read_run_lines(lines), run)
    _same_run(load_run_any(lines), run)
    text = lines.read_text().splitlines()
    assert text[0] == ('{"format": "trec-bridge.run-lines", "version": 1, "dataset_id": "d", "run_id": "r", '
                       '"system": {"ef": 64}}')
    assert text[1] == '{"query_id": "q1", "ranking": [{"doc_id": "a", "score": 2.5}, {"doc_id": "b:1", "score": 1.0}]}'
    assert text[3] == '{"query_id": "q3", "ranking": []}'
    assert text[-1] == '{"query_id": "q5", "failure": {"reason": "timeout", "kind": "timeout"}}'


@pytest.mark.parametrize("rows", [1, 2, 3, 1000])
def test_no_query_straddles_two_parts(tmp_path, rows):
    path = tmp_path / "run.jsonl"
    path.write_text(HEADER + "".join(json.dumps({"query_id": f"q{i}", "ranking": [f"d{j}" for j in range(i)]}) + "\n"
                                     for i in range(1, 6)))
    parts = list(json_run_lines.read_run_lines_parts(path, part_rows=rows))
    for part in parts:
        counts = part.frame.group_by("query_id").len()
        assert all(n == int(q[1:]) for q, n in counts.iter_rows())  # every query whole
    assert [q for p in parts for q in p.queries] == [f"q{i}" for i in range(1, 6)]


CASES = [
    ('{"query_id": "q1", "ranking": [{"doc_id": "a", "doc_id": "b"}]}', "E_JSON_DUPLICATE_KEY", "$.ranking[0]"),
    ('{"query_id": "q1", "ranking": [], "ranking": ["a"]}', "E_JSON_DUPLICATE_KEY", "$"),
    ('{"query_id": "q1", "ranking": ["a", "a"]}', "E_RUN_DUPLICATE_DOC", "$.ranking[1]"),
    ('{"query_id": "q1", "ranking": [{"doc_id": "a b"}]}', "E_JSON_SCHEMA", "$.ranking[0]"),
    ('{"query_id": "q1", "ranking": [{"doc_id": "a", "score": NaN}]}', "E_JSON_NUMBER", None),
    ('{"query_id": "q1", "ranking": [{"doc_id": "a", "score": 1e400}]}', "E_JSON_NUMBER", "$.ranking[0].score"),
    ('{"query_id": "q1"}', "E_JSON_SCHEMA", "$"),
    ('{"query_id": "q1", "ranking": [], "failure": {"reason": "x"}}', "E_RUN_QUERY_CONFLICT", "$"),
    ('{"query_id": "q0", "ranking": []}', "E_RUN_DUPLICATE_QUERY", None),
    ('', "E_JSON_SYNTAX", None),
    ('{"query_id": "q1", "ranking": [', "E_JSON_SYNTAX", None),
]


@pytest.mark.parametrize("line,code,path", CASES, ids=[c[1] + str(i) for i, c in enumerate(CASES)])
def test_a_bad_line_is_refused_with_its_line_number(tmp_path, line, code, path):
    file = tmp_path / "run.jsonl"
    file.write_text(HEADER + '{"query_id": "q0", "ranking": ["x"]}\n' + line + "\n" + '{"query_id": "q9", "ranking": []}\n')
    with pytest.raises(InvalidInput) as err:
        json_run_lines.read_run_lines(file)
    assert err.value.code == code
    assert err.value.where.line == 3
    if path is not None:
        assert err.value.where.json_path == path


def test_a_header_with_rankings_is_refused(tmp_path):
    file = tmp_path / "run.jsonl"
    file.write_text(HEADER.replace("}", ', "rankings": {}}', 1) + '{"query_id": "q0", "ranking": []}\n')
    with pytest.raises(InvalidInput) as err:
        json_run_lines.read_run_lines(file)
    assert (err.value.code, err.value.where.line, err.value.where.json_path) == ("E_JSON_SCHEMA", 1, "$.rankings")


def test_score_reads_json_lines_in_parts_with_the_whole_runs_numbers(tmp_path, monkeypatch):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 1\nq1 0 d 2\nq2 0 q 1\nq3 0 z 1\n")
    doc = tmp_path / "run.json"
    doc.write_text(json.dumps(RUN))
    lines = tmp_path / "run.jsonl"
    json_run_lines.dump_run_lines(json_run.load_run(doc), lines)
    reports = []
    for path in (doc, lines):
        out = tmp_path / f"{path.suffix}.report.json"
        main(["score", str(qrels), str(path), "AP nDCG@10 R@2", "--json", str(out)])
        reports.append(json.loads(out.read_text())["per_query"])
    assert reports[0] == reports[1]
    seen = []
    real = json_run_lines.read_run_lines_parts
    monkeypatch.setattr(json_run_lines, "read_run_lines_parts",
                        lambda p, **kw: (seen.append(p), real(p, part_rows=1, **kw))[1])
    out = tmp_path / "parts.json"
    main(["score", str(qrels), str(lines), "AP nDCG@10 R@2", "--json", str(out)])
    assert seen and json.loads(out.read_text())["per_query"] == reports[0]


def test_qrels_are_not_written_as_json_lines(tmp_path, capsys):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 1\n")
    assert main(["convert", "qrels", str(qrels), str(tmp_path / "q.jsonl")]) == 1
    assert "JSON Lines" in capsys.readouterr().err


def test_the_json_document_and_its_lines_are_written_alike_from_trec(tmp_path):
    trec = tmp_path / "run.trec"
    trec.write_text("q1 Q0 a 1 2.5 r\nq1 Q0 b 2 1 r\nq2 Q0 c 1 3 r\n")
    assert main(["convert", "run", str(trec), str(tmp_path / "a.json"), "--dataset-id", "d"]) == 0
    assert main(["convert", "run", str(trec), str(tmp_path / "a.jsonl"), "--dataset-id", "d"]) == 0
    assert main(["convert", "run", str(tmp_path / "a.jsonl"), str(tmp_path / "b.json")]) == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    _same_run(json_run_fast.load_run(tmp_path / "a.json"), json_run_lines.read_run_lines(tmp_path / "a.jsonl"))
