"""Turn a run and its judgments into the columnar ``Ranking`` the measure kernels read.

This is the hot path of a 7M-line run, so it avoids whole-frame string work:

* query indices come from the run's contiguous query blocks (``Run.blocks``,
  computed once per run; a query's index is found by a sorted-hash search
  confirmed on the strings, ``_IndexLookup``, then ``np.repeat``);
* a policy's order is checked with a few array comparisons and the rows are
  re-sorted (one polars sort) only when they are not already in that order
  (the usual case: the TREC reader sorted them);
* judged rows are found by a 64-bit hash of (query, document) tested against
  the judgments' hashes, then confirmed on the document ID strings, so only
  the few thousand judged rows are ever joined or kept.
"""
from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import polars as pl

from .measures.base import Ranking
from .model import QueryNotContiguous, Run
from .ordering import (QUICKSORT_PASSES, pair_keys, policy_ranks, positions, quicksort_ranks, search_in_order,
                       sort_by, sort_key)
from .policy import Ordering
from .subtopics import SubtopicTable


def query_index(query_ids: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"query_id": query_ids, "qidx": np.arange(len(query_ids), dtype=np.int64)},
                        schema={"query_id": pl.String, "qidx": pl.Int64})


class RankingBuilder:
    """Builds a ``Ranking`` from a run given whole or in parts (each query whole in one part).

    Each part is reduced at once to its judged rows and per-query lengths, so
    a part's strings can be freed before the next one is read.  Queries are
    indexed in ``universe`` (every query that may be scored); ``finish`` keeps
    those of the final index.
    """

    def __init__(self, qrels_frame: pl.DataFrame, universe: pl.DataFrame, ordering: Ordering,
                 subtopics: SubtopicTable | None = None):
        """``subtopics``: a diversity qrels, ``qrels_frame`` being its judged pairs (subtopics.judged_pairs) with
        their ``pair`` index, which the judged rows then carry."""
        self.universe, self.ordering, self.subtopics = universe, ordering, subtopics
        self.carried = ("grade",) if subtopics is None else ("grade", "pair")
        self.judged = qrels_frame.join(universe, on="query_id", how="inner")
        self.judged_keys = pair_keys(self.judged.get_column("query_id"), self.judged.get_column("doc_id"))
        self.judged_pairs = JudgedPairs(self.judged, self.judged_keys, self.carried)
        self.retrieved = np.zeros(universe.height, dtype=np.int64)
        self.lookup = _IndexLookup(universe)
        self.parts: list[tuple[np.ndarray, ...]] = []  # judged rows: query, rank, grade (and pair)
        self._judged_views: list = []  # the last index's judgments (``_judgments_of``), shared by ``fresh`` copies

    def fresh(self) -> "RankingBuilder":
        """An empty builder over the same judgments and universe, sharing what ``__init__`` computed from them
        (the judged rows' join and keys, the query lookup): for the next run against the same dataset."""
        new = copy.copy(self)
        new.retrieved, new.parts = np.zeros_like(self.retrieved), []
        return new

    def add(self, run: Run) -> None:
        qidx, counts, frame, keys, starts = _query_rows(run, self.universe, self.lookup)
        if self.ordering.drop_identical_ids and len(qidx):
            qidx, counts, frame, keys, starts = _without_identical_ids(qidx, counts, frame, keys)
        if len(qidx) == 0:
            return
        again = np.flatnonzero((counts > 0) & (self.retrieved > 0))
        if len(again):
            raise QueryNotContiguous(self.universe.get_column("query_id")[int(again[0])])
        rank, qidx, frame = _ordered(frame, qidx, self.ordering, starts)
        rows, *carried = self.judged_pairs.rows(keys, frame.get_column("doc_id"), qidx.__getitem__)
        self.add_judged(counts, qidx[rows], rank[rows], *carried)

    def add_judged(self, counts: np.ndarray, qidx: np.ndarray, rank: np.ndarray, *carried: np.ndarray) -> None:
        """A part reduced already: its rows per universe query (``counts``) and its judged rows' query index,
        rank in this builder's order and ``carried`` columns (the grade; a diversity qrels' pair index too), as
        ``JudgedPairs.rows`` gives them (``add``; a run scored unsorted: grouped_run)."""
        self.retrieved += counts
        self.parts.append((qidx.astype(np.int64), rank.astype(np.int64), *carried))

    def reduced(self) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """What this builder holds, as a worker sends it (part_scores.py): the universe index and ranked length
        of each query with rows, and the judged rows (query, rank, grade); ``absorb`` takes it in."""
        ranked = np.flatnonzero(self.retrieved)
        rows = tuple(np.concatenate(c) for c in zip(*self.parts)) if self.parts else (np.zeros(0, dtype=np.int64),) * 3
        return ranked, self.retrieved[ranked], rows

    def absorb(self, reduced: tuple) -> None:
        """Take in another builder's ``reduced()`` over the same universe, as ``add`` would have taken its part."""
        ranked, lengths, rows = reduced
        self.retrieved[ranked] += lengths
        if len(rows[0]):
            self.parts.append(rows)

    def finish(self, index: pl.DataFrame) -> Ranking:
        """The Ranking over ``index`` (a subset of the universe, in any order)."""
        n = index.height
        to_index = np.full(self.universe.height, -1, dtype=np.int64)
        to_index[self.lookup(index.get_column("query_id"))] = np.arange(n)
        retrieved = np.zeros(n, dtype=np.int64)
        kept = to_index >= 0
        retrieved[to_index[kept]] = self.retrieved[kept]
        if self.parts:
            query, rank, *carried = (np.concatenate(cols) for cols in zip(*self.parts))
        else:
            query, rank, *carried = (np.zeros(0, dtype=np.int64) for _ in range(2 + len(self.carried)))
        query = to_index[query]
        keep = query >= 0
        query, rank, carried = query[keep], rank[keep], [c[keep] for c in carried]
        perm = None if len(query) < 2 else _group_order(query, rank)
        if perm is not None:
            query, rank, carried = query[perm], rank[perm], [c[perm] for c in carried]
        qrels_query, qrels_grade, qrels_pair, memo = self._judgments_of(index, to_index)
        ranking = Ranking(n_queries=n, retrieved=retrieved, row_query=query, rank=rank, grade=carried[0],
                          qrels_query=qrels_query, qrels_grade=qrels_grade, memo=memo)
        if self.subtopics is not None:
            ranking.row_pair, ranking.qrels_pair, ranking.subtopics = carried[1], qrels_pair, self.subtopics
        return ranking

    def _judgments_of(self, index: pl.DataFrame, to_index: np.ndarray) -> tuple:
        """The judgments of ``index``'s queries (query, grade, a diversity qrels' pair index or None) and their
        memo (``Ranking.judged``): the same arrays for the same index, so that the next run against these
        judgments (an ``Evaluator``) finds the nDCG ideals and relevant counts already computed."""
        ids = index.get_column("query_id")
        for seen, view in self._judged_views:
            if seen.equals(ids):
                return view
        q_judged = to_index[self.judged.get_column("qidx").to_numpy()]
        in_index = q_judged >= 0
        grade = np.asarray(self.judged.get_column("grade").to_numpy(), dtype=np.int64)[in_index]
        pair = None if self.subtopics is None else self.judged.get_column("pair").to_numpy()[in_index]
        view = (q_judged[in_index], grade, pair, {})
        for array in view[:3]:
            if array is not None:
                array.flags.writeable = False  # shared by every ranking of these judgments
        self._judged_views[:] = [(ids, view)]  # the last index only: a run-dependent query set changes it
        return view


