"""A run document in the layout trec-bridge writes, read as it streams: memory follows a block, not the file.

``json_run_dump`` writes one top-level member a line and one query a line::

    {
      "format": "trec-bridge.run", ..., "run_id": "r",
      "rankings": {
        "q1": [{"doc_id": "a", "score": 2.5}, ...],
        "q2": []
      },
      "failures": {...}
    }

Here the file is read in blocks of whole lines (line_blocks.py).  The members
before ``rankings`` are parsed exactly (the head with ``{}}`` appended must be
a whole document, which puts ``rankings`` at the top level); each query line is
``    "ID": [BODY]`` with ``,`` unless it is the last; the bodies in the
canonical layout become columns (json_entries.py) and the others go through
json_run_fast's per-query decoder.  The members after ``rankings`` are parsed
exactly at the end, with the head, as the document without its rankings; the
failures and timing travel with the last part.

The same contract as json_run_fast: this reader never reports an error.  At the
first doubt (another layout, a repeated query, a line that is not one query, a
refusal) it raises ``Doubt``, and the caller lets the exact reader decide.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import closing
from functools import partial
from itertools import chain
from dataclasses import dataclass, field

import numpy as np

from trec_bridge.model import Run

from . import json_run, json_run_decode
from . import strict_json as sj
from .json_entries import FIRST, canonical_entries
from .line_blocks import BLOCK_BYTES, Block, line_blocks, opened
from .trec_run_parts import one_ahead

RANKINGS = b'  "rankings": {\n'
QUERY = b'    "'
OPEN = b'": ['
HEAD_LIMIT = 1 << 20  # a head larger than this is not the layout trec-bridge writes
_END = (b"  }\n", b"  },\n")


class Doubt(Exception):
    """Something this reader does not vouch for: the exact reader decides."""


@dataclass
class _State:
    """What the stream has read so far."""

    file: str
    allow_duplicates: bool
    head: bytes = b""
    shell: Run | None = None
    seen: dict = field(default_factory=dict)
    open_line: bool = False  # the last query line ended with ","
    tail: list = field(default_factory=list)  # the bytes after the closing "}" of rankings, once reached


def read_stream(path: str | os.PathLike, *, allow_duplicates: bool = False,
                block_bytes: int = BLOCK_BYTES) -> Iterator[Run]:
    """The run in parts (each query whole in one, the last carrying failures and timing); raises ``Doubt``
    where the exact reader must decide (possibly after parts were handed)."""
    state = _State(str(path), allow_duplicates)
    with opened(path) as fh, closing(one_ahead(_parts(fh, state, block_bytes))) as parts:
        held = None
        for part in parts:
            if held is not None:
                yield held
            held = part() if isinstance(part, partial) else part  # a block's columns made a part here (_part)
        if state.shell is None or not state.tail:
            raise Doubt("no rankings, or they never end")
    yield _last(held, state)


def _parts(fh, state: _State, block_bytes: int) -> Iterator[Run]:
    """Each block's part (the work a worker thread does ahead of the scorer)."""
    blocks = line_blocks(fh, block_bytes)
    for block in chain([_head_block(blocks)], blocks):
        part = _block_part(block, state)
        if part is not None:
            yield part


def _head_block(blocks: Iterator[Block]) -> Block:
    """The first blocks joined until they hold the rankings line (small blocks split the head)."""
    joined, last = bytearray(), False
    for block in blocks:
        searched = max(0, len(joined) - len(RANKINGS))
        joined += memoryview(block.buf)[:block.end]
        last = block.last
        if last or joined.find(b"\n" + RANKINGS, searched) >= 0:
            break
        if len(joined) > HEAD_LIMIT:
            raise Doubt("no rankings line in the layout trec-bridge writes")
    return Block(joined, len(joined), last)


def head_is_streamable(path: str | os.PathLike) -> bool:
    """Whether the file starts the way this reader reads: the members before rankings, exactly checked."""
    state = _State(str(path), False)
    try:
        with opened(path) as fh:
            start = bytearray(fh.read(HEAD_LIMIT))
        _head(start, len(start), state)
    except Doubt:
        return False
    return True


def _block_part(block: Block, state: _State) -> Run | None:
    """The part of one block's query lines (None when it has none); the head and the tail are gathered."""
    buf, at, end = block.buf, 0, block.end
    if state.tail:  # past the rankings: the rest is the tail
        state.tail.append(bytes(memoryview(buf)[:end]))
        return None
    if buf.find(b"\x00", 0, end) >= 0:
        raise Doubt("NUL byte")
    if state.shell is None:
        at = _head(buf, end, state)
    lines = []
    while at < end:
        stop = buf.find(b"\n", at, end)
        stop = end if stop < 0 else stop + 1
        if buf.startswith(_END[0], at) or buf.startswith(_END[1], at):
            if state.open_line:
                raise Doubt("a comma before the end of rankings")
            state.tail.append(bytes(memoryview(buf)[at + 3:end]))
            break
        lines.append(_query_line(buf, at, stop, state))
        at = stop
    return _part(buf, lines, state) if lines else None


