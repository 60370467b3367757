"""Dataset JSON: S1 loads to the expected model, every rejection says where, writing round-trips."""
from __future__ import annotations

import copy
import gzip
import json
import os

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converters import strict_json as sj
from converters.json_dataset import dataset_to_document, dump_dataset, load_dataset
from trec_bridge.errors import InvalidInput
from trec_bridge.model import QRELS_SCHEMA, ChunkMap, Dataset, Qrels, Query

CORPUS = ["d1", "d2", "d3", "d4", "d5", "d6"]
RELEVANT = {"q1": {"d2"}, "q2": {"d3", "d4"}, "q3": {"d5"}, "q4": {"d6"}, "q5": set()}


def s1() -> dict:
    """Scenario S1 (golden-scenarios.md) as a dataset document: exhaustive, zeros listed."""
    return {
        "format": "trec-bridge.dataset",
        "version": 1,
        "dataset_id": "s1",
        "dataset_version": "2024-01",
        "grades": {"scale": [0, 1], "threshold": 1},
        "completeness": "exhaustive",
        "corpus": {"kind": "listed", "documents": list(CORPUS)},
        "queries": [{"query_id": "q1", "split": "dev"}] + [{"query_id": q, "split": "test"} for q in ("q2", "q3", "q4", "q5")],
        "judgments": {q: {d: int(d in rel) for d in CORPUS} for q, rel in RELEVANT.items()},
    }


