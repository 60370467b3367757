"""Small TREC qrels and runs of plain bytes, read without polars: the small-input path of ``score``.

``trec_qrels.read_trec_qrels`` and ``trec_run.read_trec_run`` (polars) are
the readers.  This module never decides anything they would decide: it takes
only files they accept without a word and returns None for any other, so
that the caller hands the file to them and every error, note and line number
stays theirs.  Plain means a regular file, not gzip, not named as Parquet or
Arrow, no sidecar beside a run, at most ``limit`` bytes; only printable ASCII,
one space or one tab between fields (the readers split on any run of blanks),
LF line ends, the format's number of fields on every line, no blank line and
no leading brace (a JSON document); no field
longer than ``MAX_FIELD``; numbers that both readers read alike (no
underscore in a number: then ``float()`` accepts a token exactly where
``SCORE_PATTERN`` does or reads inf or nan, and gives polars' double, and
``int()`` accepts one exactly where ``INTEGER_PATTERN`` does); every score
finite, every grade in grades.py's range, no (query, document) twice, and a
run's lines of each query together.  What the readers make of such bytes is
then what this makes: the same columns, and the run in the reader's order
(``ordering.score_permutation``: score descending, ties by document ID
descending).  ``tests/test_small_inputs.py`` holds the two to the same
results.

The columns are cut from the bytes with numpy (each line's spaces give its
fields), as arrays of fixed-width bytes: ASCII without NUL, so numpy's
padding changes neither equality nor byte order, and only the columns used
become Python objects.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from trec_bridge import memory_guard
from trec_bridge.files import GZIP_MAGIC
from trec_bridge.grades import first_out_of_range
from trec_bridge.model import Dataset, Qrels, Query
from trec_bridge.ordering import score_permutation

from .columnar_paths import columnar_kind
from .sidecar import SUFFIX as SIDECAR_SUFFIX

_HEAD = 4096  # what memory_guard sniffs, as files.read_input_bytes hands it
_UNJUDGED = -(1 << 62)  # no grade (grades.py's range lies far inside int64)
MAX_FIELD = 256  # bytes of one field; a longer one is left to the readers (a column is lines x this)


def plain_bytes(path, limit: int) -> bytes | None:
    """The file's bytes when it is a regular, uncompressed file of at most ``limit`` bytes that the readers take
    as TREC text; None otherwise.  Raises memory_guard's E_TOO_LARGE where the readers would."""
    if columnar_kind(path) is not None:
        return None
    try:
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                return None
            head = fh.read(_HEAD)
            if head[:2] == GZIP_MAGIC:
                return None
            memory_guard.check_input(str(path), info.st_size, head)
            if memory_guard.close_to_a_limit(memory_guard.estimate(info.st_size, memory_guard.sniff(head))):
                return None  # the full readers, with polars loaded, might refuse it
            return head + fh.read()
    except OSError:
        return None


def plain_columns(raw: bytes, fields: int, wanted: tuple[int, ...]) -> list[np.ndarray] | None:
    """Columns ``wanted`` (field numbers from 0) of ``raw``, each an array of fixed-width bytes (one per line),
    when ``raw`` is plain with ``fields`` fields a line (see the module); else None."""
    if not raw or not raw.isascii() or b"\x7f" in raw or raw[:1] == b"{":
        return None
    data = np.frombuffer(raw, dtype=np.uint8)
    separator = data <= 32
    spaces, ends = np.flatnonzero((data == 32) | (data == 9)), np.flatnonzero(data == 10)
    if np.count_nonzero(separator) != len(spaces) + len(ends):  # a control byte other than tab and LF (a CR, ...)
        return None
    if separator[0] or data[-1] in (9, 32) or (separator[1:] & separator[:-1]).any():  # an empty field, a blank line
        return None
    if data[-1] != 10:
        ends = np.append(ends, len(raw))
    if len(spaces) != (fields - 1) * len(ends):
        return None
    spaces = spaces.reshape(len(ends), fields - 1)  # each line's spaces, if every line holds its share
    if (spaces[:, -1] > ends).any() or (spaces[1:, 0] < ends[:-1]).any():
        return None
    padded = np.concatenate([data, np.zeros(MAX_FIELD, dtype=np.uint8)])  # a window may run past the last byte
    columns = [_cut(padded, *_field_bounds(spaces, ends, k)) for k in wanted]
    return None if any(c is None for c in columns) else columns


