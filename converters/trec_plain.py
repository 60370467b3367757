"""Small TREC qrels and runs of plain bytes, read in pure Python: the small-input path of ``score``.

``trec_qrels.read_trec_qrels`` and ``trec_run.read_trec_run`` (polars) are
the readers.  This module never decides anything they would decide: it takes
only files they accept without a word and returns None for any other, so
that the caller hands the file to them and every error, note and line number
stays theirs.  Plain means a regular file, not gzip, not named as Parquet or
Arrow, no sidecar beside a run, at most ``limit`` bytes; only printable ASCII,
one space between fields, LF line ends, the format's number of fields on
every line, no blank line and no leading brace (a JSON document); numbers in
the forms both readers read alike (a score: digits, ``+ - . e E``, which
``float()`` accepts exactly where ``SCORE_PATTERN`` does, giving polars'
double; a grade: digits and a sign, ``int()``), every score finite, every
grade in grades.py's range, no (query, document) twice, and a run's lines of
each query together.  What the readers make of such bytes is then what this
makes: the same columns, and the run in the reader's order
(``ordering.score_permutation``: score descending, ties by document ID
descending).  ``tests/test_small_inputs.py`` holds the two to the same
results.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from trec_bridge import memory_guard
from trec_bridge.files import GZIP_MAGIC
from trec_bridge.grades import first_out_of_range
from trec_bridge.model import Dataset, Qrels, Query
from trec_bridge.ordering import score_permutation

from .detect import columnar_kind
from .sidecar import sidecar_path

_HEAD = 4096  # what memory_guard sniffs, as files.read_input_bytes hands it


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
            return head + fh.read()
    except OSError:
        return None


def plain_tokens(raw: bytes, fields: int) -> list[bytes] | None:
    """Every line's ``fields`` tokens, line after line, when ``raw`` is plain (see the module); else None."""
    if not raw or not raw.isascii() or b"\x7f" in raw or raw[:1] == b"{":
        return None
    data = np.frombuffer(raw, dtype=np.uint8)
    separator = data <= 32
    spaces, ends = np.flatnonzero(data == 32), np.flatnonzero(data == 10)
    if np.count_nonzero(separator) != len(spaces) + len(ends):  # a control byte other than LF (a tab, a CR, ...)
        return None
    if separator[0] or data[-1] == 32 or (separator[1:] & separator[:-1]).any():  # an empty field or a blank line
        return None
    if data[-1] != 10:
        ends = np.append(ends, len(raw))
    if len(spaces) != (fields - 1) * len(ends):
        return None
    spaces = spaces.reshape(len(ends), fields - 1)  # each line's spaces, if every line holds its share
    if (spaces[:, -1] > ends).any() or (spaces[1:, 0] < ends[:-1]).any():
        return None
    return raw.split()


def _numbers(tokens: list[bytes], kind: type, dtype) -> np.ndarray | None:
    """The tokens read by ``kind`` (int or float), or None when one does not read as one.

    In a plain file (no letter but e/E among the digits, as the caller checks
    for scores: a non-finite value; no underscore, checked here on the whole
    file) ``float()`` accepts a token exactly where SCORE_PATTERN does and
    ``int()`` exactly where INTEGER_PATTERN does.
    """
    try:
        return np.fromiter(map(kind, tokens), dtype, len(tokens))
    except (ValueError, OverflowError):
        return None


class PlainQrels(Qrels):
    """Judgments read by ``read_plain_qrels``: each query's {document: grade} (document IDs as ASCII bytes, as the
    plain run holds them), each judgment's query, and ``frame`` (what ``read_trec_qrels`` returns) made only when
    something asks for it: a report's protocol fingerprint, an adapter's gain check."""

    def __init__(self, tokens: list[bytes], graded: dict[str, dict[bytes, int]], qidx: np.ndarray,
                 grade: np.ndarray, source: str):
        self.tokens, self.graded, self.source = tokens, graded, source
        self.qidx, self.grade = qidx, grade  # per judgment, in file order: its query's place in ``query_ids()``

    @cached_property
    def frame(self):
        import polars as pl

        from trec_bridge.model import QRELS_SCHEMA

        text = [t.decode("ascii") for t in self.tokens]
        return pl.DataFrame({"query_id": text[0::4], "iteration": text[1::4], "doc_id": text[2::4],
                             "grade": self.grade}, schema=QRELS_SCHEMA)

    def query_ids(self) -> list[str]:
        return list(self.graded)