def write(tmp_path, doc, name="ds.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return str(path)


def assert_same_dataset(a: Dataset, b: Dataset) -> None:
    for field in a.__dataclass_fields__:
        if field in ("qrels", "chunk_map", "source"):
            continue
        assert getattr(a, field) == getattr(b, field), field
    assert a.qrels.frame.equals(b.qrels.frame)
    assert (a.chunk_map is None) == (b.chunk_map is None)
    if a.chunk_map is not None:
        assert a.chunk_map.frame.equals(b.chunk_map.frame)


# ---------------------------------------------------------------- S1


def test_s1_loads_to_the_expected_model(tmp_path):
    path = write(tmp_path, s1())
    ds = load_dataset(path)
    assert ds.query_ids() == ["q1", "q2", "q3", "q4", "q5"]
    assert [q.split for q in ds.queries] == ["dev", "test", "test", "test", "test"]
    assert ds.select_split("test").query_ids() == ["q2", "q3", "q4", "q5"]
    assert ds.dataset_id == "s1" and ds.dataset_version == "2024-01" and ds.source == path
    assert ds.grades == (0, 1) and ds.threshold == 1 and ds.completeness == "exhaustive"
    assert ds.corpus == tuple(CORPUS) and ds.corpus_texts is None and ds.chunk_map is None
    frame = ds.qrels.frame
    assert frame.schema == pl.Schema(QRELS_SCHEMA) and frame.height == 30
    assert frame.row(0) == ("q1", "0", "d1", 0) and frame.row(7) == ("q2", "0", "d2", 0)
    relevant = frame.filter(pl.col("grade") >= 1)
    assert relevant.select("query_id", "doc_id").rows() == [("q1", "d2"), ("q2", "d3"), ("q2", "d4"), ("q3", "d5"), ("q4", "d6")]
    assert ds.query_source == "dataset" and ds.trec_iteration == "0"


def test_full_field_set_loads(tmp_path):
    doc = s1()
    doc.update(
        description="S1",
        grades={"scale": [-2, -1, 0, 1, 2, 3], "threshold": 2, "definitions": {"-2": "spam", "0": "not relevant", "3": "answers"}},
        corpus={"kind": "listed", "documents": {d: f"text of {d} — é" for d in CORPUS}},
        chunk_map={"d3a": "d3", "d3b": "d3", "d1a": "d1"},
        official_measures=["nDCG@10", "RR@10"],
        metadata={"origin": {"x": [1, 2]}, "a": None},
        trec_iteration="Q0",
        trec_iterations={"q2": {"d3": "1"}},
        completeness="pooled",
    )
    doc["judgments"]["q2"]["d3"] = 3
    doc["judgments"]["q2"]["d1"] = -2
    doc["queries"][1].update(text="what is d3?", tags=["multi-answer", "vague"], answerable=True, completeness="exhaustive")
    doc["queries"][4].update(answerable=False)
    ds = load_dataset(write(tmp_path, doc))
    assert ds.grades == (-2, -1, 0, 1, 2, 3) and ds.threshold == 2 and ds.grade_definitions == {-2: "spam", 0: "not relevant", 3: "answers"}
    assert ds.corpus_texts["d2"] == "text of d2 — é"
    assert ds.chunk_map.frame.rows() == [("d3a", "d3"), ("d3b", "d3"), ("d1a", "d1")]
    assert ds.official_measures == ("nDCG@10", "RR@10") and ds.metadata == {"origin": {"x": [1, 2]}, "a": None}
    q2 = ds.queries[1]
    assert q2 == Query("q2", "what is d3?", "test", ("multi-answer", "vague"), True, "exhaustive")
    rows = ds.qrels.frame.filter(pl.col("query_id") == "q2").rows()
    assert rows[0] == ("q2", "Q0", "d1", -2) and rows[2] == ("q2", "1", "d3", 3)


def test_gzip_dataset_loads(tmp_path):
    path = tmp_path / "ds.json.gz"
    path.write_bytes(gzip.compress(json.dumps(s1()).encode()))
    assert load_dataset(path).query_ids()[0] == "q1"


# ---------------------------------------------------------------- rejections


def _set(path, value):
    def mutate(doc):
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return mutate


def _seq(*mutations):
    def apply(doc):
        for m in mutations:
            m(doc)
    return apply


def _del(path):
    def mutate(doc):
        node = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return mutate


REJECTIONS = [
    # schema
    ("unknown field", _set(("queries", 2, "foo"), 1), "E_JSON_SCHEMA", "$.queries[2]", 'unknown field "foo"'),
    ("unknown top field", _set(("judgement",), {}), "E_JSON_SCHEMA", "$", 'unknown field "judgement"'),
    ("missing query_id", _del(("queries", 2, "query_id")), "E_JSON_SCHEMA", "$.queries[2]", 'missing field "query_id"'),
    ("missing judgments", _del(("judgments",)), "E_JSON_SCHEMA", "$", 'missing field "judgments"'),
    ("label false", _set(("judgments", "q2", "d1"), False), "E_QRELS_GRADE", "$.judgments.q2.d1", "found boolean false"),
    ("label true", _set(("judgments", "q2", "d3"), True), "E_QRELS_GRADE", "$.judgments.q2.d3", "found boolean true"),
    ("label 1.0", _set(("judgments", "q2", "d3"), 1.0), "E_QRELS_GRADE", "$.judgments.q2.d3", "found number 1.0"),
    ("label string", _set(("judgments", "q2", "d3"), "1"), "E_QRELS_GRADE", "$.judgments.q2.d3", "must be an integer"),
    ("judged doc id with space", _set(("judgments", "q2", "d 9"), 0), "E_JSON_SCHEMA", '$.judgments.q2["d 9"]', "whitespace"),
    ("empty query id", _set(("judgments", ""), {}), "E_JSON_SCHEMA", '$.judgments[""]', "must not be empty"),
    ("judgments not object", _set(("judgments", "q2"), [1]), "E_JSON_SCHEMA", "$.judgments.q2", "expected an object"),
    ("threshold boolean", _set(("grades", "threshold"), True), "E_JSON_SCHEMA", "$.grades.threshold", "boolean true"),
    ("scale empty", _set(("grades", "scale"), []), "E_JSON_SCHEMA", "$.grades.scale", "must not be empty"),
    ("scale repeat", _set(("grades", "scale"), [0, 1, 0]), "E_JSON_SCHEMA", "$.grades.scale[2]", "listed twice"),
    ("scale bool", _set(("grades", "scale"), [0, True]), "E_JSON_SCHEMA", "$.grades.scale[1]", "boolean true"),
    ("definition key", _set(("grades", "definitions"), {"one": "x"}), "E_JSON_SCHEMA", "$.grades.definitions.one", "decimal"),
    ("completeness", _set(("completeness",), "full"), "E_JSON_SCHEMA", "$.completeness", '"exhaustive", "pooled"'),
    ("corpus kind", _set(("corpus", "kind"), "closed"), "E_JSON_SCHEMA", "$.corpus.kind", "must be one of"),
    ("listed without documents", _del(("corpus", "documents")), "E_JSON_SCHEMA", "$.corpus", 'missing field "documents"'),
    ("open with documents", _set(("corpus", "kind"), "open"), "E_JSON_SCHEMA", "$.corpus.documents", "open corpus"),
    ("corpus repeat", _set(("corpus", "documents"), ["d1", "d2", "d1"]), "E_JSON_SCHEMA", "$.corpus.documents[2]", "listed twice"),
    ("corpus non-string", _set(("corpus", "documents"), ["d1", 2]), "E_JSON_SCHEMA", "$.corpus.documents[1]", "integer 2"),
    ("corpus text non-string", _set(("corpus", "documents"), {"d1": None}), "E_JSON_SCHEMA", "$.corpus.documents.d1", "null"),
    ("corpus id nbsp", _set(("corpus", "documents"), ["d\u00a01"]), "E_JSON_SCHEMA", "$.corpus.documents[0]", "whitespace"),
    ("no queries", _set(("queries",), []), "E_JSON_SCHEMA", "$.queries", "must not be empty"),
    ("empty split", _set(("queries", 0, "split"), ""), "E_JSON_SCHEMA", "$.queries[0].split", "must not be empty"),
    ("answerable string", _set(("queries", 0, "answerable"), "yes"), "E_JSON_SCHEMA", "$.queries[0].answerable", "true or false"),
    ("tag repeat", _set(("queries", 0, "tags"), ["a", "a"]), "E_JSON_SCHEMA", "$.queries[0].tags[1]", "listed twice"),
    ("chunk id tab", _set(("chunk_map",), {"c\t1": "d1"}), "E_JSON_SCHEMA", '$.chunk_map["c\\t1"]', "whitespace"),
    ("chunk target int", _set(("chunk_map",), {"c1": 3}), "E_JSON_SCHEMA", "$.chunk_map.c1", "integer 3"),
    ("iteration orphan", _set(("trec_iterations",), {"q2": {"d9": "Q0"}}), "E_JSON_SCHEMA", "$.trec_iterations.q2.d9", "no judgment"),
    ("iteration space", _set(("trec_iteration",), "Q 0"), "E_JSON_SCHEMA", "$.trec_iteration", "whitespace"),
    ("metadata not object", _set(("metadata",), [1]), "E_JSON_SCHEMA", "$.metadata", "expected an object"),
    ("dataset_id missing", _del(("dataset_id",)), "E_JSON_SCHEMA", "$", 'missing field "dataset_id"'),
    # format
    ("wrong format", _set(("format",), "trec-bridge.run"), "E_JSON_FORMAT", "$.format", "expected a dataset"),
    ("version 2", _set(("version",), 2), "E_JSON_FORMAT", "$.version", "version 1"),
    # measures
    ("measure typo", _set(("official_measures",), ["nDCG@10", "nDGC@10"]), "E_MEASURE_UNKNOWN", "$.official_measures[1]", "nDGC"),
    ("measure cutoff", _set(("official_measures",), ["RR@0"]), "E_CUTOFF", "$.official_measures[0]", "RR@0"),
    # semantics (dataset_checks, located in the file)
    ("pair removed", _del(("judgments", "q2", "d1")), "E_DATASET_NOT_EXHAUSTIVE", "$.judgments.q2", "'d1'"),
    ("q4 omitted", _del(("judgments", "q4")), "E_DATASET_NOT_EXHAUSTIVE", "$.judgments", "'q4'"),
    ("grade outside scale", _set(("judgments", "q2", "d1"), 2), "E_DATASET_GRADE_SCALE", "$.judgments.q2.d1", "grade 2"),
    ("definition outside scale", _set(("grades", "definitions"), {"3": "x"}), "E_DATASET_GRADE_SCALE", '$.grades.definitions["3"]', "grade 3"),
    ("threshold 0", _set(("grades", "threshold"), 0), "E_DATASET_THRESHOLD", "$.grades.threshold", ">= 1"),
    ("threshold above scale", _set(("grades", "threshold"), 2), "E_DATASET_THRESHOLD", "$.grades.threshold", "highest grade 1"),
    ("unknown query", _set(("judgments", "q999"), {"d1": 0}), "E_DATASET_UNKNOWN_QUERY", "$.judgments.q999", "'q999'"),
    ("unknown doc", _set(("judgments", "q2", "d7"), 0), "E_DATASET_UNKNOWN_DOC", "$.judgments.q2.d7", "'d7'"),
    ("chunk outside corpus", _set(("chunk_map",), {"d3a": "d3", "x1": "d9"}), "E_CHUNK_MAP_DOC", "$.chunk_map.x1", "'d9'"),
    ("duplicate query", _set(("queries", 4), {"query_id": "q2"}), "E_DATASET_DUPLICATE_QUERY", "$.queries[4]", "'q2'"),
    ("no-answer with relevant", _set(("queries", 1, "answerable"), False), "E_DATASET_ANSWERABLE", "$.queries[1].answerable", "'d3'"),
    ("answerable without relevant", _set(("queries", 4, "answerable"), True), "E_DATASET_ANSWERABLE", "$.queries[4].answerable", "'q5'"),
    ("exhaustive open corpus", _set(("corpus",), {"kind": "open"}), "E_DATASET_NOT_EXHAUSTIVE", "$.completeness", "open"),
    # unjudged_queries: IDs outside the query set, once each, with no judgment
    ("unjudged also a query", _set(("unjudged_queries",), ["q9", "q3"]), "E_DATASET_DUPLICATE_QUERY", "$.unjudged_queries[1]",
     "'q3' is listed as a query and as unjudged"),
    ("unjudged twice", _set(("unjudged_queries",), ["q9", "q8", "q9"]), "E_DATASET_DUPLICATE_QUERY", "$.unjudged_queries[2]",
     "twice as unjudged"),
    ("unjudged judged", _seq(_set(("unjudged_queries",), ["q9"]), _set(("judgments", "q9"), {"d1": 0})),
     "E_DATASET_UNKNOWN_QUERY", "$.judgments.q9", "declares unjudged"),
    ("unjudged id space", _set(("unjudged_queries",), ["q 9"]), "E_JSON_SCHEMA", "$.unjudged_queries[0]", "whitespace"),
    ("unjudged int", _set(("unjudged_queries",), [9]), "E_JSON_SCHEMA", "$.unjudged_queries[0]", "integer 9"),
    ("unjudged not a list", _set(("unjudged_queries",), "q9"), "E_JSON_SCHEMA", "$.unjudged_queries", "array"),
]


@pytest.mark.parametrize("name, mutate, code, path, words", REJECTIONS, ids=[r[0] for r in REJECTIONS])
def test_rejection(tmp_path, name, mutate, code, path, words):
    doc = s1()
    mutate(doc)
    file = write(tmp_path, doc)
    with pytest.raises(InvalidInput) as info:
        load_dataset(file)
    err = info.value
    assert err.code == code, str(err)
    assert err.where.json_path == path, str(err)
    assert f"at {path}" in str(err) and file in str(err)
    assert words in err.message, str(err)


@pytest.mark.parametrize(
    "raw, code",
    [
        (b'{"format": "trec-bridge.dataset", "version": 1, "version": 1}', "E_JSON_DUPLICATE_KEY"),
        (b'{"format": "trec-bridge.dataset", "version": 1, "judgments": {"q2": {"d3": 1, "d3": 0}}}', "E_JSON_DUPLICATE_KEY"),
        (b'{"format": "trec-bridge.dataset", "version": 1, "judgments": {"q2": {"d3": NaN}}}', "E_JSON_NUMBER"),
        (b"", "E_FILE_EMPTY"),
        (b"\xef\xbb\xbf{}", "E_BOM"),
        (b'{"format": "trec-bridge.dataset",', "E_JSON_SYNTAX"),
    ],
)
def test_parse_level_rejections_reach_the_loader(tmp_path, raw, code):
    path = tmp_path / "ds.json"
    path.write_bytes(raw)
    with pytest.raises(InvalidInput) as info:
        load_dataset(path)
    assert info.value.code == code
    if code == "E_JSON_DUPLICATE_KEY" and b"d3" in raw:
        assert info.value.where.json_path == "$.judgments.q2" and '"d3"' in info.value.message


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InvalidInput) as info:
        load_dataset(tmp_path / "nope.json")
    assert info.value.code == "E_FILE_NOT_FOUND"
    with pytest.raises(InvalidInput) as info:
        load_dataset(tmp_path)
    assert info.value.code == "E_FILE_IS_DIRECTORY"


