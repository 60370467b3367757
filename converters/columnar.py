"""Runs and qrels in Parquet (a file, or a folder of partition files) and Arrow IPC, with ir_measures' columns.

A run has ``query_id``, ``doc_id``, ``score`` (and may have ``run_id``, one
value, the run's name); qrels have ``query_id``, ``doc_id``, ``relevance``
(and may have ``iteration``).  The rows go through the same path as a
DataFrame given to the Python API (``python_objects``): integer IDs become
their decimal text, and every strict check applies unchanged (a document
twice in a query, a NaN score, a non-integer grade, a duplicate judgment).
The file kind is told by its name (``detect.columnar_kind``), never sniffed.
``score`` reads a folder's partition files, or one file's row groups, a few
at a time (columnar_parts.py: bounded memory), and an fsspec URL (``memory://``,
``s3://``, ...) is read like a path where fsspec is installed (urls.py).
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import polars as pl

from trec_bridge.errors import InvalidInput, TrecBridgeError
from trec_bridge.model import QueryNotContiguous, Qrels, Run
from trec_bridge.urls import filesystem, is_url

RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")


@dataclass(frozen=True)
class Partition:
    """One file of a Parquet run folder: its path (or URL) and the ``key=value`` folders above it, whose values
    become columns (hive partitioning: ``query_id=007/part.parquet`` holds query "007", read as text)."""

    path: str
    hive: tuple[tuple[str, str], ...] = ()


def partition_files(path: str | Path, kind: str = "parquet") -> list[Partition] | None:
    """A Parquet folder's partition files in name order, each read on its own (``read_partition``); None when
    ``path`` is one file.  Files are ``*.parquet`` in the folder or in its hive folders (``key=value``), searched
    no deeper; hidden ones (``.x``, ``_SUCCESS``, ``_metadata``) are not partitions."""
    name = os.fspath(path)
    fs, root = _filesystem(name)
    if kind != "parquet" or not fs.isdir(root):
        if not fs.exists(root):
            raise InvalidInput("E_FILE_NOT_FOUND", "no such file or folder", file=name)
        return None
    found: list[Partition] = []
    _walk(fs, root.rstrip("/"), (), found, name)
    if not found:
        raise InvalidInput("E_COLUMNAR", "the folder holds no .parquet partition file", file=name)
    return sorted(found, key=lambda p: p.path)


def _walk(fs, folder: str, hive: tuple, found: list, shown: str) -> None:
    for entry in sorted(fs.ls(folder, detail=True), key=lambda e: e["name"]):
        base = entry["name"].rstrip("/").rsplit("/", 1)[-1]
        if base.startswith((".", "_")):
            continue
        if entry["type"] == "directory" and "=" in base:
            key, _, value = base.partition("=")
            _walk(fs, entry["name"].rstrip("/"), hive + ((key, unquote(value)),), found, shown)
        elif entry["type"] != "directory" and base.lower().endswith(".parquet"):
            found.append(Partition(_shown_path(shown, folder, entry["name"]), hive))


def _shown_path(given: str, root: str, path: str) -> str:
    """A partition as the user would name it: under the URL they gave (with its scheme), else the local path."""
    if not is_url(given):
        return path
    scheme = given.partition("://")[0]
    return f"{scheme}://{path.lstrip('/')}" if scheme == "memory" else f"{scheme}://{path}"


def _filesystem(name: str):
    """(filesystem, path): fsspec's for a URL, a local one otherwise (fsspec not needed for local files)."""
    if is_url(name):
        return filesystem(name)
    return _Local(), name


class _Local:
    """The few filesystem questions ``partition_files`` asks, answered by os for a local path."""

    def isdir(self, p: str) -> bool:
        return os.path.isdir(p)

    def exists(self, p: str) -> bool:
        return os.path.exists(p)

    def ls(self, folder: str, detail: bool = True) -> list[dict]:
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            raise InvalidInput("E_FILE_UNREADABLE", f"cannot read: {exc.strerror or exc}", file=folder) from None
        return [{"name": e.path, "type": "directory" if e.is_dir() else "file"} for e in entries]


def _frame(path: str | Path, kind: str, columns: tuple[str, ...]) -> pl.DataFrame:
    """The file's (or the partition folder's, its files in name order) rows; E_COLUMNAR when unreadable or
    without ``columns``."""
    name = os.fspath(path)
    parts = partition_files(name, kind)
    frame = _read(Partition(name), kind, name) if parts is None else \
        pl.concat([_read(p, kind, name) for p in parts], how="diagonal_relaxed")
    return _with_columns(frame, columns, name)


def _read(part: Partition, kind: str, shown: str) -> pl.DataFrame:
    """One file's rows with its hive values as text columns (a column the file holds itself wins)."""
    what = "Arrow IPC" if kind == "ipc" else "Parquet"
    try:
        if is_url(part.path):
            fs, inner = filesystem(part.path)
            with fs.open(inner, "rb") as fh:
                frame = pl.read_ipc(fh) if kind == "ipc" else pl.read_parquet(fh)
        else:
            frame = (pl.scan_ipc(part.path) if kind == "ipc" else pl.scan_parquet(part.path)).collect()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InvalidInput("E_COLUMNAR", f"cannot read this {what} input: "
                           f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=shown) from None
    extra = [pl.lit(v, pl.String).alias(k) for k, v in part.hive if k not in frame.columns]
    return frame.with_columns(extra) if extra else frame


