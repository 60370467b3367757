"""check_dataset, one rule at a time, on Datasets built in code (as the scorer gets them)."""
from __future__ import annotations

import polars as pl
import pytest

from trec_bridge.dataset_checks import check_dataset
from trec_bridge.errors import InvalidInput
from trec_bridge.model import QRELS_SCHEMA, ChunkMap, Dataset, Qrels, Query

CORPUS = ("d1", "d2", "d3")


def qrels(*rows) -> Qrels:
    return Qrels(pl.DataFrame([(q, "0", d, g) for q, d, g in rows], schema=QRELS_SCHEMA, orient="row"), source="q.txt")


def full(q: str, relevant: str | None = None) -> list:
    return [(q, d, int(d == relevant)) for d in CORPUS]


def make(rows=None, **kw) -> Dataset:
    rows = full("q1", "d1") + full("q2") if rows is None else rows
    base = dict(queries=(Query("q1"), Query("q2")), qrels=qrels(*rows), dataset_id="x", grades=(0, 1), threshold=1,
                completeness="exhaustive", corpus=CORPUS, source="ds.json")
    return Dataset(**{**base, **kw})


def rejected(ds: Dataset, **kw) -> InvalidInput:
    with pytest.raises(InvalidInput) as info:
        check_dataset(ds, **kw)
    return info.value


def test_a_sound_dataset_passes():
    check_dataset(make())
    check_dataset(make(completeness="pooled", corpus=None, grades=None, rows=[("q1", "anything", 7)]))


def test_duplicate_query():
    err = rejected(make(queries=(Query("q1"), Query("q2"), Query("q1"))))
    assert err.code == "E_DATASET_DUPLICATE_QUERY" and err.where.query == "q1" and err.where.file == "ds.json"


@pytest.mark.parametrize("threshold, grades, ok", [(1, (0, 1), True), (2, (0, 1, 2, 3), True), (0, (0, 1), False), (-1, (-1, 0, 1), False),
                                                   (2, (0, 1), False), (True, (0, 1), False), (5, None, True), (0, None, False)])
def test_threshold_rule(threshold, grades, ok):
    rows = full("q1", "d1") + full("q2")
    ds = make(rows=rows, threshold=threshold, grades=grades)
    if ok:
        check_dataset(ds)
    else:
        assert rejected(ds).code == "E_DATASET_THRESHOLD"


def test_grade_outside_scale_and_definitions():
    rows = full("q1", "d1") + [("q2", "d1", 0), ("q2", "d2", 2), ("q2", "d3", 0)]
    err = rejected(make(rows=rows))
    assert (err.code, err.where.query, err.where.doc) == ("E_DATASET_GRADE_SCALE", "q2", "d2") and "grade 2" in err.message
    err = rejected(make(grade_definitions={0: "no", 3: "fully"}))
    assert err.code == "E_DATASET_GRADE_SCALE" and "grade 3" in err.message


def test_negative_grades_are_valid_when_declared_and_never_relevant():
    rows = [("q1", "d1", 1), ("q1", "d2", -2), ("q1", "d3", -1)] + full("q2")
    check_dataset(make(rows=rows, grades=(-2, -1, 0, 1)))
    assert rejected(make(rows=rows)).code == "E_DATASET_GRADE_SCALE"
    only_negative = [("q1", "d1", -1), ("q1", "d2", 0), ("q1", "d3", -2)] + full("q2")
    err = rejected(make(rows=only_negative, grades=(-2, -1, 0, 1), queries=(Query("q1", answerable=True), Query("q2"))))
    assert err.code == "E_DATASET_ANSWERABLE"


def test_null_grade_and_duplicate_judgment():
    frame = pl.DataFrame({"query_id": ["q1"], "iteration": ["0"], "doc_id": ["d1"], "grade": [None]}, schema=QRELS_SCHEMA)
    assert rejected(make(qrels=Qrels(frame), completeness="pooled")).code == "E_QRELS_GRADE"
    err = rejected(make(rows=full("q1", "d1") + full("q2") + [("q2", "d3", 1)]))
    assert (err.code, err.where.query, err.where.doc) == ("E_QRELS_DUPLICATE", "q2", "d3")


def test_unknown_query_and_unknown_doc():
    err = rejected(make(rows=full("q1", "d1") + full("q2") + [("q999", "d1", 0)]))
    assert (err.code, err.where.query) == ("E_DATASET_UNKNOWN_QUERY", "q999")
    err = rejected(make(rows=full("q1", "d1") + full("q2") + [("q2", "d7", 0)]))
    assert (err.code, err.where.query, err.where.doc) == ("E_DATASET_UNKNOWN_DOC", "q2", "d7")
    check_dataset(make(rows=[("q2", "d7", 0)], corpus=None, completeness="pooled"))  # open corpus: any document


