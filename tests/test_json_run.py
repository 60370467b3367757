"""Run JSON: S1 runs load with missing / empty / failed kept apart, rejections say where, writing round-trips."""
from __future__ import annotations

import json
import os

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converters import strict_json as sj
from converters.json_run import dump_run, load_run, run_to_document
from trec_bridge.errors import InvalidInput
from trec_bridge.model import RUN_SCHEMA, Run

RUNS = {
    "A": {"q2": ["d3", "d1", "d4"], "q3": ["d2", "d5"], "q5": []},
    "B": {"q2": ["d1", "d3", "d4"], "q3": ["d5", "d2"], "q4": ["d6"], "q5": []},
    "all_empty": {"q2": [], "q3": [], "q4": [], "q5": []},
}


def run_doc(rankings: dict, **extra) -> dict:
    return {"format": "trec-bridge.run", "version": 1, "dataset_id": "s1", "run_id": "A", "rankings": rankings, **extra}


def write(tmp_path, doc, name="run.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return str(path)


def assert_same_run(a: Run, b: Run) -> None:
    assert a.frame.equals(b.frame)
    for field in ("queries", "failures", "run_id", "dataset_id", "dataset_version", "metadata", "order", "order_source"):
        assert getattr(a, field) == getattr(b, field), field


@pytest.mark.parametrize("name", list(RUNS))
def test_s1_runs_load_to_the_expected_model(tmp_path, name):
    path = write(tmp_path, run_doc(RUNS[name]))
    run = load_run(path)
    assert run.queries == tuple(RUNS[name]) and run.failures == {} and run.order_source == "list" and run.order is None
    assert run.run_id == "A" and run.dataset_id == "s1" and run.dataset_version is None and run.source == path
    assert run.frame.schema == pl.Schema(RUN_SCHEMA)
    expected = [(q, d, None, i + 1) for q, docs in RUNS[name].items() for i, d in enumerate(docs)]
    assert run.frame.rows() == expected
    assert run.empty_queries() == [q for q, docs in RUNS[name].items() if not docs]
    assert ("q4" in run.queries) == (name != "A")  # in A, q4 is missing: no record at all


def test_scores_failures_and_system(tmp_path):
    doc = run_doc(
        {"q2": [{"doc_id": "d3", "score": 3}, {"doc_id": "d1", "score": 2.5}, "d4", {"doc_id": "d2"}], "q5": []},
        dataset_version="2024-01",
        system={"model": "bm25", "params": {"k1": 0.9}},
        failures={"q4": {"reason": "timeout after 30 s", "kind": "timeout"}, "q3": {"reason": "HTTP 500"}},
    )
    run = load_run(write(tmp_path, doc))
    assert run.frame.rows() == [("q2", "d3", 3.0, 1), ("q2", "d1", 2.5, 2), ("q2", "d4", None, 3), ("q2", "d2", None, 4)]
    assert run.queries == ("q2", "q5") and run.failures == {"q4": "timeout after 30 s", "q3": "HTTP 500"}
    assert run.metadata == {"system": {"model": "bm25", "params": {"k1": 0.9}}, "failure_kinds": {"q4": "timeout"}}
    assert run.dataset_version == "2024-01"


def test_list_order_is_the_ranking_whatever_the_scores(tmp_path):
    doc = run_doc({"q": [{"doc_id": "low", "score": 1.0}, {"doc_id": "high", "score": 9.0}, {"doc_id": "tie", "score": 9.0}]})
    run = load_run(write(tmp_path, doc))
    assert run.frame.get_column("doc_id").to_list() == ["low", "high", "tie"] and run.frame.get_column("rank").to_list() == [1, 2, 3]


REJECTIONS = [
    ("duplicate doc", {"q2": ["d3", "d3"]}, {}, "E_RUN_DUPLICATE_DOC", "$.rankings.q2[1]", "positions 1 and 2"),
    ("duplicate doc late", {"q2": ["d3", "d1", "d4", "d5", {"doc_id": "d1", "score": 1}]}, {}, "E_RUN_DUPLICATE_DOC", "$.rankings.q2[4]", "positions 2 and 5"),
    ("ranked and failed", {"q4": ["d6"]}, {"failures": {"q4": {"reason": "timeout"}}}, "E_RUN_QUERY_CONFLICT", "$.failures.q4", "'q4'"),
    ("ranked empty and failed", {"q4": []}, {"failures": {"q4": {"reason": "x"}}}, "E_RUN_QUERY_CONFLICT", "$.failures.q4", "both"),
    ("score boolean", {"q2": [{"doc_id": "d3", "score": True}]}, {}, "E_JSON_SCHEMA", "$.rankings.q2[0].score", "boolean true"),
    ("score string", {"q2": [{"doc_id": "d3", "score": "1.5"}]}, {}, "E_JSON_SCHEMA", "$.rankings.q2[0].score", "a number"),
    ("score null", {"q2": [{"doc_id": "d3", "score": None}]}, {}, "E_JSON_SCHEMA", "$.rankings.q2[0].score", "null"),
    ("entry extra field", {"q2": [{"doc_id": "d3", "rank": 1}]}, {}, "E_JSON_SCHEMA", "$.rankings.q2[0]", 'unknown field "rank"'),
    ("entry without doc_id", {"q2": ["d1", {"score": 1}]}, {}, "E_JSON_SCHEMA", "$.rankings.q2[1]", 'missing field "doc_id"'),
    ("entry number", {"q2": ["d1", 7]}, {}, "E_JSON_SCHEMA", "$.rankings.q2[1]", "integer 7"),
    ("entry null", {"q2": [None]}, {}, "E_JSON_SCHEMA", "$.rankings.q2[0]", "null"),
    ("doc id space", {"q2": ["d1", "d 2"]}, {}, "E_JSON_SCHEMA", "$.rankings.q2[1]", "whitespace"),
    ("doc id empty", {"q2": [{"doc_id": ""}]}, {}, "E_JSON_SCHEMA", "$.rankings.q2[0].doc_id", "must not be empty"),
    ("doc id int", {"q2": [{"doc_id": 3}]}, {}, "E_JSON_SCHEMA", "$.rankings.q2[0].doc_id", "integer 3"),
    ("query id newline", {"q\n2": []}, {}, "E_JSON_SCHEMA", '$.rankings["q\\n2"]', "whitespace"),
    ("ranking not list", {"q2": "d3"}, {}, "E_JSON_SCHEMA", "$.rankings.q2", "expected an array"),
    ("failure no reason", {}, {"failures": {"q4": {"kind": "timeout"}}}, "E_JSON_SCHEMA", "$.failures.q4", 'missing field "reason"'),
    ("failure empty reason", {}, {"failures": {"q4": {"reason": ""}}}, "E_JSON_SCHEMA", "$.failures.q4.reason", "must not be empty"),
    ("failure string", {}, {"failures": {"q4": "timeout"}}, "E_JSON_SCHEMA", "$.failures.q4", "expected an object"),
    ("unknown top field", {}, {"queries": []}, "E_JSON_SCHEMA", "$", 'unknown field "queries"'),
    ("system not object", {}, {"system": "bm25"}, "E_JSON_SCHEMA", "$.system", "expected an object"),
    ("run_id missing", {}, {"run_id": None}, "E_JSON_SCHEMA", "$.run_id", "null"),
    ("dataset format", {}, {"format": "trec-bridge.dataset"}, "E_JSON_FORMAT", "$.format", "expected a run"),
    ("version 0", {}, {"version": 0}, "E_JSON_FORMAT", "$.version", "version 1"),
]


@pytest.mark.parametrize("name, rankings, extra, code, path, words", REJECTIONS, ids=[r[0] for r in REJECTIONS])
def test_rejection(tmp_path, name, rankings, extra, code, path, words):
    file = write(tmp_path, run_doc({"q2": ["d3", "d1"], **rankings}, **extra) if name != "ranking not list" else run_doc(rankings, **extra))
    with pytest.raises(InvalidInput) as info:
        load_run(file)
    err = info.value
    assert (err.code, err.where.json_path) == (code, path), str(err)
    assert f"at {path}" in str(err) and file in str(err) and words in err.message, str(err)


def test_duplicates_can_be_left_to_the_caller(tmp_path):
    path = write(tmp_path, run_doc({"q2": ["d3a", "d1a", "d3a"]}))
    run = load_run(path, allow_duplicates=True)
    assert run.frame.rows() == [("q2", "d3a", None, 1), ("q2", "d1a", None, 2), ("q2", "d3a", None, 3)]
    with pytest.raises(InvalidInput) as info:
        dump_run(run, tmp_path / "out.json")  # the format itself never holds a repeat
    assert info.value.code == "E_RUN_DUPLICATE_DOC"


def test_missing_run_id_and_raw_level_rejections(tmp_path):
    doc = run_doc({})
    del doc["run_id"]
    with pytest.raises(InvalidInput, match='missing field "run_id"'):
        load_run(write(tmp_path, doc))
    path = tmp_path / "dup.json"
    path.write_bytes(b'{"format": "trec-bridge.run", "version": 1, "rankings": {"q2": [], "q2": ["d1"]}}')
    with pytest.raises(InvalidInput) as info:
        load_run(path)
    assert info.value.code == "E_JSON_DUPLICATE_KEY" and info.value.where.json_path == "$.rankings"
    path.write_bytes(b'{"format": "trec-bridge.run", "version": 1, "rankings": {"q2": [{"doc_id": "d1", "score": Infinity}]}}')
    with pytest.raises(InvalidInput) as info:
        load_run(path)
    assert info.value.code == "E_JSON_NUMBER" and info.value.where.json_path == "$.rankings.q2[0].score"


ids = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=6).filter(sj.id_is_valid)
bad_ids = st.sampled_from(["", "a b", "\t", "x\u00a0", "\u2028", "\ufeffd", "\x7f"])
any_entry = st.one_of(
    ids, bad_ids, st.integers(-(2**63), 2**63 - 1), st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False),
    st.fixed_dictionaries({"doc_id": ids | bad_ids | st.integers(-5, 5)}, optional={"score": st.integers(-5, 5) | st.floats(-1e6, 1e6) | st.booleans() | st.none() | st.text(max_size=2), "x": st.just(1)}),
    st.fixed_dictionaries({}, optional={"score": st.just(1.0)}),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(ids, st.lists(any_entry, max_size=4), max_size=3))
