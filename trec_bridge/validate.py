"""Checks of a run against the dataset it is scored on (policy §1 and §3).

Each check raises ``InvalidInput`` with its own code, naming the file, the
query and the document.  Which checks apply is a policy axis, so reference
policies can ignore what their tool ignores.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .errors import InvalidInput
from .model import Dataset, Run
from .policy import Policy
from .messages import quote


@dataclass
class RowFindings:
    """A part's row checks: the repeated document the duplicates rule rejects, the first document outside the
    corpus."""

    duplicate: InvalidInput | None = None
    unknown_doc: dict | None = None


class RunChecks:
    """The checks over a run, whole or read in parts (each query whole in one part).

    Findings are collected part by part and raised by ``finish`` in the order
    a whole run is checked, so reading a run in parts never changes which
    error the user sees.  What every policy rejects (and repeats under the
    ``duplicates`` rule "reject") is raised at once; what only some policies
    reject is kept for ``finish``, which may be asked under several policies.
    """

    def __init__(self, dataset: Dataset, query_set: list[str] | set[str], duplicates: str):
        self.dataset, self.duplicates = dataset, duplicates
        self.known = query_set if isinstance(query_set, (set, frozenset)) else set(query_set)  # a set is shared
        self.seen: set[str] = set()
        self.outside: list[str] = []
        self.unknown_doc: dict | None = None  # smallest (query, rank) ranked outside the corpus
        self.source: str | None = None

    def add(self, run: Run) -> None:
        """Check one part; errors that need the whole run wait for ``finish``."""
        _check_integer_spellings(run, self.dataset)
        self.add_part(run, self.row_findings(run))

    def row_findings(self, run: Run) -> "RowFindings":
        """What the checks find in a part's rows, raised later by ``add_part`` (a part checked on another
        machine sends only this back: part_scores.py)."""
        return RowFindings(self._repeated_document(run),
                           _unknown_doc(run, self.dataset) if self.dataset.corpus is not None else None)

    def _repeated_document(self, run: Run) -> InvalidInput | None:
        """The duplicates rule "reject": the first document repeated in a ranking, as the error to raise."""
        try:
            if self.duplicates == "reject" and not run.unique_checked:
                _check_duplicates(run)
        except InvalidInput as exc:
            return exc
        return None

    def add_part(self, part, rows: "RowFindings") -> None:
        """Check a part's records (``part``: a Run, or anything with its queries, failures, dataset_id,
        dataset_version and source) and raise its row findings, in the order ``add`` always checked them."""
        _check_dataset_id(part, self.dataset)
        self.add_records(part.queries, part.failures, part.source)
        if rows.duplicate is not None:
            raise rows.duplicate
        found = rows.unknown_doc
        if found and (self.unknown_doc is None or
                      (found["query_id"], found["rank"]) < (self.unknown_doc["query_id"], self.unknown_doc["rank"])):
            self.unknown_doc = found

    def add_records(self, queries: Sequence[str], failures: Mapping[str, str], source: str | None) -> None:
        """Check a part's records alone (a query recorded twice, or both failed and ranked): all ``add`` checks of
        a run without a dataset ID, its repeated documents refused already, scored against no listed corpus."""
        self.source = source
        _check_records(queries, failures, source, self.seen)
        self.outside += [q for q in list(queries) + list(failures) if q not in self.known]

    def finish(self, policy: Policy) -> list[str]:
        """Raise what ``policy`` rejects; return the run's queries outside the query set that are unjudged."""
        unjudged: list[str] = []
        if self.outside and policy.run_only_queries == "reject":
            unknown = _unknown_queries(self.outside, self.dataset)
            if unknown:
                declared = " nor declared unjudged by the dataset" if self.dataset.unjudged_queries else ""
                raise InvalidInput("E_RUN_UNKNOWN_QUERY",
                                   f"query is not in the selected query set ({_set_name(self.dataset)}){declared}; "
                                   f"{len(unknown)} such queries", file=self.source, query=unknown[0])
            unjudged = list(self.outside)
        if self.unknown_doc is not None and policy.unknown_docs == "reject":
            first = self.unknown_doc
            raise InvalidInput("E_RUN_UNKNOWN_DOC", f"document at rank {first['rank']} is not in the corpus",
                               file=self.source, query=first["query_id"], doc=first["doc_id"])
        return unjudged


