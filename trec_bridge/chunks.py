"""Collapse a ranking of chunks to a ranking of documents (policy §5).

Each document takes the position of its first chunk; the order of first
occurrence is kept (never re-sorted); the cutoff is applied later, by the
measures, so a chunk adapter has no k.  Every collapsed document keeps its
evidence: first chunk, that chunk's rank, all its chunk ranks.
"""
from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from .errors import InvalidInput
from .model import ChunkMap, Run
from .messages import quote


@dataclass
class Collapsed:
    run: Run
    evidence: pl.DataFrame  # query_id, doc_id, rank, first_chunk, first_chunk_rank, chunk_ranks


def check_chunk_map(chunk_map: ChunkMap, corpus: tuple[str, ...] | None) -> None:
    """A chunk listed twice, or pointing outside a listed corpus (used or not), is invalid."""
    frame = chunk_map.frame
    dup = frame.filter(pl.col("chunk_id").is_duplicated())
    if dup.height:
        raise InvalidInput("E_CHUNK_MAP_DUPLICATE", "chunk listed twice in the chunk map",
                           file=chunk_map.source, doc=dup.item(0, "chunk_id"))
    if corpus is not None:
        outside = frame.filter(~pl.col("doc_id").is_in(list(corpus)))
        if outside.height:
            raise InvalidInput("E_CHUNK_MAP_DOC",
                               f"chunk {quote(outside.item(0, 'chunk_id'))} maps to a document outside the corpus",
                               file=chunk_map.source, doc=outside.item(0, "doc_id"))


def collapse(run: Run, chunk_map: ChunkMap) -> Collapsed:
    rows = run.frame
    dup = rows.filter(pl.struct("query_id", "doc_id").is_duplicated())
    if dup.height:
        first = dup.sort(["query_id", "rank"]).row(0, named=True)
        raise InvalidInput("E_CHUNK_DUPLICATE", f"chunk repeated in the ranking (at rank {first['rank']})",
                           file=run.source, query=first["query_id"], doc=first["doc_id"])
    mapped = rows.rename({"doc_id": "chunk_id"}).join(
        chunk_map.frame, on="chunk_id", how="left", maintain_order="left")
    unknown = mapped.filter(pl.col("doc_id").is_null())
    if unknown.height:
        first = unknown.row(0, named=True)
        raise InvalidInput("E_CHUNK_UNKNOWN", f"chunk at rank {first['rank']} is not in the chunk map",
                           file=run.source, query=first["query_id"], doc=first["chunk_id"])
    # A document takes the position of its first chunk; later chunks only add evidence.
    first = mapped.filter(pl.struct("query_id", "doc_id").is_first_distinct())
    ranks = mapped.group_by(["query_id", "doc_id"]).agg(chunk_ranks=pl.col("rank"))
    evidence = (
        first.rename({"chunk_id": "first_chunk", "rank": "first_chunk_rank"})
        .join(ranks, on=["query_id", "doc_id"], how="left", maintain_order="left")
        .with_columns(rank=pl.int_range(1, pl.len() + 1).over("query_id").cast(pl.Int64))
    )
    frame = evidence.select("query_id", "doc_id", "score", "rank")
    collapsed = Run(**{**run.__dict__, "frame": frame, "order_source": "list", "unique_checked": True})
    collapsed.metadata = {**run.metadata, "collapsed_from_chunks": True}
    return Collapsed(collapsed, evidence.select("query_id", "doc_id", "rank", "first_chunk",
                                                "first_chunk_rank", "chunk_ranks"))
