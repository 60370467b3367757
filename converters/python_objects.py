"""Qrels and runs from the Python objects people already hold, with their integer IDs read as decimal text.

The shapes: pytrec_eval's nested dicts (``{qid: {docid: value}}``), pandas
or polars DataFrames with ir_measures' column names, iterables of
ir_measures' ``Qrel`` / ``ScoredDoc`` (or any tuples in that order), ranx
``Qrels`` / ``Run`` (recognised by their type's module, so ranx is never
imported here) and ir_datasets datasets (``qrels_iter``).  Rows then go
through ``interop``'s checks, the same as every other reader's.

Integer IDs (DataFrame int columns, dict int keys) become their decimal
text.  What that conversion could create or hide is refused with
E_ID_COLLISION: the int 7 and the string "7" as distinct keys, or 7 on one
side and "007" on the other (``IntIds.check_against``).
"""
from __future__ import annotations

import ctypes
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from trec_bridge.errors import InvalidInput, UsageError
from trec_bridge.messages import quote
from trec_bridge.model import Qrels, Run

from .interop import _string_column
from .trec_run import GroupedRows

_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")


@dataclass
class IntIds:
    """The decimal texts of the integer IDs one input held, by column ("query IDs", "document IDs")."""

    texts: dict[str, set[str]] = field(default_factory=dict)

    def check_against(self, column: str, ids: Iterable[str], other: str) -> None:
        """Refuse an ID of ``other`` (string IDs) that spells one of our integers differently ("007" for 7)."""
        ours = self.texts.get(column)
        if ours:
            for text in set(ids):
                if _INTEGER_TEXT.fullmatch(text) and text not in ours and str(int(text)) in ours:
                    raise collision(column, int(text), text, other)


def check_id_spellings(dataset, qrels_ints: IntIds, run, run_ints: IntIds) -> None:
    """Integer IDs on one side against the other side's string spellings (7 against "007"): E_ID_COLLISION.
    ``run``: a ``Run`` or an unsorted ``GroupedRows`` (only its ``.frame`` is read)."""
    if not qrels_ints.texts and not run_ints.texts:
        return
    qrels = dataset.qrels.frame
    for column, name in (("query IDs", "query_id"), ("document IDs", "doc_id")):
        qrels_ints.check_against(column, run.frame.get_column(name).unique().to_list(), "the run")
        run_ints.check_against(column, qrels.get_column(name).unique().to_list(), "the qrels")
    run_ints.check_against("query IDs", dataset.query_ids(), "the dataset")


def collision(column: str, number: int, text: str, other: str) -> InvalidInput:
    if text == str(number):
        what = f"and {other} also holds the string {quote(text)}: two distinct keys would become one ID"
    else:
        what = f"and {other} holds the string {quote(text)}, a different ID for the same number"
    return InvalidInput("E_ID_COLLISION", f"{column}: the integer {number} is read as the text {quote(str(number))}, "
                        f"{what}; give the IDs as strings spelled as you mean them")


def id_texts(values, column: str, ints: IntIds):
    """``values`` with every integer (not bool) replaced by its decimal text; a collision that makes is refused.

    A polars string column, or a list that is one (built in one call: the
    usual all-strings case), comes back as that column; any other list is
    scanned here and comes back as a list for ``interop``'s checks.
    """
    if isinstance(values, pl.Series) and values.dtype == pl.String and not values.null_count():
        return values
    values = values.to_list() if isinstance(values, pl.Series) else values
    strings = _string_column(values)
    if strings is not None:
        return strings
    texts = {str(int(v)) for v in values if isinstance(v, numbers.Integral) and not isinstance(v, bool)}
    if not texts:
        return values
    for v in set(v for v in values if isinstance(v, str)):
        if _INTEGER_TEXT.fullmatch(v) and str(int(v)) in texts:
            raise collision(column, int(v), v, "the same input")
    ints.texts.setdefault(column, set()).update(texts)
    return [str(int(v)) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else v for v in values]


