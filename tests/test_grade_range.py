"""Grades the scorer accepts (-1023..1023) and gains that overflow (issue 14, item 4a).

Before: grade 1024 was accepted and exponential nDCG printed ``nan`` with exit
0 (``--json`` died with a ValueError traceback).  Now every reader and the
scorer's dataset check refuse a grade outside the range with E_GRADE_RANGE,
the largest accepted grade scores, and a gain sum that leaves the double range
is E_GAIN_OVERFLOW naming the query, never inf or nan.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
from types import SimpleNamespace

import polars as pl
import pytest

from converters.interop import qrels_from_columns, qrels_from_dataframe
from converters.ranx_json import read_ranx_qrels
from converters.trec_qrels import read_trec_qrels
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput
from trec_bridge.grades import GRADE_MAX, GRADE_MIN, first_out_of_range
from trec_bridge.measures import parse_measures
from trec_bridge.model import QRELS_SCHEMA, Dataset, Qrels, Query
from trec_bridge.scorer import score

from .test_references import run

RUN = "q1 Q0 d2 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq1 Q0 d3 3 1.0 r\nq2 Q0 d4 1 1.0 r\n"


def strict_json(text: str):
    """JSON as the spec allows it: NaN and Infinity are not numbers."""
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-finite number {c} in the report"))


def cli(tmp_path, qrels_text: str, measures: str):
    q, r, out = tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "report.json"
    q.write_text(qrels_text)
    r.write_text(RUN)
    # in process (a traceback would be an exception escaping main, failing the test): no interpreter start-up
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["score", str(q), str(r), measures, "--json", str(out)])
    return SimpleNamespace(returncode=code, stdout=stdout.getvalue(), stderr=stderr.getvalue()), out


def test_the_range_is_the_doubles_exponential_gain_limit():
    assert (GRADE_MIN, GRADE_MAX) == (-1023, 1023)
    assert math.isfinite(2.0 ** GRADE_MAX - 1)
    with pytest.raises(OverflowError):
        2.0 ** (GRADE_MAX + 1)
    assert first_out_of_range([0, 1023, -1023]) is None
    assert first_out_of_range(pl.Series([0, 5, 1024, -2000])) == 2
    assert first_out_of_range([1, -1024]) == 1


def test_largest_grade_scores_exponential_ndcg_through_the_cli(tmp_path):
    # d1 (grade 1023) at rank 2 of 3, the ideal has it at rank 1: nDCG = (2^1023-1)/log2(3) / (2^1023-1) = 1/log2(3)
    proc, out = cli(tmp_path, "q1 0 d1 1023\nq1 0 d2 0\nq2 0 d4 -2\n", "nDCG(gain=exp)@10 nDCG(gain=linear)@10")
    assert proc.returncode == 0, proc.stderr
    assert "nan" not in proc.stdout and "Traceback" not in proc.stderr
    means = strict_json(out.read_text())["means"]
    assert means["nDCG(gain=exp)@10"]["value"] == pytest.approx(1 / math.log2(3), rel=1e-12)
    assert means["nDCG(gain=linear)@10"]["value"] == pytest.approx(1 / math.log2(3), rel=1e-12)


@pytest.mark.parametrize("grade", [GRADE_MAX + 1, GRADE_MIN - 1, 2 ** 31, 2 ** 63 - 1])
def test_one_past_the_range_is_refused_through_the_cli(tmp_path, grade):
    proc, out = cli(tmp_path, f"q1 0 d1 1\nq1 0 d3 {grade}\n", "nDCG(gain=exp)@10")
    assert proc.returncode == 1
    assert "[E_GRADE_RANGE]" in proc.stderr and "qrels.txt:2" in proc.stderr and "document 'd3'" in proc.stderr
    assert "Traceback" not in proc.stderr and "nan" not in proc.stdout
    assert not out.exists()


def test_exponential_gains_summing_past_a_double_are_refused_not_nan(tmp_path):
    # three gains of 2^1023-1 sum to about 2.7e308 in the ideal: beyond the largest double
    proc, out = cli(tmp_path, "q1 0 d1 1023\nq1 0 d2 1023\nq1 0 d3 1023\nq2 0 d4 1\n", "P@1 nDCG(gain=exp)@10")
    assert proc.returncode == 1, proc.stdout
    assert "[E_GAIN_OVERFLOW]" in proc.stderr and "query 'q1'" in proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()
    # linear gain of the same grades is an ordinary number
    proc, out = cli(tmp_path, "q1 0 d1 1023\nq1 0 d2 1023\nq1 0 d3 1023\nq2 0 d4 1\n", "nDCG(gain=linear)@10")
    assert proc.returncode == 0 and strict_json(out.read_text())["means"]["nDCG(gain=linear)@10"]["value"] > 0


def dataset(grades: list[int], scale=None) -> Dataset:
    n = len(grades)
    frame = pl.DataFrame({"query_id": ["q1"] * n, "iteration": ["0"] * n, "doc_id": [f"d{i + 1}" for i in range(n)],
                          "grade": grades}, schema=QRELS_SCHEMA)
    return Dataset(queries=(Query("q1"),), qrels=Qrels(frame), query_source="qrels", grades=scale)


@pytest.mark.parametrize("measure", ["nDCG(gains={1:1.5e308,2:1.5e308})@3",  # the ideal's sum
                                     "nDCG(gains={1:-1e300,2:1e-300})@1"])  # a tiny ideal: the ratio
def test_gains_maps_that_leave_the_double_range_are_refused(measure):
    r = run("q1 d1 3\nq1 d2 2\nq1 d3 1")
    with pytest.raises(InvalidInput) as exc:
        score(dataset([1, 2, 1]), r, parse_measures(measure))
    assert exc.value.code == "E_GAIN_OVERFLOW" and exc.value.where.query == "q1"


def test_a_dataset_built_in_code_meets_the_same_range():
    r = run("q1 d1 1")
    with pytest.raises(InvalidInput) as exc:
        score(dataset([1, 1024]), r, parse_measures("P@1"))
    assert exc.value.code == "E_GRADE_RANGE" and exc.value.where.doc == "d2"
    with pytest.raises(InvalidInput) as exc:  # a declared scale is held to it too
        score(dataset([1, 0], scale=(0, 1, 4096)), r, parse_measures("P@1"))
    assert exc.value.code == "E_GRADE_RANGE" and "4096" in exc.value.message
    assert score(dataset([1, -1023, 1023]), r, parse_measures("P@1")).means["P@1"].value == 1.0


def test_every_reader_applies_the_one_range(tmp_path):
    codes = []
    trec = tmp_path / "q.txt"
    trec.write_text("q1 0 d1 1\nq1 0 d2 -5000\n")
    ranx = tmp_path / "q.json"
    ranx.write_text('{"q1": {"d1": 1, "d2": 2048}}')
    readers = [lambda: read_trec_qrels(trec), lambda: read_ranx_qrels(ranx),
               lambda: qrels_from_columns(["q1", "q1"], ["d1", "d2"], [1, 10 ** 30]),
               lambda: qrels_from_dataframe(pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1024]}))]
    for read in readers:
        with pytest.raises(InvalidInput) as exc:
            read()
        codes.append(exc.value.code)
    assert codes == ["E_GRADE_RANGE"] * len(readers)
    trec.write_text("q1 0 d1 1023\nq1 0 d2 -1023\nq1 0 d3 -2\n")
    assert read_trec_qrels(trec).frame.get_column("grade").to_list() == [1023, -1023, -2]  # kept as given


def test_json_dataset_names_the_json_path(tmp_path, capsys):
    doc = {"format": "trec-bridge.dataset", "version": 1, "dataset_id": "d", "grades": {"scale": [0, 1], "threshold": 1},
           "completeness": "pooled", "corpus": {"kind": "open"}, "queries": [{"query_id": "q1"}],
           "judgments": {"q1": {"d1": 1, "d2": 1024}}}
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(doc))
    r = tmp_path / "run.txt"
    r.write_text("q1 Q0 d1 1 1.0 r\n")
    assert main(["score", str(path), str(r), "P@1"]) == 1
    err = capsys.readouterr().err
    assert "[E_GRADE_RANGE]" in err and "$.judgments.q1.d2" in err
