"""Runs and qrels to and from ir_measures' in-memory shapes.

ir_measures takes iterables of ``ScoredDoc(query_id, doc_id, score)`` and
``Qrel(query_id, doc_id, relevance, iteration)`` or pandas DataFrames with
those column names.  Coming in, the same policy as for TREC files applies
(duplicates, non-finite scores and non-integer grades are rejected; IDs must
be strings, never coerced).  Going out, scores are chosen like the TREC
writer's so that every ir_measures provider reads the run's own order.
pandas is imported only when a DataFrame is asked for.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterable

import numpy as np
import polars as pl

from trec_bridge.errors import InvalidInput, UsageError
from trec_bridge.grades import first_out_of_range, grade_range_error
from trec_bridge.model import QRELS_SCHEMA, Qrels, Run
from trec_bridge.ordering import pair_keys_of_blocks
from trec_bridge.messages import quote

from . import id_text
from .trec_qrels import check_qrels_duplicates
from .trec_run import GroupedRows, check_repeated_documents, group_rows, order_grouped, trec_score_values


# --------------------------------------------------------------------------- validation

def _ids(values: list | pl.Series, what: str, text_test: bool = True) -> pl.Series:
    """The IDs as a polars string column: strings only, each non-empty and free of invisible characters,
    whitespace and control characters (``id_text``; ``text_test`` False: the caller tests them).

    A list is first built as a strict string column in one call (polars
    refuses any other type), so the usual all-strings case costs no Python
    pass; only a refused list is scanned, for the message.
    """
    column = values if isinstance(values, pl.Series) else _string_column(values)
    if column is None:
        bad = next((v for v in values if not isinstance(v, str)), None)
        raise UsageError("E_USAGE", f"{what} must be strings, got {type(bad).__name__} {quote(bad)} "
                         "(IDs are never converted: 7 and '007' would collide)")
    if text_test:
        id_text.refuse_in_column(column, what)
    return column


def _string_column(values: list) -> pl.Series | None:
    """``values`` as a polars string column, or None when one is not a string (str subclasses are strings)."""
    try:
        column = pl.Series(values, dtype=pl.String)
    except (TypeError, ValueError):
        return None
    return None if column.null_count() else column


def _scores(values, qids, dids) -> pl.Series:
    """Finite numbers as float64: a numeric numpy array is taken as is, a list of floats and ints converted in one
    call (a vectorised type test first; bool, a string or a Decimal is refused item by item below)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        array = values.astype(np.float64, copy=False)  # an integer array: each value correctly rounded
        if np.isfinite(array).all():
            return pl.Series(array)
        values = values.tolist()
    elif not isinstance(values, list):
        values = list(values)
    if set(map(type, values)) <= {float, int}:  # the common case (bool is its own type)
        try:
            array = pl.Series(values, dtype=pl.Float64, strict=True).to_numpy()  # ints rounded as float() rounds
        except (OverflowError, TypeError, ValueError):  # an int beyond a double: refused below
            array = None
        if array is not None and np.isfinite(array).all():
            return pl.Series(array)
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not _finite(v):
            raise InvalidInput("E_RUN_SCORE", f"score {quote(v)} (item {i + 1}) is not a finite number",
                               query=qids[i], doc=dids[i])
    return pl.Series(np.asarray(values, dtype=np.float64))


def _finite(v: numbers.Real) -> bool:
    """A finite double: an int beyond a double's range (10**400) is not one, as inf is not."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _grades(values: list, qids: list, dids: list) -> pl.Series:
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InvalidInput("E_QRELS_GRADE", f"relevance {quote(v)} (item {i + 1}) is not an integer",
                               query=qids[i], doc=dids[i])
    bad = first_out_of_range(values)
    if bad is not None:
        raise grade_range_error(values[bad], query=qids[bad], doc=dids[bad])
    return pl.Series(values, dtype=pl.Int64)


# --------------------------------------------------------------------------- runs

def run_from_columns(query_ids: list, doc_ids: list, scores: list, *, run_id: str | None = None,
                     source: str | None = None, unique_pairs: bool = False) -> Run:
    """A ``Run`` from parallel lists, ordered like trec_eval (score desc, doc ID desc); ``unique_pairs``: the
    columns come from a dict of dicts, so no document can repeat in a query (no duplicate check)."""
    grouped = grouped_from_columns(query_ids, doc_ids, scores, unique_pairs=unique_pairs)
    return order_grouped_run(grouped, run_id=run_id, source=source)


def order_grouped_run(grouped: GroupedRows | pl.DataFrame, *, run_id: str | None = None,
                      source: str | None = None) -> Run:
    """The ``Run`` of ``grouped_from_columns``' rows, each query ordered by score as trec_eval does."""
    return order_grouped(grouped).to_run(run_id=run_id, order_source="score", source=source)


