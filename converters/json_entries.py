"""Ranking entries in the canonical layout read as two columns, proven canonical byte for byte.

trec-bridge writes every scored entry as ``{"doc_id": "ID", "score": NUM}``
and joins them with ", ".  A run of such lists, each query's gap (its key,
brackets, line end) overwritten by filler, is split by polars' CSV reader at
``}`` (lines) and spaces (fields): every line is then
``F {"doc_id": "ID", "score": NUM`` with F ``,`` (or filler, for a query's
first entry), and only the third and fifth fields are built as columns.
Measured on W1 (issue 22): a third of the CPU time of reading all seven
``"``-separated fields as strings and checking them.

What is not built is proven by counting, on the bytes polars read:

* a line has at least five fields (the fifth is never null) and the spaces
  number exactly four a line (a filler ends in the first one): so exactly
  five fields (polars silently drops a later line's extra fields);
* ``}, {"doc_id": "`` occurs once for every line but a query's first (whose
  start is checked per query): fields one and two are the constants;
* ``", "score": `` occurs once a line; it can stand nowhere but after the
  third field (IDs hold no space, the second field is ``{"doc_id":``), so the
  fourth field is the constant and the third ends with ``",``;
* the quotes number exactly six a line, so no ID holds a quote;
* no backslash, no control character, no DEL anywhere; a block with other
  than ASCII checks its IDs against the ID pattern;
* ``}`` counted per query gives its entries, and the lines total them.

The number is the JSON grammar (a regex on its text) read by polars (both
correctly rounded, as Python's ``float``); ``-0`` (the integer 0 for the exact
reader), integers beyond int64 and non-finite values are left to the exact
path.  Anything off returns None and the caller decodes those queries
another way; no error is ever reported from here.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from . import strict_json as sj

FIELDS = {f"f{i}": pl.String for i in range(5)}
FIRST = b'{"doc_id": "'
NEXT = b'}, {"doc_id": "'
MIDDLE = b'", "score": '
FILL = b";"
NUMBER = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$"
INT64_LIMIT = 2.0 ** 63
Columns = tuple[np.ndarray, pl.Series, pl.Series]


def canonical_entries(buf: bytearray, bodies: list[tuple[int, int]]) -> Columns | None:
    """(entries per query, doc IDs, scores) of the rankings whose bodies (the bytes strictly inside each
    ``[...]``, in order, none empty) lie in ``buf``; None when they are not all in the canonical layout.

    The bytes between bodies (and before the first) are overwritten; the bodies are left as they were.
    """
    if not bodies:
        return np.zeros(0, dtype=np.int64), _empty("doc_id", pl.String), _empty("score", pl.Float64)
    counts = _fill_gaps(buf, bodies)
    if counts is None:
        return None
    region = bytes(memoryview(buf)[:bodies[-1][1]])
    rows = int(counts.sum())
    if not _bytes_vouch(region, rows, len(bodies)):
        return None
    try:
        fields = pl.read_csv(region, has_header=False, separator=" ", eol_char="}", quote_char=None, schema=FIELDS,
                             columns=[2, 4])
    except Exception:  # noqa: BLE001 - a ragged first line, bad UTF-8: not the canonical shape
        return None
    if fields.height != rows:
        return None
    ids = _ids(fields.get_column("f2"), region.isascii())
    scores = _scores(fields.get_column("f4"))
    if ids is None or scores is None:
        return None
    return counts, ids, scores


def _empty(name: str, dtype) -> pl.Series:
    return pl.Series(name, [], dtype=dtype)


def _fill_gaps(buf: bytearray, bodies: list[tuple[int, int]]) -> np.ndarray | None:
    """Each body's entry count (its ``}``), after checking how it starts and ends and filling the gap before it
    with ``;;; `` (a first field that is neither ``,`` nor a space); None when a body is not canonical there."""
    counts = np.empty(len(bodies), dtype=np.int64)
    at = 0
    for i, (start, end) in enumerate(bodies):
        if start - at < 2 or not buf.startswith(FIRST, start) or buf[end - 1] != 0x7D:
            return None
        buf[at:start - 1] = FILL * (start - 1 - at)
        buf[start - 1] = 0x20
        counts[i] = buf.count(b"}", start, end)
        at = end
    return counts


def _bytes_vouch(region: bytes, rows: int, queries: int) -> bool:
    """The counts that prove every line is ``F {"doc_id": "ID", "score": NUM`` (module docstring)."""
    if region.find(b"\\") >= 0 or region.find(b"\x7f") >= 0:
        return False
    if (np.frombuffer(region, dtype=np.uint8) < 0x20).any():
        return False
    return (region.count(NEXT) == rows - queries and region.count(MIDDLE) == rows
            and region.count(b'"') == 6 * rows and region.count(b" ") == 4 * rows)


def _ids(quoted: pl.Series, ascii_only: bool) -> pl.Series | None:
    """The IDs out of ``"ID",``; None for an empty one, or (outside ASCII) one the ID pattern refuses."""
    lengths = quoted.str.len_bytes()
    if quoted.null_count() or not (lengths > 3).all():
        return None
    ids = quoted.str.strip_prefix('"').str.strip_suffix('",').alias("doc_id")  # both are there (module docstring)
    if not ascii_only and ids.str.contains(sj.ID_BAD_CHARS).any():
        return None
    return ids


def _scores(numbers: pl.Series) -> pl.Series | None:
    """The numbers as the exact reader reads them; None for what it reads otherwise or refuses."""
    if numbers.null_count() or not numbers.str.contains(NUMBER).all() or (numbers == "-0").any():
        return None
    scores = numbers.cast(pl.Float64, strict=False).alias("score")
    if scores.null_count() or not (scores.abs() < INT64_LIMIT).all():  # beyond int64 or inf: the exact reader
        return None
    return scores
