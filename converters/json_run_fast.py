"""Reading a run JSON document fast and query by query, with every check of the exact reader.

The exact reader (``json_run.load_run``) parses the whole document with
Python's ``json`` and hooks: 20 s and 4 GB for a 7M-entry run.  Here msgspec
(C, zero-copy) splits the document into its top-level members and the
``rankings`` object into one raw byte span per query, and decodes each span
into typed entries.  What msgspec would let through silently is checked on
the bytes before its answer is trusted:

* a repeated key: between two spans only the next key may stand (a dropped
  repeat would sit there), and inside a span the ``:`` count must equal the
  keys decoded;
* a backslash (escaped keys, lone surrogates), or a number that may overflow
  (``_risky_numbers``): that span is parsed by the exact parser;
* every other member (format, IDs, system, failures) is parsed by the exact
  parser, on the document with ``rankings`` emptied.

Whenever anything is off, the exact reader reads the whole document and
raises what it raises, so errors keep their codes, messages and locations;
the fast path itself never reports an error.  A query's entries become
columns at once, and parts of about ``PART_BYTES`` of JSON are handed on, so
the scorer holds one part's strings at a time.  A part in the canonical
layout (what trec-bridge writes) skips the objects altogether:
json_run_columns.py reads it with polars' CSV reader and checks every field.
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

from . import json_run
from .json_run_columns import canonical_columns
from . import strict_json as sj

PART_BYTES = 64 << 20  # JSON bytes per part handed on (about 1.5M entries)
_WS = b" \t\r\n"


class _Entry(msgspec.Struct, forbid_unknown_fields=True):
    doc_id: str
    score: Union[float, msgspec.UnsetType] = msgspec.UNSET


class _Scored(msgspec.Struct, forbid_unknown_fields=True):
    """The usual entry, decoded about twice as fast as the general one."""

    doc_id: str
    score: float


_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_SCORED = msgspec.json.Decoder(list[_Scored])
_ENTRIES = msgspec.json.Decoder(list[Union[str, _Entry]])
INT64_LIMIT = 2.0 ** 63  # an integer literal this large is refused by the exact reader; a float literal is not
_DOC, _SCORE = attrgetter("doc_id"), attrgetter("score")


class _Fallback(Exception):
    """Something the fast path does not vouch for: the exact reader decides."""


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
                        part_bytes: int = PART_BYTES) -> Iterator[Run] | None:
    """The run in parts (every query whole in one), or None when the file is not a trec-bridge run document.

    Errors are raised while iterating, as the exact reader raises them.
    """
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
        raise _Fallback("BOM or NUL byte")
    raw_rankings = top.get("rankings")
    if raw_rankings is None:
        raise _Fallback("no rankings")
    base = _address(data)
    start = _address(raw_rankings) - base
    end = start + len(raw_rankings)
    skeleton = sj.parse_json(bytes(data[:start]) + b"{}" + bytes(data[end:]), file)
    sj.check_format(skeleton, json_run.FORMAT, file)
    sj.validate(skeleton, json_run.SCHEMA, file, json_run.LIGHT)
    spans = _query_spans(data, raw_rankings, base, start, end)
    failures = skeleton.get("failures", {})
    if any(q in failures for q, _ in spans) or not all(map(sj.id_is_valid, (q for q, _ in spans))):
        raise _Fallback("query IDs")
    shell = json_run._to_model({**skeleton, "rankings": {}}, file, allow_duplicates, queries=[q for q, _ in spans])
    first = True
    for chunk in _chunks(spans, base, part_bytes):
        yield _chunk_part(data, chunk, base, shell, file, allow_duplicates, first)
        first = False
    if first:  # no query at all
        yield _part([], shell, file, allow_duplicates, first)


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
    located = [(q, _address(raw) - base, _address(raw) - base + len(raw)) for q, raw in chunk]
    columns = canonical_columns(data, located)
    if columns is None:
        return _part([(q, _decode(raw, q, file)) for q, raw in chunk], shell, file, allow_duplicates, first)
    counts, docs, scores = columns
    return _frame_part([q for q, _ in chunk], counts, docs, scores, shell, file, allow_duplicates, first)


def _address(buffer) -> int:
    return np.frombuffer(memoryview(buffer), dtype=np.uint8).ctypes.data


def _query_spans(data, raw_rankings, base: int, start: int, end: int) -> list[tuple[str, msgspec.Raw]]:
    """(query ID, raw ranking) in document order, refused unless only ``"key":`` stands between spans."""
    if bytes(data[start:start + 1]) != b"{":
        raise _Fallback("rankings is not an object")
    rankings = _TOP.decode(raw_rankings)
    at = start + 1
    spans = []
    for q, raw in rankings.items():
        offset = _address(raw) - base
        gap = bytes(data[at:offset]).strip(_WS)
        if spans:
            if gap[:1] != b",":
                raise _Fallback("gap")
            gap = gap[1:].lstrip(_WS)
        if gap[-1:] != b":" or gap[:-1].rstrip(_WS) != b'"' + q.encode() + b'"' or b"\\" in gap:
            raise _Fallback("a key between spans that is not the next query (a repeated key?)")
        if bytes(data[offset:offset + 1]) != b"[":
            raise _Fallback("ranking is not an array")
        spans.append((q, raw))
        at = offset + len(raw)
    if bytes(data[at:end]).strip(_WS) != b"}":
        raise _Fallback("trailing bytes in rankings")
    return spans


def _decode(raw: msgspec.Raw, q: str, file: str) -> tuple[list, list]:
    """(doc IDs, scores) of one query's ranking, from msgspec when the bytes vouch for it, else the exact parser."""
    span = bytes(raw)
    if b"\\" in span:
        return _exact_query(span, q, file)
    try:
        entries = _SCORED.decode(span)
        scores = list(map(_SCORE, entries))
        if span.count(b":") == 2 * len(entries) and not _huge(scores):  # else a repeated key, ':' inside IDs,
            return list(map(_DOC, entries)), scores  # or an integer literal the exact reader refuses
        return _exact_query(span, q, file)
    except msgspec.ValidationError:
        pass  # bare IDs, or entries without a score: the general decoder below
    except (msgspec.DecodeError, RecursionError):
        return _exact_query(span, q, file)
    try:
        entries = _ENTRIES.decode(span)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return _exact_query(span, q, file)
    kinds = set(map(type, entries))
    colons = span.count(b":")
    if kinds <= {str} and colons == 0:
        return entries, [None] * len(entries)
    if kinds != {_Entry}:
        return _exact_query(span, q, file)  # bare IDs and objects mixed, or ':' inside bare IDs
    scores = list(map(_SCORE, entries))
    unset = scores.count(msgspec.UNSET)
    if colons != 2 * len(entries) - unset:
        return _exact_query(span, q, file)  # a repeated key, or ':' inside IDs
    if unset:
        scores = [None if s is msgspec.UNSET else s for s in scores]
        if _huge([s for s in scores if s is not None]):
            return _exact_query(span, q, file)
    elif _huge(scores):
        return _exact_query(span, q, file)
    return list(map(_DOC, entries)), scores