def grouped_from_columns(query_ids: list, doc_ids: list, scores: list, *, unique_pairs: bool = False
                         ) -> GroupedRows:
    """The rows of parallel lists checked (string IDs by ``id_text``'s rule, finite scores, no document
    twice in a query) and grouped by query, not yet ordered.

    The query column is tested by ``id_text`` on its runs of equal IDs (the grouping needs them
    anyway): the first run holding one is the first row holding one, so the error is the same.
    """
    queries = _ids(query_ids, "query IDs", text_test=False)
    runs = queries.rle().struct.unnest()  # one row per run of equal query IDs
    id_text.refuse_in_column(runs.get_column("value"), "query IDs")
    frame = pl.DataFrame({"query_id": queries, "doc_id": _ids(doc_ids, "document IDs"),
                          "score": _scores(scores, query_ids, doc_ids)})
    return group_rows(frame, unique_pairs=unique_pairs, runs=runs)


def grouped_from_blocks(block_queries: list | pl.Series, lengths: np.ndarray, doc_ids: list | pl.Series,
                        scores: list, *, unique_pairs: bool = True) -> GroupedRows | None:
    """``grouped_from_columns`` for rows whose query column is known as blocks, each block ``lengths[i]`` rows of
    one query: a dict of dicts (its keys; ``unique_pairs``: no document can repeat, a dict has no key twice) or a
    text column's runs of one object (``python_objects``).  Neighbouring blocks of one query are merged; None when
    a query's rows are not all together (the caller then groups the whole column).

    The same rows, in the same groups, as ``grouped_from_columns`` of the repeated query column gives.
    """
    ranked = lengths > 0  # a key without documents has no row, as in the column
    if not ranked.all():
        block_queries = block_queries.filter(pl.Series(ranked)) if isinstance(block_queries, pl.Series) else \
            [q for q, kept in zip(block_queries, ranked.tolist()) if kept]
        lengths = lengths[ranked]
    queries = _ids(block_queries, "query IDs")
    if queries.len() > 1:
        first = np.concatenate([[True], (queries[1:] != queries[:-1]).to_numpy()])  # another query than the last
        if not first.all():
            lengths, queries = np.add.reduceat(lengths, np.flatnonzero(first)), queries.filter(pl.Series(first))
        if queries.n_unique() != queries.len():
            return None
    qidx = np.repeat(np.arange(len(lengths)), lengths)
    query_ids, doc = queries.gather(qidx), _ids(doc_ids, "document IDs")
    frame = pl.DataFrame({"query_id": query_ids, "doc_id": doc, "score": _scores(scores, query_ids, doc_ids)})
    keys = pair_keys_of_blocks(queries, lengths, doc) if len(lengths) else np.zeros(0, dtype=np.uint64)
    if not unique_pairs and len(keys):
        check_repeated_documents(frame, qidx, keys, None, None, None, np.cumsum(lengths) - lengths)
    return GroupedRows(frame, queries.alias("query_id"), qidx, None, keys, np.cumsum(lengths) - lengths)


def run_from_ir_measures(scored_docs: Iterable, *, run_id: str | None = None) -> Run:
    """A ``Run`` from ``ScoredDoc``-like tuples ``(query_id, doc_id, score)``."""
    rows = list(scored_docs)
    if any(len(r) < 3 for r in rows):
        raise UsageError("E_USAGE", "each item must be (query_id, doc_id, score)")
    q, d, s = (list(c) for c in zip(*[tuple(r)[:3] for r in rows])) if rows else ([], [], [])
    return run_from_columns(q, d, s, run_id=run_id)


def run_to_ir_measures(run: Run, *, exact_order: bool = True) -> list:
    """``ir_measures.ScoredDoc`` per row.

    With ``exact_order`` (default) a query whose scores tie (even only as
    float32), are missing or not finite gets scores n, n-1, ..., 1, so that
    the pytrec_eval, msmarco and ranx providers all read the run's order.
    """
    import ir_measures

    from .trec_run import ordered_frame

    frame = ordered_frame(run)
    if exact_order:
        values, _, _ = trec_score_values(frame)
    else:
        if frame.get_column("score").null_count():
            raise InvalidInput("E_RUN_SCORE", "the run has documents without a score; use exact_order=True")
        values = frame.get_column("score").to_numpy()
    return [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in
            zip(frame.get_column("query_id").to_list(), frame.get_column("doc_id").to_list(), values.tolist())]