def test_the_lightened_schema_agrees_with_the_shipped_one_on_bulk_parts(tmp_path):
    full = sj.StrictValidator(sj.shipped_schema("dataset.v1.json"))
    cases = [
        _set(("judgments", "q2", "d1"), False), _set(("judgments", "q2", "d1"), 0.0), _set(("judgments", "q2", "\u3000"), 0),
        _set(("corpus", "documents"), ["d1", "d1"]), _set(("corpus", "documents"), {"d1": 1}), _set(("corpus", "documents"), [""]),
        _set(("chunk_map",), {"c": ""}), _set(("chunk_map",), {"c": ["d1"]}), _set(("trec_iterations",), {"q2": {"d1": 0}}),
        _set(("trec_iterations",), {"q2": {"d1": "\u2028"}}), _set(("corpus", "documents"), "d1"),
    ]
    for mutate in cases:
        doc = s1()
        mutate(doc)
        assert not full.is_valid(doc)
        with pytest.raises(InvalidInput) as info:
            load_dataset(write(tmp_path, doc))
        assert info.value.code in ("E_JSON_SCHEMA", "E_QRELS_GRADE")  # a grade's type has its own code
    assert full.is_valid(s1())


# ---------------------------------------------------------------- writing


def test_dump_load_dump_is_byte_identical(tmp_path):
    doc = s1()
    doc["grades"]["definitions"] = {"1": "relevant", "0": "not"}
    doc["metadata"] = {"z": 1, "a": {"y": 2, "b": [3]}}
    doc["chunk_map"] = {"d3a": "d3"}
    doc["trec_iterations"] = {"q1": {"d2": "Q0"}}
    doc["unjudged_queries"] = ["q9", "q10"]
    ds = load_dataset(write(tmp_path, doc))
    assert ds.unjudged_queries == ("q9", "q10")
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    dump_dataset(ds, one)
    again = load_dataset(one)
    assert_same_dataset(ds, again)
    dump_dataset(again, two)
    assert one.read_bytes() == two.read_bytes()
    text = one.read_text(encoding="utf-8")
    assert text.endswith("}\n") and '"q2": {"d1": 0, "d2": 0, "d3": 1, "d4": 1, "d5": 0, "d6": 0}' in text
    assert list(json.loads(text)["metadata"]) == ["a", "z"]
    assert json.loads(text)["trec_iterations"] == {"q1": {"d2": "Q0"}}
    assert '\n  "unjudged_queries": ["q9", "q10"],\n  "judgments": ' in text  # one line, after the queries
    assert sorted(os.listdir(tmp_path)) == ["ds.json", "one.json", "two.json"]  # no temporary left