def test_chunk_map_entries_must_point_into_a_listed_corpus_even_if_unused():
    cm = ChunkMap(pl.DataFrame({"chunk_id": ["d1a", "zz"], "doc_id": ["d1", "d9"]}))
    err = rejected(make(chunk_map=cm))
    assert (err.code, err.where.doc) == ("E_CHUNK_MAP_DOC", "d9") and "'zz'" in err.message
    check_dataset(make(chunk_map=cm, corpus=None, completeness="pooled"))
    dup = ChunkMap(pl.DataFrame({"chunk_id": ["c", "c"], "doc_id": ["d1", "d2"]}))
    assert rejected(make(chunk_map=dup)).code == "E_CHUNK_MAP_DUPLICATE"


def test_exhaustive_missing_pair_and_missing_query():
    rows = full("q1", "d1") + [("q2", "d1", 0), ("q2", "d3", 0)]
    err = rejected(make(rows=rows))
    assert (err.code, err.where.query, err.where.doc) == ("E_DATASET_NOT_EXHAUSTIVE", "q2", "d2")
    err = rejected(make(rows=full("q1", "d1")))  # q2 has no judgments at all
    assert (err.code, err.where.query) == ("E_DATASET_NOT_EXHAUSTIVE", "q2") and "no judgments" in err.message


def test_completeness_is_per_query():
    rows = full("q1", "d1") + [("q2", "d1", 0)]
    check_dataset(make(rows=rows, queries=(Query("q1"), Query("q2", completeness="pooled"))))
    err = rejected(make(rows=rows, completeness="pooled", queries=(Query("q1"), Query("q2", completeness="exhaustive"))))
    assert (err.code, err.where.query) == ("E_DATASET_NOT_EXHAUSTIVE", "q2")
    check_dataset(make(rows=rows, completeness="pooled"))


def test_exhaustive_needs_a_listed_corpus():
    err = rejected(make(corpus=None), locate=lambda where: repr(where))
    assert err.code == "E_DATASET_NOT_EXHAUSTIVE" and "open" in err.message and err.where.json_path == "('completeness',)"
    err = rejected(make(corpus=None, completeness="pooled", queries=(Query("q1"), Query("q2", completeness="exhaustive"))),
                   locate=lambda where: repr(where))
    assert err.where.json_path == "('query', 1, 'completeness')"


def test_answerable_flags():
    err = rejected(make(queries=(Query("q1", answerable=False), Query("q2"))))
    assert (err.code, err.where.query, err.where.doc) == ("E_DATASET_ANSWERABLE", "q1", "d1")
    err = rejected(make(queries=(Query("q1"), Query("q2", answerable=True))))
    assert (err.code, err.where.query) == ("E_DATASET_ANSWERABLE", "q2")
    check_dataset(make(queries=(Query("q1", answerable=True), Query("q2", answerable=False))))
    graded = full("q1") + full("q2")
    graded[0] = ("q1", "d1", 1)
    err = rejected(make(rows=graded, grades=(0, 1, 2), threshold=2, queries=(Query("q1", answerable=True), Query("q2"))))
    assert err.code == "E_DATASET_ANSWERABLE"  # grade 1 is below the threshold 2


def test_rule_order_exhaustive_before_answerable():
    err = rejected(make(rows=full("q1", "d1"), queries=(Query("q1"), Query("q2", answerable=True))))
    assert err.code == "E_DATASET_NOT_EXHAUSTIVE"


def test_without_locator_there_is_no_json_path_and_with_one_it_is_used():
    ds = make(rows=full("q1", "d1") + full("q2") + [("q2", "d7", 0)])
    assert rejected(ds).where.json_path is None
    assert rejected(ds, locate=lambda where: "/".join(map(str, where))).where.json_path == "judgment/q2/d7"


def test_pair_checks_scale():
    corpus = tuple(f"d{i}" for i in range(2000))
    queries = tuple(Query(f"q{i}") for i in range(100))
    frame = pl.DataFrame({"query_id": [q.query_id for q in queries for _ in corpus], "iteration": "0",
                          "doc_id": [d for _ in queries for d in corpus], "grade": 0}, schema=QRELS_SCHEMA)
    ds = Dataset(queries=queries, qrels=Qrels(frame), dataset_id="x", grades=(0, 1), completeness="exhaustive", corpus=corpus)
    check_dataset(ds)
    err = rejected(Dataset(**{**ds.__dict__, "qrels": Qrels(frame.slice(0, frame.height - 1))}))
    assert (err.where.query, err.where.doc) == ("q99", "d1999")
