"""Reading a run JSON document fast and query by query, with every check of the exact reader.

The exact reader (``json_run.load_run``) parses the whole document with
Python's ``json`` and hooks: 20 s and 4 GB for a 7M-entry run.  The layout
trec-bridge writes is read as it streams (json_run_stream.py: memory follows
a block of lines, not the file).  Any other layout is split whole here:
msgspec (C, zero-copy) splits the document into its top-level members and the
``rankings`` object into one raw byte span per query, and each span is
decoded (json_run_decode.py).  What msgspec would let through silently is
checked on the bytes before its answer is trusted:

* a repeated key: between two spans only the next key may stand (a dropped
  repeat would sit there), and inside a span the ``:`` count must equal the
  keys decoded;
* a backslash (escaped keys, lone surrogates), or a number that may overflow:
  that span is parsed by the exact parser;
* every other member (format, IDs, system, failures) is parsed by the exact
  parser, on the document with ``rankings`` emptied.

Whenever anything is off, the exact reader reads the whole document and
raises what it raises, so errors keep their codes, messages and locations;
the fast paths never report an error.  Spans in the canonical entry layout
skip the objects altogether (json_entries.py reads them as two columns).
"""
from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path
from typing import Union

import msgspec
import numpy as np
import polars as pl

from trec_bridge.errors import InvalidInput
from trec_bridge.files import GZIP_MAGIC, read_input_bytes
from trec_bridge.model import RUN_SCHEMA, Run
from trec_bridge.ordering import pair_keys_of_blocks

from . import json_run, json_run_decode, json_run_stream
from .json_entries import canonical_entries
from .json_run_decode import join_parts
from .line_blocks import BLOCK_BYTES
from . import strict_json as sj

PART_BYTES = 64 << 20  # JSON bytes per part handed on (about 1.5M entries)
_WS = b" \t\r\n"


_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
def load_run(path: str | os.PathLike, *, allow_duplicates: bool = False) -> Run:
    """``json_run.load_run``, fast: the same run, or the same error."""
    run = read_run_fast(path, allow_duplicates=allow_duplicates)
    return run if run is not None else json_run.load_run(path, allow_duplicates=allow_duplicates)


def read_run_fast(path: str | os.PathLike, *, allow_duplicates: bool = False) -> Run | None:
    """The run ``json_run.load_run(path)`` gives, read fast; None when the file is not a trec-bridge run."""
    parts = read_run_parts_fast(path, allow_duplicates=allow_duplicates)
    if parts is None:
        return None
    return join_parts(list(parts))


def read_run_parts_fast(path: str | os.PathLike, *, allow_duplicates: bool = False,
                        part_bytes: int | None = None) -> Iterator[Run] | None:
    """The run in parts (every query whole in one), or None when the file is not a trec-bridge run document.

    The layout trec-bridge writes is read as it streams (json_run_stream.py);
    any other is split whole with msgspec.  Errors are raised while
    iterating, as the exact reader raises them.
    """
    if json_run_stream.head_is_streamable(path):
        return _streamed(path, allow_duplicates, part_bytes or BLOCK_BYTES)
    return _whole_parts(path, allow_duplicates, part_bytes or PART_BYTES)


def _streamed(path, allow_duplicates: bool, block_bytes: int) -> Iterator[Run]:
    """The stream's parts; at its first doubt the whole-document readers decide, and what the stream already
    handed on is not handed again (the exact reader accepted those queries as read)."""
    handed: set[str] = set()
    try:
        for part in json_run_stream.read_stream(path, allow_duplicates=allow_duplicates, block_bytes=block_bytes):
            handed.update(part.queries)
            yield part
        return
    except Exception:  # noqa: BLE001 - any doubt (a refusal, another layout further on) goes to the whole readers
        pass
    run = join_parts(list(_whole_parts(path, allow_duplicates, PART_BYTES)))  # raises the exact reader's error
    if handed:
        run = Run(**{**run.__dict__, "frame": run.frame.filter(~pl.col("query_id").is_in(list(handed))),
                     "queries": tuple(q for q in run.queries if q not in handed),
                     "_blocks": None, "_pair_keys": None, "_own_scores": None})
    yield run


def _whole_parts(path: str | os.PathLike, allow_duplicates: bool, part_bytes: int) -> Iterator[Run] | None:
    """The document split whole by msgspec (any layout); None when it is not a trec-bridge run document."""
    file = str(path)
    data = _bytes_of(path)
    try:
        top = _TOP.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return _exact_parts(file, allow_duplicates)  # not an object, or broken: the exact reader says what
    fmt = top.get("format")
    if fmt is None or bytes(fmt)[:1] == b"{":
        return None  # another layout (ranx): the detector's whole-document path reads it
    return _parts(data, top, file, allow_duplicates, part_bytes)


def _bytes_of(path) -> bytes | mmap.mmap:
    """A plain file mapped (its pages are the file cache's, dropped as read); gzip content in memory."""
    p = Path(path)
    if p.is_file():
        with open(p, "rb") as fh:
            if fh.read(2) != GZIP_MAGIC and os.fstat(fh.fileno()).st_size > 0:
                return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    return read_input_bytes(path)


def _exact_parts(file: str, allow_duplicates: bool) -> Iterator[Run]:
    yield json_run.load_run(file, allow_duplicates=allow_duplicates)


