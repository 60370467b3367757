"""A run as JSON Lines (``trec-bridge.run-lines``): the header on the first line, one query per line after it.

The same meaning as a run document (``trec-bridge.run``, json_run.py), in a
shape that is read line by line: memory follows the largest query and the
part being scored, never the file, so a 50M-entry run is scored in bounded
memory.  Line 1 holds the members of the run document other than
``rankings`` and ``failures`` (``"format": "trec-bridge.run-lines"``); every
other line is ``{"query_id": ..., "ranking": [...]}`` or ``{"query_id": ...,
"failure": {"reason": ...}}``.  Each line is checked as strictly as a run
document (its members by the exact parser, its ranking by the fast decoder
of json_run_fast, which hands doubtful spans to the exact parser); errors
name the file's line.  Field reference: docs/formats.md.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import closing, contextmanager
from functools import partial

import msgspec
import numpy as np

from trec_bridge.errors import InvalidInput
from trec_bridge.files import atomic_write
from trec_bridge.messages import quote
from trec_bridge.model import Run

from . import json_run, json_run_decode, json_run_dump
from . import strict_json as sj
from .json_entries import FIRST, canonical_entries
from .line_blocks import BLOCK_BYTES, Block, line_blocks, opened
from .run_timing import TIMING_KEY, check_timing, record_timing
from .trec_run_parts import one_ahead

FORMAT = "trec-bridge.run-lines"
PART_ROWS = 1 << 20  # entries per part handed on (about 60 MB of columns)
SCHEMA = "run-lines.v1.json"
_RECORD = msgspec.json.Decoder(dict[str, msgspec.Raw])


def read_run_lines(path: str | os.PathLike, *, allow_duplicates: bool = False) -> Run:
    """The whole run of a JSON Lines file."""
    return json_run_decode.join_parts(list(read_run_lines_parts(path, allow_duplicates=allow_duplicates)))


def read_run_lines_parts(path: str | os.PathLike, *, allow_duplicates: bool = False, part_rows: int = PART_ROWS,
                         block_bytes: int = BLOCK_BYTES) -> Iterator[Run]:
    """The run in parts of about ``part_rows`` entries (or one block of the file), every query whole in one; the
    failures come with the last.  The file is read in blocks of whole lines, the next one in a worker thread."""
    reader = _Reader(str(path), allow_duplicates, part_rows)
    with opened(path) as fh, closing(one_ahead(_block_parts(fh, reader, block_bytes))) as parts:
        for part in parts:
            yield part()  # the part's checks and columns, here while the worker reads the next block
    yield reader.last_part()


def _block_parts(fh, reader: "_Reader", block_bytes: int) -> Iterator[Run]:
    for block in line_blocks(fh, block_bytes):
        yield from reader.block(block)


class _Reader:
    """The lines read so far: the header's shell, each query's line, the failures and timing, the part being
    gathered (``out``: lists decoded line by line, and columns of canonical lines read together)."""

    def __init__(self, file: str, allow_duplicates: bool, part_rows: int):
        self.file, self.allow_duplicates, self.part_rows = file, allow_duplicates, part_rows
        self.n, self.shell = 0, None
        self.seen: dict[str, int] = {}
        self.failures: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        self.timing: dict[str, dict] = {}
        self.out: list = []
        self.held = 0
        self.pending: list = []  # canonical lines of this block: (query ID, line number, body start, body end, newline)

    def block(self, block: Block) -> Iterator[Run]:
        buf, at = block.buf, 0
        while at < block.end:
            stop = buf.find(b"\n", at, block.end)
            stop = block.end if stop < 0 else stop + 1
            self.n += 1
            if self.shell is None:
                header = _header(bytes(memoryview(buf)[at:stop]), self.file)
                self.shell = json_run._to_model({**header, "format": json_run.FORMAT, "rankings": {}}, self.file,
                                                self.allow_duplicates)
            else:
                line = _canonical_line(buf, at, stop)
                if line is not None:
                    self.pending.append((*line, self.n))
                else:
                    self._flush(buf)
                    self._take(_record(bytes(memoryview(buf)[at:stop]), self.n, self.file), self.n)
                if self.held >= self.part_rows:
                    yield self._part()
            at = stop
        self._flush(buf)
        if self.held:  # a part a block at most, as the TREC reader's
            yield self._part()

    def _flush(self, buf: bytearray) -> None:
        """The canonical lines gathered, as columns when their bytes vouch for it, else line by line."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        ranked = [(start, end) for _, start, end, _, _ in pending if end > start]
        columns = canonical_entries(buf, ranked)
        if columns is None:
            for q, start, end, newline, n in pending:
                line = _PREFIX + q.encode() + _MIDDLE + bytes(memoryview(buf)[start:end]) + _SUFFIX + newline
                self._take(_record(line, n, self.file), n)
            return
        for q, _, _, _, n in pending:
            self._seen(q, n)
        counts = np.zeros(len(pending), dtype=np.int64)
        counts[[i for i, line in enumerate(pending) if line[2] > line[1]]] = columns[0]
        self.out.append(([q for q, *_ in pending], counts, columns[1], columns[2]))
        self.held += int(counts.sum())

    def _seen(self, q: str, n: int) -> None:
        if q in self.seen:
            raise InvalidInput("E_RUN_DUPLICATE_QUERY", f"query {quote(q)} has a record on line {self.seen[q]} and "
                               f"again on line {n}; keep one", file=self.file, line=n, query=q)
        self.seen[q] = n

    def _take(self, record, n: int) -> None:
        """One line read by ``_record``: its ranking, failure and timing."""
        if record is None:
            return
        q, columns, failure, timed = record
        self._seen(q, n)
        if timed:
            check_timing({q: timed}, lambda _: True, self.file, at=(), line=n)
            self.timing[q] = timed
        if failure is not None:
            self.failures[q] = failure["reason"]
            if "kind" in failure:
                self.kinds[q] = failure["kind"]
            return
        if self.out and isinstance(self.out[-1], list):
            self.out[-1].append((q, columns))
        else:
            self.out.append([(q, columns)])
        self.held += len(columns[0])

    def _part(self) -> partial:
        """What was gathered, to be made a Run in the caller's thread (``_build``)."""
        out, self.out, self.held = self.out, [], 0
        return partial(self._build, out)

    def _build(self, out: list, last: bool = False) -> Run:
        """A Run of what was gathered (checked, errors on their lines); the last carries the failures."""
        runs = []
        with _at_line(self.seen, self.file):
            for i, piece in enumerate(out or [[]]):
                first = last and i == max(len(out), 1) - 1
                if isinstance(piece, list):
                    runs.append(json_run_decode.lists_part(piece, self.shell, self.file, self.allow_duplicates, first))
                else:
                    runs.append(json_run_decode.columns_part(*piece, self.shell, self.file, self.allow_duplicates,
                                                             first))
        return json_run_decode.join_parts(runs)

    def last_part(self) -> Run:
        if self.shell is None:
            _header(b"", self.file)  # an empty file: its error
        self.shell.failures = self.failures
        if self.kinds:
            self.shell.metadata = {**self.shell.metadata, json_run.FAILURE_KINDS_KEY: self.kinds}
        if self.timing:
            self.shell.metadata = {**self.shell.metadata, TIMING_KEY: self.timing}
        out, self.out, self.held = self.out, [], 0
        return self._build(out, last=True)


