"""Writing a run JSON document at TREC speed, byte for byte the canonical layout ``json_run.dump_run`` writes.

``dump_run`` builds a dict per entry, re-reads the whole document to prove it
loadable and renders it entry by entry with ``json.dumps``: 20 s for 7M
entries.  Here the same checks run on columns (IDs against the ID pattern,
finite scores, repeats, queries both ranked and failed), the members other
than ``rankings`` go through the exact path (``json_run``'s header, rendered
and re-parsed strictly), and each query's line is assembled by polars:
IDs escaped as ``json.dumps`` escapes them, scores as ``repr`` prints them
(polars' shortest text agrees with ``repr`` from 1e-4 to 1e16; other scores
take ``repr`` itself).  Whenever a check doubts the run, ``json_run.dump_run``
writes it, or refuses it with its own message.
"""
from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from trec_bridge.errors import InvalidInput
from trec_bridge.files import atomic_write
from trec_bridge.model import QueryNotContiguous, Run
from trec_bridge.ordering import keys_repeat, pair_keys_of_blocks
from trec_bridge.writeback import Writeback

from . import json_run
from . import strict_json as sj
from .char_scan import any_holds
from .trec_run_parts import one_ahead

_PLACEHOLDER = '\n  "rankings": {}'  # the header rendered with empty rankings, at the top level's indent
LINES_FORMAT = "trec-bridge.run-lines"  # json_run_lines.FORMAT (which imports this module)
POSITIONAL = (1e-4, 1e16)
SEPARATOR = b", "  # between two entries of a list  # where polars' float text is repr's


class _Doubt(Exception):
    """The run may be refused: the exact writer decides, with its message."""


def dump_run(run: Run, path: str | os.PathLike) -> None:
    """Write ``run`` as ``json_run.dump_run`` would (same bytes, same refusals), atomically."""
    try:
        pieces = render_run(run)
    except _Doubt:
        json_run.dump_run(run, path)  # refuses with its own message, or writes what was only doubted
        return
    atomic_write(path, lambda fh: fh.writelines(pieces))


def render_run(run: Run) -> list:
    """The document's bytes, in pieces (views into one buffer, not copies); raises ``_Doubt`` where the exact
    writer must look."""
    frame = run.own_frame()
    _check(run, frame)
    header = json_run.run_header(run)
    tail = json_run.tail_of(run)
    try:
        text = sj.render({**header, "rankings": {}, **tail}, json_run._LAYOUT)
        sj.encode_checked(text, strict=True, file=None)  # the header and tail as the loader reads them
        json_run.document_to_run({**header, "rankings": {}, **tail}, None, queries=run.queries)
    except InvalidInput:
        raise _Doubt("header") from None
    if text.count(_PLACEHOLDER) != 1:
        raise _Doubt("layout")
    try:
        head, tail_text = (sj.encode_checked(t, strict=False, file=None) for t in text.split(_PLACEHOLDER))
    except InvalidInput:
        raise _Doubt("encoding") from None
    return [head, b'\n  "rankings": ', *_rankings_text(run, frame), tail_text]


def _check(run: Run, frame: pl.DataFrame) -> None:
    """What the loader would refuse in the rankings, on columns."""
    if not all(map(sj.id_is_valid, run.queries)) or set(run.queries) & set(run.failures):
        raise _Doubt("query IDs")
    docs = frame.get_column("doc_id")
    if (docs.str.len_bytes() == 0).any() or any_holds(docs, sj.ID_BAD_CHARS):
        raise _Doubt("document IDs")
    scores = frame.get_column("score")
    if (scores.is_nan() | scores.is_infinite()).any():
        raise _Doubt("scores")
    queries, counts = _groups(frame)
    if len(set(queries)) != len(queries):
        raise _Doubt("rows not grouped by query")
    if not set(queries) <= set(run.queries):
        raise _Doubt("rows of a query not in Run.queries")
    starts = np.cumsum(counts) - counts
    if frame.height and not np.array_equal(frame.get_column("rank").to_numpy(),
                                           np.arange(frame.height) - np.repeat(starts, counts) + 1):
        raise _Doubt("ranks")
    if run.unique_checked and frame is run.frame:  # the reader refused a repeat in this very frame
        return
    if keys_repeat(pair_keys_of_blocks(pl.Series(queries, dtype=pl.String), counts, docs), starts):  # one block a query
        raise _Doubt("a document may be listed twice")


