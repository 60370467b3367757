"""A run read in parts (a JSON run, every query whole in one part) written as a TREC file part by part.

``trec_run.write_trec_run`` holds the whole run and its whole text: 1.1 GB for
W1.  The lines of each part are the same (ordered frame, the same per-query
choice of scores, the same text), so writing them one part at a time gives the
same bytes.  So does the sidecar: what it keeps of each query (its documents,
the own scores of a query written n..1) is gathered part by part, the run's
IDs, failures and metadata joined as ``json_run_decode.join_parts`` joins the
parts, and its hash is taken of the bytes as they are written.  It is written
after the TREC file and renamed into place before it, as the whole-run writer
renames them (a kill in between leaves a sidecar that names the new bytes next
to the old file: refused on reading, never applied to the wrong file).
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from trec_bridge.errors import InvalidInput
from trec_bridge.model import QueryNotContiguous, Run
from trec_bridge.outputs import write_files
from trec_bridge.writeback import Writeback

from . import sidecar as _sidecar
from .json_run_decode import joined_fields
from .trec_run import DEFAULT_TAG, ScoreMode, TrecWriteInfo, check_writable_ids, choose_scores, ordered_frame, \
    write_trec_lines
from .trec_run_parts import one_ahead


class _Doubt(Exception):
    """The whole-run writer decides (an empty run, an error it words itself)."""


@dataclass
class Written:
    info: TrecWriteInfo
    lines: int = 0
    order_source: str = "list"


@dataclass
class _Kept:
    """What the sidecar keeps of the parts written so far."""

    parts: list = field(default_factory=list)  # the parts' shells (their frames dropped)
    counts: dict = field(default_factory=dict)  # query -> documents
    unscored: list = field(default_factory=list)
    original: dict = field(default_factory=dict)  # query written n..1 -> its own scores

    def add(self, part: Run, frame, synthetic: list[str]) -> None:
        self.parts.append(Run(frame=None, queries=part.queries, failures=part.failures, run_id=part.run_id,
                              dataset_id=part.dataset_id, dataset_version=part.dataset_version,
                              metadata=part.metadata, order=part.order, order_source=part.order_source))
        self.counts.update(_sidecar.document_counts(frame))
        unscored, original = _sidecar.synthetic_originals(frame, synthetic)
        self.unscored += unscored
        self.original.update(original)

    def run(self) -> Run:
        """The run's shell as ``join_parts`` makes it of the parts (its failures, metadata, IDs and order)."""
        return Run(frame=None, **joined_fields(self.parts))


class _Hashed:
    """A binary file that hashes what is written to it (the sidecar names the TREC file by its SHA-256)."""

    def __init__(self, fh, digest) -> None:
        self._fh, self._digest = fh, digest

    def write(self, data) -> int:
        self._digest.update(data)
        return self._fh.write(data)

    def flush(self) -> None:
        self._fh.flush()


def write_trec_run_parts(parts: Iterator[Run], path: str | os.PathLike, scores: ScoreMode = "auto",
                         sidecar: bool = False) -> Written | None:
    """``write_trec_run(whole run, path, sidecar, scores)`` part by part, the same bytes (the sidecar's too);
    None, with nothing written, where the whole-run writer must decide (an error reading or writing, a gzip
    target, no line)."""
    target = str(path)
    if target.endswith(".gz"):
        return None
    side = _sidecar.sidecar_path(target)
    done = Written(TrecWriteInfo(path=target))
    kept, digest = (_Kept(), hashlib.sha256()) if sidecar else (None, None)
    write_trec = (lambda fh: _write(parts, fh, target, scores, done, kept, digest))
    try:
        if sidecar:
            write_files([(target, write_trec), (side, lambda fh: fh.write(_manifest_text(kept, target, side, digest)))],
                        rename_order=[1, 0])
            done.info.sidecar = str(side)
        else:  # the TREC file first, then a stale sidecar goes (write_trec_run says why)
            write_files([(target, write_trec)], then_remove=[side] if _sidecar.is_ours(side) else [])
    except (_Doubt, InvalidInput, QueryNotContiguous, ValueError):
        return None
    return done


def _manifest_text(kept: _Kept, target: str, side: Path, digest) -> bytes:
    manifest = _sidecar.run_manifest(kept.run(), kept.counts, kept.unscored, kept.original, Path(target).name,
                                     digest.hexdigest())
    return _sidecar.render_manifest(manifest, side).encode("utf-8")


def _write(parts: Iterator[Run], fh, target: str, scores: ScoreMode, done: Written, kept: _Kept | None,
           digest) -> None:
    """The parts' lines written in order: making a part's frame (the JSON reader's, in ``_written``'s feeder)
    and its checks and text, written as polars makes it (``_written``), each in its own thread, one part ahead;
    here what the notes and the sidecar need of each part."""
    info = done.info
    sink = fh if digest is None else _Hashed(fh, digest)
    with closing(_written(parts, sink, Writeback(fh), target, scores)) as written, \
            closing(one_ahead(written)) as ahead:
        for part, frame, choice in ahead:
            done.lines += frame.height
            done.order_source = part.order_source
            ranked = set(choice.ranked)
            info.synthetic_queries += list(choice.synthetic)
            info.synthetic_reasons.update(choice.synthetic)
            info.kept_as_tools_read.update(choice.kept)
            info.empty_queries += [q for q in part.queries if q not in ranked]
            info.failed_queries += list(part.failures)
            if kept is not None:
                kept.add(part, frame, list(choice.synthetic))
    if not done.lines:
        raise _Doubt("no ranked document: the whole-run writer refuses it, or writes it with its sidecar")


def _written(parts: Iterator[Run], sink, writeback: Writeback, target: str, scores: ScoreMode) -> Iterator[tuple]:
    """(part, ordered frame, chosen scores) of each part once its lines are written to ``sink``, the parts made
    one ahead in another thread."""
    with closing(one_ahead(parts)) as made:
        for part in made:
            frame = ordered_frame(part)
            tag = part.run_id if part.run_id is not None else DEFAULT_TAG
            check_writable_ids(frame, tag, target)
            choice = choose_scores(frame, keep_tool_ties=scores == "keep" or (scores == "auto" and
                                                                               part.order_source == "score"),
                                   keep_off_order=scores == "keep")
            write_trec_lines(frame, choice, tag, sink)
            writeback.after_part()
            yield part, frame, choice