def test_fast_entry_checks_agree_with_the_shipped_schema(tmp_path, rankings):
    doc = run_doc(rankings)
    full_ok = sj.StrictValidator(sj.shipped_schema("run.v1.json")).is_valid(doc)
    try:
        load_run(write(tmp_path, doc))
        loaded_ok = True
    except InvalidInput as exc:
        loaded_ok = exc.code not in ("E_JSON_SCHEMA", "E_ID_INVISIBLE")  # a duplicate doc is valid schema-wise
    assert full_ok == loaded_ok


def test_dump_load_dump_is_byte_identical(tmp_path):
    doc = run_doc(
        {"q2": ["d3", {"doc_id": "d1", "score": 2}, {"doc_id": "ü", "score": -0.0}], "q5": [], "q3": [{"doc_id": "d5", "score": 1e-7}]},
        dataset_version="v", system={"z": [1, {"b": 2, "a": 1}], "a": None},
        failures={"q4": {"reason": "timeout", "kind": "timeout"}, "q6": {"reason": "error"}},
    )
    run = load_run(write(tmp_path, doc))
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    dump_run(run, one)
    again = load_run(one)
    assert_same_run(run, again)
    dump_run(again, two)
    assert one.read_bytes() == two.read_bytes()
    text = one.read_text(encoding="utf-8")
    assert '    "q2": ["d3", {"doc_id": "d1", "score": 2.0}, {"doc_id": "ü", "score": -0.0}],\n' in text
    assert '"q5": []' in text and text.endswith("}\n")
    assert json.loads(text)["system"] == {"a": None, "z": [1, {"a": 1, "b": 2}]}
    assert list(json.loads(text)["system"]) == ["a", "z"]