def run_from_dataframe(df: Any, *, run_id: str | None = None) -> Run:
    """A ``Run`` from a pandas (or polars) DataFrame with columns query_id, doc_id, score."""
    q, d, s = _columns(df, ("query_id", "doc_id", "score"))
    return run_from_columns(q, d, s, run_id=run_id)


def run_to_dataframe(run: Run, *, exact_order: bool = True):
    """pandas DataFrame with ir_measures' columns query_id, doc_id, score (scores as ``run_to_ir_measures``)."""
    import pandas as pd

    docs = run_to_ir_measures(run, exact_order=exact_order)
    return pd.DataFrame({"query_id": [x.query_id for x in docs], "doc_id": [x.doc_id for x in docs],
                         "score": np.array([x.score for x in docs], dtype=np.float64)})


# --------------------------------------------------------------------------- qrels

def qrels_from_columns(query_ids: list, doc_ids: list, grades: list, iterations: list | None = None, *,
                       subtopics: bool = False) -> Qrels:
    """``Qrels`` from parallel lists (iteration "0" when not given), rows kept in order; ``subtopics``: the
    iterations are subtopics (a diversity qrels, converters/trec_qrels.py)."""
    n = len(query_ids)
    its = ["0"] * n if iterations is None else iterations
    frame = pl.DataFrame({
        "query_id": _ids(query_ids, "query IDs"),
        "iteration": _ids(its, "iterations"),
        "doc_id": _ids(doc_ids, "document IDs"),
        "grade": _grades(grades, query_ids, doc_ids),
    }, schema=QRELS_SCHEMA)
    check_qrels_duplicates(frame, subtopics=subtopics)  # the rest of a diversity qrels' rules: dataset_checks
    return Qrels(frame, subtopics=subtopics)


def qrels_from_ir_measures(qrels: Iterable) -> Qrels:
    """``Qrels`` from ``Qrel``-like tuples ``(query_id, doc_id, relevance[, iteration])``."""
    rows = [tuple(r) for r in qrels]
    if any(len(r) < 3 for r in rows):
        raise UsageError("E_USAGE", "each item must be (query_id, doc_id, relevance[, iteration])")
    q = [r[0] for r in rows]
    d = [r[1] for r in rows]
    g = [r[2] for r in rows]
    it = [r[3] if len(r) > 3 else "0" for r in rows]
    return qrels_from_columns(q, d, g, it)


def qrels_to_ir_measures(qrels: Qrels) -> list:
    """``ir_measures.Qrel`` per row (iteration "0" where it is null)."""
    import ir_measures

    f = qrels.frame.with_columns(pl.col("iteration").fill_null("0"))
    return [ir_measures.Qrel(q, d, int(g), it) for q, it, d, g in f.select(list(QRELS_SCHEMA)).iter_rows()]


def qrels_from_dataframe(df: Any) -> Qrels:
    """``Qrels`` from a DataFrame with query_id, doc_id, relevance and optional iteration."""
    names = list(df.columns)
    cols = ("query_id", "doc_id", "relevance", "iteration") if "iteration" in names else \
        ("query_id", "doc_id", "relevance")
    values = _columns(df, cols)
    return qrels_from_columns(values[0], values[1], values[2], values[3] if len(values) > 3 else None)


def qrels_to_dataframe(qrels: Qrels):
    """pandas DataFrame with ir_measures' columns query_id, doc_id, relevance, iteration."""
    import pandas as pd

    f = qrels.frame.with_columns(pl.col("iteration").fill_null("0"))
    return pd.DataFrame({"query_id": f.get_column("query_id").to_list(), "doc_id": f.get_column("doc_id").to_list(),
                         "relevance": f.get_column("grade").to_numpy().astype(np.int64),
                         "iteration": f.get_column("iteration").to_list()})


def _columns(df: Any, names: tuple[str, ...]) -> list[list]:
    missing = [c for c in names if c not in list(df.columns)]
    if missing:
        raise UsageError("E_USAGE", f"the DataFrame lacks column(s) {', '.join(missing)} (ir_measures' names: "
                         f"{', '.join(names)})")
    out = []
    for c in names:
        col = df[c]
        out.append(col.to_list() if hasattr(col, "to_list") else list(col))
    return out