def _field_bounds(spaces: np.ndarray, ends: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Field ``k``'s first byte and one past its last on every line (each line's spaces, its end)."""
    first = np.concatenate(([0], ends[:-1] + 1)) if k == 0 else spaces[:, k - 1] + 1
    last = ends if k == spaces.shape[1] else np.ascontiguousarray(spaces[:, k])
    return first, last


def _cut(padded: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray | None:
    """The bytes padded[first[i]:last[i]] of every line i, as one array of fixed-width bytes (NUL-padded):
    each line's window of the widest field's width copied whole, then the bytes past its own field zeroed."""
    length = last - first
    width = int(length.max())
    if width > MAX_FIELD:
        return None
    cells = sliding_window_view(padded, width)[first]  # a copy, one row a line
    cells *= np.arange(width) < length[:, None]
    return cells.view(f"S{width}").ravel()


def _numbers(column: np.ndarray, kind: type, dtype) -> np.ndarray | None:
    """Each token read by ``kind`` (int or float), or None when one does not read as one (see the module).

    numpy casts fixed-width bytes to float64 by calling ``float`` on each (it reads ``1_0`` as float() does),
    without a list of Python bytes first (a fifth less time on W2's run); integers are read by ``int`` itself."""
    if b"_" in column.tobytes():  # int() and float() read 1_000, the readers' patterns do not
        return None
    try:
        if kind is float:
            return column.astype(np.float64)
        return np.fromiter(map(kind, column.tolist()), dtype, len(column))
    except (ValueError, OverflowError):
        return None


def _blocks(query: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Where each run of equal query IDs starts, and that ID as text."""
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    return starts, [q.decode("ascii") for q in query[starts].tolist()]


class PlainQrels(Qrels):
    """Judgments read by ``read_plain_qrels``: each query's {document: grade} (document IDs as bytes, as the plain
    run holds them), each judgment's query, and ``frame`` (what ``read_trec_qrels``
    returns) made only when something asks for it: a report's protocol fingerprint, an adapter's gain check."""

    def __init__(self, raw: bytes, judged: dict[str, dict[bytes, int]], qidx: np.ndarray,
                 grade: np.ndarray, source: str):
        self.raw, self.judged, self.source = raw, judged, source
        self.qidx, self.grade = qidx, grade  # per judgment, in file order: its query's place in ``query_ids()``

    @cached_property
    def frame(self):
        import polars as pl

        from trec_bridge.model import QRELS_SCHEMA

        text = self.raw.decode("ascii").split()
        return pl.DataFrame({"query_id": text[0::4], "iteration": text[1::4], "doc_id": text[2::4],
                             "grade": self.grade}, schema=QRELS_SCHEMA)

    def query_ids(self) -> list[str]:
        return list(self.judged)


def read_plain_qrels(path, limit: int) -> PlainQrels | None:
    """TREC qrels as ``read_trec_qrels`` reads them, or None when the file is not plain (or judges a document twice
    for a query).  The judgments are grouped by query (first appearance first, file order inside)."""
    raw = plain_bytes(path, limit)
    columns = None if raw is None else plain_columns(raw, 4, (0, 2, 3))
    grade = None if columns is None else _numbers(columns[2], int, np.int64)
    if grade is None or first_out_of_range([int(grade.min()), int(grade.max())]) is not None:
        return None
    query, doc = columns[0], columns[1]
    starts, names = _blocks(query)
    if len(set(names)) != len(names):  # a query's lines apart: gathered (a stable sort by first appearance)
        first: dict[str, int] = {}
        for name in names:
            first.setdefault(name, len(first))
        line = np.argsort(np.repeat([first[n] for n in names], np.diff(np.r_[starts, len(doc)])), kind="stable")
        query, doc, grade = query[line], doc[line], grade[line]
        starts, names = _blocks(query)
    bounds, grades, judged = [*starts.tolist(), len(doc)], grade.tolist(), {}
    for name, a, b in zip(names, bounds, bounds[1:]):
        judged[name] = dict(zip(doc[a:b].tolist(), grades[a:b]))
        if len(judged[name]) != b - a:  # a (query, document) judged twice
            return None
    return PlainQrels(raw, judged, np.repeat(np.arange(len(names)), np.diff(bounds)), grade, str(path))


def plain_dataset(qrels: PlainQrels) -> Dataset:
    """The dataset ``detect.load_dataset_any`` makes of TREC qrels without a query file or threshold."""
    return Dataset(queries=tuple(Query(q) for q in qrels.query_ids()), qrels=qrels, dataset_id=None, threshold=1,
                   completeness="pooled", corpus=None, query_source="qrels", metadata={}, source=qrels.source)


@dataclass
class PlainRun:
    """A run read by ``read_plain_run``: its rows grouped by query (first appearance) in the reader's order."""

    queries: list[str]
    starts: np.ndarray  # int64: each query's first row
    doc: np.ndarray  # each row's document ID, fixed-width bytes (numpy orders them as the readers do)
    score: np.ndarray  # float64 per row
    source: str
    doc_ids: list[bytes]  # ``doc`` as Python bytes, for the judgments' dicts

    def ends(self) -> np.ndarray:
        return np.append(self.starts[1:], len(self.doc))

    def lengths(self) -> np.ndarray:
        return self.ends() - self.starts

    def rows_of(self, query: int, end: int, judged: dict[bytes, int]) -> tuple[np.ndarray, np.ndarray]:
        """The rows of query number ``query`` (its rows end before ``end``) that hold a judged document
        (``PlainQrels.judged``), and their grades (int64)."""
        a = int(self.starts[query])
        grade = np.fromiter(map(judged.get, self.doc_ids[a:end], repeat(_UNJUDGED)), np.int64, end - a)
        found = np.flatnonzero(grade != _UNJUDGED)
        return found + a, grade[found]