_PREFIX, _MIDDLE, _SUFFIX = b'{"query_id": "', b'", "ranking": [', b"]}"


def _canonical_line(buf: bytearray, at: int, stop: int) -> tuple[str, int, int, bytes] | None:
    """(query ID, body start, body end, line end) of ``{"query_id": "ID", "ranking": [BODY]}`` whose body is
    empty or starts and ends as canonical entries do; None for any other line (``_record`` reads it)."""
    newline = b"\n" if buf[stop - 1] == 0x0A else b""
    close = stop - len(newline)
    key_end = buf.find(b'"', at + len(_PREFIX), close)
    if not buf.startswith(_PREFIX, at) or key_end < 0 or not buf.startswith(_MIDDLE, key_end) \
            or not buf.startswith(_SUFFIX, close - 2):
        return None
    start, end = key_end + len(_MIDDLE), close - 2
    if end < start or end > start and (not buf.startswith(FIRST, start) or buf[end - 1] != 0x7D):
        return None
    try:
        q = bytes(memoryview(buf)[at + len(_PREFIX):key_end]).decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\\" in q or not sj.id_is_valid(q):
        return None
    return q, start, end, newline


def _header(line: bytes, file: str) -> dict:
    """Line 1: the run's members other than rankings and failures, checked as a run document's."""
    with _at_line(1, file):
        doc = sj.parse_json(line, file)
        sj.check_format(doc, FORMAT, file)
        for member in ("rankings", "failures", "timing"):
            if member in doc:
                raise sj.schema_error((member,), f"{member} go on their own lines in a {FORMAT} file, one query a line",
                                      file)
        sj.validate({**doc, "format": json_run.FORMAT, "rankings": {}}, json_run.SCHEMA, file, json_run.LIGHT)
    return doc


