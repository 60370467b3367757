"""The ordering and hashing rules, in one place: every reader, writer, the ranking and the references use these.

* **Pair keys**: a 64-bit hash of (query ID, document ID), to screen for
  duplicates and judged rows without joining strings (equal pairs, equal
  keys; the converse is always confirmed on the strings).
* **Positions**: rank 1..n inside each contiguous group of rows.
* **The sort key** a policy orders by: the score, read as a float32 where the
  tool does (C's ``(float)`` cast: beyond float32's range, inf), and for a
  row without score the **synthetic score** n - rank + 1 (what our TREC
  writer writes).
* **trec_eval's order**: score descending, ties by document ID descending in
  byte order; ``in_trec_order`` tells which rows already follow it.
* **Misordered queries**: the rows of the queries a policy's order would
  re-sort (score rises, or a tie breaks against its document order).
* **ranx's order**: numba's ``np.argsort`` (an unstable quicksort) of the
  negated scores in the order the rows are handed over, which moves tied
  rows of rankings longer than 15 (``quicksort_order``).

A leaf module at run time (numpy, and polars inside the functions that build
polars objects, so that importing it loads no polars; ``policy`` only for
type hints), so ``model``, ``ranking``, the converters and the references can
all import it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl

    from .policy import Ordering

_MIX = np.uint64(0x9E3779B97F4A7C15)


# ---------------------------------------------------------------- hashing

def pair_keys(query: pl.Series, doc: pl.Series) -> np.ndarray:
    """A 64-bit hash of each (query ID, document ID) row: equal pairs, equal hashes (the converse is checked)."""
    return (query.hash(seed=0).to_numpy() * _MIX) ^ doc.hash(seed=0).to_numpy()


def pair_keys_of_blocks(block_query: pl.Series, block_length: np.ndarray, doc: pl.Series) -> np.ndarray:
    """``pair_keys`` of rows grouped in blocks of one query each: the query part is hashed once per block (and
    the document part mixed in place: one new array of 8 bytes a row, not two)."""
    keys = np.repeat(block_query.hash(seed=0).to_numpy() * _MIX, block_length)
    return np.bitwise_xor(keys, doc.hash(seed=0).to_numpy(), out=keys)


def keys_repeat(keys: np.ndarray, starts: np.ndarray) -> bool:
    """Whether two rows of one query share a pair key (a document listed twice, or a hash collision: the caller
    settles which on the strings); ``starts``: the first row of each query's contiguous group.

    Only equal keys inside one query matter, so each query is sorted on its own (``_repeat_in_groups``), first
    the keys' top 32 bits (twice as fast to sort; a query of 1,000 rows has two equal tops once in 8,600), then,
    only when two tops are equal, the keys themselves.  W1's 524,288 keys of 1,000-row queries: 3 ms, against
    28 ms for numpy's sort of the whole array.
    """
    if len(keys) < 2:
        return False
    tops = np.right_shift(keys, np.uint64(32), out=np.empty(len(keys), dtype=np.uint32), casting="unsafe")
    return _repeat_in_groups(tops, starts, owned=True) and _repeat_in_groups(keys, starts, owned=False)


def _repeat_in_groups(values: np.ndarray, starts: np.ndarray, owned: bool) -> bool:
    """Whether a group of ``values`` (each beginning at ``starts``) holds a value twice; ``owned``: ``values`` may
    be sorted in place.

    The groups of the most common length (a top-k run: all of them) are the rows of one 2-D array, whose short
    sorts stay in cache; the rest are sorted together by polars on one thread (10 ms for 524,288 keys, numpy 28),
    where an equal value of two groups is only a false alarm (``any_equal``).
    """
    n = len(values)
    lengths = np.diff(np.append(starts, n))
    widths, counts = np.unique(lengths, return_counts=True)
    width = int(widths[np.argmax(counts)])
    square = lengths == width
    if width > 1 and square.sum() > 1:
        if square.all():
            block = values.reshape(-1, width) if owned else values.reshape(-1, width).copy()
        else:
            block = values[(starts[square][:, None] + np.arange(width)).ravel()].reshape(-1, width)
        block.sort(axis=1)  # in place: a sorted copy cost as much again in fresh pages
        if (block[:, 1:] == block[:, :-1]).any():
            return True
        if square.all():
            return False
        values = values[np.repeat(~square, lengths)]
    return any_equal(values)


SORT_IN_POLARS = 4096  # keys from which polars' one-thread sort beats np.sort (W1's 395,000: 6.4 against 19 CPU-ms)


def sorted_keys(keys: np.ndarray) -> np.ndarray:
    """``np.sort(keys)`` of 64-bit keys, the same values: polars' one-thread sort of integers (a radix sort) for a
    large array, about a third of numpy's CPU time; on the caller's thread, as the sort it replaces was."""
    if len(keys) < SORT_IN_POLARS:
        return np.sort(keys)
    import polars as pl

    return pl.Series(keys).sort(multithreaded=False).to_numpy()


def any_equal(keys: np.ndarray) -> bool:
    """Whether two of the keys are equal (a document possibly listed twice in a query, for pair keys)."""
    ordered = sorted_keys(keys)
    return bool((ordered[1:] == ordered[:-1]).any())


def search_in_order(ordered: np.ndarray, values: np.ndarray, side: str = "left") -> np.ndarray:
    """``np.searchsorted(ordered, values, side)``, the values searched in ascending order: the searches then walk
    ``ordered`` forwards instead of jumping across it for each value (measured 2.1 against 3.8 ms for 30,000
    keys into 28,600)."""
    order = np.argsort(values)
    found = np.empty(len(values), dtype=np.int64)
    found[order] = np.searchsorted(ordered, values[order], side=side)
    return found


# ---------------------------------------------------------------- positions and scores

def positions(starts: np.ndarray, n: int) -> np.ndarray:
    """1, 2, ... inside each group of rows beginning at ``starts`` (one array, cumulated in place)."""
    pos = np.ones(n, dtype=np.int64)
    pos[starts[1:]] = 1 - np.diff(starts)
    return np.cumsum(pos, out=pos)


def synthetic_scores(length: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """n - rank + 1 as float64: the score of a row without one (the first of n gets n, the last 1)."""
    return (length - rank + 1).astype(np.float64)


def synthetic_score_expr() -> pl.Expr:
    """``synthetic_scores`` as a polars expression over rows grouped by query in rank order."""
    import polars as pl

    position = pl.int_range(1, pl.len() + 1).over("query_id")
    return (pl.len().over("query_id") - position + 1).cast(pl.Float64)


def as_float32(values: np.ndarray) -> np.ndarray:
    """The scores as trec_eval 9 and pytrec_eval read them: C's ``(float)`` cast (beyond its range: inf)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(np.float32)