def _repeats(starts: np.ndarray, docs: list[bytes]) -> bool:
    """Whether a document appears twice in a query (rows grouped by query from ``starts``): a set per query,
    faster than sorting the IDs, and no np.unique (which imports numpy.ma)."""
    bounds = [*starts.tolist(), len(docs)]
    return any(len(set(docs[a:b])) != b - a for a, b in zip(bounds, bounds[1:]))


def _without_sidecar(path) -> bool:
    """Whether ``path`` surely has no sidecar (``sidecar_path`` names none), told without pathlib: any doubt (a
    stat that fails otherwise than by a missing file) answers False, and the readers decide."""
    try:
        os.stat(str(path) + SIDECAR_SUFFIX)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return False


def read_plain_run(path, limit: int) -> PlainRun | None:
    """A TREC run as ``read_trec_run(path, order="score")`` orders it, or None when the file is not plain (or has
    a sidecar, a document twice in a query, or a query's lines apart)."""
    if not _without_sidecar(path):
        return None
    raw = plain_bytes(path, limit)
    columns = None if raw is None else plain_columns(raw, 6, (0, 2, 4))
    score = None if columns is None else _numbers(columns[2], float, np.float64)
    if score is None or not np.isfinite(score).all():  # inf and nan: the only words float() reads
        return None
    (query, doc, _), n = columns, len(columns[0])
    starts, queries = _blocks(query)
    qidx = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    if len(set(queries)) != len(queries):
        return None  # a query's lines apart
    perm = score_permutation(qidx, score, doc, np.r_[False, qidx[1:] == qidx[:-1]])  # within each query
    if perm is not None:
        doc, score = doc[perm], score[perm]
    doc_ids = doc.tolist()
    if _repeats(starts, doc_ids):
        return None  # a document twice in a query
    return PlainRun(queries, starts, doc, score, str(path), doc_ids)