class _IndexLookup:
    """Each query ID's row in an index (-1 when absent): a sorted 64-bit hash searched per part, confirmed
    on the strings.  No Python dict of a million queries, no hash table rebuilt for every part; a dict only
    for a few hundred (the usual Python API call: its lookups cost less than the vectorised calls)."""

    SMALL = 2_000  # an index of at most this many queries is a dict: a few polars calls cost more than 2,000 lookups

    def __init__(self, index: pl.DataFrame):
        self.ids = index.get_column("query_id")
        self.qidx = index.get_column("qidx").to_numpy()
        self.small = dict(zip(self.ids.to_list(), self.qidx.tolist())) if index.height <= self.SMALL else None
        hashes = self.ids.hash(seed=0).to_numpy()
        self.order = np.argsort(hashes, kind="stable")
        self.sorted = hashes[self.order]
        self.index = index

    def __call__(self, query_ids) -> np.ndarray:
        if self.small is not None and len(query_ids) <= self.SMALL:
            wanted = query_ids.to_list() if isinstance(query_ids, pl.Series) else query_ids
            return np.fromiter((self.small.get(q, -1) for q in wanted), dtype=np.int64, count=len(wanted))
        wanted = query_ids if isinstance(query_ids, pl.Series) else pl.Series(query_ids, dtype=pl.String)
        out = np.full(len(wanted), -1, dtype=np.int64)
        if not len(self.sorted) or not len(wanted):
            return out
        hashes = wanted.hash(seed=0).to_numpy()
        pos = np.minimum(np.searchsorted(self.sorted, hashes), len(self.sorted) - 1)
        row = self.order[pos]
        hit = self.sorted[pos] == hashes
        same = hit & (self.ids.gather(row) == wanted).to_numpy()
        out[same] = self.qidx[row[same]]
        collided = np.flatnonzero(hit & ~same)  # two IDs with one hash: settle those few exactly
        if len(collided):
            found = pl.DataFrame({"query_id": wanted.gather(collided)}).join(
                self.index, on="query_id", how="left", maintain_order="left")
            out[collided] = found.get_column("qidx").fill_null(-1).to_numpy()
        return out