def test_dump_of_a_dataset_built_from_trec_qrels(tmp_path):
    frame = pl.DataFrame(
        {"query_id": ["301", "301", "302", "302"], "iteration": ["0", "Q0", "0", "0"], "doc_id": ["FT911-1", "文書1", "LA01", "FT911-1"],
         "grade": [2, -2, 0, 1]},
        schema=QRELS_SCHEMA,
    )
    ds = Dataset(queries=(Query("301"), Query("302")), qrels=Qrels(frame, "q.txt"), dataset_id="robust04", query_source="qrels", source="q.txt")
    path = tmp_path / "ds.json"
    dump_dataset(ds, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["grades"] == {"scale": [-2, 0, 1, 2], "threshold": 1}
    assert doc["corpus"] == {"kind": "open"} and doc["completeness"] == "pooled"
    assert doc["judgments"] == {"301": {"FT911-1": 2, "文書1": -2}, "302": {"LA01": 0, "FT911-1": 1}}
    assert doc["trec_iterations"] == {"301": {"文書1": "Q0"}} and "trec_iteration" not in doc
    back = load_dataset(path)
    assert back.qrels.frame.equals(frame) and back.grades == (-2, 0, 1, 2)


def test_scale_of_grades_seen_gets_the_threshold_when_no_grade_reaches_it(tmp_path):
    frame = pl.DataFrame({"query_id": ["1"], "iteration": ["0"], "doc_id": ["a"], "grade": [0]}, schema=QRELS_SCHEMA)
    ds = Dataset(queries=(Query("1"),), qrels=Qrels(frame), dataset_id="x")
    assert dataset_to_document(ds)["grades"]["scale"] == [0, 1]


@pytest.mark.parametrize(
    "change, code, path",
    [
        ({"dataset_id": None}, "E_JSON_SCHEMA", "$"),
        ({"queries": (Query("q 1"),)}, "E_JSON_SCHEMA", "$.queries[0].query_id"),
        ({"trec_iteration": ""}, "E_JSON_SCHEMA", "$.trec_iteration"),
        ({"threshold": 0}, "E_DATASET_THRESHOLD", None),
    ],
)
def test_dump_refuses_what_load_would_refuse(tmp_path, change, code, path):
    frame = pl.DataFrame({"query_id": ["q1"], "iteration": ["0"], "doc_id": ["a"], "grade": [1]}, schema=QRELS_SCHEMA)
    base = dict(queries=(Query("q1"),), qrels=Qrels(frame), dataset_id="x")
    if "queries" in change:
        frame = frame.with_columns(query_id=pl.lit("q 1"))
        base["qrels"] = Qrels(frame)
    ds = Dataset(**{**base, **change})
    target = tmp_path / "out.json"
    with pytest.raises(InvalidInput) as info:
        dump_dataset(ds, target)
    assert info.value.code == code and info.value.where.json_path == path
    assert not target.exists() and os.listdir(tmp_path) == []


def test_dump_refuses_free_form_values_the_loader_would_refuse(tmp_path):
    frame = pl.DataFrame({"query_id": ["q1"], "iteration": ["0"], "doc_id": ["a"], "grade": [1]}, schema=QRELS_SCHEMA)
    base = dict(queries=(Query("q1"),), qrels=Qrels(frame), dataset_id="x")
    for metadata, code in [({"n": 2**64}, "E_JSON_NUMBER"), ({"n": float("nan")}, "E_JSON_NUMBER"), ({"s": "\ud800"}, "E_ENCODING"),
                           ({"deep": json.loads("[" * 70 + "]" * 70)}, "E_JSON_TOO_DEEP")]:
        with pytest.raises(InvalidInput) as info:
            dump_dataset(Dataset(**base, metadata=metadata), tmp_path / "out.json")
        assert info.value.code == code
    with pytest.raises(InvalidInput) as info:
        dump_dataset(Dataset(**{**base, "description": "\udc80"}), tmp_path / "out.json")
    assert info.value.code == "E_ENCODING"
    assert os.listdir(tmp_path) == []


ids = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=6).filter(sj.id_is_valid)


