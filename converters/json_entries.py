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

What is not built is proven on the region polars read.  The lengths of
the two fields polars built (the witnesses) say where each line must start
and end if it is canonical, and the bytes are checked there:

* every line starts with ``, {"doc_id": "`` (14 bytes, compared as two
  8-byte words at the line's start);
* ``", "score": `` (12 bytes, two words) stands where the third field ends,
  at least one byte after the 14, and the line's ``}`` one byte or more
  after it, where the fifth field ends; the next line starts after that
  ``}`` and the last ``}`` is the region's last byte;
* the region has as many ``}`` as those lines (its bodies' ``}``, counted
  before), so none inside a line;
* the constants put four spaces and six quotes in every line, and the region
  holds exactly four spaces and six quotes a line: so none in the ID or the
  number, the line is exactly ``, {"doc_id": "ID", "score": NUM`` and
  polars' third and fifth fields are ``"ID",`` and the number;
* no backslash, no control character, no DEL anywhere; a region with other
  than ASCII checks its IDs against the ID pattern.

(The two constants were counted with ``bytes.count`` before, CPython's
two-way search over the whole region: 15 of a block's 80 CPU-ms.)

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
MIDDLE = b'", "score": '
JOINT = b", "
# the JSON grammar, without the lone "-0" (the exact reader's integer 0, not the float -0.0)
NUMBER = (r"^(?:(?:0|-?[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
          r"|-0(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+))$")
INT64_LIMIT = 2.0 ** 63
SPLIT_ROWS = 1 << 17  # entries from which a block is read in two halves at once (W1: 395,000 a block)
_HELPER: ThreadPoolExecutor | None = None
_QUOTE, _SPACE, _CONTROL, _CLOSE = 0x22, 0x20, 0x20, 0x7D
LINE_START = JOINT + FIRST  # every line of the region starts so: ', {"doc_id": "'


def _words(text: bytes) -> tuple[np.uint64, np.uint64]:
    """The first and the last 8 bytes of ``text`` (9 to 16 bytes) as little-endian words."""
    return np.frombuffer(text[:8], dtype="<u8")[0], np.frombuffer(text[-8:], dtype="<u8")[0]


_LINE_WORDS, _MIDDLE_WORDS = _words(LINE_START), _words(MIDDLE)
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
    """(doc IDs, scores) of the entries in ``bodies``, proven canonical (module docstring); else None.
    ``rows`` is the bodies' count of ``}`` (``_entry_counts``): polars' lines, each ending at one of them,
    must number as many, so no ``}`` stands inside a line."""
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
    quoted, numbers = fields.get_column("f2"), fields.get_column("f4")
    if quoted.null_count() or numbers.null_count() or not _lines_hold(region, quoted.str.len_bytes().to_numpy(),
                                                                      numbers.str.len_bytes().to_numpy()):
        return None
    ids = _ids(quoted, region.isascii())
    scores = _scores(numbers)
    if ids is None or scores is None:
        return None
    return ids, scores


def _empty(name: str, dtype) -> pl.Series:
    return pl.Series(name, [], dtype=dtype)


def _entry_counts(buf, bodies: list[tuple[int, int]]) -> np.ndarray | None:
    """Each body's entry count (its ``}``), once it starts as a canonical entry and ends with ``}``; None
    when one does not.  (numpy's count of one comparison of all the bodies' bytes: half ``bytes.count``'s.)"""
    for start, end in bodies:
        if not buf.startswith(FIRST, start) or buf[end - 1] != _CLOSE:
            return None
    low = bodies[0][0]
    closes = np.frombuffer(buf, dtype=np.uint8, count=bodies[-1][1])[low:] == _CLOSE
    return np.array([np.count_nonzero(closes[start - low:end - low]) for start, end in bodies], dtype=np.int64)


def _lines_hold(region: bytes, third: np.ndarray, fifth: np.ndarray) -> bool:
    """Each line is ``, {"doc_id": "`` + ID + ``", "score": `` + NUM + ``}`` where the byte lengths of polars'
    third and fifth fields (``"ID",`` and NUM) put it, one after the other to the region's end (module
    docstring).  The words are read at any byte offset through a strided view (unaligned 8-byte loads)."""
    third, fifth = third.astype(np.int64), fifth.astype(np.int64)
    if not ((third > 3).all() and (fifth > 0).all()):
        return False
    close = np.cumsum(third + fifth + (len(LINE_START) - 3 + len(MIDDLE) + 1)) - 1  # each line's "}"
    if close[-1] != len(region) - 1:
        return False
    start = close - (third + fifth + (len(LINE_START) - 3 + len(MIDDLE)))
    middle = start + (len(LINE_START) - 3) + third  # '"ID",' ends two bytes into '", "score": '
    octets = np.frombuffer(region, dtype=np.uint8)
    words = np.ndarray((len(region) - 7,), dtype="<u8", buffer=region, strides=(1,))
    return bool((octets[close] == _CLOSE).all()
                and (words[start] == _LINE_WORDS[0]).all() and (words[start + 6] == _LINE_WORDS[1]).all()
                and (words[middle] == _MIDDLE_WORDS[0]).all() and (words[middle + 4] == _MIDDLE_WORDS[1]).all())


def _bytes_vouch(region: bytes, rows: int) -> bool:
    """The counts that, with the lines' constants in place (``_lines_hold``), prove every line is
    ``, {"doc_id": "ID", "score": NUM`` (module docstring)."""
    if region.find(b"\\") >= 0 or region.find(b"\x7f") >= 0:
        return False
    octets = np.frombuffer(region, dtype=np.uint8)
    return not (octets < _CONTROL).any() and np.count_nonzero(octets == _QUOTE) == 6 * rows \
        and np.count_nonzero(octets == _SPACE) == 4 * rows


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
