"""Many runs against one dataset: each run scored alone, in parallel worker processes, one outcome per run.

``trec-bridge score-many`` and ``Evaluator.score_many`` share this.  A job
(the CLI's ``cli.score_many.FileJob``, the API's ``_EvaluatorJob``) scores one
run given by its path or object and returns a ``RunOutcome``: the result, or the error that made that run
invalid.  A bad run never stops the others.

Workers are started with the *forkserver* context, not fork: polars' thread
pool, once used by the parent (reading the judgments), is not in a forked
child, and the child's first parallel polars call waits for it for ever
(measured: a group-by after fork hangs).  So each worker receives the job
once (its initializer; paths and settings for the CLI, the checked judgments
for the API), keeps what it reads, and is then sent run paths only.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass

from .errors import TrecBridgeError

GLOB_CHARS = "*?["
POLARS_THREADS = "POLARS_MAX_THREADS"
PRELOAD = ["trec_bridge.scorer", "trec_bridge.report", "trec_bridge.evaluation", "trec_bridge.many_runs",
           "trec_bridge.cli.score_many", "trec_bridge.cli.report_options", "converters.detect",
           "converters.trec_run_parts", "converters.trec_qrels"]


@dataclass
class RunOutcome:
    """One run's outcome: scored (``result``, report text when asked) or invalid (``error``: code and message)."""

    run: str
    result: object | None = None  # scorer.ScoreResult
    report_text: str | None = None
    error: dict | None = None  # {"code", "message"} of the TrecBridgeError that made the run invalid

    @property
    def status(self) -> str:
        if self.error is not None:
            return "invalid"
        return "complete" if self.result.complete else "incomplete"


def outcome_of_error(run: str, exc: TrecBridgeError) -> RunOutcome:
    return RunOutcome(run, error={"code": exc.code, "message": exc.render()})


def expand_runs(given: list[str]) -> list[str]:
    """Run paths from paths, globs and folders, in the order given (a folder's and a glob's files sorted by name).

    A folder yields its regular, non-hidden files, sidecars (.manifest.json)
    excepted; a folder named ``*.parquet`` is one partitioned Parquet run.
    A path given twice is scored once.
    """
    from .outputs import SIDECAR_SUFFIX

    paths: list[str] = []
    for item in given:
        if os.path.isdir(item) and not item.rstrip("/").endswith(".parquet"):
            found = sorted(os.path.join(item, n) for n in os.listdir(item)
                           if not n.startswith(".") and not n.endswith(SIDECAR_SUFFIX)
                           and (os.path.isfile(os.path.join(item, n)) or n.endswith(".parquet")))
            if not found:
                raise TrecBridgeError("E_FILE_NOT_FOUND", "the folder holds no run file", file=item)
            paths += found
        elif any(c in item for c in GLOB_CHARS) and not os.path.exists(item):
            found = sorted(glob.glob(item))
            if not found:
                raise TrecBridgeError("E_FILE_NOT_FOUND", "no file matches this pattern", file=item)
            paths += found
        else:
            paths.append(item)
    return list(dict.fromkeys(paths))


def report_name(run_path: str) -> str:
    """The file name of a run's JSON report in --json-dir: the run's file name plus ``.json``."""
    return os.path.basename(os.path.normpath(run_path)) + ".json"


_INSTALLED: list = []  # the job of this worker process (set by the pool's initializer)


def _install(job) -> None:
    _INSTALLED[:] = [job]


def _score_installed(run) -> RunOutcome:
    return _INSTALLED[0].score_one(run)


def score_all(job, runs: list, jobs: int | None = None, cluster=None) -> list[RunOutcome]:
    """Every run's outcome, in the order given; ``jobs`` worker processes (default: the cores; 1: this process),
    or one task a run on a Dask cluster (``cluster``: its address or a ``distributed.Client``)."""
    if cluster is not None:
        from .cluster import score_runs

        return score_runs(cluster, job, runs)
    workers = pool_size(jobs, len(runs))
    if workers <= 1:
        return [job.score_one(r) for r in runs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers, mp_context=_forkserver(), initializer=_install, initargs=(job,)) as pool:
        return list(pool.map(_score_installed, runs))


def pool_size(jobs: int | None, runs: int) -> int:
    """The worker processes ``score_all`` starts for ``runs`` runs (1: none, the runs are scored here)."""
    return min(default_jobs() if jobs is None else jobs, runs)


def warm_up(jobs: int | None, runs: int) -> None:
    """Start the workers' fork server now, when ``score_all`` will need one: it imports the scorer's modules while
    this process reads the judgments, instead of after (bench/README.md, W-many)."""
    workers = pool_size(jobs, runs)
    if workers > 1:
        from multiprocessing import forkserver

        _forkserver()
        own = os.environ.get(POLARS_THREADS)
        if own is None:  # the workers share the cores: polars' threads in each, not every core in every worker
            os.environ[POLARS_THREADS] = str(max(1, default_jobs() // workers))
        try:
            forkserver.ensure_running()  # the server and the workers it forks see the environment of now
        finally:
            if own is None:
                del os.environ[POLARS_THREADS]


def _forkserver():
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)  # each worker forks with these imported (importing starts no polars thread)
    return context


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
