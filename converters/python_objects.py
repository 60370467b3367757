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

from trec_bridge.errors import InvalidInput, UsageError
from trec_bridge.messages import quote
from trec_bridge.model import Qrels, Run

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


def collision(column: str, number: int, text: str, other: str) -> InvalidInput:
    if text == str(number):
        what = f"and {other} also holds the string {quote(text)}: two distinct keys would become one ID"
    else:
        what = f"and {other} holds the string {quote(text)}, a different ID for the same number"
    return InvalidInput("E_ID_COLLISION", f"{column}: the integer {number} is read as the text {quote(str(number))}, "
                        f"{what}; give the IDs as strings spelled as you mean them")


def id_texts(values: list, column: str, ints: IntIds) -> list:
    """``values`` with every integer (not bool) replaced by its decimal text; a collision that makes is refused."""
    if set(map(type, values)) <= {str}:
        return values  # the common case, without an isinstance per value
    texts = {str(int(v)) for v in values if isinstance(v, numbers.Integral) and not isinstance(v, bool)}
    if not texts:
        return values
    for v in set(v for v in values if isinstance(v, str)):
        if _INTEGER_TEXT.fullmatch(v) and str(int(v)) in texts:
            raise collision(column, int(v), v, "the same input")
    ints.texts.setdefault(column, set()).update(texts)
    return [str(int(v)) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else v for v in values]


def columns_of(obj: Any, value_column: str) -> tuple[list, list, list, list | None]:
    """Query IDs, document IDs, values and iterations (or None) of any supported in-memory shape."""
    if type(obj).__module__.split(".")[0] == "ranx":
        obj = obj.to_dict()  # ranx Qrels / Run: {qid: {docid: value}}
    if isinstance(obj, Mapping):
        return _from_nested(obj) + (None,)
    if hasattr(obj, "columns") and hasattr(obj, "__getitem__"):
        from .interop import _columns

        names = list(obj.columns)
        has_it = value_column == "relevance" and "iteration" in names
        cols = _columns(obj, ("query_id", "doc_id", value_column) + (("iteration",) if has_it else ()))
        return cols[0], cols[1], cols[2], cols[3] if has_it else None
    if hasattr(obj, "qrels_iter") and value_column == "relevance":
        obj = obj.qrels_iter()  # an ir_datasets dataset
    if isinstance(obj, (str, bytes)) or not isinstance(obj, Iterable):
        raise UsageError("E_USAGE", f"cannot read {type(obj).__name__} as {'qrels' if value_column == 'relevance' else 'a run'}")
    rows = [tuple(r) for r in obj]
    if any(len(r) < 3 for r in rows):
        raise UsageError("E_USAGE", f"each item must be (query_id, doc_id, {value_column}, ...)")
    its = [r[3] if len(r) > 3 else "0" for r in rows] if value_column == "relevance" else None
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], its


def _from_nested(obj: Mapping) -> tuple[list, list, list]:
    """pytrec_eval's ``{qid: {docid: value}}``; int keys and "7" at one level are refused by ``id_texts``."""
    q, d, v = [], [], []
    id_texts(list(obj), "query IDs", IntIds())  # 7 and "7" as two keys of one dict
    for qid, docs in obj.items():
        if not isinstance(docs, Mapping):
            raise UsageError("E_USAGE", f"query {quote(str(qid))}: expected a dict {{doc_id: value}}, got "
                             f"{type(docs).__name__}")
        id_texts(list(docs), "document IDs", IntIds())
        q.extend([qid] * len(docs))
        d.extend(docs.keys())
        v.extend(docs.values())
    return q, d, v


def qrels_from_object(obj: Any) -> tuple[Qrels, IntIds]:
    """``Qrels`` from any supported shape, and the integer IDs it held."""
    from .interop import qrels_from_columns

    q, d, g, its = columns_of(obj, "relevance")
    ints = IntIds()
    return qrels_from_columns(id_texts(q, "query IDs", ints), id_texts(d, "document IDs", ints), g, its), ints


def run_from_object(obj: Any, run_id: str | None = None) -> tuple[Run, IntIds]:
    """A ``Run`` from any supported shape, ordered by score, ties by document ID as trec_eval does."""
    from .interop import run_from_columns

    q, d, s, _ = columns_of(obj, "score")
    ints = IntIds()
    return run_from_columns(id_texts(q, "query IDs", ints), id_texts(d, "document IDs", ints), s, run_id=run_id), ints