def _record(line: bytes, n: int, file: str) -> tuple[str, tuple[list, list] | None, dict | None, dict] | None:
    """(query ID, columns or None, failure or None, timing fields) of line ``n``; None for the final line end."""
    if not line.strip(b" \t\r\n"):
        if line.endswith(b"\n") or line:
            raise InvalidInput("E_JSON_SYNTAX", f"line {n} is blank; a {FORMAT} file has one JSON object a line",
                               file=file, line=n)
        return None
    with _at_line(n, file):
        try:
            members = _RECORD.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            members = None
        ranking = members.get("ranking") if members else None
        if ranking is not None and bytes(ranking)[:1] == b"[":
            start = json_run_decode.address(ranking) - json_run_decode.address(line)
            skeleton = sj.parse_json(line[:start] + b"[]" + line[start + len(ranking):], file)
        else:
            skeleton, ranking = sj.parse_json(line, file), None
        q = _check_record(skeleton, file)
        timed = record_timing(skeleton)
        if "failure" in skeleton:
            return q, None, skeleton["failure"], timed
        if ranking is None:
            return q, ([], []), None, timed
        try:
            return q, json_run_decode.decode_ranking(ranking, q, file), None, timed
        except InvalidInput as exc:  # found in the ranking alone: its path and column within the line
            raise _within(exc, q, start) from None


def _within(exc: InvalidInput, q: str, start: int) -> InvalidInput:
    """An error of the ranking parsed on its own, placed in its line: ``$[2]`` -> ``$.ranking[2]``, columns shifted."""
    path = exc.where.json_path or "$"
    if not path.startswith(sj.json_path(("rankings", q))):
        path = "$.ranking" + path[1:]
    message = re.sub(r"\(line 1, column (\d+)\)", lambda m: f"(line 1, column {int(m[1]) + start})", exc.message)
    return InvalidInput(exc.code, message, file=exc.where.file, json_path=path, query=exc.where.query or q,
                        doc=exc.where.doc)


def _check_record(record, file: str) -> str:
    if isinstance(record, dict) and "ranking" in record and "failure" in record:
        q = record.get("query_id")
        raise InvalidInput("E_RUN_QUERY_CONFLICT", f"query {quote(q)} has both a ranking and a failure record; keep one",
                           file=file, json_path="$", query=q if isinstance(q, str) else None)
    if isinstance(record, dict) and "query_id" in record and "ranking" not in record and "failure" not in record:
        raise sj.schema_error((), 'a record needs "ranking" (the query\'s ranked list) or "failure" (why it has none)',
                              file)
    sj.validate(record, SCHEMA, file, {"/properties/ranking": {"type": "array"}})
    return record["query_id"]


