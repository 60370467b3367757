"""A Parquet run read in parts, pipelined: one file in parts of about ``PART_ROWS`` rows, every query whole in
one, or a folder one partition file at a time.

Read whole, W1's 7M-row file cost 1 GiB and an unbroken second of ordering
one frame.  Here a reader thread reads the next part (one slice scan: polars
decodes only the row groups it overlaps; ``trec_run_parts.one_ahead``), two
parts are checked and ordered at once in worker threads by the whole read's
own code (``columnar._run_of``; ``in_order_ahead``), and the caller scores the
part before.  The rows of a part's last query go to the next part, so a query
cut by a row-group boundary is whole.

Whatever the whole-file read would decide differently is left to it: a
query whose rows are apart (two parts) raises ``QueryNotContiguous`` as a
folder's does, and so does any error or a file without rows (``ReadWhole``),
so that the error raised is the whole read's, with its item numbers, and the
first one in the file.  IDs that are not text columns (integers, read as
their decimal text) and URLs are read whole from the start
(``read_parquet_file_parts`` gives None).
"""
from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import numpy as np
import polars as pl

from trec_bridge.errors import TrecBridgeError
from trec_bridge.model import QueryNotContiguous, Run
from trec_bridge.urls import is_url

from . import columnar
from .columnar import RUN_COLUMNS, _run_of
from .trec_run_parts import one_ahead

PART_ROWS = 1 << 19  # rows read at a time (a 16 MB TREC part holds about 440,000 lines): bench/README.md


class ReadWhole(QueryNotContiguous):
    """A part raised an error, or the file has no row: the whole-file read decides, as it always did (its error,
    with its item numbers, the first in the file)."""

    def __init__(self, why: str):
        Exception.__init__(self, f"{why}: read the run whole")
        self.query_id = None


def read_folder_parts(path: str | os.PathLike) -> Iterator[Run]:
    """A Parquet run folder one partition file at a time, in name order (bounded memory: a few files' rows are
    held), the next files read and ordered in worker threads while the caller scores this one;
    ``QueryNotContiguous`` when a query is in two files (the caller reads the folder whole)."""
    tasks = ((lambda part=part: columnar.read_partition(path, part)) for part in columnar.partition_files(path))
    return _contiguous(in_order_ahead(tasks))


def _contiguous(runs: Iterator[Run]) -> Iterator[Run]:
    """``runs`` passed on; ``QueryNotContiguous`` for a query met again in a later one."""
    seen: set[str] = set()
    with closing(runs):
        for run in runs:
            again = [q for q in run.queries if q in seen]
            if again:
                raise QueryNotContiguous(again[0])
            seen.update(run.queries)
            yield run


def read_parquet_file_parts(path: str | os.PathLike, part_rows: int | None = None) -> Iterator[Run] | None:
    """The run of ``columnar.read_columnar_run(path, "parquet")`` as Runs of about ``part_rows`` rows, every
    query whole in one; None when the file is to be read whole (a URL, IDs that are not text, no such file)."""
    name = os.fspath(path)
    if is_url(name) or not Path(name).is_file() or not _text_ids(name):
        return None
    return _parts(name, part_rows or PART_ROWS)


def _text_ids(name: str) -> bool:
    """The file has the run's columns, its IDs as text (unreadable or not: the whole read says why)."""
    try:
        schema = pl.read_parquet_schema(name)
    except (pl.exceptions.PolarsError, OSError):
        return False
    return all(c in schema for c in RUN_COLUMNS) and schema["query_id"] == schema["doc_id"] == pl.String


def _parts(name: str, part_rows: int) -> Iterator[Run]:
    """Each part's Run, in file order; ``QueryNotContiguous`` for a query in two parts, ``ReadWhole`` for an
    error (neither after a part with that query or error was handed on: the caller scores nothing of it)."""
    frames = one_ahead(query_whole(_batches(name, part_rows)))  # the batches read in a thread of their own
    runs = _contiguous(in_order_ahead(((lambda frame=frame: _run_of(one_chunk(frame), name)) for frame in frames)))
    given = False
    with closing(frames), closing(runs):
        while True:
            try:
                run = next(runs, None)
            except (TrecBridgeError, pl.exceptions.PolarsError, OSError) as exc:
                raise ReadWhole(f"a part raised {getattr(exc, 'code', type(exc).__name__)}") from None
            if run is None:
                break
            given = True
            yield run
    if not given:
        raise ReadWhole("no row")


def one_chunk(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with each column in one piece of memory (a scan gives a chunk per row group, and a part a chunk
    per batch it takes rows from): the checks and the ordering of W1's 7M rows took 0.62-1.06 s of CPU on the
    chunks against 0.47 s on one, the copy 0.1 s."""
    return frame.rechunk()


WORKERS = 2  # parts checked and ordered at once, at most (bench/README.md, "Parquet W1, round 2")


def default_workers() -> int:
    """``WORKERS``, or fewer where polars is given fewer threads (POLARS_MAX_THREADS: score-many's workers share
    the cores that way) or the process has fewer cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    given = os.environ.get("POLARS_MAX_THREADS", "")
    return max(1, min(WORKERS, cores, int(given) if given.isdigit() and int(given) > 0 else cores))


def in_order_ahead(tasks: Iterator[Callable[[], Run]], workers: int | None = None) -> Iterator[Run]:
    """Each task's result in the tasks' order, up to ``workers`` tasks run at once in worker threads ahead of the
    caller (the checks and the ordering are numpy and polars calls, which release the GIL); a task's error is
    raised in its turn, and the tasks not begun yet are dropped."""
    workers = workers or default_workers()
    pending: deque[Future] = deque()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="trec-bridge-parts") as pool:
        try:
            for task in tasks:
                pending.append(pool.submit(task))
                if len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def query_whole(batches: Iterator[pl.DataFrame]) -> Iterator[pl.DataFrame]:
    """The rows of ``batches`` again, cut where a query starts: each batch's last query is carried into the next
    (a query longer than a batch grows its part); empty batches give nothing."""
    carry: pl.DataFrame | None = None
    for batch in batches:
        if batch.height == 0:
            continue
        frame = batch if carry is None else pl.concat([carry, batch], rechunk=False)
        query = frame.get_column("query_id")
        other = np.flatnonzero((query != query[-1]).to_numpy())  # rows not of the last query
        cut = int(other[-1]) + 1 if len(other) else 0
        if cut:
            yield frame.slice(0, cut)
        carry = frame.slice(cut)
    if carry is not None:
        yield carry


def _batches(name: str, part_rows: int) -> Iterator[pl.DataFrame]:
    """The file's run columns, ``part_rows`` rows at a time: one slice scan each, which decodes only the row
    groups it overlaps.  (polars' streaming ``collect_batches``, unstable in polars 2.1, read a little faster but
    held batches ahead of the caller: 85 MiB more than this on the test's 1.2M rows, unbounded in principle.)"""
    scan = pl.scan_parquet(name).select(RUN_COLUMNS)
    rows = scan.select(pl.len()).collect().item()
    for start in range(0, rows, part_rows):
        yield scan.slice(start, part_rows).collect()
