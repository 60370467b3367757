"""Runs and qrels in Parquet (a file, or a folder of partition files) and Arrow IPC, with ir_measures' columns.

A run has ``query_id``, ``doc_id``, ``score`` (and may have ``run_id``, one
value, the run's name); qrels have ``query_id``, ``doc_id``, ``relevance``
(and may have ``iteration``).  The rows go through the same path as a
DataFrame given to the Python API (``python_objects``): integer IDs become
their decimal text, and every strict check applies unchanged (a document
twice in a query, a NaN score, a non-integer grade, a duplicate judgment).
The file kind is told by its name (``detect.columnar_kind``), never sniffed.
"""
from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from trec_bridge.errors import InvalidInput, TrecBridgeError
from trec_bridge.model import Qrels, Run

RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")


def _frame(path: str | Path, kind: str, columns: tuple[str, ...]) -> pl.DataFrame:
    """The file's (or the partition folder's) rows; E_COLUMNAR when unreadable or without ``columns``."""
    name = os.fspath(path)
    if not os.path.exists(name):
        raise InvalidInput("E_FILE_NOT_FOUND", "no such file or folder", file=name)
    try:
        if kind == "ipc":
            lazy = pl.scan_ipc(name)
        else:
            lazy = pl.scan_parquet(name, hive_partitioning=True, hive_schema=_hive_keys(Path(name)),
                                   try_parse_hive_dates=False) if os.path.isdir(name) else pl.scan_parquet(name)
        frame = lazy.collect()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InvalidInput("E_COLUMNAR", f"cannot read this {'Arrow IPC' if kind == 'ipc' else 'Parquet'} "
                           f"input: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                           file=name) from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidInput("E_COLUMNAR", f"lacks column(s) {', '.join(missing)} (ir_measures' names: "
                           f"{', '.join(columns)})", file=name)
    return frame


def _hive_keys(folder: Path) -> dict:
    """Every hive partition key (``query_id=007`` folders) read as text: a partition value is an ID as written,
    never a number polars would infer (007 -> 7)."""
    keys = {}
    for p in folder.rglob("*=*"):
        if p.is_dir():
            keys[p.name.partition("=")[0]] = pl.String
    return keys or None


def _located(exc: TrecBridgeError, path) -> TrecBridgeError:
    """The row checks' error, located in the file it was read from."""
    if getattr(exc.where, "file", None) is None:
        exc.where.file = os.fspath(path)
    return exc


def read_columnar_run(path: str | Path, kind: str) -> Run:
    """A run ordered by score, ties by document ID descending (trec_eval's order, as the TREC reader by score)."""
    from .python_objects import run_from_object

    frame = _frame(path, kind, RUN_COLUMNS)
    run_id = None
    if "run_id" in frame.columns:
        names = frame.get_column("run_id").unique().to_list()
        run_id = str(names[0]) if len(names) == 1 and names[0] is not None else None
    try:
        run = run_from_object(frame.select(RUN_COLUMNS), run_id=run_id)[0]
    except TrecBridgeError as exc:
        raise _located(exc, path) from None
    run.source = os.fspath(path)
    return run


def read_columnar_qrels(path: str | Path, kind: str, subtopics: bool = False) -> Qrels:
    """Qrels with ir_measures' columns; ``subtopics``: a diversity qrels, whose ``iteration`` column is the subtopic."""
    from .python_objects import qrels_from_object

    frame = _frame(path, kind, QRELS_COLUMNS + (("iteration",) if subtopics else ()))
    columns = QRELS_COLUMNS + (("iteration",) if "iteration" in frame.columns else ())
    try:
        return qrels_from_object(frame.select(columns), subtopics=subtopics)[0]
    except TrecBridgeError as exc:
        raise _located(exc, path) from None


def run_frame(run: Run) -> pl.DataFrame:
    """The run's rows in its order, with ir_measures' names (and ``run_id`` when the run names itself)."""
    frame = run.frame.select("query_id", "doc_id", pl.Series("score", run.own_scores()))
    return frame.with_columns(pl.lit(run.run_id, pl.String).alias("run_id")) if run.run_id else frame


def qrels_frame(qrels: Qrels) -> pl.DataFrame:
    return qrels.frame.select("query_id", "doc_id", pl.col("grade").alias("relevance"), "iteration")


def write_columnar(frame: pl.DataFrame, path: str | Path, kind: str) -> None:
    """Written atomically (trec_bridge.outputs) as Parquet or Arrow IPC."""
    from trec_bridge.outputs import atomic_write

    atomic_write(os.fspath(path), (lambda buf: frame.write_ipc(buf)) if kind == "ipc"
                 else (lambda buf: frame.write_parquet(buf)))
