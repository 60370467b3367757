"""Scoring one run file or object end to end: the steps ``trec-bridge score`` and the Python API share.

The CLI parses arguments, prints and picks exit codes; what it scores, and
how the result is labelled (the query file's metadata, the measure notes,
the input fingerprints), is done here, so that ``tb.score`` and the command
give the same result and report for the same inputs.
"""
from __future__ import annotations

from contextlib import closing
from typing import Iterable

from .measures.base import Measure
from .model import ChunkMap, Dataset, Run
from .policy import Policy
from .scorer import Prepared, ScoreResult, evaluate, prepare_for


def score_file_in_parts(dataset: Dataset, run_path: str, measures: list[Measure], policy: Policy, *,
                        order: str = "score", split: str | None = None, fingerprint: bool = False,
                        seen: dict | None = None, judgments=None) -> ScoreResult | None:
    """Score a plain TREC run, a run JSON document, a run in JSON Lines, a Parquet file or folder part by part
    (bounded memory); None when it must be read whole.

    Whole means: a dataset that collapses chunks (its own chunk map), a
    gzipped TREC file, one with a sidecar, another JSON layout (ranx), or a
    TREC query whose lines are split by another query's across parts.
    ``seen``: filled with the parts' run metadata (system, timing, ...);
    ``judgments``: made once for many runs (``scorer.score_parts``).
    """
    from .model import QueryNotContiguous
    from .scorer import score_parts

    if dataset.chunk_map is not None:  # the dataset's own chunk map collapses the run: read it whole
        return None
    parts = _run_parts(run_path, order, fingerprint)
    if parts is None:
        return None
    try:
        with closing(_watched(parts, {} if seen is None else seen)) as watched:  # closed at once on any exit
            return score_parts(dataset, watched, measures, policy, split=split, judgments=judgments)
    except QueryNotContiguous:
        return None


def _watched(parts, seen: dict):
    """``parts`` passed on, their run metadata gathered into ``seen``; closing it closes ``parts``."""
    with closing(parts):
        for part in parts:
            seen.update(part.metadata)
            yield part


def _run_parts(run_path: str, order: str, fingerprint: bool):
    """The run file's parts, read by the reader of its format; None when the file is read whole."""
    from converters.detect import columnar_kind, is_json, is_run_lines
    from converters.trec_run_parts import can_read_in_parts, read_trec_run_parts

    kind = columnar_kind(run_path)
    if kind is not None:  # a Parquet folder: one partition file at a time; one file: by row groups; Arrow: whole
        from converters.columnar import partition_files
        from converters.columnar_parts import read_folder_parts, read_parquet_file_parts

        if partition_files(run_path, kind) is not None:
            return read_folder_parts(run_path)
        return read_parquet_file_parts(run_path) if kind == "parquet" else None
    if is_json(run_path) and is_run_lines(run_path):
        from converters.json_run_lines import read_run_lines_parts

        return read_run_lines_parts(run_path)
    if is_json(run_path):
        from converters.json_run_fast import read_run_parts_fast

        return read_run_parts_fast(run_path)  # None: another JSON layout (ranx)
    if can_read_in_parts(run_path):
        return read_trec_run_parts(run_path, order=order, fingerprint=fingerprint)
    return None


def score_whole(dataset: Dataset, run: Run, measures: list[Measure], policy: Policy, *, split: str | None = None,
                chunk_map: ChunkMap | None = None) -> tuple[Prepared, ScoreResult]:
    """Check and score a run held whole; the prepared run too (the RAG analyses read it again)."""
    prepared = prepare_for(dataset, run, measures, policy, split=split, chunk_map=chunk_map)
    return prepared, evaluate(prepared, measures, policy)


def label(result: ScoreResult, dataset: Dataset, notes: Iterable[str]) -> ScoreResult:
    """What the report says besides the scores: a query file's metadata, and the notes of reading the measures
    (a measure listed twice, ...)."""
    if dataset.query_source == "query_file":
        result.extra.update(dataset.metadata)
    notes = list(notes)
    if notes:
        result.extra["measures"] = notes
    return result


def input_fingerprints(roles: dict[str, str], hashed: bool) -> dict[str, dict]:
    """The report's inputs: each role's path and SHA-256 (None when not ``hashed``: no hashing of a 7M-line run
    for a table that does not show it)."""
    from .files import sha256_file

    return {role: {"path": path, "sha256": sha256_file(path) if hashed else None} for role, path in roles.items()}