def _run(rows, queries, **kw) -> Run:
    frame = pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row")
    return Run(frame=frame, queries=tuple(queries), **{"run_id": "r", "dataset_id": "s1", **kw})


def test_dump_keeps_empty_and_missing_apart_and_drops_trec_order(tmp_path):
    run = _run([("q2", "d3", 2.0, 1), ("q2", "d1", 1.0, 2)], ["q2", "q5"], failures={"q4": "lost"}, order_source="score",
               metadata={"failure_kinds": {"q4": "error"}, "tags": ["x"]})
    doc = run_to_document(run)
    assert doc["rankings"] == {"q2": [{"doc_id": "d3", "score": 2.0}, {"doc_id": "d1", "score": 1.0}], "q5": []}
    assert doc["failures"] == {"q4": {"reason": "lost", "kind": "error"}} and "q3" not in doc["rankings"]
    path = tmp_path / "r.json"
    dump_run(run, path)
    back = load_run(path)
    # a run ordered by its scores says so ("ordered_by": "score"), so a TREC file written from it keeps them
    assert doc["ordered_by"] == "score" and back.order_source == "score"
    assert back.metadata == {"failure_kinds": {"q4": "error"}}
    run.order_source = "rank"  # read by the rank column: the lists are the run's order, not the scores'
    assert "ordered_by" not in run_to_document(run)