def sort_key(frame: pl.DataFrame, qidx: np.ndarray, rank: np.ndarray, ordering: Ordering) -> np.ndarray:
    """The score a policy sorts by; a row without score gets n - rank + 1 (what our TREC writer writes)."""
    score = frame.get_column("score")
    key = score.to_numpy() if score.null_count() == 0 else score.fill_null(np.nan).to_numpy().copy()
    if score.null_count():
        missing = np.isnan(key) & score.is_null().to_numpy()
        lengths = np.bincount(qidx)[qidx[missing]]
        key[missing] = synthetic_scores(lengths, rank[missing])
    return key_at_precision(key, ordering)


def key_at_precision(score: np.ndarray, ordering: Ordering) -> np.ndarray:
    """Scores (every row has one) as ``ordering`` reads them: doubles, or float32 (``as_float32``)."""
    return as_float32(score) if ordering.precision == "float32" else score


# Document IDs are a polars Series where a reader made them, or a numpy array of bytes or str
# (converters/trec_plain.py reads small files without polars): Python compares bytes in byte order, and str by
# code point, which is UTF-8's byte order too.

def _at(doc, rows: np.ndarray):
    """``doc``'s IDs at ``rows`` (a Series or a numpy array, as given)."""
    return doc[rows] if isinstance(doc, np.ndarray) else doc.gather(rows)


def _after(first, second, descending: bool = True) -> np.ndarray:
    """Per pair: True where ``second`` follows ``first`` in byte order, descending or ascending (bool array)."""
    return np.asarray(first > second if descending else first < second, dtype=bool)


