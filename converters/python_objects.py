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


def check_id_spellings(dataset, qrels_ints: IntIds, run: Run, run_ints: IntIds) -> None:
    """Integer IDs on one side against the other side's string spellings (7 against "007"): E_ID_COLLISION."""
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
    """A pandas or polars DataFrame's columns: polars columns and numeric pandas columns as they are, no Python
    list (``interop`` takes float arrays and string columns whole); the rest as lists."""
    from .interop import _columns

    if isinstance(df, pl.DataFrame):
        _columns(df.head(0), names)  # the missing-column message
        return [df.get_column(c) if df.schema[c] == pl.String else
                df.get_column(c).to_numpy() if df.schema[c] in (pl.Float64, pl.Float32) else df.get_column(c).to_list()
                for c in names]
    if type(df).__module__.split(".")[0] == "pandas":
        _columns(df.head(0), names)
        return [df[c].to_numpy() if df[c].dtype.kind == "f" else df[c].to_list() for c in names]
    return _columns(df, names)


def _from_nested(obj: Mapping, ints: IntIds) -> tuple[Any, Any, list]:
    """pytrec_eval's ``{qid: {docid: value}}``: one pass extending two lists, the query column repeated from the
    keys (``id_texts`` refuses int keys beside the same text, at either level)."""
    keys = id_texts(list(obj), "query IDs", ints)
    d, v, lengths = [], [], []
    for qid, docs in obj.items():
        if not isinstance(docs, Mapping):
            raise UsageError("E_USAGE", f"query {quote(str(qid))}: expected a dict {{doc_id: value}}, got "
                             f"{type(docs).__name__}")
        d.extend(docs)
        v.extend(docs.values())
        lengths.append(len(docs))
    if isinstance(keys, pl.Series):
        q = keys.gather(np.repeat(np.arange(len(lengths)), lengths))
    else:
        q = [k for k, n in zip(keys, lengths) for _ in range(n)]
    return q, id_texts(d, "document IDs", ints), v


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
    from .interop import run_from_columns

    ints = IntIds()
    nested = _nested(obj)
    q, d, s, _ = columns_of(obj if nested is None else nested, "score", ints)
    # a dict cannot repeat a key: a document twice in a query would have been refused as 7 beside "7" (id_texts)
    return run_from_columns(q, d, s, run_id=run_id, unique_pairs=nested is not None), ints
