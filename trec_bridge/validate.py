"""Checks of a run against the dataset it is scored on (policy §1 and §3).

Each check raises ``InvalidInput`` with its own code, naming the file, the
query and the document.  Which checks apply is a policy axis, so reference
policies can ignore what their tool ignores.
"""
from __future__ import annotations

import polars as pl

from .errors import InvalidInput
from .model import Dataset, Run
from .policy import Policy


def check_run(run: Run, dataset: Dataset, query_set: list[str], policy: Policy) -> list[str]:
    """Validate ``run``; return the run's queries outside the query set that are *unjudged* (TREC mode)."""
    _check_dataset_id(run, dataset)
    _check_records(run)
    if policy.duplicates == "reject" and not run.unique_checked:
        _check_duplicates(run)
    outside = _outside_queries(run, query_set)
    unjudged: list[str] = []
    if outside and policy.run_only_queries == "reject":
        if dataset.query_source == "qrels":
            unjudged = outside  # policy §1 exception: TREC qrels alone define the query set
        else:
            q = outside[0]
            raise InvalidInput("E_RUN_UNKNOWN_QUERY",
                               f"query is not in the selected query set ({_set_name(dataset)}); "
                               f"{len(outside)} such queries", file=run.source, query=q)
    if dataset.corpus is not None and policy.unknown_docs == "reject":
        _check_corpus(run, dataset)
    return unjudged


def keep_last_repeat(run: Run) -> Run:
    """Dict semantics (ir_measures, ranx): a document repeated in a ranking keeps its last row only."""
    if run.unique_checked:
        return run
    frame = (run.frame.unique(subset=["query_id", "doc_id"], keep="last", maintain_order=True)
             .with_columns(rank=pl.int_range(1, pl.len() + 1).over("query_id").cast(pl.Int64)))
    return Run(**{**run.__dict__, "frame": frame, "unique_checked": True})


def _set_name(dataset: Dataset) -> str:
    return f"split {dataset.split!r}" if dataset.split else "dataset queries"


def _check_dataset_id(run: Run, dataset: Dataset) -> None:
    if run.dataset_id and dataset.dataset_id and run.dataset_id != dataset.dataset_id:
        raise InvalidInput("E_RUN_DATASET_MISMATCH",
                           f"run was made for dataset {run.dataset_id!r}, not {dataset.dataset_id!r}", file=run.source)
    if run.dataset_version and dataset.dataset_version and run.dataset_version != dataset.dataset_version:
        raise InvalidInput("E_RUN_DATASET_MISMATCH",
                           f"run was made for dataset version {run.dataset_version!r}, "
                           f"not {dataset.dataset_version!r}", file=run.source)


def _check_records(run: Run) -> None:
    seen: set[str] = set()
    for q in run.queries:
        if q in seen:
            raise InvalidInput("E_RUN_DUPLICATE_QUERY", "two records for the same query", file=run.source, query=q)
        seen.add(q)
    both = [q for q in run.failures if q in seen]
    if both:
        raise InvalidInput("E_RUN_QUERY_CONFLICT", "query is both failed and ranked", file=run.source, query=both[0])


def _check_duplicates(run: Run) -> None:
    dup = run.frame.filter(pl.struct("query_id", "doc_id").is_duplicated())
    if dup.height:
        first = dup.sort(["query_id", "rank"]).row(0, named=True)
        raise InvalidInput("E_RUN_DUPLICATE_DOC",
                           f"document appears twice in the ranking (again at rank {dup.filter((pl.col('query_id') == first['query_id']) & (pl.col('doc_id') == first['doc_id'])).get_column('rank').max()}); "
                           "it is never de-duplicated silently", file=run.source, query=first["query_id"], doc=first["doc_id"])


def _outside_queries(run: Run, query_set: list[str]) -> list[str]:
    known = set(query_set)
    return [q for q in list(run.queries) + list(run.failures) if q not in known]


def _check_corpus(run: Run, dataset: Dataset) -> None:
    corpus = pl.DataFrame({"doc_id": list(dataset.corpus)}, schema={"doc_id": pl.String})
    unknown = run.frame.join(corpus, on="doc_id", how="anti")
    if unknown.height:
        first = unknown.sort(["query_id", "rank"]).row(0, named=True)
        raise InvalidInput("E_RUN_UNKNOWN_DOC", f"document at rank {first['rank']} is not in the corpus",
                           file=run.source, query=first["query_id"], doc=first["doc_id"])
