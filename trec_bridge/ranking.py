"""Turn a run and its judgments into the columnar ``Ranking`` the measure kernels read.

All work is polars/numpy over whole columns: one join for the grades, one sort
when the policy re-orders by score, bincounts for the per-query offsets.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from .measures.base import UNJUDGED, Ranking
from .policy import Ordering


def query_index(query_ids: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"query_id": query_ids, "qidx": np.arange(len(query_ids), dtype=np.int64)},
                        schema={"query_id": pl.String, "qidx": pl.Int64})


def order_rows(frame: pl.DataFrame, ordering: Ordering) -> pl.DataFrame:
    """Rows of ``frame`` (with qidx) sorted by query, then as ``ordering`` says; rank recomputed.

    A query whose scores are absent (a JSON run of bare IDs) gets synthetic
    scores n - position + 1, which is exactly what our TREC writer writes, so
    every policy reads the list order for it.
    """
    if ordering.tie_break == "given":
        return frame.sort(["qidx", "rank"])
    n = pl.len().over("qidx")
    key = pl.when(pl.col("score").is_null()).then((n - pl.col("rank") + 1).cast(pl.Float64)).otherwise(pl.col("score"))
    if ordering.precision == "float32":
        key = key.cast(pl.Float32)
    ordered = frame.with_columns(_key=key).sort(
        ["qidx", "_key", "doc_id"], descending=[False, True, ordering.tie_break == "doc_desc"])
    return ordered.drop("_key").with_columns(rank=pl.int_range(1, pl.len() + 1).over("qidx").cast(pl.Int64))


def build_ranking(run_frame: pl.DataFrame, qrels_frame: pl.DataFrame, index: pl.DataFrame,
                  ordering: Ordering) -> Ranking:
    """The run rows of the indexed queries, ordered, joined with their grades."""
    rows = run_frame.join(index, on="query_id", how="inner")
    rows = order_rows(rows, ordering)
    grades = qrels_frame.select("query_id", "doc_id", "grade")
    rows = rows.join(grades, on=["query_id", "doc_id"], how="left", maintain_order="left")
    n = index.height
    row_query = rows.get_column("qidx").to_numpy()
    counts = np.bincount(row_query, minlength=n)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    judged = qrels_frame.join(index, on="query_id", how="inner")
    return Ranking(
        n_queries=n,
        offsets=offsets,
        row_query=row_query.astype(np.int64),
        rank=rows.get_column("rank").to_numpy().astype(np.int64),
        grade=rows.get_column("grade").fill_null(UNJUDGED).to_numpy().astype(np.int64),
        qrels_query=judged.get_column("qidx").to_numpy().astype(np.int64),
        qrels_grade=judged.get_column("grade").to_numpy().astype(np.int64),
    )