def _query_rows(run: Run, index: pl.DataFrame, lookup: _IndexLookup
                ) -> tuple[np.ndarray, np.ndarray, pl.DataFrame, np.ndarray, np.ndarray | None]:
    """The rows of the indexed queries: each row's query index, the rows per index entry, the frame
    restricted to them, their pair keys, and where each query's rows start (None: not contiguous)."""
    frame = run.frame
    if frame.height == 0:
        return (np.zeros(0, dtype=np.int64), np.zeros(index.height, dtype=np.int64), frame,
                np.zeros(0, dtype=np.uint64), None)
    starts, block_q = run.blocks()
    if len(set(block_q)) != len(block_q):  # a query's rows are not contiguous (not from our readers)
        joined = frame.join(index, on="query_id", how="inner", maintain_order="left")
        kept = joined.drop("qidx")
        qidx = joined.get_column("qidx").to_numpy()
        return (qidx, np.bincount(qidx, minlength=index.height), kept,
                pair_keys(kept["query_id"], kept["doc_id"]), None)
    block_idx = lookup(block_q)
    lengths = np.diff(np.append(starts, frame.height))
    qidx = np.repeat(block_idx, lengths)
    counts = np.zeros(index.height, dtype=np.int64)
    indexed = block_idx >= 0
    counts[block_idx[indexed]] = lengths[indexed]  # one block per query here
    if indexed.all():
        return qidx, counts, frame, run.pair_keys(), np.asarray(starts, dtype=np.int64)
    keep = qidx >= 0
    kept_lengths = lengths[indexed]
    kept_starts = np.cumsum(kept_lengths) - kept_lengths
    return qidx[keep], counts, frame.filter(pl.Series(keep)), run.pair_keys()[keep], kept_starts


def _without_identical_ids(qidx: np.ndarray, counts: np.ndarray, frame: pl.DataFrame, keys: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray, pl.DataFrame, np.ndarray, np.ndarray | None]:
    """The rows whose document ID is not their query's ID, renumbered 1..n per query (BEIR's
    ``ignore_identical_ids``: such a document is removed from the results before pytrec_eval sees them)."""
    keep = (frame.get_column("query_id") != frame.get_column("doc_id")).to_numpy()
    if keep.all():
        return qidx, counts, frame, keys, None
    dropped = np.bincount(qidx[~keep], minlength=len(counts))
    qidx, keys = qidx[keep], keys[keep]
    starts = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]]) if len(qidx) else np.zeros(0, dtype=np.int64)
    frame = frame.filter(pl.Series(keep)).with_columns(rank=pl.Series(positions(starts, len(qidx)), dtype=pl.Int64))
    contiguous = len(np.unique(qidx[starts])) == len(starts)
    return qidx, counts - dropped, frame, keys, starts if contiguous else None


def _ordered(frame: pl.DataFrame, qidx: np.ndarray, ordering: Ordering, starts: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, pl.DataFrame]:
    """(rank per row, qidx, frame) under the policy's order; rank is the 1-based position inside the query.

    Rows are not moved: a query found out of order gets new ranks for its
    rows (only such queries are sorted), which is all the kernels need.
    ``starts``: the first row of each query when each query's rows are known
    to be contiguous (None: found here).
    """
    rank = frame.get_column("rank").to_numpy()
    if ordering.tie_break == "given" or frame.height == 0:
        return rank, qidx, frame  # the reader's order: rank 1..n inside each contiguous query
    if starts is None:
        starts = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]])
        if len(np.unique(qidx[starts])) != len(starts):  # a query in two blocks (not from our readers)
            return _sorted_fully(frame, qidx, ordering)
    key = sort_key(frame, qidx, rank, ordering)
    return policy_ranks(starts, key, frame.get_column("doc_id"), rank, ordering), qidx, frame


