"""A run read in parts (a JSON run, every query whole in one part) written as a TREC file part by part.

``trec_run.write_trec_run`` holds the whole run and its whole text: 1.1 GB for
W1.  The lines of each part are the same (ordered frame, the same per-query
choice of scores, the same text), so writing them one part at a time gives the
same bytes.  Without a sidecar only: a sidecar's manifest hashes the TREC file
and is renamed before it, which this writer leaves to the whole-run path.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass

from trec_bridge.errors import InvalidInput
from trec_bridge.model import QueryNotContiguous, Run
from trec_bridge.outputs import atomic_write
from trec_bridge.writeback import Writeback

from . import sidecar as _sidecar
from .trec_run import DEFAULT_TAG, ScoreMode, TrecWriteInfo, check_writable_ids, choose_scores, ordered_frame, \
    trec_lines
from .trec_run_parts import one_ahead


class _Doubt(Exception):
    """The whole-run writer decides (an empty run, an error it words itself)."""


@dataclass
class Written:
    info: TrecWriteInfo
    lines: int = 0
    order_source: str = "list"


def write_trec_run_parts(parts: Iterator[Run], path: str | os.PathLike, scores: ScoreMode = "auto") -> Written | None:
    """``write_trec_run(whole run, path, sidecar=False, scores)`` part by part, the same bytes; None, with nothing
    written, where the whole-run writer must decide (an error reading or writing, a gzip target, a stale
    sidecar to remove, no line)."""
    target = str(path)
    if target.endswith(".gz") or _sidecar.is_ours(_sidecar.sidecar_path(target)):
        return None
    done = Written(TrecWriteInfo(path=target))
    try:
        atomic_write(path, lambda fh: _write(parts, fh, target, scores, done))
    except (_Doubt, InvalidInput, QueryNotContiguous, ValueError):
        return None
    return done


def _write(parts: Iterator[Run], fh, target: str, scores: ScoreMode, done: Written) -> None:
    """The parts' lines written in order; making a part's frame (the JSON reader's, in ``_texts``' feeder),
    its checks and text (``_texts``) and writing (here) each in its own thread, one part ahead, as
    json_run_dump writes JSON: the caller's thread did them in turn and was the longer step."""
    info, writeback = done.info, Writeback(fh)
    with closing(_texts(parts, target, scores)) as texts, closing(one_ahead(texts)) as ahead:
        for part, frame, choice, text in ahead:
            fh.write(text.getbuffer())
            writeback.after_part()
            done.lines += frame.height
            done.order_source = part.order_source
            ranked = set(frame.get_column("query_id").unique().to_list())
            info.synthetic_queries += list(choice.synthetic)
            info.synthetic_reasons.update(choice.synthetic)
            info.kept_as_tools_read.update(choice.kept)
            info.empty_queries += [q for q in part.queries if q not in ranked]
            info.failed_queries += list(part.failures)
    if not done.lines:
        raise _Doubt("no ranked document: the whole-run writer refuses it")


def _texts(parts: Iterator[Run], target: str, scores: ScoreMode) -> Iterator[tuple]:
    """(part, ordered frame, chosen scores, TREC text) of each part, the parts made one ahead in another thread."""
    with closing(one_ahead(parts)) as made:
        for part in made:
            frame = ordered_frame(part)
            tag = part.run_id if part.run_id is not None else DEFAULT_TAG
            check_writable_ids(frame, tag, target)
            choice = choose_scores(frame, keep_tool_ties=scores == "keep" or (scores == "auto" and
                                                                               part.order_source == "score"),
                                   keep_off_order=scores == "keep")
            yield part, frame, choice, trec_lines(frame, choice, tag)