def _with_columns(frame: pl.DataFrame, columns: tuple[str, ...], name: str) -> pl.DataFrame:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidInput("E_COLUMNAR", f"lacks column(s) {', '.join(missing)} (ir_measures' names: "
                           f"{', '.join(columns)})", file=name)
    return frame


def _located(exc: TrecBridgeError, path) -> TrecBridgeError:
    """The row checks' error, located in the file it was read from."""
    if getattr(exc.where, "file", None) is None:
        exc.where.file = os.fspath(path)
    return exc


def read_columnar_run(path: str | Path, kind: str) -> Run:
    """A run ordered by score, ties by document ID descending (trec_eval's order, as the TREC reader by score)."""
    return _run_of(_frame(path, kind, RUN_COLUMNS), os.fspath(path))


def read_partition(folder: str | Path, part: Partition) -> Run:
    """One partition file of a run folder as a run on its own (its row errors name the file); ``source`` is the
    folder, the run's name in the run checks' messages."""
    frame = _with_columns(_read(part, "parquet", part.path), RUN_COLUMNS, part.path)
    run = _run_of(frame, part.path, rechunk=True)
    run.source = os.fspath(folder)
    return run


def _run_of(frame: pl.DataFrame, name: str, rechunk: bool = False) -> Run:
    """The Run of ``frame``'s rows, named by its ``run_id`` column; ``rechunk``: the run's columns made one chunk
    first, not one a row group (see columnar_parts.one_chunk), and only those (not ``run_id`` nor other columns)."""
    from .python_objects import run_from_object

    run_id = _run_name(frame.get_column("run_id")) if "run_id" in frame.columns else None
    rows = frame.select(RUN_COLUMNS)
    try:
        run, ints = run_from_object(rows.rechunk() if rechunk else rows, run_id=run_id)
    except TrecBridgeError as exc:
        raise _located(exc, name) from None
    run.source, run.int_ids = name, ints if ints.texts else None
    return run


def _run_name(column: pl.Series) -> str | None:
    """The ``run_id`` column's one value as the run's name; None when it holds several, a null, or no row.  A
    text column is compared with its first value (one pass; its ``unique`` hashed every row of each partition)."""
    if column.dtype != pl.String:
        names = column.unique().to_list()
        return str(names[0]) if len(names) == 1 and names[0] is not None else None
    if column.len() == 0 or column.null_count():
        return None
    first = column[0]
    return first if (column == first).all() else None


def read_columnar_qrels(path: str | Path, kind: str, subtopics: bool = False) -> Qrels:
    """Qrels with ir_measures' columns; ``subtopics``: a diversity qrels, whose ``iteration`` column is the subtopic."""
    from .python_objects import qrels_from_object

    frame = _frame(path, kind, QRELS_COLUMNS + (("iteration",) if subtopics else ()))
    columns = QRELS_COLUMNS + (("iteration",) if "iteration" in frame.columns else ())
    try:
        qrels, ints = qrels_from_object(frame.select(columns), subtopics=subtopics)
    except TrecBridgeError as exc:
        raise _located(exc, path) from None
    qrels.int_ids = ints if ints.texts else None
    return qrels


def run_frame(run: Run) -> pl.DataFrame:
    """The run's rows in its order, with ir_measures' names (and ``run_id`` when the run names itself)."""
    frame = run.frame.select("query_id", "doc_id", pl.Series("score", run.own_scores()))
    return frame.with_columns(pl.lit(run.run_id, pl.String).alias("run_id")) if run.run_id else frame


def qrels_frame(qrels: Qrels) -> pl.DataFrame:
    return qrels.frame.select("query_id", "doc_id", pl.col("grade").alias("relevance"), "iteration")


# The codecs each format takes, its default first (polars' own): Parquet's ZSTD is the smallest file; snappy
# (pyarrow's, pandas' and Spark's default) and LZ4 read faster, for ~40% more bytes (bench/README.md, "Parquet W1
# on a second machine": ZSTD decoding was 12% of score's CPU on W1).
COMPRESSIONS = {"parquet": ("zstd", "snappy", "lz4", "gzip", "brotli", "uncompressed"),
                "ipc": ("uncompressed", "zstd", "lz4")}


def write_columnar(frame: pl.DataFrame, path: str | Path, kind: str, compression: str | None = None) -> None:
    """Written atomically (trec_bridge.outputs) as Parquet or Arrow IPC, with ``compression`` (one of the
    format's ``COMPRESSIONS``; None: its default)."""
    from trec_bridge.outputs import atomic_write

    codec = compression or COMPRESSIONS[kind][0]
    if codec not in COMPRESSIONS[kind]:
        raise ValueError(f"{kind} takes no compression {codec!r}")
    atomic_write(os.fspath(path), (lambda buf: frame.write_ipc(buf, compression=codec)) if kind == "ipc"
                 else (lambda buf: frame.write_parquet(buf, compression=codec)))
