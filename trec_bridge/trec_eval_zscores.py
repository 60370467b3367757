"""trec_eval 9.0.4's ``-Z FILE``: every per-query value expressed in standard deviations from a reference mean.

The file holds ``qid measure mean stddev`` a line (get_zscores.c), the
measure named as trec_eval prints it (``P_10``, ``iprec_at_recall_0.00``,
``gm_map``).  Each query's values are converted before they are summed into
the summary (trec_eval.c), as convert_zscores.c does:

* ``(value - mean) / stddev``; with a stddev of 0, 0 when the value is the
  mean and MISSING (-1000000) otherwise;
* MISSING for a measure the file has no line for, and for every value of a
  query it does not list.

The lookups are convert_zscores.c's two binary searches, kept step for step:
their upper bound is one past the table, so a name above all of a query's
measures is compared with the first measure of the next query in the file's
sorted order, and takes that line's figures when the names are equal.  Past
the last query trec_eval reads memory that is not its table; that is taken
here as not found.  The numbers are read as C's ``atof`` reads them (the
longest number at the start of the field, 0 when there is none).

A ``nan`` in the file (trec_eval's own test file has one for set_F) makes
the values it touches NaN, printed as glibc prints them (``c_fixed``).  What
trec_eval would print by choices C leaves open is refused rather than
guessed: an infinite or negative-NaN figure (the sign of the NaN a sum of
two NaNs gives is the compiler's operand order), and two lines for one query
and measure (``qsort`` is not stable; the binary was seen to crash on it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import InvalidInput
from .measures.trec_names import atof
from .messages import quote

MISSING = -1000000.0  # trec_eval.h MISSING_ZSCORE_VALUE


def c_fixed(value: float) -> str:
    """``printf("%6.4f", value)`` as glibc prints it: Python's format, except a NaN keeps its sign (``-nan``)."""
    if math.isnan(value):
        return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    return f"{value:6.4f}"


@dataclass(frozen=True)
class ZScores:
    """The file's lines sorted by (query, measure) as bytes, strcmp's order: one table, one slice per query."""

    qids: tuple[bytes, ...]  # each query once, sorted
    starts: tuple[int, ...]  # where each query's lines start in ``measures``
    measures: tuple[bytes, ...]
    figures: tuple[tuple[float, float], ...]  # (mean, stddev) of each line

    def convert(self, qid: str, name: str, value: float) -> float:
        """``value`` of measure ``name`` on query ``qid`` as trec_eval's -Z prints it."""
        q = _search(self.qids, qid.encode("utf-8"), len(self.qids), lambda i: None)
        if q is None:
            return MISSING
        start = self.starts[q]
        end = self.starts[q + 1] if q + 1 < len(self.starts) else len(self.measures)
        line = _search(self.measures[start:end], name.encode("utf-8"), end - start,
                       lambda i: self.measures[start + i] if start + i < len(self.measures) else None)
        if line is None:
            return MISSING
        mean, stddev = self.figures[start + line]
        if stddev:
            return (value - mean) / stddev
        return 0.0 if value == mean else MISSING


def _text(field: bytes) -> str:
    return quote(field.decode("utf-8", "replace"))


def _search(keys, key: bytes, n: int, past_end) -> int | None:
    """convert_zscores.c's find_qid / find_meas: a binary search whose upper bound is ``n``, one past the table
    (``past_end(n)``: what stands there, None where trec_eval reads outside its data)."""
    start, end = 0, n
    while start <= end:
        current = (start + end) // 2
        here = keys[current] if current < n else past_end(current)
        if here is None:
            return None
        if key < here:
            end = current - 1
        elif key > here:
            start = current + 1
        else:
            return current
    return None


def read_zscores(path: str) -> ZScores:
    """The -Z file, read as get_zscores.c reads it; a line it calls malformed, or what it would read in an
    unspecified order, is refused (E_ZSCORES)."""
    from .files import read_input_bytes

    data = read_input_bytes(path)
    if not data:
        raise InvalidInput("E_FILE_EMPTY", "the z-scores file is empty (trec_eval: \"Cannot read zscores file\")",
                           file=path)
    if b"\x00" in data:
        raise InvalidInput("E_NUL_BYTE", "the z-scores file contains a NUL byte", file=path)
    lines = data[:-1].split(b"\n") if data.endswith(b"\n") else data.split(b"\n")
    rows = []
    for number, text in enumerate(lines, start=1):
        fields = text.split()  # bytes.split(): runs of " \t\n\v\f\r", isspace in the C locale
        if len(fields) != 4:
            raise InvalidInput("E_ZSCORES", "not 'qid measure mean stddev' (trec_eval: \"Malformed line\")",
                               file=path, line=number)
        qid, measure, mean, stddev = fields
        figures = (atof(mean.decode("latin-1")), atof(stddev.decode("latin-1")))
        if any(math.isinf(x) or (math.isnan(x) and math.copysign(1.0, x) < 0) for x in figures):
            raise InvalidInput("E_ZSCORES", f"{_text(mean)} {_text(stddev)}: an infinite or negative-NaN figure, whose "
                               "result's NaN sign C's arithmetic leaves to the compiler; trec-bridge does not guess it "
                               "(a plain nan is read)", file=path, line=number)
        rows.append((qid, measure, figures, number))
    rows.sort(key=lambda r: (r[0], r[1]))
    for a, b in zip(rows, rows[1:]):
        if a[:2] == b[:2]:
            raise InvalidInput("E_ZSCORES", f"query {_text(a[0])} has two lines for {_text(a[1])} (lines {a[3]} and "
                               f"{b[3]}): trec_eval takes either, in an order C leaves open (or crashes); keep one",
                               file=path, line=max(a[3], b[3]))
    qids, starts = [], []
    for i, row in enumerate(rows):
        if not qids or qids[-1] != row[0]:
            qids.append(row[0])
            starts.append(i)
    return ZScores(tuple(qids), tuple(starts), tuple(r[1] for r in rows), tuple(r[2] for r in rows))