@pytest.mark.parametrize(
    "rows, queries, kw, code",
    [
        ([("q2", "d3", None, 1), ("q2", "d3", None, 2)], ["q2"], {}, "E_RUN_DUPLICATE_DOC"),
        ([("q2", "d3", None, 1)], ["q2"], {"failures": {"q2": "x"}}, "E_RUN_QUERY_CONFLICT"),
        ([("q2", "d 3", None, 1)], ["q2"], {}, "E_JSON_SCHEMA"),
        ([("q2", "d3", float("nan"), 1)], ["q2"], {}, "E_RUN_SCORE"),
        ([("q2", "d3", float("inf"), 1)], ["q2"], {}, "E_RUN_SCORE"),
        ([], [], {"run_id": None}, "E_JSON_SCHEMA"),
        ([], [], {"dataset_id": None}, "E_JSON_SCHEMA"),
        ([], [], {"failures": {"q9": "bad \ud800"}}, "E_ENCODING"),  # a polars frame cannot even hold one
        ([], [], {"metadata": {"system": {"n": 2**64}}}, "E_JSON_NUMBER"),
        ([], [], {"metadata": {"system": {"n": float("inf")}}}, "E_JSON_NUMBER"),
        ([], [], {"metadata": {"system": {"when": {1, 2}}}}, "E_JSON_SCHEMA"),
    ],
)
def test_dump_refuses_what_load_would_refuse(tmp_path, rows, queries, kw, code):
    with pytest.raises(InvalidInput) as info:
        dump_run(_run(rows, queries, **kw), tmp_path / "r.json")
    assert info.value.code == code
    assert os.listdir(tmp_path) == []


def test_dump_refuses_a_frame_that_breaks_the_model_invariant(tmp_path):
    with pytest.raises(ValueError):
        dump_run(_run([("q1", "a", None, 1), ("q2", "b", None, 1), ("q1", "c", None, 2)], ["q1", "q2"]), tmp_path / "r.json")
    with pytest.raises(ValueError):
        dump_run(_run([("q1", "a", None, 2)], ["q1"]), tmp_path / "r.json")
    with pytest.raises(ValueError):
        dump_run(_run([("q1", "a", None, 1)], []), tmp_path / "r.json")