def keep_last_repeat(run: Run, keep: str = "last") -> Run:
    """Dict semantics (ir_measures, ranx): a document repeated in a ranking keeps its last row only
    (``keep="first"``: its first row, as code that skips a document already seen)."""
    if run.unique_checked:
        return run
    import polars as pl

    frame = (run.frame.unique(subset=["query_id", "doc_id"], keep=keep, maintain_order=True)
             .with_columns(rank=pl.int_range(1, pl.len() + 1).over("query_id").cast(pl.Int64)))
    return Run(**{**run.__dict__, "frame": frame, "unique_checked": True})


def _unknown_queries(outside: list[str], dataset: Dataset) -> list[str]:
    """Run queries outside the query set that are not *unjudged* either (policy §1).

    Unjudged: every such query when TREC qrels alone define the query set;
    otherwise the queries the dataset declares unjudged (``unjudged_queries``,
    e.g. the topics an ir_datasets ``/judged`` subset leaves out).
    """
    if dataset.query_source == "qrels":
        return []
    declared = set(dataset.unjudged_queries)
    return [q for q in outside if q not in declared]


def _set_name(dataset: Dataset) -> str:
    return f"split {quote(dataset.split)}" if dataset.split else "dataset queries"


def _check_dataset_id(run: Run, dataset: Dataset) -> None:
    if run.dataset_id and dataset.dataset_id and run.dataset_id != dataset.dataset_id:
        raise InvalidInput("E_RUN_DATASET_MISMATCH",
                           f"run was made for dataset {quote(run.dataset_id)}, not {quote(dataset.dataset_id)}", file=run.source)
    if run.dataset_version and dataset.dataset_version and run.dataset_version != dataset.dataset_version:
        raise InvalidInput("E_RUN_DATASET_MISMATCH",
                           f"run was made for dataset version {quote(run.dataset_version)}, "
                           f"not {quote(dataset.dataset_version)}", file=run.source)


def _check_records(queries: Sequence[str], failures: Mapping[str, str], source: str | None, seen: set[str]) -> None:
    """A query recorded twice (in this part or an earlier one), or both failed and ranked."""
    for q in queries:
        if q in seen:
            raise InvalidInput("E_RUN_DUPLICATE_QUERY", "two records for the same query", file=source, query=q)
        seen.add(q)
    both = [q for q in failures if q in seen]
    if both:
        raise InvalidInput("E_RUN_QUERY_CONFLICT", "query is both failed and ranked", file=source, query=both[0])


def _check_duplicates(run: Run) -> None:
    import polars as pl

    dup = run.frame.filter(pl.struct("query_id", "doc_id").is_duplicated())
    if dup.height:
        first = dup.sort(["query_id", "rank"]).row(0, named=True)
        raise InvalidInput("E_RUN_DUPLICATE_DOC",
                           f"document appears twice in the ranking (again at rank {dup.filter((pl.col('query_id') == first['query_id']) & (pl.col('doc_id') == first['doc_id'])).get_column('rank').max()}); "
                           "it is never de-duplicated silently", file=run.source, query=first["query_id"], doc=first["doc_id"])


def _unknown_doc(run: Run, dataset: Dataset) -> dict | None:
    """The first (by query ID, then rank) ranked document outside the listed corpus."""
    import polars as pl

    corpus = pl.DataFrame({"doc_id": list(dataset.corpus)}, schema={"doc_id": pl.String})
    unknown = run.frame.join(corpus, on="doc_id", how="anti")
    return unknown.sort(["query_id", "rank"]).row(0, named=True) if unknown.height else None


def _check_integer_spellings(run: Run, dataset: Dataset) -> None:
    """A columnar file's integer IDs, read as decimal text, against the other side's spellings of the same number
    (a Parquet run's 7 against the qrels' "007"): E_ID_COLLISION, as the Python API refuses them, never an
    unjudged query and a missing one."""
    run_ints, qrels_ints = run.int_ids, dataset.qrels.int_ids
    if run_ints is None and qrels_ints is None:
        return
    from converters.python_objects import IntIds, check_id_spellings

    check_id_spellings(dataset, qrels_ints or IntIds(), run, run_ints or IntIds())
