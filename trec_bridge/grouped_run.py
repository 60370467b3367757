"""Score a run whose rankings are not sorted yet (the Python API's dicts and DataFrames) without sorting it.

Ordering a run is what reading one costs most: every ranking argsorted, the
200,000 document IDs of a DL19-size run gathered into their new order,
then checked again in each policy's order.  Scoring needs much less: the
length of each ranking and, for the few judged rows, the rank each takes.
So here the run's rows stay in the order given (grouped by query, checked by
``converters.trec_run.group_rows``), and the rank of a row is the number of
rows of its query before it in the policy's order, plus one.  That count is
read from **one sort of packed keys**: the query in the high bits, the sort
key's order-preserving bits in the rest (truncated by as many bits as the
query takes), so ``np.sort`` of one uint64 array orders every ranking at
once, and a binary search gives each judged row its count.  Where packed keys
are equal (a tie of scores, or two scores that differ only in the truncated
bits) the few rows concerned are ordered exactly: key descending, ties by
document ID in the policy's byte order.  The ranks are those the sorted run
would give; ``tests/test_api_unsorted.py`` checks that against the general
path on generated inputs.

Only the orderings that break ties by document ID are done so ("given" is
the order a dict run is read in: double scores, ties by document ID
descending); a policy that keeps ties in row order or sorts as ranx does, or
a dataset with a corpus or a chunk map, is scored through the sorted run
(``prepare_grouped`` returns None).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from . import memory_guard
from .model import QueryOrders
from .ordering import as_float32, rows_of_misordered_queries, search_in_order, sorted_keys
from .policy import Ordering
from .scorer import Judgments, Prepared, RunSummary
from .validate import RunChecks

if TYPE_CHECKING:
    from converters.trec_run import GroupedRows

_SIGN = np.int64(-(2 ** 63))


def prepare_grouped(judgments: Judgments, grouped: GroupedRows, orderings: list[Ordering], duplicates: str,
                    n_measures: int = 1) -> Prepared | None:
    """The ``Prepared`` that ``scorer.prepare_checked`` gives for the sorted run of ``grouped`` (a run read from
    columns, without rank column or dataset ID), or None where this does not apply (see the module's doc)."""
    dataset = judgments.dataset
    if dataset.corpus is not None or dataset.chunk_map is not None or not all(map(_by_doc_id, orderings)) \
            or grouped.frame.height == 0:
        return None
    frame, queries = grouped.frame, tuple(grouped.queries.to_list())
    memory_guard.check_queries(judgments.universe.height + len(queries), n_measures, None)
    checks = RunChecks(dataset, judgments.in_base, duplicates)
    checks.add_records(queries, {}, None)
    builders = {o: judgments.builder(o) for o in orderings}
    lengths = np.diff(np.append(grouped.starts, frame.height))
    some = next(iter(builders.values()))
    query_u = some.lookup(grouped.queries)  # each query's index in the universe (-1: outside it)
    counts = np.zeros(judgments.universe.height, dtype=np.int64)
    counts[query_u[query_u >= 0]] = lengths[query_u >= 0]
    doc = frame.get_column("doc_id")
    rows, *carried = some.judged_pairs.rows(grouped.keys, doc, lambda rows: query_u[grouped.qidx[rows]])
    score, block = frame.get_column("score").to_numpy(), grouped.qidx[rows]  # each judged row's query (block)
    ranks: dict[tuple[str, str], np.ndarray] = {}
    tied = None
    for ordering in orderings:
        precision, tie_break = _key_of(ordering)
        if (precision, tie_break) not in ranks:
            key = score if precision == "float64" else as_float32(score).astype(np.float64)
            ranks[precision, tie_break], found = judged_ranks(grouped, lengths, key, doc, rows, tie_break, score)
            tied = found if tied is None else tied
        rank = ranks[precision, tie_break]
        by_rank = _by_position(grouped.starts[block] + rank - 1, frame.height)  # as the sorted run has them
        builders[ordering].add_judged(counts, query_u[block[by_rank]], rank[by_rank], *(c[by_rank] for c in carried))
    summary = RunSummary()
    summary.add_records(queries, list(queries), {}, "score",
                        QueryOrders(queries, tied, np.zeros(len(queries), dtype=bool)))
    return Prepared(dataset, judgments.base_set, judgments.universe, duplicates, checks, summary, builders)


def _by_doc_id(ordering: Ordering) -> bool:
    return ordering.tie_break in ("given", "doc_desc", "doc_asc") and not ordering.drop_identical_ids


def _key_of(ordering: Ordering) -> tuple[str, str]:
    """(precision, tie break) of an ordering; "given" is a dict run's reading order: doubles, doc ID descending."""
    if ordering.tie_break == "given":
        return "float64", "doc_desc"
    return ordering.precision, ordering.tie_break


def judged_ranks(grouped: GroupedRows, lengths: np.ndarray, key: np.ndarray, doc: pl.Series, rows: np.ndarray,
                 tie_break: str, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rank of each of ``rows`` in its query when the query is sorted by ``key`` descending, ties by document
    ID (``tie_break``: doc_desc or doc_asc), and the rows per query whose ``score`` ties with another row's
    (the reader's ``QueryOrder.ties_broken``; ``key`` ties wherever ``score`` does).

    Rows of each query are contiguous (``grouped.starts``), in any order; already in that order (a ranking
    handed over sorted), each rank is the row's position, and nothing is sorted.
    """
    if _in_order(grouped, lengths, key, doc, tie_break):
        equal = np.flatnonzero((key[1:] == key[:-1]) & (grouped.qidx[1:] == grouped.qidx[:-1]))
        among = np.unique(np.concatenate([equal, equal + 1]))  # rows tied with a neighbour: ``key`` ties
        tied = _tied(grouped.qidx[among], score[among], len(lengths)) if len(among) else \
            np.zeros(len(lengths), dtype=np.int64)
        return rows - grouped.starts[grouped.qidx[rows]] + 1, tied
    bits = max(1, int(len(lengths) - 1).bit_length())  # for the query index, taken from the key's low end
    packed = _ascending_bits(key)
    packed >>= np.uint64(bits)
    packed |= grouped.qidx.astype(np.uint64) << np.uint64(64 - bits)
    ordered = sorted_keys(packed)
    ends = grouped.starts + lengths
    at = packed[rows]
    above = ends[grouped.qidx[rows]] - search_in_order(ordered, at, "right")  # the rows with a greater packed key
    equal = np.flatnonzero(ordered[1:] == ordered[:-1])
    if len(equal) == 0:  # no two rows of a query share a packed key: no tie, every rank read off the sort
        return above + 1, np.zeros(len(lengths), dtype=np.int64)
    shared = np.unique(ordered[equal])
    pos = np.minimum(np.searchsorted(shared, packed), len(shared) - 1)
    among = np.flatnonzero(shared[pos] == packed)  # every row sharing its packed key with another
    before, tied = _exact_order(grouped.qidx[among], packed[among], key[among], score[among], doc.gather(among),
                                tie_break, len(lengths))
    offset = np.zeros(len(packed), dtype=np.int64)
    offset[among] = before
    return above + offset[rows] + 1, tied


def _in_order(grouped: GroupedRows, lengths: np.ndarray, key: np.ndarray, doc: pl.Series, tie_break: str) -> bool:
    """Whether every query's rows are in the order sought already (key descending, ties by document ID): a score
    rises only where a query begins (one vectorised count settles a run given in any other order), and
    ``ordering.rows_of_misordered_queries`` finds no query to sort."""
    if np.count_nonzero(key[1:] > key[:-1]) >= len(lengths):
        return False
    return len(rows_of_misordered_queries(grouped.starts, key, doc, Ordering(tie_break=tie_break))) == 0


def _ascending_bits(key: np.ndarray) -> np.ndarray:
    """uint64 values in the order of ``key`` (doubles, no NaN), equal exactly where the keys are equal (-0.0 as
    0.0): a negative double's bits inverted, a positive one's sign bit set (in place, two temporaries)."""
    bits = (key + 0.0).view(np.int64)  # -0.0 + 0.0 is 0.0
    flip = bits >> np.int64(63)
    flip |= _SIGN
    bits ^= flip
    return bits.view(np.uint64)


def _by_position(position: np.ndarray, n: int) -> np.ndarray:
    """The order of distinct positions in [0, n) (a query's rows by rank in the sorted run): counted, not sorted."""
    slot = np.full(n, -1, dtype=np.int64)
    slot[position] = np.arange(len(position))
    return slot[slot >= 0]




def _exact_order(query: np.ndarray, packed: np.ndarray, key: np.ndarray, score: np.ndarray, doc: pl.Series,
                 tie_break: str, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """For rows that share packed keys: how many rows of the same packed key come before each in the exact
    order (key descending, then document ID), and the rows per query whose score equals another's."""
    rows = pl.DataFrame({"p": packed, "k": key + 0.0, "d": doc, "at": np.arange(len(packed))})
    by = rows.sort(["p", "k", "d"], descending=[False, True, tie_break == "doc_desc"], maintain_order=True)
    p = by.get_column("p").to_numpy()
    first = np.searchsorted(p, p, side="left")
    before = np.empty(len(p), dtype=np.int64)
    before[by.get_column("at").to_numpy()] = np.arange(len(p)) - first
    return before, _tied(query, score, n_queries)


def _tied(query: np.ndarray, score: np.ndarray, n_queries: int) -> np.ndarray:
    """Per query, the rows (of these, which include every row that ties) whose score equals another's (-0.0 as
    0.0)."""
    groups = pl.DataFrame({"q": query, "s": score + 0.0}).group_by(["q", "s"]).len().filter(pl.col("len") > 1)
    return np.bincount(groups.get_column("q").to_numpy(), weights=groups.get_column("len").to_numpy(),
                       minlength=n_queries).astype(np.int64)