def _sorted_fully(frame: pl.DataFrame, qidx: np.ndarray, ordering: Ordering) -> tuple[np.ndarray, np.ndarray, pl.DataFrame]:
    """Group by query and sort by key (for frames whose queries are not contiguous)."""
    rank = frame.get_column("rank").to_numpy()
    keyed = frame.with_columns(qidx=pl.Series(qidx, dtype=pl.Int64),
                               _key=pl.Series(sort_key(frame, qidx, rank, ordering)))
    if ordering.tie_break in QUICKSORT_PASSES:  # each query's rows in the order given, then ranx's sort
        keyed = keyed.sort("qidx", maintain_order=True)
        qidx = keyed.get_column("qidx").to_numpy()
        starts = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]])
        ranks = quicksort_ranks(starts, keyed.get_column("_key").to_numpy(), positions(starts, len(qidx)),
                                QUICKSORT_PASSES[ordering.tie_break])
        return ranks, qidx, keyed.drop("qidx", "_key")
    keyed = keyed.sort(**sort_by(["qidx", "_key"], [False, True], ordering, doc="doc_id"), maintain_order=True)
    qidx = keyed.get_column("qidx").to_numpy()
    starts = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]]) if len(qidx) else np.zeros(0, dtype=np.int64)
    return positions(starts, len(qidx)), qidx, keyed.drop("qidx", "_key")


class JudgedPairs:
    """The judged (query, document) pairs of a universe, prepared once to find a run's judged rows.

    A row is a candidate when the top bits of its pair key mark a judged key in a bitmap (one byte read per
    row, a few per cent of false candidates: 32 bitmap bytes per judgment); a candidate's judgment is found by a
    binary search of the sorted judged keys, and the match confirmed on the query index and the document ID
    string (a key shared by two pairs is a hash collision, not a judgment).  When two judged pairs share a
    key, the candidates are settled by a join on the strings instead.
    """

    def __init__(self, judged: pl.DataFrame, keys: np.ndarray, carried: tuple[str, ...] = ("grade",)):
        """``carried``: the columns of ``judged`` a judged row takes (the grade; a diversity qrels' pair index)."""
        self.judged, self.carried = judged, carried
        self.order = np.argsort(keys, kind="stable")
        self.sorted = keys[self.order]
        self.unique = bool(len(keys) < 2 or (self.sorted[1:] != self.sorted[:-1]).all())
        self.qidx = judged.get_column("qidx").to_numpy()
        self.doc = judged.get_column("doc_id")
        self.columns = [np.asarray(judged.get_column(c).to_numpy(), dtype=np.int64) for c in carried]
        bits = int(np.clip(np.ceil(np.log2(max(32 * len(keys), 1))), 16, 23))
        self.shift = np.uint64(64 - bits)
        self.bitmap = np.zeros(1 << bits, dtype=bool)
        self.bitmap[keys >> self.shift] = True

    def rows(self, keys: np.ndarray, doc: pl.Series, query_of: Callable[[np.ndarray], np.ndarray]
             ) -> tuple[np.ndarray, ...]:
        """Rows whose (query, document) is judged, in row order, and their ``carried`` columns (``keys``: the
        rows' pair keys; ``query_of(rows)``: those rows' query indices in the universe)."""
        if len(keys) == 0 or self.judged.height == 0:
            return (np.zeros(0, dtype=np.int64),) * (1 + len(self.carried))
        slots = np.right_shift(keys, self.shift, out=np.empty(len(keys), dtype=np.uint32), casting="unsafe")
        candidates = np.flatnonzero(self.bitmap[slots])  # slots below 2^23: 4 bytes a row, not a key's 8
        if not self.unique:
            return self._joined(query_of(candidates), doc, candidates)
        pos = np.minimum(search_in_order(self.sorted, keys[candidates]), len(self.sorted) - 1)
        judged = self.sorted[pos] == keys[candidates]
        candidates, at = candidates[judged], self.order[pos[judged]]
        same = self.qidx[at] == query_of(candidates)
        same &= (doc.gather(candidates) == self.doc.gather(at)).to_numpy()  # confirms the hash
        return (candidates[same].astype(np.int64), *(c[at[same]] for c in self.columns))

    def _joined(self, qidx: np.ndarray, doc: pl.Series, candidates: np.ndarray) -> tuple[np.ndarray, ...]:
        """``rows`` by a join on (query index, document ID) of the candidates (``qidx``: theirs)."""
        found = (pl.DataFrame({"qidx": qidx.astype(np.int64), "doc_id": doc.gather(candidates),
                               "_row": candidates})
                 .join(self.judged.select("qidx", "doc_id", *self.carried), on=["qidx", "doc_id"], how="inner")
                 .sort("_row"))
        return (found.get_column("_row").to_numpy(),
                *(np.asarray(found.get_column(c).to_numpy(), dtype=np.int64) for c in self.carried))


def _group_order(row_query: np.ndarray, row_rank: np.ndarray) -> np.ndarray | None:
    """Order that groups the judged rows by query index, rank ascending (None when they already are)."""
    if ((row_query[1:] > row_query[:-1]) | ((row_query[1:] == row_query[:-1]) & (row_rank[1:] > row_rank[:-1]))).all():
        return None
    return np.lexsort((row_rank, row_query))