def _groups(frame: pl.DataFrame) -> tuple[list[str], np.ndarray]:
    """The runs of equal query IDs in row order: (query IDs, rows each); one run a query once grouped."""
    if not frame.height:
        return [], np.zeros(0, dtype=np.int64)
    runs = frame.get_column("query_id").rle()
    return runs.struct.field("value").to_list(), runs.struct.field("len").to_numpy().astype(np.int64)


def _rankings_text(run: Run, frame: pl.DataFrame) -> list:
    """``{\n    "q": [entries],\n ...\n  }``, as ``sj.render`` lays out the rankings (``{}`` when none)."""
    if not run.queries:
        return [b"{}"]
    lists = entry_lists(frame)
    pieces = [b"{\n"]
    for i, q in enumerate(run.queries):
        pieces += [b",\n    " if i else b"    ", json_text(q), b": [", lists.get(q, b""), b"]"]
    pieces.append(b"\n  }")
    return pieces


def entry_lists(frame: pl.DataFrame) -> dict[str, memoryview]:
    """Query ID -> the text of its entries, ``json.dumps``-compact and ", "-separated (without the brackets).

    Every entry's text is made in one polars pass; polars writes them end to
    end, each followed by ", " (``write_csv``'s line end), so each query's
    list is one view of that buffer, never copied.
    """
    docs = pl.col("doc_id")
    if any_holds(frame.get_column("doc_id"), r'["\\]'):  # json.dumps escapes these two in an ID
        docs = docs.str.replace_all("\\", "\\\\", literal=True).str.replace_all('"', '\\"', literal=True)
    scored = pl.concat_str([pl.lit('{"doc_id": "'), docs, pl.lit('", "score": '), pl.lit(_score_text(frame)),
                            pl.lit("}")])
    if frame.get_column("score").has_nulls():
        scored = pl.when(pl.col("score").is_null()).then(pl.concat_str([pl.lit('"'), docs, pl.lit('"')])).otherwise(
            scored)
    entries = frame.select(scored.alias("e"))
    ends = np.cumsum(entries.get_column("e").str.len_bytes().to_numpy().astype(np.int64) + len(SEPARATOR))
    buffer = io.BytesIO()
    entries.write_csv(buffer, include_header=False, quote_style="never", line_terminator=SEPARATOR.decode())
    body = buffer.getbuffer()
    return {q: body[start:end - len(SEPARATOR)] for q, (start, end) in _query_spans(frame, ends).items()}


def json_text(value: str) -> bytes:
    """``json.dumps(value, ensure_ascii=False)`` as UTF-8; a lone surrogate is left to the exact writer."""
    return _utf8(json.dumps(value, ensure_ascii=False))


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the exact writer names it
        raise _Doubt("encoding") from None


def _query_spans(frame: pl.DataFrame, ends: np.ndarray) -> dict[str, tuple[int, int]]:
    """Query ID -> (start, end) of its entries' bytes in the buffer (rows are grouped by query)."""
    queries, counts = _groups(frame)
    stops = ends[np.cumsum(counts) - 1].tolist() if len(counts) else []
    starts = [0] + stops[:-1]
    return dict(zip(queries, zip(starts, stops)))


def _score_text(frame: pl.DataFrame) -> pl.Series:
    """Each score as ``repr(float)`` writes it (what ``json.dumps`` writes)."""
    scores = frame.get_column("score")
    text = scores.cast(pl.String)
    magnitude = scores.abs()
    other = (scores != 0) & ((magnitude < POSITIONAL[0]) | (magnitude >= POSITIONAL[1]))
    rows = np.flatnonzero(other.fill_null(False).to_numpy())
    if len(rows):
        text = text.scatter(rows, [repr(v) for v in scores.gather(rows).to_list()])
    return text


# ---------------------------------------------------------------- streaming