def _exact_query(span: bytes, q: str, file: str) -> tuple[list, list]:
    """One query's ranking through the exact parser; any refusal sends the whole file to the exact reader."""
    entries = sj.parse_json(span, file)
    if not isinstance(entries, list):
        raise _Fallback("not a list")
    _, docs, scores, _ = json_run._columns({q: entries}, file)
    return docs, scores


def _part(out: list, shell: Run, file: str, allow_duplicates: bool, first: bool) -> Run:
    """A Run of the queries in ``out`` (query, (doc IDs, scores)), checked as the exact reader checks."""
    docs, scores = [], []
    for _, (d, s) in out:
        docs.extend(d)
        scores.extend(s)
    sj.check_ids(docs, lambda k: _where(out, k), file)
    counts = np.array([len(d) for _, (d, _) in out], dtype=np.int64)
    return _frame_part([q for q, _ in out], counts, pl.Series("doc_id", docs, dtype=pl.String),
                       pl.Series("score", scores, dtype=pl.Float64), shell, file, allow_duplicates, first)


def _frame_part(queries: list[str], counts: np.ndarray, docs: pl.Series, scores: pl.Series, shell: Run, file: str,
                allow_duplicates: bool, first: bool) -> Run:
    """The part's Run from its columns (IDs already checked); the first part carries the failures."""
    query_ids = pl.Series("query_id", queries, dtype=pl.String)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    frame = pl.DataFrame({"query_id": query_ids.gather(np.repeat(np.arange(len(queries), dtype=np.int64), counts)),
                          "doc_id": docs, "score": scores,
                          "rank": np.arange(1, len(docs) + 1, dtype=np.int64) - starts}, schema=RUN_SCHEMA)
    if not allow_duplicates and _may_repeat(query_ids, counts, docs):
        json_run._check_duplicates(frame, file)
    return Run(frame=frame, queries=tuple(queries), failures=shell.failures if first else {},
               run_id=shell.run_id, dataset_id=shell.dataset_id, dataset_version=shell.dataset_version,
               metadata=shell.metadata, order=None, order_source=shell.order_source, source=file,
               unique_checked=not allow_duplicates)


def _huge(scores: list) -> bool:
    """A score of 2**63 or more: msgspec reads an integer literal beyond int64 as a float, which the exact
    reader refuses, so that query goes to the exact parser (a float literal that large passes there too)."""
    return bool(scores) and max(max(scores), -min(scores)) >= INT64_LIMIT


def _may_repeat(queries: pl.Series, counts: np.ndarray, docs: pl.Series) -> bool:
    """Whether a document may be listed twice in a query: equal 64-bit hashes of (query, document)."""
    keys = np.sort(pair_keys_of_blocks(queries, counts, docs))
    return bool((keys[1:] == keys[:-1]).any())


def _where(out: list, k: int) -> tuple:
    for q, (d, _) in out:
        if k < len(d):
            return ("rankings", q, k)
        k -= len(d)
    return ("rankings",)


def join_parts(parts: list[Run]) -> Run:
    """One Run of parts read from one file (queries in order; the failures and metadata of whichever part carries
    them: the first of a run document, the last of a JSON Lines file, which learns its failures and timing last)."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    frame = pl.concat([p.frame for p in parts], rechunk=True)
    metadata = {k: v for p in parts for k, v in p.metadata.items()}
    return Run(frame=frame, queries=tuple(q for p in parts for q in p.queries),
               failures={q: r for p in parts for q, r in p.failures.items()},
               run_id=first.run_id, dataset_id=first.dataset_id, dataset_version=first.dataset_version,
               metadata=metadata, order=None, order_source=first.order_source, source=first.source,
               unique_checked=first.unique_checked)