@contextmanager
def _at_line(n: int | dict, file: str):
    """Errors inside one line name the file's line (``n``, or the line of the query an error names); a
    ranking's JSON path is the line's own (``$.ranking[3]``)."""
    try:
        yield
    except InvalidInput as exc:
        where = exc.where
        query = where.query if where.query is not None or isinstance(n, int) else _query_of(where.json_path, n)
        line = n if isinstance(n, int) else n.get(query)
        path = where.json_path
        if path and query is not None:
            path = path.replace(sj.json_path(("rankings", query)), "$.ranking", 1)
        message = exc.message.replace("(line 1, column", f"(line {line}, column") if line else exc.message
        raise InvalidInput(exc.code, message, file=file, line=line, json_path=path, query=query,
                           doc=where.doc) from None


def _query_of(path: str | None, lines: dict[str, int]) -> str | None:
    """The query a run document's path names (``$.rankings.q1[3]`` -> q1), among the queries read."""
    for q in list(lines):  # a snapshot: the worker may be adding the next block's queries
        prefix = sj.json_path(("rankings", q))
        if path and path.startswith(prefix) and path[len(prefix):len(prefix) + 1] in ("", "["):
            return q
    return None


# ---------------------------------------------------------------- writing


def dump_run_lines(run: Run, path: str | os.PathLike) -> None:
    """Write ``run`` as JSON Lines, atomically; refuse (InvalidInput) what the reader would refuse."""
    try:
        pieces = _render(run)
    except (json_run_dump._Doubt, ValueError, TypeError):
        _refuse(run)  # raises the run document's refusal, worded for JSON Lines
        pieces = _render_slowly(run)
    atomic_write(path, lambda fh: fh.writelines(pieces))


def _render(run: Run) -> list:
    frame = run.own_frame()
    json_run_dump._check(run, frame)
    header = {**json_run.run_header(run), "format": FORMAT}
    tail = json_run.tail_of(run)
    try:
        json_run.document_to_run({**json_run.run_header(run), "rankings": {}, **tail}, None, queries=run.queries)
    except InvalidInput:
        raise json_run_dump._Doubt("header") from None
    lists = json_run_dump.entry_lists(frame) if frame.height else {}
    timed = _timing_texts(tail.get(TIMING_KEY, {}))
    pieces = [json_run_dump._utf8(sj._compact(header)), b"\n"]
    for q in run.queries:
        pieces += [b'{"query_id": ', json_run_dump.json_text(q), b', "ranking": [', lists.get(q, b""), b"]",
                   timed.get(q, b""), b"}\n"]
    for q, failure in tail.get("failures", {}).items():
        pieces += [b'{"query_id": ', json_run_dump.json_text(q), b', "failure": ',
                   json_run_dump._utf8(sj._compact(failure)), timed.get(q, b""), b"}\n"]
    return pieces


def _timing_texts(timing: dict) -> dict[str, bytes]:
    """Each timed query's fields as they follow its ranking or failure on its line: ``, "latency_ms": 12.5``."""
    return {q: json_run_dump._utf8(", " + sj._compact(t)[1:-1]) for q, t in timing.items()}


def _refuse(run: Run) -> None:
    try:
        json_run.document_to_run(json_run.run_to_document(run), None)
        sj.encode_checked(sj.render(json_run.run_to_document(run), json_run._LAYOUT), strict=False, file=None)
    except InvalidInput as exc:
        raise InvalidInput(exc.code, f"cannot write this run as JSON Lines: {exc.message}", file=run.source,
                           json_path=exc.where.json_path, query=exc.where.query, doc=exc.where.doc) from None


def _render_slowly(run: Run) -> list:
    """A run the fast checks doubted and the document's checks accept (a hash collision): entry by entry."""
    doc = json_run.run_to_document(run)
    lines = [sj._compact({**json_run.run_header(run), "format": FORMAT})]
    timing = doc.get(TIMING_KEY, {})
    lines += [sj._compact({"query_id": q, "ranking": r, **timing.get(q, {})}) for q, r in doc["rankings"].items()]
    lines += [sj._compact({"query_id": q, "failure": f, **timing.get(q, {})}) for q, f in doc.get("failures", {}).items()]
    return [(line + "\n").encode("utf-8") for line in lines]
