"""Scoring on a Dask cluster: ``--dask ADDRESS`` on score and score-many, a ``distributed.Client`` (or an
address) in the Python API.  Dask is the optional extra ``trec-bridge[dask]``; this module alone imports it,
and only when asked.

What is sent: the job (judgments, measures, policy) once to each worker
(``Client.scatter``, broadcast), then per task a small description -- a byte
range of a TREC run, a Parquet partition file, a run path, a Dask
DataFrame partition that already lives on the cluster.  What comes back:
per-query integer terms and values (``part_scores.PartScores``), or one
run's ``ScoreResult``; never a run's rows.  The workers read the files
themselves, so paths must be readable there (a shared filesystem, or fsspec
URLs for Parquet).

A worker lost mid-run has its tasks rerun by Dask (``distributed.scheduler.
allowed-failures``, 3 by default); past that, or when the scheduler cannot
be reached, ``ClusterFailed`` (E_DASK, exit 7): the command writes nothing,
never a partial table.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any

from .errors import ClusterFailed, InvalidInput, TrecBridgeError, UsageError
from .model import QueryNotContiguous
from .part_scores import PartJob, PartScores, merge, run_metadata

RUN_COLUMNS = ("query_id", "doc_id", "score")


def is_dask_collection(x: Any) -> bool:
    """A Dask DataFrame, recognised by its type's module (dask is never imported for the question)."""
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "to_delayed") and hasattr(x, "npartitions")


@contextmanager
def connected(target):
    """A ``distributed.Client``: ``target`` itself when it is one (left open), else one connected to the address
    ``target`` (closed after)."""
    try:
        import distributed
    except ImportError:
        raise UsageError("E_DASK_UNAVAILABLE", "scoring on a Dask cluster needs Dask's distributed scheduler: "
                         "pip install 'trec-bridge[dask]'") from None
    if isinstance(target, distributed.Client):
        yield target
        return
    try:
        client = distributed.Client(str(target), set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterFailed("E_DASK", f"cannot reach the Dask scheduler at {target}: {_reason(exc)}") from None
    try:
        yield client
    finally:
        client.close()


def run_on(client, fn, job, items: list) -> list:
    """``fn(job, item)`` for every item on the cluster, the results in the items' order."""
    futures = []
    try:
        shared = client.scatter(job, broadcast=True, hash=False)
        futures = [client.submit(fn, shared, item, pure=False) for item in items]
        return client.gather(futures)
    except TrecBridgeError:
        raise
    except Exception as exc:  # a worker lost past the retries, the scheduler gone, a worker without trec-bridge
        raise failed(exc) from None
    finally:
        if futures:
            client.cancel(futures)


def failed(exc: BaseException) -> ClusterFailed:
    """E_DASK for what went wrong on the cluster, said so that a reader knows what to do."""
    name = type(exc).__name__
    if name == "KilledWorker":
        why = ("a worker died running a task, more often than Dask retries it (distributed.scheduler.allowed-failures):"
               f" {_reason(exc)}")
    elif isinstance(exc, ImportError):
        why = f"a worker cannot import trec-bridge (install the same trec-bridge on every worker): {_reason(exc)}"
    else:
        why = f"a task failed on the cluster ({name}): {_reason(exc)}"
    return ClusterFailed("E_DASK", why + "; nothing was scored")


def _reason(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def score_file(target, job: PartJob, path: str):
    """One run file scored on the cluster: its pieces on the workers and merged here, or the whole file on one
    worker when it is not cut (``run_pieces.pieces_of``) or a query is split across pieces; (result, metadata)."""
    from .run_pieces import pieces_of, score_piece

    cut = pieces_of(path) if job.chunk_map is None else None
    with connected(target) as client:
        if cut is not None:
            parts = run_on(client, score_piece, job, cut.pieces)
            try:
                return merge(job, parts, empty_file=cut.empty_is_error), run_metadata(parts)
            except QueryNotContiguous:  # as score does: the run is read whole (on one worker)
                pass
        return run_on(client, score_whole_file, job, [path])[0]


def score_whole_file(job: PartJob, path: str):
    """The run file scored where this runs, exactly as ``trec-bridge score`` scores it; (result, metadata)."""
    from converters.detect import load_run_any

    from .evaluation import score_file_in_parts, score_whole

    seen: dict = {}
    result = None
    if job.chunk_map is None:
        result = score_file_in_parts(job.dataset, path, job.measures, job.policy, order=job.order, seen=seen)
    if result is None:
        run = load_run_any(path, order=job.order, chunks=job.chunk_map is not None)
        _, result = score_whole(job.dataset, run, job.measures, job.policy, chunk_map=job.chunk_map)
        seen = run.metadata
    return result, seen


def score_dataframe(target, job: PartJob, frame):
    """A Dask DataFrame run (ir_measures' columns) scored partition by partition where the partitions are;
    ``target`` None: Dask's current scheduler (the default client, if one is set).  A query whose rows are in two
    partitions is refused (E_RUN_QUERY_SPLIT): the run is never collected to one machine."""
    missing = [c for c in RUN_COLUMNS if c not in list(frame.columns)]
    if missing:
        raise UsageError("E_USAGE", f"the DataFrame lacks column(s) {', '.join(missing)} (ir_measures' names: "
                         f"{', '.join(RUN_COLUMNS)})")
    import uuid

    import dask

    shared = dask.delayed(job, name=f"trec-bridge-job-{uuid.uuid4().hex}")  # one copy in the graph, not one a task
    tasks = [dask.delayed(score_frame, pure=False)(shared, p, n)
             for n, p in enumerate(frame[list(RUN_COLUMNS)].to_delayed())]
    try:
        if target is None:
            parts = list(dask.compute(*tasks))
        else:
            with connected(target) as client:
                parts = _gathered(client, client.compute(tasks))
    except TrecBridgeError:
        raise
    except Exception as exc:
        raise failed(exc) from None
    return merge(job, parts, on_split=_split_refused), run_metadata(parts)


def _gathered(client, futures: list) -> list:
    try:
        return client.gather(futures)
    finally:
        client.cancel(futures)


def score_frame(job: PartJob, frame, n: int) -> PartScores:
    """One partition (a pandas DataFrame) read as ``tb.score`` reads a DataFrame run, and scored; its reading
    errors name the partition."""
    from converters.python_objects import run_from_object

    try:
        run, ints = run_from_object(frame)
        run.int_ids = ints if ints.texts else None
        job.check_ids(run)
    except TrecBridgeError as exc:
        if exc.where.file is None:
            exc.where.file = f"Dask DataFrame partition {n}"
            exc.args = (exc.render(),)
        return PartScores(error=exc)
    return job.score(run)


def _split_refused(query: str) -> None:
    raise InvalidInput("E_RUN_QUERY_SPLIT", "the query's rows are in two partitions of the Dask DataFrame; each "
                       "query must be whole in one partition to be scored where the partitions are (the run is "
                       "never collected to one machine): ddf.shuffle(on=\"query_id\") puts each query's rows "
                       "together, and their order does not matter (each query is ordered by score)", query=query)


def score_runs(target, job, runs: list) -> list:
    """Many runs, each scored alone by one worker (``job.score_one``: score-many's and Evaluator.score_many's
    jobs), the outcomes in the runs' order."""
    with connected(target) as client:
        return run_on(client, score_one, job, runs)


def score_one(job, run):
    return job.score_one(run)