# ---------------------------------------------------------------- trec_eval's order

def in_trec_order(same: np.ndarray, score: np.ndarray, doc: pl.Series) -> np.ndarray:
    """Per row: True where it starts a query (``same``: the row's query is the previous row's) or follows the
    previous row in trec_eval's order.

    That is score strictly lower, or equal with a lower document ID (byte
    order); the document IDs are compared only at the few tied rows.
    """
    ok = ~same
    ok[1:] |= score[:-1] > score[1:]
    tie_rows = np.flatnonzero(~ok & np.r_[False, score[:-1] == score[1:]])
    if tie_rows.size:
        ok[tie_rows] = _after(_at(doc, tie_rows - 1), _at(doc, tie_rows))
    return ok


def score_permutation(qidx: np.ndarray, score: np.ndarray, doc: pl.Series, same: np.ndarray) -> np.ndarray | None:
    """Permutation putting each query in trec_eval's order; None when already so.

    Only the queries found out of order are sorted, so a file already in
    score order (the usual case) costs one vectorised pass.
    """
    n = len(score)
    ok = in_trec_order(same, score, doc)
    if ok.all():
        return None
    bad_q = np.zeros(int(qidx[-1]) + 1, dtype=bool)
    bad_q[qidx[~ok]] = True
    pos = np.flatnonzero(bad_q[qidx])
    perm = np.arange(n)
    perm[pos] = pos[_by_query_then_score(qidx[pos], score[pos], doc, pos)]
    return perm


def _by_query_then_score(qidx: np.ndarray, score: np.ndarray, doc: pl.Series, rows: np.ndarray | None = None
                         ) -> np.ndarray:
    """Order of rows by query ascending, score descending, ties by document ID descending (byte order).

    The rows come grouped by query: long rankings are sorted one by one, many
    short ones by two single-key numpy sorts (the scores' dense rank, then
    query and rank as one integer key); only the rows whose scores tie are
    then ordered by their document IDs.
    Equal scores include 0.0 and -0.0, as trec_eval's comparisons have them.
    """
    m = len(score)
    starts = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]]) if m else np.zeros(0, dtype=np.int64)
    if m >= 256 * len(starts):  # long rankings (and rows grouped by query, as here): one small sort each
        bounds = np.append(starts, m).tolist()
        order = np.concatenate([np.argsort(-score[a:b]) + a for a, b in zip(bounds, bounds[1:])] or [starts])
    else:
        by_score = np.argsort(-score)
        rank = np.empty(m, dtype=np.int64)
        rank[by_score] = np.arange(m)
        order = np.argsort(qidx.astype(np.int64) * m + rank)
    q, s = qidx[order], score[order]
    tied = np.zeros(m, dtype=bool)
    tied[1:] = (q[1:] == q[:-1]) & (s[1:] == s[:-1])  # the row ties with the one before it
    if tied.any():
        in_tie = tied.copy()
        in_tie[:-1] |= tied[1:]
        at = np.flatnonzero(in_tie)
        group = np.cumsum(~tied)[at]  # one number per run of tied rows
        tied_rows = order[at] if rows is None else rows[order[at]]  # ``rows``: where each row is in ``doc``
        order[at] = order[at[_by_group_then_doc_desc(group, _at(doc, tied_rows))]]
    return order


def _by_group_then_doc_desc(group: np.ndarray, doc) -> np.ndarray:
    """Order of entries by ``group`` ascending, then document ID descending (byte order)."""
    if isinstance(doc, np.ndarray):  # a few tied rows of a small file: Python's sort (stable)
        by_doc = sorted(range(len(doc)), key=doc.__getitem__, reverse=True)
        return np.asarray(sorted(by_doc, key=group.__getitem__), dtype=np.int64)
    import polars as pl

    return (pl.DataFrame({"g": group, "d": doc, "p": np.arange(len(group))})
            .sort(["g", "d"], descending=[False, True]).get_column("p").to_numpy())


# ---------------------------------------------------------------- a policy's order

