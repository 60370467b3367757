"""A run file cut into pieces that other processes read each on their own (a Dask cluster's workers).

A piece is a small description -- a byte range of a plain TREC run, one
partition file of a Parquet folder -- that travels to a worker, which reads
and scores it there (``score_piece``), so the run's lines never pass through
the client.  The cuts are the ones ``score`` reads the file in, so a piece
holds every query whole and reads exactly as that part would.  Files of
other kinds (gzip, a sidecar, JSON, one Parquet or Arrow file) are not cut:
``pieces_of`` says None, and the whole file is scored by one worker.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import TrecBridgeError
from .part_scores import PartJob, PartScores


@dataclass(frozen=True)
class TrecRange:
    """Bytes [start, end) of a plain TREC run, at query boundaries (``trec_run_parts.query_ranges``)."""

    path: str
    start: int
    end: int

    def read(self, job: PartJob):
        from converters.trec_run_parts import read_trec_range

        return read_trec_range(self.path, self.start, self.end, job.order)


@dataclass(frozen=True)
class ColumnarPart:
    """One partition file of a Parquet run folder (``columnar.partition_files``)."""

    folder: str
    part: object  # columnar.Partition

    def read(self, job: PartJob):
        from converters.columnar import read_partition

        return read_partition(self.folder, self.part), 0


@dataclass
class Pieces:
    """A run's pieces, in run order; ``empty_is_error``: the TREC reader's E_FILE_EMPTY when none holds data."""

    pieces: list
    empty_is_error: str | None = None


def pieces_of(path: str) -> Pieces | None:
    """The pieces ``score`` reads ``path`` in, or None when it reads the file whole (or in parts of a kind no
    other process can start reading in the middle of: JSON)."""
    from converters.detect import columnar_kind

    kind = columnar_kind(path)
    if kind is not None:
        from converters.columnar import partition_files

        parts = partition_files(path, kind)
        return None if parts is None else Pieces([ColumnarPart(str(path), p) for p in parts])
    from converters.detect import is_json
    from converters.trec_run_parts import can_read_in_parts, check_head, query_ranges

    if is_json(path) or not can_read_in_parts(path):
        return None
    check_head(path)
    return Pieces([TrecRange(str(path), a, b) for a, b in query_ranges(path)], empty_is_error=str(path))


def score_piece(job: PartJob, piece) -> PartScores:
    """Read and score one piece where it lands; an error reading it travels back, raised at its place."""
    try:
        run, lines = piece.read(job)
        if run is not None:
            job.check_ids(run)
        return job.score(run, lines)
    except TrecBridgeError as exc:
        return PartScores(error=exc)