def _parts(data, top: dict, file: str, allow_duplicates: bool, part_bytes: int) -> Iterator[Run]:
    handed = False
    try:
        for part in _fast_parts(data, top, file, allow_duplicates, part_bytes):
            handed = True
            yield part
    except Exception:  # noqa: BLE001 - any doubt (a refusal, a nesting bomb) goes to the exact reader
        # the exact reader raises the first error, as it would have read alone
        run = json_run.load_run(file, allow_duplicates=allow_duplicates)
        if handed:  # every doubt after the first part is an error the exact reader must find
            raise RuntimeError(f"{file}: the fast JSON reader refused a run the exact reader accepts") from None
        yield run


def _fast_parts(data, top: dict, file: str, allow_duplicates: bool, part_bytes: int) -> Iterator[Run]:
    """Parts of the run; raises (for ``_parts`` to hand over) at the first doubt."""
    if data[:3] == b"\xef\xbb\xbf" or data.find(b"\x00") >= 0:
        raise json_run_decode.Fallback("BOM or NUL byte")
    raw_rankings = top.get("rankings")
    if raw_rankings is None:
        raise json_run_decode.Fallback("no rankings")
    base = json_run_decode.address(data)
    start = json_run_decode.address(raw_rankings) - base
    end = start + len(raw_rankings)
    skeleton = sj.parse_json(bytes(data[:start]) + b"{}" + bytes(data[end:]), file)
    sj.check_format(skeleton, json_run.FORMAT, file)
    sj.validate(skeleton, json_run.SCHEMA, file, json_run.LIGHT)
    spans = _query_spans(data, raw_rankings, base, start, end)
    failures = skeleton.get("failures", {})
    if any(q in failures for q, _ in spans) or not all(map(sj.id_is_valid, (q for q, _ in spans))):
        raise json_run_decode.Fallback("query IDs")
    shell = json_run._to_model({**skeleton, "rankings": {}}, file, allow_duplicates, queries=[q for q, _ in spans])
    first = True
    for chunk in _chunks(spans, base, part_bytes):
        yield _chunk_part(data, chunk, base, shell, file, allow_duplicates, first)
        first = False
    if first:  # no query at all
        yield json_run_decode.lists_part([], shell, file, allow_duplicates, first)


def _chunks(spans: list, base: int, part_bytes: int) -> Iterator[list]:
    """Consecutive queries of about ``part_bytes`` of JSON each (a query is never split)."""
    chunk, held = [], 0
    for q, raw in spans:
        chunk.append((q, raw))
        held += len(raw)
        if held >= part_bytes:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


def _chunk_part(data, chunk: list, base: int, shell: Run, file: str, allow_duplicates: bool, first: bool) -> Run:
    """One part: the canonical layout read as columns when it is one, else each query decoded by msgspec."""
    located = [(json_run_decode.address(raw) - base, json_run_decode.address(raw) - base + len(raw)) for _, raw in chunk]
    columns = _canonical_columns(data, located)
    if columns is None:
        return json_run_decode.lists_part([(q, json_run_decode.decode_ranking(raw, q, file)) for q, raw in chunk], shell, file, allow_duplicates, first)
    counts, docs, scores = columns
    return json_run_decode.columns_part([q for q, _ in chunk], counts, docs, scores, shell, file, allow_duplicates, first)


def _canonical_columns(data, spans: list[tuple[int, int]]):
    """json_entries' columns of consecutive ``[...]`` spans of ``data`` (empty lists allowed), or None."""
    first = spans[0][0] - 1  # the byte before the first "[" (a ":" or a space) starts the first gap
    region = bytearray(memoryview(data)[first:spans[-1][1]])
    bodies, ranked = [], []
    for i, (start, end) in enumerate(spans):
        if end - start > 2:
            bodies.append((start - first + 1, end - first - 1))
            ranked.append(i)
    columns = canonical_entries(region, bodies)
    if columns is None:
        return None
    counts = np.zeros(len(spans), dtype=np.int64)
    counts[ranked] = columns[0]
    return counts, columns[1], columns[2]


def _query_spans(data, raw_rankings, base: int, start: int, end: int) -> list[tuple[str, msgspec.Raw]]:
    """(query ID, raw ranking) in document order, refused unless only ``"key":`` stands between spans."""
    if bytes(data[start:start + 1]) != b"{":
        raise json_run_decode.Fallback("rankings is not an object")
    rankings = _TOP.decode(raw_rankings)
    at = start + 1
    spans = []
    for q, raw in rankings.items():
        offset = json_run_decode.address(raw) - base
        gap = bytes(data[at:offset]).strip(_WS)
        if spans:
            if gap[:1] != b",":
                raise json_run_decode.Fallback("gap")
            gap = gap[1:].lstrip(_WS)
        if gap[-1:] != b":" or gap[:-1].rstrip(_WS) != b'"' + q.encode() + b'"' or b"\\" in gap:
            raise json_run_decode.Fallback("a key between spans that is not the next query (a repeated key?)")
        if bytes(data[offset:offset + 1]) != b"[":
            raise json_run_decode.Fallback("ranking is not an array")
        spans.append((q, raw))
        at = offset + len(raw)
    if bytes(data[at:end]).strip(_WS) != b"}":
        raise json_run_decode.Fallback("trailing bytes in rankings")
    return spans


