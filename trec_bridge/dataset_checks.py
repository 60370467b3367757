"""Semantic checks of a Dataset, whatever it was read from.

A schema says a file is well formed; these rules say the dataset can be scored
honestly: every grade declared, every judgment for a listed query and a listed
document, exhaustive judgments really exhaustive, answerable flags that agree
with the judgments.  The JSON loader and the scorer both call
``check_dataset``, so a Dataset built in code or from TREC files meets the same
bar.  The pair checks are polars expressions, never a loop over judgments.

Threshold rule: ``1 <= threshold`` always, and ``threshold <= max(grades)``
when grades are declared.  Below 1, grade 0 (and every negative TREC grade)
would count as relevant while an unjudged document does not; above the top
grade nothing could ever be relevant and every query would score null.
"""
from __future__ import annotations

from typing import Callable

import polars as pl

from .errors import InvalidInput
from .grades import first_out_of_range, range_message
from .model import Dataset
from .messages import quote

# A place in the dataset, independent of file syntax; a loader maps it to its
# own notation (the JSON loader to a JSON path):
#   ("query", i[, field]) ("unjudged_query", i) ("judgment", q, d[, subtopic]) ("query_judgments", q) ("judgments",)
#   ("threshold",) ("grade_scale", i) ("grade_definition", g) ("chunk", c) ("completeness",)
Where = tuple
Locate = Callable[[Where], "str | None"]


def check_dataset(ds: Dataset, *, locate: Locate | None = None) -> None:
    """Raise InvalidInput for the first rule ``ds`` breaks (rules in the order below)."""

    def fail(code: str, message: str, where: Where, query: str | None = None, doc: str | None = None):
        raise InvalidInput(code, message, file=ds.source, json_path=locate(where) if locate else None, query=query, doc=doc)

    for rule in _RULES:
        rule(ds, ds.qrels.frame, fail)


def _duplicate_queries(ds: Dataset, _frame: pl.DataFrame, fail) -> None:
    ids = ds.query_ids()
    if len(set(ids)) == len(ids):
        return
    seen: set[str] = set()
    for i, q in enumerate(ids):
        if q in seen:
            fail("E_DATASET_DUPLICATE_QUERY", f"query {quote(q)} is listed twice", ("query", i), query=q)
        seen.add(q)


def _unjudged_queries(ds: Dataset, _frame: pl.DataFrame, fail) -> None:
    """A query declared unjudged is in no query set: not one of the queries, and listed once."""
    if not ds.unjudged_queries:
        return
    queries = set(ds.query_ids())
    seen = set(queries)
    for i, q in enumerate(ds.unjudged_queries):
        if q in seen:
            where = "as a query and as unjudged" if q in queries else "twice as unjudged"
            fail("E_DATASET_DUPLICATE_QUERY", f"query {q!r} is listed {where}", ("unjudged_query", i), query=q)
        seen.add(q)


def _threshold(ds: Dataset, _frame: pl.DataFrame, fail) -> None:
    t = ds.threshold
    if type(t) is not int or t < 1:
        fail("E_DATASET_THRESHOLD", f"relevance threshold {quote(t)} must be an integer >= 1: below 1, grade 0 would be relevant "
             "while an unjudged document is not", ("threshold",))
    if ds.grades is not None and t > max(ds.grades):
        fail("E_DATASET_THRESHOLD", f"relevance threshold {t} is above the highest grade {max(ds.grades)}: no document "
             "could ever be relevant", ("threshold",))


def _grade_range(ds: Dataset, frame: pl.DataFrame, fail) -> None:
    """Declared and judged grades within grades.GRADE_MIN..GRADE_MAX (every gain of them fits a double)."""
    if ds.grades is not None:
        bad = first_out_of_range(ds.grades)
        if bad is not None:
            fail("E_GRADE_RANGE", range_message(ds.grades[bad]), ("grade_scale", bad))
    bad = first_out_of_range(frame.get_column("grade"))
    if bad is not None:
        q, s, d, g = frame.row(bad)
        fail("E_GRADE_RANGE", range_message(g), _judgment(ds, q, s, d), query=q, doc=d)


