"""One query's ranking decoded, and a part's Run built from decoded lists or from columns.

Shared by the run readers (json_run_fast.py, json_run_stream.py,
json_run_lines.py).  msgspec decodes a ranking into typed entries, but its
answer is trusted only where the bytes vouch for it: the ``:`` count of a span
equals the keys decoded (a repeated key inside an entry), and a span with a
backslash (escaped keys, surrogates) or an integer beyond int64 goes to the
exact parser on its own.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Union

import msgspec
import numpy as np
import polars as pl

from trec_bridge.model import RUN_SCHEMA, Run
from trec_bridge.ordering import keys_repeat, pair_keys_of_blocks

from . import json_run
from . import strict_json as sj


class _Entry(msgspec.Struct, forbid_unknown_fields=True):
    doc_id: str
    score: Union[float, msgspec.UnsetType] = msgspec.UNSET


class _Scored(msgspec.Struct, forbid_unknown_fields=True):
    """The usual entry, decoded about twice as fast as the general one."""

    doc_id: str
    score: float


_SCORED = msgspec.json.Decoder(list[_Scored])
_ENTRIES = msgspec.json.Decoder(list[Union[str, _Entry]])
INT64_LIMIT = 2.0 ** 63  # an integer literal this large is refused by the exact reader; a float literal is not
_DOC, _SCORE = attrgetter("doc_id"), attrgetter("score")


class Fallback(Exception):
    """Something the fast path does not vouch for: the exact reader decides."""


def address(buffer) -> int:
    return np.frombuffer(memoryview(buffer), dtype=np.uint8).ctypes.data


def decode_ranking(raw: msgspec.Raw, q: str, file: str) -> tuple[list, list]:
    """(doc IDs, scores) of one query's ranking, from msgspec when the bytes vouch for it, else the exact parser."""
    span = bytes(raw)
    if b"\\" in span:
        return exact_ranking(span, q, file)
    try:
        entries = _SCORED.decode(span)
        scores = list(map(_SCORE, entries))
        if span.count(b":") == 2 * len(entries) and not _huge(scores):  # else a repeated key, ':' inside IDs,
            return list(map(_DOC, entries)), scores  # or an integer literal the exact reader refuses
        return exact_ranking(span, q, file)
    except msgspec.ValidationError:
        pass  # bare IDs, or entries without a score: the general decoder below
    except (msgspec.DecodeError, RecursionError):
        return exact_ranking(span, q, file)
    try:
        entries = _ENTRIES.decode(span)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return exact_ranking(span, q, file)
    kinds = set(map(type, entries))
    colons = span.count(b":")
    if kinds <= {str} and colons == 0:
        return entries, [None] * len(entries)
    if kinds != {_Entry}:
        return exact_ranking(span, q, file)  # bare IDs and objects mixed, or ':' inside bare IDs
    scores = list(map(_SCORE, entries))
    unset = scores.count(msgspec.UNSET)
    if colons != 2 * len(entries) - unset:
        return exact_ranking(span, q, file)  # a repeated key, or ':' inside IDs
    if unset:
        scores = [None if s is msgspec.UNSET else s for s in scores]
        if _huge([s for s in scores if s is not None]):
            return exact_ranking(span, q, file)
    elif _huge(scores):
        return exact_ranking(span, q, file)
    return list(map(_DOC, entries)), scores


def exact_ranking(span: bytes, q: str, file: str) -> tuple[list, list]:
    """One query's ranking through the exact parser; any refusal sends the whole file to the exact reader."""
    entries = sj.parse_json(span, file)
    if not isinstance(entries, list):
        raise Fallback("not a list")
    _, docs, scores, _ = json_run._columns({q: entries}, file)
    return docs, scores


def lists_part(out: list, shell: Run, file: str, allow_duplicates: bool, first: bool) -> Run:
    """A Run of the queries in ``out`` (query, (doc IDs, scores)), checked as the exact reader checks."""
    docs, scores = [], []
    for _, (d, s) in out:
        docs.extend(d)
        scores.extend(s)
    sj.check_ids(docs, lambda k: _where(out, k), file)
    counts = np.array([len(d) for _, (d, _) in out], dtype=np.int64)
    return columns_part([q for q, _ in out], counts, pl.Series("doc_id", docs, dtype=pl.String),
                       pl.Series("score", scores, dtype=pl.Float64), shell, file, allow_duplicates, first)


def columns_part(queries: list[str], counts: np.ndarray, docs: pl.Series, scores: pl.Series, shell: Run, file: str,
                allow_duplicates: bool, first: bool) -> Run:
    """The part's Run from its columns (IDs already checked); the first part carries the failures."""
    query_ids = pl.Series("query_id", queries, dtype=pl.String)
    starts = np.cumsum(counts) - counts
    frame = pl.DataFrame({"query_id": query_ids.gather(np.repeat(np.arange(len(queries), dtype=np.int64), counts)),
                          "doc_id": docs, "score": scores,
                          "rank": np.arange(1, len(docs) + 1, dtype=np.int64) - np.repeat(starts, counts)},
                         schema=RUN_SCHEMA)
    keys = pair_keys_of_blocks(query_ids, counts, docs)
    ranked = np.flatnonzero(counts)  # the scorer's query blocks and pair keys, as the TREC reader hands them over
    if not allow_duplicates and keys_repeat(keys, starts[ranked]):  # a part's queries are distinct: one block each
        json_run._check_duplicates(frame, file)
    run = Run(frame=frame, queries=tuple(queries), failures=shell.failures if first else {},
              run_id=shell.run_id, dataset_id=shell.dataset_id, dataset_version=shell.dataset_version,
              metadata=shell.metadata, order=None, order_source=shell.order_source, source=file,
              unique_checked=not allow_duplicates)
    run.remember_blocks(starts[ranked], [queries[i] for i in ranked])
    run.remember_pair_keys(keys)
    return run


def _huge(scores: list) -> bool:
    """A score of 2**63 or more: msgspec reads an integer literal beyond int64 as a float, which the exact
    reader refuses, so that query goes to the exact parser (a float literal that large passes there too)."""
    return bool(scores) and max(max(scores), -min(scores)) >= INT64_LIMIT


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
    return Run(frame=pl.concat([p.frame for p in parts], rechunk=True), **joined_fields(parts))


def joined_fields(parts: list[Run]) -> dict:
    """Everything but the frame of the Run ``join_parts`` makes of these parts (the TREC writer's sidecar, which
    keeps no frame, joins the parts' shells so)."""
    first = parts[0]
    return dict(queries=tuple(q for p in parts for q in p.queries),
                failures={q: r for p in parts for q, r in p.failures.items()},
                run_id=first.run_id, dataset_id=first.dataset_id, dataset_version=first.dataset_version,
                metadata={k: v for p in parts for k, v in p.metadata.items()},
                order=first.order if len(parts) == 1 else None, order_source=first.order_source,
                source=first.source, unique_checked=first.unique_checked)
