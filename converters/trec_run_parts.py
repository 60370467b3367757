"""Reading a TREC run file in parts of about 16 MB, every query whole in one, so a 50M-line run is scored in
bounded memory: each part is checked, ordered and handed on before the next is read.

The checks and the ordering are the whole-file reader's (``trec_run``), run on
each part; what is here is cutting the file at query boundaries and reading
the next part in a worker thread while the caller works on this one.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Literal

import polars as pl

from trec_bridge import files, memory_guard
from trec_bridge.errors import InvalidInput, TrecBridgeError, UsageError
from trec_bridge.messages import quote
from trec_bridge.model import QueryNotContiguous, Run
from trec_bridge.progress import progress

from . import sidecar as _sidecar
from .text_lines import Field, check_bytes, has_data, parse_typed, split_columns
from .trec_run import RUN_LAYOUT, _run_of, run_fields

PART_BYTES = 16 << 20  # a part of a run read in parts (the size is chosen in bench/README.md)


def can_read_in_parts(path: str | os.PathLike) -> bool:
    """A plain (not gzipped) regular TREC run file without sidecar: what ``read_trec_run_parts`` reads."""
    p = Path(path)
    try:
        if not p.is_file() or _sidecar.sidecar_path(path).exists():
            return False
        with open(p, "rb") as fh:
            return fh.read(2) != b"\x1f\x8b"
    except OSError:
        return False


def read_trec_run_parts(path: str | os.PathLike, order: Literal["score", "rank"] = "score", *,
                        part_bytes: int | None = None, fingerprint: bool = True) -> Iterator[Run]:
    """The run of ``read_trec_run(path, order)`` as Runs of about ``part_bytes`` each, every query whole in one.

    A 50M-line run is then scored in bounded memory: each part is checked,
    ordered and handed on before the next is read.  The same checks run with
    the same messages and line numbers (in a file with several errors, a
    different one may be found first).  A query whose lines are split by
    another query's lines across parts raises ``QueryNotContiguous``: the
    caller then reads the run whole.  With ``fingerprint``, the file's SHA-256
    is computed on the way (``files.sha256_file`` then needs no second read).
    """
    if order not in ("score", "rank"):
        raise UsageError("E_USAGE", f"order must be 'score' or 'rank', not {quote(order)}")
    name = str(path)
    part_bytes = part_bytes or PART_BYTES
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InvalidInput("E_FILE_UNREADABLE", f"cannot read: {exc.strerror or exc}", file=name) from None
    with fh, progress(f"reading {name}") as shown:
        info = os.fstat(fh.fileno())
        # only a few parts are ever held: guard that much
        memory_guard.check_input(name, min(info.st_size, 3 * part_bytes), fh.read(4096))
        fh.seek(0)
        digest = hashlib.sha256() if fingerprint else None
        any_data, seen = False, set()
        ahead = one_ahead(_read_and_parse(fh, part_bytes, digest, name, shown, info.st_size, run_fields(order)))
        with closing(ahead):
            for part in _runs_of_pieces(ahead, name, order):
                if part is None:
                    continue
                any_data = True
                again = [q for q in part.queries if q in seen]
                if again:
                    raise QueryNotContiguous(again[0])
                seen.update(part.queries)
                yield part
        if not any_data:
            raise InvalidInput("E_FILE_EMPTY", "the file has no data line", file=name)
        if digest is not None:
            files.remember_digest(path, info, digest.hexdigest())


def query_ranges(path: str | os.PathLike, part_bytes: int | None = None) -> list[tuple[int, int]]:
    """The (start, end) byte offsets of the parts ``read_trec_run_parts`` reads, found as it finds them but
    without reading the parts (each part's last bytes only, the rare slow cut aside), so that other processes
    can each read one part (``read_trec_range``: a cluster's workers, trec_bridge/run_pieces.py)."""
    name, part_bytes = str(path), part_bytes or PART_BYTES
    ranges = []
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            while True:
                start = fh.tell()
                step = _size_to_query_start(fh, part_bytes)
                if step:
                    fh.seek(step, os.SEEK_CUR)
                else:
                    _cut_at_query_start(fh, part_bytes)  # leaves the file at the cut
                ranges.append((start, min(fh.tell(), size)))
                if not fh.peek(1):
                    return ranges
    except OSError as exc:
        raise InvalidInput("E_FILE_UNREADABLE", f"cannot read: {exc.strerror or exc}", file=name) from None


def read_trec_range(path: str | os.PathLike, start: int, end: int, order: Literal["score", "rank"] = "score"
                    ) -> tuple[Run | None, int]:
    """The part at bytes [start, end) of ``query_ranges``, read as ``read_trec_run_parts`` reads it (None: no data
    line), and its line count; an error names its line counted from the part's first line."""
    name = str(path)
    try:
        with open(path, "rb") as fh:
            piece = os.pread(fh.fileno(), end - start, start)
    except OSError as exc:
        raise InvalidInput("E_FILE_UNREADABLE", f"cannot read: {exc.strerror or exc}", file=name) from None
    parsed = (" ", parse_typed(piece, run_fields(order), " ")) if piece else None
    run = next(_runs_of_pieces(iter([(piece, start == 0, parsed)]), name, order))
    return run, piece.count(b"\n")


def check_head(path: str | os.PathLike, part_bytes: int | None = None) -> None:
    """The memory check ``read_trec_run_parts`` makes before reading (only a few parts are ever held)."""
    name = str(path)
    try:
        with open(path, "rb") as fh:
            memory_guard.check_input(name, min(os.fstat(fh.fileno()).st_size, 3 * (part_bytes or PART_BYTES)),
                                     fh.read(4096))
    except OSError as exc:
        raise InvalidInput("E_FILE_UNREADABLE", f"cannot read: {exc.strerror or exc}", file=name) from None


def _read_and_parse(fh, part_bytes: int, digest, name: str, shown, size: int, fields: list[Field]
                    ) -> Iterator[tuple[bytes, bool, tuple[str, pl.DataFrame | None] | None]]:
    """Each piece with polars' parse of it as space-separated columns, trusted only once the census agrees.

    This is the part that runs ahead in a worker thread (file reads and the
    parser release the GIL); the checks run in the caller's thread meanwhile.
    """
    for chunk, at_start, _ in _line_pieces(fh, part_bytes, digest, name):
        shown.detail = f"{fh.tell() / 1e6:,.0f} of {size / 1e6:,.0f} MB"
        yield chunk, at_start, ((" ", parse_typed(chunk, fields, " ")) if chunk else None)


def _runs_of_pieces(pieces: Iterator, name: str, order: str) -> Iterator[Run | None]:
    """The Run of each piece (None for a piece without data); errors name lines of the whole file."""
    lines_before = 0
    for chunk, at_start, parsed in pieces:
        run = None
        if chunk:
            with _lines_from(lines_before):
                census = check_bytes(chunk, name, at_file_start=at_start, line_ends_parsed=_line_ends(chunk, parsed))
                if has_data(chunk):
                    cols = split_columns(chunk, run_fields(order), name, blank_lines="skip", layout=RUN_LAYOUT,
                                         census=census, parsed=parsed)
                    run = _run_of(cols.frame, cols.lines, order, name)
            lines_before += census.count(10)
        yield run


def _line_ends(chunk: bytes, parsed: tuple[str, pl.DataFrame | None] | None) -> int | None:
    """Line ends (LF) in ``chunk`` by its parse: one row per line, the last line maybe unterminated."""
    if parsed is None or parsed[1] is None:
        return None
    return parsed[1].height - (0 if chunk.endswith(b"\n") else 1)


_END = object()


def one_ahead(items: Iterator) -> Iterator:
    """The items of ``items``, the next one made in a worker thread while the caller works on this one.

    Reading and parsing then overlap with the caller's checking, ordering
    and scoring of the previous part.
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="trec-bridge-read") as pool:
        step = pool.submit(next, items, _END)
        while True:
            item = step.result()  # re-raises the worker's error here, in order
            if item is _END:
                return
            step = pool.submit(next, items, _END)
            yield item


def _line_pieces(fh, part_bytes: int, digest, name: str) -> Iterator[tuple[bytes, bool, bool]]:
    """(bytes, starts the file, is the last piece), about ``part_bytes`` each, every query's lines in one piece.

    A piece ends where the lines of the last query starting in it begin
    (that query goes to the next piece; a query longer than a part makes its
    piece longer).  Where to cut is found first from the part's last bytes,
    so each piece is read once into its own bytes object: cutting a 16 MB
    bytes would copy it (and touch 16 MB of new memory) again.
    """
    at_start = True
    while True:
        try:
            size = _size_to_query_start(fh, part_bytes)
            piece = fh.read(size) if size else _cut_at_query_start(fh, part_bytes)
            last = not fh.peek(1)
        except OSError as exc:
            raise InvalidInput("E_FILE_UNREADABLE", f"cannot read: {exc.strerror or exc}", file=name) from None
        if digest is not None:
            digest.update(piece)
        yield piece, at_start, last
        if last:
            return
        at_start = False


_PROBES = (1 << 16, 1 << 20)  # how far back from a part's end a query start is looked for before reading it all


def _size_to_query_start(fh, part_bytes: int) -> int:
    """Bytes from here to where the last query starting within ``part_bytes`` begins; 0 when not found.

    Only the part's last bytes are read (with pread: the file position does
    not move).  When the file ends inside the part, the size is the part's:
    the rest is the last piece.
    """
    here = fh.tell()
    for probe_bytes in _PROBES:
        window = min(probe_bytes, part_bytes)
        probe = os.pread(fh.fileno(), window + 1, here + part_bytes - window)
        if len(probe) <= window:
            return part_bytes
        first_line = probe.find(b"\n") + 1  # the window may start inside a line
        cut, _ = _last_query_start(probe, first_line, probe.rfind(b"\n", 0, window) + 1) if first_line else (None, None)
        if cut is not None:
            return part_bytes - window + cut
        if window == part_bytes:
            break
    return 0


def _cut_at_query_start(fh, part_bytes: int) -> bytes:
    """The next piece, when no query start was found near the end of the part (slow path: rare).

    The part is read and searched whole; while one query fills it, it grows
    by another part.  Each byte is searched once.
    """
    piece = fh.read(part_bytes)
    searched, query = 0, None  # piece[:searched] holds only ``query``'s lines (and blank ones)
    while fh.peek(1):
        end = piece.rfind(b"\n") + 1
        cut, last_query = _last_query_start(piece, searched, end)
        if cut is None and query is not None and last_query is not None and last_query != query:
            cut = searched  # the new lines are all another query's
        if cut is not None:
            fh.seek(cut - len(piece), os.SEEK_CUR)
            return piece[:cut]
        searched, query = end, query if last_query is None else last_query
        more = fh.read(part_bytes)
        if not more:
            break
        piece += more
    return piece


def _last_query_start(data: bytes, start: int, end: int) -> tuple[int | None, bytes | None]:
    """Where the lines of the last query in ``data[start:end]`` (whole lines) begin, and that query's ID.

    The offset is None when no other query's line precedes them in the
    range.  A line's query is its first whitespace-separated field, as the
    parser reads it; blank lines belong to no query.  A wrong guess here
    cannot change a result: a query found in two parts makes the caller read
    the run whole.
    """
    query, line_end = None, end
    while line_end > start:
        line_start = max(data.rfind(b"\n", start, line_end - 1) + 1, start)
        fields = data[line_start:line_end].split(None, 1)
        if fields:
            if query is None:
                query = fields[0]
            elif fields[0] != query:
                return line_end, query
        line_end = line_start
    return None, query


class _lines_from:  # noqa: N801 - a context manager used like a function
    """Errors raised inside name lines of the piece; shift them by the lines of the pieces before."""

    def __init__(self, before: int):
        self.before = before

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if isinstance(exc, TrecBridgeError) and exc.where.line is not None and self.before:
            exc.where = replace(exc.where, line=exc.where.line + self.before)
            exc.args = (exc.render(),)
        return False
