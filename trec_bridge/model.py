"""The one in-memory shape every reader produces and every consumer reads.

Columnar on purpose: a 7M-line run is a handful of polars columns, never a
Python object per line.  Per-query metadata (query records, failures) is small
and kept as plain Python values.

Invariants the readers guarantee (and the scorer relies on):

* ``Run.frame`` rows are grouped by query, in the order of ``Run.queries``
  restricted to queries with at least one row, and within a query sorted by
  ``rank`` = 1, 2, ... n (the run's order as the reader decided it).
* ``Run.queries`` lists every query that has a record, including explicit
  empty rankings; a query absent from it (and from ``failures``) is missing.
* ``Qrels.frame`` keeps the source row order.  In an ordinary qrels each
  (query, document) is judged once and ``iteration`` is TREC's unused column;
  in a *diversity* qrels (``Qrels.subtopics``, declared, never guessed)
  ``iteration`` is the subtopic and each (query, subtopic, document) is
  judged once, so a document may have one row per subtopic.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Literal

import numpy as np

from .fingerprint import canonical_sha256
from .ordering import pair_keys

if TYPE_CHECKING:
    import polars as pl


@cache
def _schemas() -> dict[str, dict]:
    """RUN_SCHEMA, QRELS_SCHEMA and CHUNK_SCHEMA, made when first asked for: importing the model loads no polars
    (``score`` on small TREC files never does: cli/quick.py)."""
    import polars as pl

    return {"RUN_SCHEMA": {"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64, "rank": pl.Int64},
            "QRELS_SCHEMA": {"query_id": pl.String, "iteration": pl.String, "doc_id": pl.String, "grade": pl.Int64},
            "CHUNK_SCHEMA": {"chunk_id": pl.String, "doc_id": pl.String}}


def __getattr__(name: str):
    if name in ("RUN_SCHEMA", "QRELS_SCHEMA", "CHUNK_SCHEMA"):
        return _schemas()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

Completeness = Literal["exhaustive", "pooled"]
QuerySource = Literal["dataset", "qrels", "query_file"]


class QueryNotContiguous(Exception):
    """A run read in parts has a query in two parts (its lines are not together); read it whole instead."""

    def __init__(self, query_id: str):
        super().__init__(f"query {query_id!r} appears in two parts of the run")
        self.query_id = query_id


@dataclass(frozen=True)
class QueryOrder:
    """What ordering a TREC run by score had to decide, for one query."""

    query_id: str
    ties_broken: int  # rows whose position was decided by the tie-break, not the score
    rank_disagrees: bool  # the file's rank column orders the query differently


class QueryOrders(Sequence):
    """The ``QueryOrder`` of many queries, kept as columns; each made when read.

    A run of a million small queries then holds three arrays, not a million
    objects.  Compares equal to any sequence of the same ``QueryOrder`` values.
    """

    __slots__ = ("query_ids", "ties", "disagree")

    def __init__(self, query_ids: Sequence[str], ties: np.ndarray, disagree: np.ndarray):
        self.query_ids, self.ties, self.disagree = query_ids, ties, disagree

    def __len__(self) -> int:
        return len(self.query_ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        return QueryOrder(self.query_ids[i], int(self.ties[i]), bool(self.disagree[i]))

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and tuple(self) == tuple(other)

    __hash__ = None

    def __repr__(self) -> str:
        return f"QueryOrders({tuple(self)!r})"

    def tied_rows(self) -> int:
        return int(self.ties.sum())

    def with_ties(self) -> list[str]:
        return [self.query_ids[i] for i in np.flatnonzero(self.ties).tolist()]

    def disagreeing(self) -> list[str]:
        return [self.query_ids[i] for i in np.flatnonzero(self.disagree).tolist()]


@dataclass
class Qrels:
    """Judgments as one frame in source order (see the module's invariants)."""

    frame: pl.DataFrame  # QRELS_SCHEMA, source order
    source: str | None = None  # file the qrels came from, for messages
    # True: a diversity qrels (TREC's ``qid subtopic docno grade``): ``iteration`` holds the subtopic, and a
    # document may be judged once per subtopic.  Only ever set by a declaration (--subtopics, a dataset's
    # ``subtopic_judgments``), so an ordinary qrels' iteration column is never read as subtopics.
    subtopics: bool = False
    # A diversity qrels' judged pairs and subtopic table (subtopics.judged_pairs), kept with the frame they came from
    _pairs: tuple | None = field(default=None, repr=False, compare=False)
    # The decimal texts of integer IDs a columnar file held (python_objects.IntIds): checked against the run's
    # spellings when the two meet (validate.RunChecks: 7 here and "007" there is E_ID_COLLISION)
    int_ids: object | None = field(default=None, repr=False, compare=False)

    @staticmethod
    def empty() -> "Qrels":
        import polars as pl

        return Qrels(pl.DataFrame(schema=_schemas()["QRELS_SCHEMA"]))

    def with_frame(self, frame: pl.DataFrame) -> "Qrels":
        """The same kind of qrels (source, subtopics) over other rows (a subset of these)."""
        return Qrels(frame, self.source, self.subtopics)

    def query_ids(self) -> list[str]:
        """Judged query IDs in order of first appearance."""
        return self.frame.get_column("query_id").unique(maintain_order=True).to_list()


@dataclass
class Run:
    """A ranking per query as one frame, grouped by query and ranked 1..n (see the module's invariants)."""

    frame: pl.DataFrame  # RUN_SCHEMA, grouped by query, rank 1..n within a query
    queries: tuple[str, ...]  # queries with a record (ranked or explicitly empty)
    failures: dict[str, str] = field(default_factory=dict)  # query -> reason
    run_id: str | None = None
    dataset_id: str | None = None
    dataset_version: str | None = None
    metadata: dict = field(default_factory=dict)
    order: Sequence[QueryOrder] | None = None  # set by the TREC reader (a QueryOrders)
    order_source: Literal["list", "score", "rank"] = "list"
    source: str | None = None
    # True when the reader already rejected a document repeated in a ranking,
    # so the scorer need not hash 7M (query, doc) pairs a second time.
    unique_checked: bool = False

    # Derived from ``frame`` on first use (or handed over by the reader); kept with
    # the frame they came from, so a Run copied with another frame
    # (``Run(**{**run.__dict__, "frame": f})``) never reuses them.
    _blocks: tuple | None = field(default=None, repr=False, compare=False)
    _pair_keys: tuple | None = field(default=None, repr=False, compare=False)
    # The run's own scores where a TREC sidecar kept them (the file holds synthetic ones there).
    # ``frame`` keeps the file's scores, the bytes every tool reads; only writers use these.
    _own_scores: tuple | None = field(default=None, repr=False, compare=False)
    # The decimal texts of integer IDs a columnar file held (python_objects.IntIds), as ``Qrels.int_ids``
    int_ids: object | None = field(default=None, repr=False, compare=False)

    def own_scores(self) -> pl.Series:
        """The run's own scores (null where it had none): a sidecar's where it restored them, else the frame's."""
        if self._own_scores is not None and self._own_scores[0] is self.frame:
            return self._own_scores[1]
        return self.frame.get_column("score")

    def remember_own_scores(self, scores: pl.Series) -> None:
        self._own_scores = (self.frame, scores.alias("score"))

    def own_frame(self) -> pl.DataFrame:
        """``frame`` with the run's own scores: what a writer puts in JSON or a TREC file's sidecar."""
        if self._own_scores is None or self._own_scores[0] is not self.frame:
            return self.frame
        return self.frame.with_columns(self._own_scores[1])

    def blocks(self) -> tuple[np.ndarray, list[str]]:
        """Row index where each run of equal query IDs starts, and that query ID (frame order)."""
        if self._blocks is None or self._blocks[0] is not self.frame:
            q = self.frame.get_column("query_id")
            if q.len() == 0:
                starts = np.zeros(0, dtype=np.int64)
            else:
                block = q.rle_id().to_numpy()
                starts = np.flatnonzero(np.r_[True, block[1:] != block[:-1]])
            self._blocks = (self.frame, starts, q.gather(starts).to_list())
        return self._blocks[1], self._blocks[2]

    def pair_keys(self) -> np.ndarray:
        """``ordering.pair_keys`` of every row (the reader's, when it computed them for its duplicate check)."""
        if self._pair_keys is None or self._pair_keys[0] is not self.frame:
            self._pair_keys = (self.frame, pair_keys(self.frame.get_column("query_id"),
                                                     self.frame.get_column("doc_id")))
        return self._pair_keys[1]

    def remember_pair_keys(self, keys: np.ndarray) -> None:
        self._pair_keys = (self.frame, keys)

    def remember_blocks(self, starts: np.ndarray, queries: list[str]) -> None:
        """Record ``blocks()`` from a reader that computed it anyway (each query exactly one block)."""
        self._blocks = (self.frame, starts, queries)

    def ranked_queries(self) -> list[str]:
        """Queries with at least one row, in frame order (rows of a query are contiguous)."""
        return list(dict.fromkeys(self.blocks()[1]))

    def empty_queries(self) -> list[str]:
        ranked = set(self.ranked_queries())
        return [q for q in self.queries if q not in ranked]


@dataclass(frozen=True, slots=True)
class Query:
    """One query's record: its text, split, tags and what the dataset declares about it."""

    query_id: str
    text: str | None = None
    split: str | None = None
    tags: tuple[str, ...] = ()
    answerable: bool | None = None  # None: not declared
    completeness: Completeness | None = None  # per-query override of the dataset's


@dataclass
class ChunkMap:
    """Which document each chunk belongs to (chunk-level runs scored against document-level qrels)."""

    frame: pl.DataFrame  # CHUNK_SCHEMA
    source: str | None = None

    def fingerprint(self) -> str:
        """Independent of entry order; changes when any entry changes."""
        pairs = sorted(zip(self.frame.get_column("chunk_id").to_list(), self.frame.get_column("doc_id").to_list()))
        return canonical_sha256(pairs)


@dataclass
class Dataset:
    """Queries, qrels and what the dataset declares (grade scale, threshold, completeness, corpus, ...)."""

    queries: tuple[Query, ...]
    qrels: Qrels
    dataset_id: str | None = None
    dataset_version: str | None = None
    grades: tuple[int, ...] | None = None  # declared grade scale; None: any integer
    threshold: int = 1  # grade >= threshold is relevant for binary measures
    grade_definitions: dict[int, str] = field(default_factory=dict)
    completeness: Completeness = "pooled"
    corpus: tuple[str, ...] | None = None  # None: open corpus
    corpus_texts: dict[str, str] | None = None
    chunk_map: ChunkMap | None = None
    query_source: QuerySource = "dataset"
    description: str | None = None
    official_measures: tuple[str, ...] = ()
    metadata: dict = field(default_factory=dict)
    trec_iteration: str = "0"  # default qrels iteration column when written as TREC
    split: str | None = None  # the split selected by select_split, if any
    source: str | None = None
    # Queries of the benchmark that were never judged (e.g. the topics a ``/judged`` subset leaves
    # out): outside the query set, but a run that answers them is not from another split; the
    # scorer lists them as unjudged and excludes them, as for a TREC qrels file (policy §1).
    unjudged_queries: tuple[str, ...] = ()

    def query_ids(self) -> list[str]:
        return [q.query_id for q in self.queries]

    def select_split(self, split: str | None) -> "Dataset":
        """The same dataset restricted to one split (None: all queries)."""
        import polars as pl

        if split is None:
            return self
        keep = tuple(q for q in self.queries if q.split == split)
        ids = [q.query_id for q in keep]
        qrels = self.qrels.with_frame(self.qrels.frame.filter(pl.col("query_id").is_in(ids)))
        return Dataset(**{**self.__dict__, "queries": keep, "qrels": qrels, "split": split})
