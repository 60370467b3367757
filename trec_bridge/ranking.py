"""Turn a run and its judgments into the columnar ``Ranking`` the measure kernels read.

This is the hot path of a 7M-line run, so it avoids whole-frame string work:

* query indices come from the run's contiguous query blocks (one dictionary
  lookup per query, then ``np.repeat``), not from a 7M-row string join;
* grades come from a join on a 64-bit hash of (query, document), verified by
  comparing the document IDs of the few rows that matched;
* a policy's re-ordering by score is skipped when the rows already are in
  that order (the usual case: the TREC reader sorted them), and otherwise
  done by one polars sort;
* the final regrouping into query-index order moves whole blocks of integer
  arrays, never strings.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from .measures.base import UNJUDGED, Ranking
from .policy import Ordering


def query_index(query_ids: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"query_id": query_ids, "qidx": np.arange(len(query_ids), dtype=np.int64)},
                        schema={"query_id": pl.String, "qidx": pl.Int64})


def build_ranking(run_frame: pl.DataFrame, qrels_frame: pl.DataFrame, index: pl.DataFrame,
                  ordering: Ordering) -> Ranking:
    """The run rows of the indexed queries, ordered as ``ordering`` says, joined with their grades."""
    n = index.height
    rows = _with_query_index(run_frame, index)
    rows = _ordered(rows, ordering)
    judged = qrels_frame.join(index, on="query_id", how="inner")
    grade = _grades(rows, judged)
    qidx = np.asarray(rows.get_column("qidx").to_numpy(), dtype=np.int64)
    rank = np.asarray(rows.get_column("rank").to_numpy(), dtype=np.int64)
    perm = _group_permutation(qidx, n)
    if perm is not None:
        qidx, rank, grade = qidx[perm], rank[perm], grade[perm]
    counts = np.bincount(qidx, minlength=n)
    return Ranking(
        n_queries=n,
        offsets=np.concatenate(([0], np.cumsum(counts))).astype(np.int64, copy=False),
        row_query=qidx,
        rank=rank,
        grade=grade,
        qrels_query=np.asarray(judged.get_column("qidx").to_numpy(), dtype=np.int64),
        qrels_grade=np.asarray(judged.get_column("grade").to_numpy(), dtype=np.int64),
    )


def _with_query_index(frame: pl.DataFrame, index: pl.DataFrame) -> pl.DataFrame:
    """Rows of indexed queries with their ``qidx``; rows of other queries are dropped."""
    if frame.height == 0:
        return frame.with_columns(qidx=pl.lit(0, dtype=pl.Int64)).clear()
    q = frame.get_column("query_id")
    starts = q.ne_missing(q.shift(1)).arg_true().to_numpy()
    block_q = q.gather(starts).to_list()
    if len(set(block_q)) != len(block_q):  # a query's rows are not contiguous: join instead
        return frame.join(index, on="query_id", how="inner", maintain_order="left")
    position = dict(zip(index.get_column("query_id").to_list(), range(index.height)))
    block_idx = np.array([position.get(b, -1) for b in block_q], dtype=np.int64)
    lengths = np.diff(np.append(starts, frame.height))
    qidx = np.repeat(block_idx, lengths)
    out = frame.with_columns(qidx=pl.Series(qidx, dtype=pl.Int64))
    return out if (block_idx >= 0).all() else out.filter(pl.col("qidx") >= 0)


def _sort_key(frame: pl.DataFrame, ordering: Ordering) -> pl.Expr:
    """The score a policy sorts by; a query without scores gets n - rank + 1 (what our TREC writer writes)."""
    n = pl.len().over("qidx")
    key = pl.when(pl.col("score").is_null()).then((n - pl.col("rank") + 1).cast(pl.Float64)).otherwise(pl.col("score"))
    return key.cast(pl.Float32) if ordering.precision == "float32" else key


def _ordered(rows: pl.DataFrame, ordering: Ordering) -> pl.DataFrame:
    """Rows grouped by query (blocks contiguous) in the policy's order, ``rank`` = position 1..n."""
    if ordering.tie_break == "given" or rows.height == 0:
        return rows  # the reader's order: rows of a query are contiguous and in rank order
    keyed = rows.with_columns(_key=_sort_key(rows, ordering))
    if not _already_ordered(keyed, ordering):
        keyed = keyed.sort(["qidx", "_key", "doc_id"], descending=[False, True, ordering.tie_break == "doc_desc"],
                           maintain_order=True)
    return keyed.drop("_key").with_columns(rank=pl.int_range(1, pl.len() + 1).over("qidx").cast(pl.Int64))


def _already_ordered(keyed: pl.DataFrame, ordering: Ordering) -> bool:
    """True when, inside every query block, the key never rises and ties follow the policy's docno order."""
    qidx = keyed.get_column("qidx").to_numpy()
    key = keyed.get_column("_key").to_numpy()
    same = qidx[1:] == qidx[:-1]
    if (same & (key[1:] > key[:-1])).any():
        return False
    tie = np.flatnonzero(same & (key[1:] == key[:-1]))
    if len(tie) == 0:
        return True
    doc = keyed.get_column("doc_id")
    first, second = doc.gather(tie), doc.gather(tie + 1)
    right = (first > second) if ordering.tie_break == "doc_desc" else (first < second)
    return bool(right.all())


def _grades(rows: pl.DataFrame, judged: pl.DataFrame) -> np.ndarray:
    """Grade of every row (UNJUDGED when not judged), via a hash join verified on the document ID."""
    grade = np.full(rows.height, UNJUDGED, dtype=np.int64)
    if rows.height == 0 or judged.height == 0:
        return grade
    key = (pl.col("qidx").cast(pl.UInt64) * 0x9E3779B97F4A7C15) ^ pl.col("doc_id").hash(seed=0)
    left = rows.select(_k=key, _row=pl.int_range(0, pl.len(), dtype=pl.Int64), doc_id=pl.col("doc_id"))
    right = judged.select(_k=key, _doc=pl.col("doc_id"), grade=pl.col("grade"))
    hit = left.join(right, on="_k", how="inner").filter(pl.col("doc_id") == pl.col("_doc"))
    grade[hit.get_column("_row").to_numpy()] = hit.get_column("grade").to_numpy()
    return grade


def _group_permutation(qidx: np.ndarray, n: int) -> np.ndarray | None:
    """Row order that puts the contiguous query blocks in query-index order (None if they already are)."""
    if len(qidx) == 0 or (qidx[1:] >= qidx[:-1]).all():
        return None
    starts = np.flatnonzero(np.concatenate(([True], qidx[1:] != qidx[:-1])))
    lengths = np.diff(np.append(starts, len(qidx)))
    order = np.argsort(qidx[starts], kind="stable")
    new_lengths = lengths[order]
    offsets = np.concatenate(([0], np.cumsum(new_lengths)[:-1]))
    return np.repeat(starts[order] - offsets, new_lengths) + np.arange(len(qidx))