def _grade_definitions(ds: Dataset, _frame: pl.DataFrame, fail) -> None:
    if ds.grades is None:
        return
    for g in ds.grade_definitions:
        if g not in ds.grades:
            fail("E_DATASET_GRADE_SCALE", f"a definition is given for grade {g}, which the scale {list(ds.grades)} does not list",
                 ("grade_definition", g))


def _grades_in_scale(ds: Dataset, frame: pl.DataFrame, fail) -> None:
    nulls = frame.filter(pl.col("grade").is_null())
    if nulls.height:
        q, s, d, _ = nulls.row(0)
        fail("E_QRELS_GRADE", "a judgment without a grade", _judgment(ds, q, s, d), query=q, doc=d)
    if ds.grades is None:
        return
    bad = frame.filter(~pl.col("grade").is_in(list(ds.grades)))
    if bad.height:
        q, s, d, g = bad.row(0)
        fail("E_DATASET_GRADE_SCALE", f"grade {g} is not in the declared scale {list(ds.grades)}", _judgment(ds, q, s, d), query=q, doc=d)


def _judgment(ds: Dataset, q: str, subtopic: str | None, d: str) -> Where:
    """The place of one judgment (a diversity qrels' names its subtopic too)."""
    return ("judgment", q, d, subtopic) if ds.qrels.subtopics else ("judgment", q, d)


def _duplicate_judgments(ds: Dataset, frame: pl.DataFrame, fail) -> None:
    key = ("query_id", "iteration", "doc_id") if ds.qrels.subtopics else ("query_id", "doc_id")
    dup = frame.filter(~pl.struct(*key).is_first_distinct())
    if dup.height:
        q, s, d, _ = dup.row(0)
        what = f"(query, subtopic {quote(s)}, document)" if ds.qrels.subtopics else "(query, document) pair"
        fail("E_QRELS_DUPLICATE", f"this {what} is judged twice", _judgment(ds, q, s, d), query=q, doc=d)


def _subtopic_column(ds: Dataset, frame: pl.DataFrame, fail) -> None:
    """A diversity qrels names a subtopic on every judgment, and more than one (else it is an iteration column)."""
    if not ds.qrels.subtopics or not frame.height:
        return
    its = frame.get_column("iteration")
    if its.null_count():
        q, _, d, _ = frame.filter(pl.col("iteration").is_null()).row(0)
        fail("E_SUBTOPICS_AMBIGUOUS", "a judgment without a subtopic in a diversity qrels", ("judgment", q, d), query=q,
             doc=d)
    if its.n_unique() == 1:
        fail("E_SUBTOPICS_AMBIGUOUS", f"every judgment has subtopic {quote(its[0])}: that is an iteration column, not "
             "subtopics (ir_measures warns 'All queries have only 1 subtopic')", ("judgments",))


def _unknown_queries(ds: Dataset, frame: pl.DataFrame, fail) -> None:
    bad = frame.filter(~pl.col("query_id").is_in(ds.query_ids()))
    if bad.height:
        q = bad.item(0, "query_id")
        why = "the dataset declares unjudged" if q in ds.unjudged_queries else "the dataset's queries do not list"
        fail("E_DATASET_UNKNOWN_QUERY", f"judgments for query {quote(q)}, which {why}", ("query_judgments", q), query=q)


def _unknown_docs(ds: Dataset, frame: pl.DataFrame, fail) -> None:
    if ds.corpus is None:
        return
    bad = frame.filter(~pl.col("doc_id").is_in(list(ds.corpus)))
    if bad.height:
        q, s, d, _ = bad.row(0)
        fail("E_DATASET_UNKNOWN_DOC", f"document {quote(d)} is judged but is not in the listed corpus", _judgment(ds, q, s, d), query=q, doc=d)


def _chunk_map(ds: Dataset, _frame: pl.DataFrame, fail) -> None:
    if ds.chunk_map is None:
        return
    cm = ds.chunk_map.frame
    dup = cm.filter(~pl.col("chunk_id").is_first_distinct())
    if dup.height:
        c = dup.item(0, "chunk_id")
        fail("E_CHUNK_MAP_DUPLICATE", f"chunk {quote(c)} is mapped twice", ("chunk", c))
    if ds.corpus is None:
        return
    bad = cm.filter(~pl.col("doc_id").is_in(list(ds.corpus)))
    if bad.height:
        c, d = bad.row(0)
        fail("E_CHUNK_MAP_DOC", f"chunk {quote(c)} maps to document {quote(d)}, which is not in the listed corpus (an error even if no run "
             "uses the chunk)", ("chunk", c), doc=d)


