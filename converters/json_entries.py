"""Ranking entries in the canonical layout read as two columns, proven canonical byte for byte.

trec-bridge writes every scored entry as ``{"doc_id": "ID", "score": NUM}``
and joins them with ", ".  A block's bodies (the bytes inside each query's
``[...]``) are joined into one region with ", " before the first and between
any two, so that every line of it, split by polars' CSV reader at ``}``
(lines) and spaces (fields), is ``, {"doc_id": "ID", "score": NUM``: the
lists of several queries read as one list, the joints being exactly the
canonical separator.  Only the third and fifth fields are built as columns.
Measured on W1 (issue 22): a third of the CPU time of reading all seven
``"``-separated fields as strings and checking them.

What is not built is proven by counting, on the region polars read:

* the region has as many ``}`` as its bodies (the entries they count);
* the spaces number exactly four a line, and polars found a fifth field on
  every line: so exactly five fields (polars silently drops a later line's
  extra fields);
* ``}, {"doc_id": "`` occurs once for every line but the first (which the
  joint's ", " and the first body's start make one): fields one and two are
  the constants, and the third starts with ``"``;
* ``", "score": `` occurs once a line; it can stand nowhere but after the
  third field (IDs hold no space, the second field is ``{"doc_id":``), so the
  fourth field is the constant and the third ends with ``",``;
* the quotes number exactly six a line, so no ID holds a quote;
* no backslash, no control character, no DEL anywhere; a region with other
  than ASCII checks its IDs against the ID pattern.

The number is the JSON grammar (a regex on its text) read by polars (both
correctly rounded, as Python's ``float``); ``-0`` (the integer 0 for the exact
reader), integers beyond int64 and non-finite values are left to the exact
path.  Anything off returns None and the caller decodes those queries
another way; no error is ever reported from here.  The bodies' buffer is only
read, never written.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl

from . import strict_json as sj
from .char_scan import any_holds

FIELDS = {f"f{i}": pl.String for i in range(5)}
FIRST = b'{"doc_id": "'
NEXT = b'}, {"doc_id": "'
MIDDLE = b'", "score": '
JOINT = b", "
# the JSON grammar, without the lone "-0" (the exact reader's integer 0, not the float -0.0)
NUMBER = (r"^(?:(?:0|-?[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
          r"|-0(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+))$")
INT64_LIMIT = 2.0 ** 63
SPLIT_ROWS = 1 << 17  # entries from which a block is read in two halves at once (W1: 395,000 a block)
_HELPER: ThreadPoolExecutor | None = None
_QUOTE, _SPACE, _CONTROL = 0x22, 0x20, 0x20
Columns = tuple[np.ndarray, pl.Series, pl.Series]


def canonical_entries(buf, bodies: list[tuple[int, int]]) -> Columns | None:
    """(entries per query, doc IDs, scores) of the rankings whose bodies (the bytes strictly inside each
    ``[...]``, in order, none empty) lie in ``buf``; None when they are not all in the canonical layout.

    A large block is read as two halves at a body boundary, the second in a helper thread: the byte counts,
    polars' split and the casts of one half run while the other's hold the interpreter (the two cores;
    bench/README.md, issue 22 round 3).  Each half is proven as the whole would be (every line of either is
    a canonical entry exactly when every line of the whole is), so the verdict is the same."""
    if not bodies:
        return np.zeros(0, dtype=np.int64), _empty("doc_id", pl.String), _empty("score", pl.Float64)
    counts = _entry_counts(buf, bodies)
    if counts is None:
        return None
    cut = _cut(counts)
    if cut is None:
        columns = _columns(buf, bodies, int(counts.sum()))
    else:
        later = _helper().submit(_columns, buf, bodies[cut:], int(counts[cut:].sum()))
        first = _columns(buf, bodies[:cut], int(counts[:cut].sum()))
        second = later.result()
        columns = None if first is None or second is None else (
            pl.concat([first[0], second[0]], rechunk=True), pl.concat([first[1], second[1]], rechunk=True))
    return None if columns is None else (counts, *columns)


def _cut(counts: np.ndarray) -> int | None:
    """The body at which the second half starts (about half the entries before it), or None: too few
    entries to be worth a second thread, or one body alone."""
    total = int(counts.sum())
    if total < SPLIT_ROWS or len(counts) < 2:
        return None
    return min(max(int(np.searchsorted(np.cumsum(counts), total // 2)) + 1, 1), len(counts) - 1)


def _helper() -> ThreadPoolExecutor:
    global _HELPER
    if _HELPER is None:
        _HELPER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trec-bridge-entries")
    return _HELPER


def _columns(buf, bodies: list[tuple[int, int]], rows: int) -> tuple[pl.Series, pl.Series] | None:
    """(doc IDs, scores) of ``rows`` entries in ``bodies``, proven canonical (module docstring); else None."""
    view = memoryview(buf)
    region = JOINT + JOINT.join([view[start:end] for start, end in bodies])
    if not _bytes_vouch(region, rows):
        return None
    try:
        fields = pl.read_csv(region, has_header=False, separator=" ", eol_char="}", quote_char=None, schema=FIELDS,
                             columns=[2, 4])
    except Exception:  # noqa: BLE001 - a ragged line, bad UTF-8: not the canonical shape
        return None
    if fields.height != rows:
        return None
    ids = _ids(fields.get_column("f2"), region.isascii())
    scores = _scores(fields.get_column("f4"))
    if ids is None or scores is None:
        return None
    return ids, scores


def _empty(name: str, dtype) -> pl.Series:
    return pl.Series(name, [], dtype=dtype)


def _entry_counts(buf, bodies: list[tuple[int, int]]) -> np.ndarray | None:
    """Each body's entry count (its ``}``), once it starts as a canonical entry and ends with ``}``; None
    when one does not."""
    counts = np.empty(len(bodies), dtype=np.int64)
    for i, (start, end) in enumerate(bodies):
        if not buf.startswith(FIRST, start) or buf[end - 1] != 0x7D:
            return None
        counts[i] = buf.count(b"}", start, end)
    return counts


def _bytes_vouch(region: bytes, rows: int) -> bool:
    """The counts that prove every line is ``, {"doc_id": "ID", "score": NUM`` (module docstring)."""
    if region.find(b"\\") >= 0 or region.find(b"\x7f") >= 0:
        return False
    octets = np.frombuffer(region, dtype=np.uint8)
    if (octets < _CONTROL).any() or np.count_nonzero(octets == _QUOTE) != 6 * rows \
            or np.count_nonzero(octets == _SPACE) != 4 * rows:
        return False
    return region.count(NEXT) == rows - 1 and region.count(MIDDLE) == rows


def _ids(quoted: pl.Series, ascii_only: bool) -> pl.Series | None:
    """The IDs out of ``"ID",``; None for an empty one, or (outside ASCII) one the ID pattern refuses."""
    if quoted.null_count() or not (quoted.str.len_bytes() > 3).all():
        return None
    ids = quoted.str.head(-2).str.tail(-1).alias("doc_id")  # the quote and '",' are there (module docstring)
    if not ascii_only and any_holds(ids, sj.ID_BAD_CHARS):
        return None
    return ids


def _scores(numbers: pl.Series) -> pl.Series | None:
    """The numbers as the exact reader reads them; None for what it reads otherwise or refuses."""
    if numbers.null_count() or not numbers.str.contains(NUMBER).all():
        return None
    scores = numbers.cast(pl.Float64, strict=False).alias("score")
    if scores.null_count() or not (scores.abs() < INT64_LIMIT).all():  # beyond int64 or inf: the exact reader
        return None
    return scores