@st.composite
def datasets(draw) -> Dataset:
    qids = draw(st.lists(ids, min_size=1, max_size=5, unique=True))
    docs = draw(st.lists(ids, min_size=1, max_size=6, unique=True))
    scale = draw(st.lists(st.integers(-3, 4), min_size=1, max_size=5, unique=True).filter(lambda s: max(s) >= 1))
    threshold = draw(st.integers(1, max(scale)))
    rows, queries = [], []
    for q in qrels_order(draw, qids):
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        rows += [(q, draw(st.sampled_from(["0", "Q0"])), d, draw(st.sampled_from(scale))) for d in judged]
    for q in qids:
        relevant = any(r[0] == q and r[3] >= threshold for r in rows)
        queries.append(Query(q, draw(st.none() | st.text(max_size=8)), draw(st.none() | st.sampled_from(["dev", "test", "分割"])),
                             tuple(draw(st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=2))),
                             draw(st.sampled_from([None, relevant])), draw(st.sampled_from([None, "pooled"]))))
    listed = draw(st.booleans())
    texts = draw(st.booleans()) and listed
    chunks = draw(st.dictionaries(ids, st.sampled_from(docs), max_size=3))
    unjudged = draw(st.lists(ids.filter(lambda q: q not in qids), unique=True, max_size=3))
    return Dataset(
        queries=tuple(queries),
        qrels=Qrels(pl.DataFrame(rows, schema=QRELS_SCHEMA, orient="row")),
        dataset_id=draw(ids), dataset_version=draw(st.none() | st.just("v1")),
        grades=tuple(scale), threshold=threshold,
        grade_definitions={g: f"grade {g}" for g in scale if draw(st.booleans())},
        completeness="pooled",
        corpus=tuple(docs) if listed else None,
        corpus_texts={d: draw(st.text(max_size=10)) for d in docs} if texts else None,
        chunk_map=ChunkMap(pl.DataFrame({"chunk_id": list(chunks), "doc_id": list(chunks.values())})) if chunks else None,
        description=draw(st.none() | st.text(max_size=10)),
        official_measures=tuple(draw(st.lists(st.sampled_from(["nDCG@10", "R@5", "RR@20"]), unique=True, max_size=2))),
        metadata=draw(st.dictionaries(st.text(max_size=3), st.integers(-(2**63), 2**63 - 1) | st.text(max_size=3), max_size=3)),
        trec_iteration=draw(st.sampled_from(["0", "Q0"])),
        unjudged_queries=tuple(unjudged),
    )