def rows_of_misordered_queries(starts: np.ndarray, key: np.ndarray, doc: pl.Series, ordering: Ordering
                               ) -> np.ndarray:
    """Rows of every query whose key rises somewhere or whose ties break against the policy's docno order.

    Queries are the contiguous row groups beginning at ``starts``.  Only the
    rows where the key rises or ties are looked at (in a file sorted by
    score: none, and the few float32 collisions), not every row.
    """
    n = len(key)
    rises = _inside_a_query(np.flatnonzero(key[1:] > key[:-1]) + 1, starts)
    tie = _inside_a_query(np.flatnonzero(key[1:] == key[:-1]) + 1, starts)
    if len(tie) and ordering.tie_break != "input":  # "input": a stable sort, ties stay in row order
        right = _after(_at(doc, tie - 1), _at(doc, tie), ordering.tie_break == "doc_desc")
        rises = np.concatenate([rises, tie[~right]])
    if len(rises) == 0:
        return rises
    blocks = np.unique(np.searchsorted(starts, rises, side="right") - 1)
    first_row = starts[blocks]
    lengths = np.append(starts[1:], n)[blocks] - first_row
    offset = np.cumsum(lengths) - lengths
    return np.repeat(first_row - offset, lengths) + np.arange(int(lengths.sum()))


