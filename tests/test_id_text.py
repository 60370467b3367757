"""IDs given in Python or in Parquet/Arrow columns follow the files' ID rule (docs/formats.md): non-empty, no
whitespace, no control character -- E_ID_TEXT, after E_ID_INVISIBLE.  Before this change ``{"q1 ": ...}`` was
scored as another query than ``"q1"`` (reported unjudged, "q1" missing) and a document ``"d1 "`` silently never
matched its judgment ``"d1"``; only the writers refused such IDs, so converting a run to TREC and scoring it
disagreed with scoring it directly."""
from __future__ import annotations

import polars as pl
import pytest

import trec_bridge as tb

from .conftest import run_cli

QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}
RUN = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}
BAD = ["q1 ", " q1", "", "q\t1", "q1\n", "q\x001", "q\x1f1", "q\x7f1", "q\x851", "q\u00a01", "q\u30001", "q\u20281"]


def _with_query(ids: dict, bad: str) -> dict:
    return {bad if q == "q1" else q: docs for q, docs in ids.items()}


def _with_doc(ids: dict, bad: str) -> dict:
    return {q: {bad if d == "d1" else d: v for d, v in docs.items()} for q, docs in ids.items()}


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("side", ["run query", "run document", "qrels query", "qrels document"])
def test_a_bad_id_in_python_objects_is_refused(side, bad):
    qrels, run = QRELS, RUN
    if side.startswith("run"):
        run = (_with_query if side.endswith("query") else _with_doc)(RUN, bad)
    else:
        qrels = (_with_query if side.endswith("query") else _with_doc)(QRELS, bad)
    with pytest.raises(tb.InvalidInput) as raised:
        tb.score(qrels, run, "P@1 AP")
    what = "query IDs" if side.endswith("query") else "document IDs"
    assert raised.value.code == "E_ID_TEXT" and str(raised.value).startswith(f"[E_ID_TEXT] {what}: ")
    assert ("is empty" if bad == "" else "holds whitespace or a control character") in str(raised.value)


@pytest.mark.parametrize("kind", ["polars", "pandas", "ScoredDoc"])
def test_dataframes_and_ir_measures_tuples_are_refused_too(kind):
    rows = {"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2 ", "d3"], "score": [2.0, 1.0, 1.0]}
    if kind == "polars":
        run = pl.DataFrame(rows)
    elif kind == "pandas":
        run = pytest.importorskip("pandas").DataFrame(rows)
    else:
        ir_measures = pytest.importorskip("ir_measures")
        run = [ir_measures.ScoredDoc(*r) for r in zip(*rows.values())]
    with pytest.raises(tb.InvalidInput) as raised:
        tb.score(QRELS, run, "P@1")
    assert raised.value.code == "E_ID_TEXT" and "'d2 '" in str(raised.value)


def test_an_invisible_character_keeps_its_own_code_and_other_unicode_is_an_id():
    with pytest.raises(tb.InvalidInput) as raised:
        tb.score(QRELS, _with_doc(RUN, "d\u200b1 "), "P@1")
    assert raised.value.code == "E_ID_INVISIBLE"
    accented = {"q1": {"dé1": 1}, "q2": {"d3": 1}}
    assert tb.score(accented, {"q1": {"dé1": 1.0}, "q2": {"d3": 1.0}}, "P@1").means == {"P@1": 1.0}
    assert tb.score(QRELS, RUN, "P@1").means == {"P@1": 1.0}


@pytest.mark.parametrize("shape", ["run file", "run folder", "qrels file"])
def test_parquet_columns_are_refused_naming_the_file(tmp_path, shape):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d3 1\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 s\nq2 Q0 d3 1 1.0 s\n")
    if shape == "qrels file":
        pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d3 "], "relevance": [1, 1]}).write_parquet(
            tmp_path / "q.parquet")
        qrels, run, shown = tmp_path / "q.parquet", tmp_path / "run.trec", tmp_path / "q.parquet"
    else:
        rows = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d3 "], "score": [2.0, 1.0]})
        qrels, run = tmp_path / "qrels.txt", tmp_path / ("parts" if shape == "run folder" else "r.parquet")
        if shape == "run folder":
            run.mkdir()
            rows[:1].write_parquet(run / "a.parquet")
            rows[1:].write_parquet(run / "b.parquet")
            shown = run / "b.parquet"
        else:
            rows.write_parquet(run)
            shown = run
    code, out, err = run_cli("score", qrels, run, "P@1")
    assert (code, out) == (1, "")
    assert err.startswith(f"trec-bridge: error: [E_ID_TEXT] {shown}: document IDs: 'd3 ' holds whitespace"), err