def _head(buf: bytearray, end: int, state: _State) -> int:
    """Parse the members before ``rankings`` (the first block must hold them); the offset after its line."""
    if buf.startswith(b"\xef\xbb\xbf"):
        raise Doubt("BOM")
    at = buf.find(b"\n" + RANKINGS, 0, min(end, HEAD_LIMIT))
    if at < 0:
        raise Doubt("no rankings line in the layout trec-bridge writes")
    state.head = bytes(memoryview(buf)[:at + 1 + len(RANKINGS) - 2])  # up to '"rankings": '
    try:
        doc = sj.parse_json(state.head + b"{}}", state.file)
        sj.check_format(doc, json_run.FORMAT, state.file)
        if list(doc)[-1] != "rankings":
            raise Doubt("rankings is not a top-level member")
        sj.validate(doc, json_run.SCHEMA, state.file, json_run.LIGHT)
        state.shell = json_run._to_model(doc, state.file, state.allow_duplicates)
    except sj.InvalidInput:
        raise Doubt("the head") from None
    return at + 1 + len(RANKINGS)


def _query_line(buf: bytearray, at: int, stop: int, state: _State) -> tuple[str, int, int]:
    """(query ID, body start, body end) of ``    "ID": [BODY]`` (``,`` after it but on the last line)."""
    if state.open_line is False and state.seen:
        raise Doubt("a query line after the last one")
    close = stop - 1 if buf[stop - 1] == 0x0A else stop
    state.open_line = buf[close - 1] == 0x2C
    close -= state.open_line
    key_end = buf.find(b'"', at + len(QUERY), close)
    if not buf.startswith(QUERY, at) or key_end < 0 or not buf.startswith(OPEN, key_end) or buf[close - 1] != 0x5D:
        raise Doubt("not a query line")
    try:
        q = bytes(memoryview(buf)[at + len(QUERY):key_end]).decode("utf-8")
    except UnicodeDecodeError:
        raise Doubt("query ID encoding") from None
    if "\\" in q or not sj.id_is_valid(q) or q in state.seen:
        raise Doubt("query ID (escaped, refused or repeated)")
    state.seen[q] = None
    return q, key_end + len(OPEN), close - 1


def _part(buf: bytearray, lines: list[tuple[str, int, int]], state: _State) -> Run | partial:
    """One block's queries as a Run: the canonical bodies as columns, the rest decoded query by query.  The
    columns' Run (frame, pair keys, repeat check) is left to the caller's thread as a ``partial``: the worker
    reading the next block is the pipeline's longer step, the scorer's thread mostly waits for it."""
    canonical = [line for line in lines if line[2] > line[1] and buf.startswith(FIRST, line[1])]
    columns = None
    if len(canonical) == len([line for line in lines if line[2] > line[1]]):
        columns = canonical_entries(buf, [(s, e) for _, s, e in canonical])
    if columns is None:
        return _decoded(buf, lines, state)
    counts = np.zeros(len(lines), dtype=np.int64)
    counts[[i for i, (_, s, e) in enumerate(lines) if e > s]] = columns[0]
    return partial(json_run_decode.columns_part, [q for q, _, _ in lines], counts, columns[1], columns[2],
                   state.shell, state.file, state.allow_duplicates, first=False)


def _decoded(buf: bytearray, lines: list[tuple[str, int, int]], state: _State) -> Run:
    """The queries decoded one by one (msgspec where the bytes vouch for it, else the exact parser)."""
    out = []
    for q, start, end in lines:
        span = b"[" + bytes(memoryview(buf)[start:end]) + b"]"
        try:
            out.append((q, json_run_decode.decode_ranking(span, q, state.file)))
        except (sj.InvalidInput, json_run_decode.Fallback):
            raise Doubt(f"query {q}") from None
    try:
        return json_run_decode.lists_part(out, state.shell, state.file, state.allow_duplicates, first=False)
    except sj.InvalidInput:
        raise Doubt("a part's checks") from None


def _last(held: Run | None, state: _State) -> Run:
    """The last part with the document's failures and timing, once the whole document without its rankings
    (head, ``{}``, tail) passes the exact checks."""
    tail = b"".join(state.tail)
    try:
        doc = sj.parse_json(state.head + b"{}" + tail, state.file)
        sj.check_format(doc, json_run.FORMAT, state.file)
        sj.validate(doc, json_run.SCHEMA, state.file, json_run.LIGHT)
        if set(doc.get("failures", {})) & set(state.seen):
            raise Doubt("a query both ranked and failed")
        shell = json_run._to_model(doc, state.file, state.allow_duplicates, queries=list(state.seen))
    except sj.InvalidInput:
        raise Doubt("the document without its rankings") from None
    if held is None:
        held = json_run_decode.lists_part([], shell, state.file, state.allow_duplicates, first=True)
    held.failures, held.metadata = shell.failures, shell.metadata
    return held