def read_plain_qrels(path, limit: int) -> PlainQrels | None:
    """TREC qrels as ``read_trec_qrels`` reads them (rows in file order), or None when the file is not plain (or
    judges a document twice for a query)."""
    raw = plain_bytes(path, limit)
    tokens = None if raw is None or b"_" in raw else plain_tokens(raw, 4)
    grade = None if tokens is None else _numbers(tokens[3::4], int, np.int64)
    if grade is None or first_out_of_range([int(grade.min()), int(grade.max())]) is not None:
        return None
    query, doc = np.array(tokens[0::4], dtype=object), tokens[2::4]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    names = [q.decode("ascii") for q in query[starts].tolist()]
    bounds = starts.tolist() + [len(doc)]
    grades = grade.tolist()
    if len(set(names)) == len(names):  # each query's lines together, as usual
        graded = {q: dict(zip(doc[a:b], grades[a:b])) for q, a, b in zip(names, bounds, bounds[1:])}
        qidx = np.repeat(np.arange(len(names)), np.diff(bounds))
    else:  # a query's lines apart: its judgments gathered, queries in order of first appearance
        line_query = np.repeat(np.asarray(names, dtype=object), np.diff(bounds)).tolist()
        graded = {}
        for q, d, g in zip(line_query, doc, grades):
            graded.setdefault(q, {})[d] = g
        place = {q: i for i, q in enumerate(graded)}
        qidx = np.fromiter(map(place.__getitem__, line_query), np.int64, len(doc))
    if sum(map(len, graded.values())) != len(doc):  # a (query, document) judged twice
        return None
    return PlainQrels(tokens, graded, qidx, grade, str(path))


def plain_dataset(qrels: PlainQrels) -> Dataset:
    """The dataset ``detect.load_dataset_any`` makes of TREC qrels without a query file or threshold."""
    return Dataset(queries=tuple(Query(q) for q in qrels.query_ids()), qrels=qrels, dataset_id=None, threshold=1,
                   completeness="pooled", corpus=None, query_source="qrels", metadata={}, source=qrels.source)


@dataclass
class PlainRun:
    """A run read by ``read_plain_run``: its rows grouped by query (first appearance) in the reader's order."""

    queries: list[str]
    starts: np.ndarray  # int64: each query's first row
    doc: np.ndarray  # object: each row's document ID (ASCII bytes: Python orders them as the readers do)
    score: np.ndarray  # float64 per row
    source: str
    where: list[dict[bytes, int]]  # per query: each document's line (0-based, in the file)
    line_row: np.ndarray | None  # each line's row in the reader's order (None: the same)

    def rows_of(self, query: int, docs) -> tuple[np.ndarray, list]:
        """The rows of query number ``query`` that hold any of ``docs`` (a {document: value} mapping), and the value
        of each."""
        where = self.where[query]
        found = [(where[d], v) for d, v in docs.items() if d in where]
        lines = np.asarray([line for line, _ in found], dtype=np.int64)
        return lines if self.line_row is None else self.line_row[lines], [v for _, v in found]

    def ends(self) -> np.ndarray:
        return np.append(self.starts[1:], len(self.doc))

    def lengths(self) -> np.ndarray:
        return self.ends() - self.starts


def read_plain_run(path, limit: int) -> PlainRun | None:
    """A TREC run as ``read_trec_run(path, order="score")`` orders it, or None when the file is not plain (or has
    a sidecar, a document twice in a query, or a query's lines apart)."""
    if sidecar_path(path).exists():
        return None
    raw = plain_bytes(path, limit)
    tokens = None if raw is None or b"_" in raw else plain_tokens(raw, 6)
    score = None if tokens is None else _numbers(tokens[4::6], float, np.float64)
    if score is None or not np.isfinite(score).all():  # inf and nan: the only letters float() reads but e/E
        return None
    query = np.array(tokens[0::6], dtype=object)
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    queries = [q.decode("ascii") for q in query[starts].tolist()]
    doc = tokens[2::6]
    bounds = starts.tolist() + [len(doc)]
    where = [dict(zip(doc[a:b], range(a, b))) for a, b in zip(bounds, bounds[1:])]
    if len(set(queries)) != len(queries) or any(len(w) != b - a for w, a, b in zip(where, bounds, bounds[1:])):
        return None  # a query's lines apart, or a document twice in a query
    qidx = np.repeat(np.arange(len(starts)), np.diff(bounds))
    doc = np.array(doc, dtype=object)
    perm = score_permutation(qidx, score, doc, np.r_[False, qidx[1:] == qidx[:-1]])
    if perm is not None:
        doc, score = doc[perm], score[perm]
    return PlainRun(queries, starts, doc, score, str(path), where, None if perm is None else np.argsort(perm))