def _exhaustive(ds: Dataset, frame: pl.DataFrame, fail) -> None:
    exh = [(i, q) for i, q in enumerate(ds.queries) if (q.completeness or ds.completeness) == "exhaustive"]
    if not exh:
        return
    if ds.corpus is None:
        i, q = exh[0]
        where = ("query", i, "completeness") if q.completeness == "exhaustive" else ("completeness",)
        fail("E_DATASET_NOT_EXHAUSTIVE", "judgments are declared exhaustive but the corpus is open: 'every pair judged' needs a "
             "listed corpus (list the documents, or declare the judgments pooled)", where, query=q.query_id)
    corpus = pl.Series("doc_id", ds.corpus, dtype=pl.String).unique(maintain_order=True)
    ids = [q.query_id for _, q in exh]
    counts = (
        frame.filter(pl.col("query_id").is_in(ids) & pl.col("doc_id").is_in(corpus.implode()))
        .group_by("query_id")
        .agg(pl.col("doc_id").n_unique().alias("judged"))
    )
    order = pl.DataFrame({"query_id": ids}, schema={"query_id": pl.String}).with_row_index("pos")
    short = (
        order.join(counts, on="query_id", how="left")
        .with_columns(pl.col("judged").fill_null(0))
        .filter(pl.col("judged") < corpus.len())
        .sort("pos")
    )
    if not short.height:
        return
    q, judged = short.item(0, "query_id"), short.item(0, "judged")
    if judged == 0:
        fail("E_DATASET_NOT_EXHAUSTIVE", f"query {quote(q)} has no judgments, but its judgments are declared exhaustive: each of the "
             f"{corpus.len()} corpus documents needs a grade (an unjudged pair is unknown, not 0)", ("judgments",), query=q)
    done = frame.filter(pl.col("query_id") == q).get_column("doc_id")
    d = corpus.filter(~corpus.is_in(done.implode())).item(0)
    fail("E_DATASET_NOT_EXHAUSTIVE", f"judgments are declared exhaustive but ({quote(q)}, {quote(d)}) has no judgment: an unjudged pair is "
         f"unknown, not 0 (judge it, or declare the query pooled)", ("query_judgments", q), query=q, doc=d)


def _answerable(ds: Dataset, frame: pl.DataFrame, fail) -> None:
    flagged = [(i, q) for i, q in enumerate(ds.queries) if q.answerable is not None]
    if not flagged:
        return
    rel = (
        frame.filter(pl.col("grade") >= ds.threshold)
        .group_by("query_id", maintain_order=True)
        .agg(pl.col("doc_id").first(), pl.col("grade").first())
    )
    first = {q: (d, g) for q, d, g in rel.iter_rows()}
    for i, q in flagged:
        hit = first.get(q.query_id)
        if q.answerable is False and hit is not None:
            fail("E_DATASET_ANSWERABLE", f"query {quote(q.query_id)} is declared answerable: false (no-answer) but document {quote(hit[0])} "
                 f"is relevant (grade {hit[1]} >= threshold {ds.threshold})", ("query", i, "answerable"), query=q.query_id, doc=hit[0])
        if q.answerable is True and hit is None:
            fail("E_DATASET_ANSWERABLE", f"query {quote(q.query_id)} is declared answerable: true but has no relevant judgment "
                 f"(no grade >= threshold {ds.threshold})", ("query", i, "answerable"), query=q.query_id)


_RULES = (
    _duplicate_queries,
    _unjudged_queries,
    _grade_range,
    _threshold,
    _grade_definitions,
    _grades_in_scale,
    _duplicate_judgments,
    _subtopic_column,
    _unknown_queries,
    _unknown_docs,
    _chunk_map,
    _exhaustive,
    _answerable,
)