def columns_of(obj: Any, value_column: str, ints: IntIds, need_iteration: bool = False) -> tuple[Any, Any, Any, Any]:
    """Query IDs and document IDs (as ``id_texts`` gives them), values and iterations (or None) of any
    supported in-memory shape; the integer IDs met are recorded in ``ints``.  ``need_iteration``: every item
    must carry its iteration (a diversity qrels' subtopic), none is filled in."""
    nested = _nested(obj)
    if nested is not None:
        return _from_nested(nested, ints) + (None,)
    if hasattr(obj, "columns") and hasattr(obj, "__getitem__"):
        names = list(obj.columns)
        has_it = value_column == "relevance" and "iteration" in names
        q, d, v, *it = _frame_columns(obj, ("query_id", "doc_id", value_column) + (("iteration",) if has_it else ()))
        return id_texts(q, "query IDs", ints), id_texts(d, "document IDs", ints), v, it[0] if has_it else None
    if hasattr(obj, "qrels_iter") and value_column == "relevance":
        obj = obj.qrels_iter()  # an ir_datasets dataset
    if isinstance(obj, (str, bytes)) or not isinstance(obj, Iterable):
        raise UsageError("E_USAGE", f"cannot read {type(obj).__name__} as {'qrels' if value_column == 'relevance' else 'a run'}")
    rows = [tuple(r) for r in obj]
    if any(len(r) < 3 for r in rows):
        raise UsageError("E_USAGE", f"each item must be (query_id, doc_id, {value_column}, ...)")
    if need_iteration and any(len(r) < 4 for r in rows):
        raise UsageError("E_USAGE", "a diversity qrels needs each item's subtopic: (query_id, doc_id, relevance, "
                         "iteration)")
    its = [r[3] if len(r) > 3 else "0" for r in rows] if value_column == "relevance" else None
    return (id_texts([r[0] for r in rows], "query IDs", ints), id_texts([r[1] for r in rows], "document IDs", ints),
            [r[2] for r in rows], its)


def _nested(obj: Any) -> Mapping | None:
    """The ``{qid: {docid: value}}`` mapping ``obj`` is (a ranx Qrels / Run through its ``to_dict``), or None."""
    if type(obj).__module__.split(".")[0] == "ranx":
        obj = obj.to_dict()
    return obj if isinstance(obj, Mapping) else None


def _frame_columns(df: Any, names: tuple[str, ...]) -> list:
    """A pandas or polars DataFrame's columns: polars string columns and float score columns as they are, no
    Python list (``interop`` takes float arrays and string columns whole); the rest as lists (a float ID column is
    then refused, never cast to text)."""
    from .interop import _columns

    if isinstance(df, pl.DataFrame):
        _columns(df.head(0), names)  # the missing-column message
        return [df.get_column(c) if df.schema[c] == pl.String else
                df.get_column(c).to_numpy() if c == "score" and df.schema[c] in (pl.Float64, pl.Float32)
                and not df.get_column(c).null_count() else  # a null would be NaN in the array, and named so
                df.get_column(c).to_list() for c in names]
    if type(df).__module__.split(".")[0] == "pandas":
        _columns(df.head(0), names)
        return [_pandas_column(df[c], numbers=c == "score") for c in names]
    return _columns(df, names)


def _pandas_column(column: Any, numbers: bool):
    """A pandas column as ``interop`` takes it: a score column's numbers (``numbers``) as their array, text as
    a list made from its array of Python objects (several times cheaper than ``Series.to_list`` of a string
    column), the rest as a list (integer IDs go through ``id_texts``, never a cast)."""
    kind = column.dtype.kind
    if numbers and kind in "fiu" and column.dtype.name == column.to_numpy().dtype.name:  # numpy's, not Int64
        return column.to_numpy()
    arrow = _arrow_strings(column)
    if arrow is not None:
        return arrow
    if kind == "O" or column.dtype.name in ("str", "string"):
        values = column.to_numpy()
        if values.dtype.kind == "O":
            return values.tolist()
    return column.to_list()


def _arrow_strings(column: Any) -> pl.Series | None:
    """A pandas text column stored in Arrow (pandas 3's ``str`` where pyarrow is installed, ``string[pyarrow]``)
    as a polars string column, taken from its Arrow array (about 1 ms for 200,000 IDs; making a Python object
    of each row cost 0.1 s); None for any other column, and for one with a missing value (read as objects, so
    the message names what pandas holds there)."""
    if getattr(column.dtype, "storage", None) != "pyarrow" or column.dtype.name not in ("str", "string") \
            or column.hasnans:
        return None
    import pyarrow as pa

    return pl.from_arrow(pa.array(column.array))


def _from_nested(obj: Mapping, ints: IntIds) -> tuple[Any, Any, list]:
    """pytrec_eval's ``{qid: {docid: value}}`` as columns, the query column repeated from the keys."""
    keys, lengths, d, v = _nested_blocks(obj, ints)
    if isinstance(keys, pl.Series):
        q = keys.gather(np.repeat(np.arange(len(lengths)), lengths))
    else:
        q = [k for k, n in zip(keys, lengths.tolist()) for _ in range(n)]
    return q, d, v