@dataclass
class Streamed:
    """What a run written part by part held, for the caller's notes."""

    queries: int = 0
    documents: int = 0
    orders: list = field(default_factory=list)  # the parts' QueryOrder records (ties broken, rank disagreements)


def dump_run_parts(parts: Iterator[Run], path: str | os.PathLike, dataset: tuple[str, str | None],
                   lines: bool = False) -> Streamed | None:
    """Write the run read in ``parts`` (a TREC file, every query whole in one part) as ``dump_run`` (or
    ``dump_run_lines``) writes the whole run, byte for byte, one part in memory at a time.

    None, with nothing written, when a part is doubted or the parts cannot be read as one run (an error, a
    query split across parts): the caller then reads and writes the run whole, which gives the exact
    refusal or error.
    """
    done = Streamed()
    try:
        atomic_write(path, lambda fh: _stream(parts, fh, dataset, lines, done))
    except (_Doubt, InvalidInput, QueryNotContiguous, ValueError, TypeError):
        return None
    return done


def _stream(parts: Iterator[Run], fh, dataset: tuple[str, str | None], lines: bool, done: Streamed) -> None:
    """The parts' text written in order: three steps in three threads (the TREC reader parses in its own),
    each on its own part: ordering (the TREC reader's, in ``_rendered``'s feeder), checks and text
    (``_rendered``), writing (here).  The caller's thread did the three in turn and was the whole command's
    longer step (it waited for the parser 0.45 of 10 s)."""
    tail, writeback = None, Writeback(fh)
    with closing(_rendered(parts, dataset, lines)) as rendered, closing(one_ahead(rendered)) as ahead:
        for part, height, ends, pieces in ahead:
            if tail is None:
                head, tail = ends
                fh.write(head)
            fh.writelines(pieces)
            writeback.after_part()
            done.queries += len(part.queries)
            done.documents += height
            done.orders.extend(part.order or ())
    if tail is None:
        raise _Doubt("no part")
    fh.write(tail)


def _rendered(parts: Iterator[Run], dataset: tuple[str, str | None], lines: bool) -> Iterator[tuple]:
    """(part, its rows, the document's head and tail with the first part, the part's text pieces), the parts
    ordered one ahead in another thread."""
    written = 0
    with closing(one_ahead(parts)) as ordered:
        for part in ordered:
            part.dataset_id, part.dataset_version = dataset
            frame = part.own_frame()
            _check(part, frame)
            ends = _head_and_tail(part, lines) if written == 0 else None
            yield part, frame.height, ends, _part_text(part, frame, lines, first=written == 0)
            written += len(part.queries)


def _head_and_tail(part: Run, lines: bool) -> tuple[bytes, bytes]:
    """What stands before the first query and after the last, as the whole-run writers render them (a run read
    from TREC: no failures, no timing)."""
    header = json_run.run_header(part)
    if part.failures or part.metadata.get(json_run.TIMING_KEY):
        raise _Doubt("failures or timing")
    try:
        json_run.document_to_run({**header, "rankings": {}}, None)
        if lines:
            return _utf8(sj._compact({**header, "format": LINES_FORMAT})) + b"\n", b""
        text = sj.render({**header, "rankings": {}}, json_run._LAYOUT)
        sj.encode_checked(text, strict=True, file=None)
    except InvalidInput:
        raise _Doubt("header") from None
    if text.count(_PLACEHOLDER) != 1:
        raise _Doubt("layout")
    head, tail = (_utf8(t) for t in text.split(_PLACEHOLDER))
    return head + b'\n  "rankings": {\n', b"\n  }" + tail


def _part_text(part: Run, frame: pl.DataFrame, lines: bool, first: bool) -> list:
    """The lines of the part's queries (every query of a TREC part has rows)."""
    texts = entry_lists(frame) if frame.height else {}
    pieces = []
    for i, q in enumerate(part.queries):
        if lines:
            pieces += [b'{"query_id": ', json_text(q), b', "ranking": [', texts.get(q, b""), b"]}\n"]
        else:
            pieces += [b"    " if first and i == 0 else b",\n    ", json_text(q), b": [", texts.get(q, b""), b"]"]
    return pieces
