"""IDs held in Python objects and columnar files (a dict, a DataFrame, Parquet, Arrow) obey the files' ID rule.

A JSON document's IDs are non-empty strings without whitespace or control
characters (docs/formats.md, "Rules for both files"), and a TREC file cannot
hold any other ID since it splits its lines on whitespace.  The same IDs given
as Python strings or Parquet columns were taken as they were: ``"q1 "`` was
another query than ``"q1"`` (reported unjudged, its twin missing) and a
document ``"d1 "`` silently never matched its judgment ``"d1"``.  They are
refused here (E_ID_TEXT), after the invisible characters (E_ID_INVISIBLE,
converters/invisible.py), which keep their own code as in every other input.

The usual column, printable ASCII alone, is told in one pass (char_scan.py).
"""
from __future__ import annotations

from typing import Callable

import polars as pl

from trec_bridge.errors import InvalidInput
from trec_bridge.messages import quote

from . import invisible
from .char_scan import printable_ascii

# Characters no ID may contain: whitespace in Python's, ECMAScript's and Unicode's sense (TREC files are split on
# it) and control characters.  Same class as $defs/id in the shipped schemas (strict_json.py takes it from here).
# The invisible characters of converters/invisible.py (zero-width, bidi controls, U+FEFF) are in the class too,
# so the schema refuses them; the loaders report those with their own code, E_ID_INVISIBLE.
ID_BAD_CHARS = (r"[\u0000-\u0020\u007f-\u00a0\u061c\u1680\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u2069"
                r"\u3000\ufeff]")


def refuse_in_column(col: pl.Series, what: str, where: Callable[[int], dict] = lambda i: {}) -> None:
    """E_ID_INVISIBLE, then E_ID_TEXT, for the first ID of the string column ``col`` that breaks the rule."""
    if printable_ascii(col) and not col.is_empty() and col.str.len_bytes().min() > 0:
        return
    invisible.refuse_in_column(col, what, where)
    bad = (col.str.len_bytes() == 0) | col.str.contains(ID_BAD_CHARS)
    if bad.any():
        i = int(bad.arg_true()[0])
        raise error(col[i], what, **where(i))


def error(value: str, what: str, **where) -> InvalidInput:
    why = "is empty" if value == "" else "holds whitespace or a control character"
    return InvalidInput("E_ID_TEXT", f"{what}: {quote(value)} {why}; an ID is a non-empty string without whitespace "
                        "or control characters, as in JSON and TREC files (\"q1 \" would be another ID than \"q1\")",
                        **where)