def _nested_blocks(obj: Mapping, ints: IntIds) -> tuple[Any, np.ndarray, Any, list]:
    """pytrec_eval's ``{qid: {docid: value}}`` in one pass extending two lists: the keys (as ``id_texts`` gives
    them), each key's number of documents, the documents and the values (``id_texts`` refuses int keys beside the
    same text, at either level)."""
    keys = id_texts(list(obj), "query IDs", ints)
    d, v, lengths = [], [], []
    for qid, docs in obj.items():
        if not isinstance(docs, Mapping):
            raise UsageError("E_USAGE", f"query {quote(str(qid))}: expected a dict {{doc_id: value}}, got "
                             f"{type(docs).__name__}")
        d.extend(docs)
        v.extend(docs.values())
        lengths.append(len(docs))
    return keys, np.asarray(lengths, dtype=np.int64), id_texts(d, "document IDs", ints), v


def qrels_from_object(obj: Any, subtopics: bool = False) -> tuple[Qrels, IntIds]:
    """``Qrels`` from any supported shape, and the integer IDs it held; ``subtopics``: its iteration column is
    the subtopic (a diversity qrels, which then needs that column)."""
    from .interop import qrels_from_columns

    ints = IntIds()
    q, d, g, its = columns_of(obj, "relevance", ints, need_iteration=subtopics)
    if subtopics and its is None:
        raise UsageError("E_USAGE", "a diversity qrels needs its subtopics: give an iteration column "
                         "(ir_measures' name for it) or (query_id, doc_id, relevance, iteration) items")
    return qrels_from_columns(q, d, g, its, subtopics=subtopics), ints


def run_from_object(obj: Any, run_id: str | None = None) -> tuple[Run, IntIds]:
    """A ``Run`` from any supported shape, ordered by score, ties by document ID as trec_eval does."""
    from .interop import order_grouped_run

    grouped, ints = grouped_run_from_object(obj)
    return order_grouped_run(grouped, run_id=run_id), ints


def grouped_run_from_object(obj: Any) -> tuple[GroupedRows, IntIds]:
    """A run's rows from any supported shape, checked and grouped by query but not yet ordered
    (``interop.grouped_from_columns``), and the integer IDs it held."""
    from .interop import grouped_from_blocks, grouped_from_columns

    ints = IntIds()
    nested = _nested(obj)
    if nested is not None:
        return grouped_from_blocks(*_nested_blocks(nested, ints)), ints
    runs = _query_object_runs(obj)
    if runs is not None:
        d, s = _frame_columns(obj, ("query_id", "doc_id", "score"))[1:]
        grouped = grouped_from_blocks(id_texts(runs[0], "query IDs", ints), runs[1], id_texts(d, "document IDs", ints),
                                      s, unique_pairs=False)
        if grouped is not None:
            return grouped, ints
        ints = IntIds()  # a query's rows apart: grouped from the whole column below (the same checks again)
    q, d, s, _ = columns_of(obj, "score", ints)
    return grouped_from_columns(q, d, s), ints


def _query_object_runs(df: Any) -> tuple[list, np.ndarray] | None:
    """A pandas DataFrame's query column as runs of the very same Python object, when it has far fewer runs than
    rows: (each run's object, its length), or None.

    A frame built from Python data (``pd.DataFrame([(qid, doc, score), ...])``) holds one string object per
    query, repeated; its column of objects is a C array of their addresses, so the runs are found by comparing
    addresses in numpy, and only one object per run is read (converted, tested) instead of every row's.  The
    very same object is the very same value; neighbouring runs of equal values are merged afterwards
    (``interop.grouped_from_blocks``).
    """
    if type(df).__module__.split(".")[0] != "pandas" or "query_id" not in list(df.columns):
        return None
    column = df["query_id"]
    if column.dtype.kind != "O" and column.dtype.name not in ("str", "string") \
            or getattr(column.dtype, "storage", None) == "pyarrow":  # no Python objects to share: read whole
        return None
    values = column.to_numpy()
    step = values.strides[0] // ctypes.sizeof(ctypes.c_size_t) if values.ndim == 1 else 0
    if values.dtype.kind != "O" or len(values) < 64 or step < 1 or values.strides[0] % ctypes.sizeof(ctypes.c_size_t):
        return None
    span = (ctypes.c_size_t * ((len(values) - 1) * step + 1)).from_address(values.ctypes.data)
    addresses = np.ctypeslib.as_array(span)[::step]  # a column of a frame's 2-D block of objects: strided
    starts = np.concatenate([[0], np.flatnonzero(addresses[1:] != addresses[:-1]) + 1])
    if len(starts) * 8 > len(values):  # rows' own objects (as read from a file): nothing to save
        return None
    return values[starts].tolist(), np.diff(np.append(starts, len(values)))