def _inside_a_query(rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The rows that are not the first of their query (so compared above with a row of the same query)."""
    return rows[starts[np.searchsorted(starts, rows, side="right") - 1] != rows]


def sort_by(columns: list[str], descending: list[bool], ordering: Ordering, doc: str = "doc") -> dict:
    """A stable sort's columns and directions: the key's, then the document ID unless ties stay in row order
    ("input"), descending for "doc_desc"."""
    if ordering.tie_break == "input":
        return {"by": columns, "descending": descending}
    return {"by": columns + [doc], "descending": descending + [ordering.tie_break == "doc_desc"]}


def in_policy_order(rows: np.ndarray, block: np.ndarray, key: np.ndarray, doc, ordering: Ordering) -> np.ndarray:
    """``rows`` (ascending; whole queries, ``block`` numbering each row's query in row order) in ``ordering``'s
    order (``sort_by``: block, ``key`` descending, then the document ID, a stable sort)."""
    spec = sort_by(["block", "key"], [False, True], ordering)
    if isinstance(doc, np.ndarray):  # the few queries of a small file that a policy re-sorts: Python's stable sort
        keys, blocks, order = key[rows].tolist(), block.tolist(), range(len(rows))
        if len(spec["by"]) > 2:  # ties by document ID: sorted by it first, the stable sort below keeps that
            order = sorted(order, key=doc[rows].__getitem__, reverse=spec["descending"][2])
        order = sorted(order, key=lambda i: (blocks[i], -keys[i]))
        return rows[np.asarray(order, dtype=np.int64)]
    import polars as pl

    frame = pl.DataFrame({"row": rows, "block": block, "key": key[rows], "doc": _at(doc, rows)})
    return frame.sort(**spec, maintain_order=True).get_column("row").to_numpy()


def policy_ranks(starts: np.ndarray, key: np.ndarray, doc, rank: np.ndarray, ordering: Ordering) -> np.ndarray:
    """Each row's rank in ``ordering``'s order (by ``key``, ``sort_key``'s), for rows grouped by query (contiguous
    from ``starts``) in the reader's order, ``rank`` their positions 1..n there.

    Rows are not moved: a query found out of order gets new ranks for its
    rows (only such queries are sorted), which is all the kernels need.
    """
    if ordering.tie_break in QUICKSORT_PASSES:  # ranx: numba's unstable sort of the rows as handed over
        return quicksort_ranks(starts, key, rank, QUICKSORT_PASSES[ordering.tie_break])
    rows = rows_of_misordered_queries(starts, key, doc, ordering)
    if len(rows) == 0:
        return rank
    block = np.searchsorted(starts, rows, side="right")  # blocks in row order, whatever their query
    new_rank = rank.copy()
    new_rank[in_policy_order(rows, block, key, doc, ordering)] = rank[rows]  # the k-th in key order takes position k
    return new_rank


# ---------------------------------------------------------------- ranx's order (numba's quicksort)

SMALL_SORT = 15  # numba sorts a range of this many rows or fewer by insertion (stable); longer ones are partitioned


def quicksort_order(keys: list) -> list[int]:
    """Positions of ``keys`` in ascending order as numba's ``np.argsort`` (kind ``quicksort``) returns them.

    ranx ranks a query's documents by ``np.argsort`` of the negated scores
    inside a numba function (ranx/data_structures/common.py,
    ``sort_dict_by_value``), whose default kind is numba's own quicksort
    (numba/misc/quicksort.py): ranges of 16 or more positions are split
    around the median of their first, middle and last keys (the pivot parked
    at the end, scanned from both ends with swaps on keys equal to it), the
    larger side kept for later; shorter ranges are finished by insertion sort.
    It is not stable, so which of several tied documents comes first depends
    on every key of the ranking: reproducing ranx's ties means running the
    same steps, which this does (checked against ranx in tests/test_ranx_ref.py).
    """
    order = list(range(len(keys)))
    pending = [(0, len(keys) - 1)]
    while pending:
        low, high = pending.pop()
        while high - low >= SMALL_SORT:
            split = _partition(keys, order, low, high)
            if high - split > split - low:  # keep the smaller side, park the larger one
                if high > split:
                    pending.append((split + 1, high))
                high = split - 1
            else:
                if split > low:
                    pending.append((low, split - 1))
                low = split + 1
        _insertion_sort(keys, order, low, high)
    return order


def _insertion_sort(keys: list, order: list[int], low: int, high: int) -> None:
    for i in range(low + 1, high + 1):
        moving = order[i]
        key = keys[moving]
        j = i
        while j > low and key < keys[order[j - 1]]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = moving


def _partition(keys: list, order: list[int], low: int, high: int) -> int:
    """Split ``order[low..high]`` around the median of three; returns where the pivot ends."""
    mid = (low + high) >> 1
    for a, b in ((low, mid), (mid, high), (low, mid)):  # sort the three candidates in place
        if keys[order[b]] < keys[order[a]]:
            order[a], order[b] = order[b], order[a]
    pivot = keys[order[mid]]
    order[high], order[mid] = order[mid], order[high]
    i, j = low, high - 1
    while True:
        while i < high and keys[order[i]] < pivot:
            i += 1
        while j >= low and pivot < keys[order[j]]:
            j -= 1
        if i >= j:
            break
        order[i], order[j] = order[j], order[i]
        i, j = i + 1, j - 1
    order[i], order[high] = order[high], order[i]
    return i


QUICKSORT_PASSES = {"quicksort": 1, "quicksort_twice": 2}  # Ordering.tie_break -> times the ranking is sorted


def quicksort_ranks(starts: np.ndarray, key: np.ndarray, rank: np.ndarray, passes: int = 1) -> np.ndarray:
    """Each row's rank in ranx's order: per query (contiguous rows from ``starts``), ``quicksort_order`` of -key,
    ``passes`` times (ranx's ``Run()`` sorts each ranking, and ``make_comparable`` sorts the sorted one again,
    which moves ties once more).

    Only queries that can move are sorted: a score that rises, or a tie in
    a ranking longer than ``SMALL_SORT`` (a shorter one is insertion-sorted,
    which keeps ties in the given order); usually none or a handful.
    """
    n = len(key)
    ends = np.append(starts[1:], n)
    step = np.r_[False, key[1:] >= key[:-1]]
    step[starts] = False
    rises = np.r_[False, key[1:] > key[:-1]]
    rises[starts] = False
    long_enough = np.repeat(ends - starts > SMALL_SORT, ends - starts)
    moving = np.flatnonzero(rises | (step & long_enough))
    if len(moving) == 0:
        return rank
    new_rank = rank.copy()
    for block in np.unique(np.searchsorted(starts, moving, side="right") - 1).tolist():
        a, b = int(starts[block]), int(ends[block])
        order = list(range(b - a))
        keys = (-key[a:b]).tolist()
        for _ in range(passes):
            order = [order[i] for i in quicksort_order([keys[i] for i in order])]
        new_rank[a + np.asarray(order, dtype=np.int64)] = np.arange(1, b - a + 1)
    return new_rank