def qrels_order(draw, qids):
    """Judged queries, each one block (as JSON nesting gives them), in any order."""
    return draw(st.permutations(qids))[: draw(st.integers(0, len(qids)))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(datasets())
def test_random_datasets_round_trip(tmp_path, ds):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    dump_dataset(ds, one)
    loaded = load_dataset(one)
    expected = copy.copy(ds)
    expected.source, expected.query_source = str(one), "dataset"
    assert_same_dataset(expected, loaded)
    dump_dataset(loaded, two)
    assert one.read_bytes() == two.read_bytes()


def test_the_examples_in_docs_formats_md_load(tmp_path):
    import re
    from pathlib import Path

    from converters.json_run import load_run

    text = (Path(__file__).resolve().parent.parent / "docs" / "formats.md").read_text(encoding="utf-8")
    dataset, run = re.findall(r"```json\n(.*?)```", text, re.S)
    ds = load_dataset(write(tmp_path, json.loads(dataset), "doc_ds.json"))
    assert ds.select_split("test").query_ids() == ["q2", "q3", "q4", "q5"] and ds.queries[4].answerable is False
    r = load_run(write(tmp_path, json.loads(run), "doc_run.json"))
    assert r.queries == ("q2", "q3", "q5") and r.empty_queries() == ["q5"] and "q4" not in r.queries