scores = st.none() | st.sampled_from([0.0, 1.0, 1.0, -2.5, 1e300]) | st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def runs(draw) -> Run:
    qids = draw(st.lists(ids, unique=True, max_size=5))
    ranked = qids[: draw(st.integers(0, len(qids)))]
    failed = qids[len(ranked):][: draw(st.integers(0, len(qids) - len(ranked)))]
    rows = []
    for q in ranked:
        for rank, d in enumerate(draw(st.lists(ids, unique=True, max_size=5)), 1):
            rows.append((q, d, draw(scores), rank))
    failures = {q: draw(st.text(min_size=1, max_size=8)) for q in failed}
    kinds = {q: "timeout" for q in failed if draw(st.booleans())}
    metadata = {}
    if draw(st.booleans()):
        metadata["system"] = draw(st.dictionaries(st.text(max_size=3), st.integers(-(2**63), 2**63 - 1) | st.text(max_size=3) | st.none(), max_size=3))
    if kinds:
        metadata["failure_kinds"] = kinds
    return _run(rows, ranked, failures=failures, metadata=metadata, run_id=draw(ids), dataset_id=draw(ids),
                dataset_version=draw(st.none() | st.just("2024-01")))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(runs())
def test_random_runs_round_trip(tmp_path, run):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    dump_run(run, one)
    loaded = load_run(one)
    assert_same_run(run, loaded)
    dump_run(loaded, two)
    assert one.read_bytes() == two.read_bytes()


def test_json_to_trec_rewrites_only_what_the_tools_would_misread_and_says_why(tmp_path, capsys):
    """A JSON run read from TREC keeps its scores; an edited list, missing scores, a native float32 tie get n..1."""
    from converters.trec_run import NO_SCORES, OFF_ORDER, TOOL_TIES, write_trec_run
    from trec_bridge.cli.main import main

    doc = {"format": "trec-bridge.run", "version": 1, "dataset_id": "d", "run_id": "r", "ordered_by": "score",
           "rankings": {
               "tied": [{"doc_id": "b", "score": 1.0}, {"doc_id": "a", "score": 1.0}],  # the TREC reading of a tie
               "edited": [{"doc_id": "a", "score": 1.0}, {"doc_id": "b", "score": 2.0}],  # moved up by hand
               "bare": ["x", "y"],
               "plain": [{"doc_id": "a", "score": 2.0}, {"doc_id": "b", "score": 1.0}]}}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    run = load_run(path)
    info = write_trec_run(run, tmp_path / "auto.run")
    assert info.synthetic_reasons == {"edited": OFF_ORDER, "bare": NO_SCORES}
    assert info.kept_as_tools_read == {"tied": TOOL_TIES}
    lines = (tmp_path / "auto.run").read_text().splitlines()
    assert [line.split()[4] for line in lines] == ["1.0", "1.0", "2", "1", "2", "1", "2.0", "1.0"]
    info = write_trec_run(run, tmp_path / "keep.run", scores="keep")
    assert info.synthetic_reasons == {"bare": NO_SCORES}
    assert set(info.kept_as_tools_read) == {"tied", "edited"}
    info = write_trec_run(run, tmp_path / "order.run", scores="order")
    assert info.synthetic_reasons == {"tied": TOOL_TIES, "edited": OFF_ORDER, "bare": NO_SCORES}
    del doc["ordered_by"]  # a JSON run of its own: its list order is what every tool must read
    path.write_text(json.dumps(doc))
    assert main(["convert", "run", str(path), str(tmp_path / "native.run")]) == 0
    err = capsys.readouterr().err
    assert "1 query written with scores n..1" in err and "'tied'" in err and "float32" in err
    assert "'edited'" in err and "list order is not the order of its scores" in err
    assert "'bare'" in err and "without a score" in err
