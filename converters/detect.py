"""Open a dataset or a run whatever its format: JSON by content, TREC otherwise.

The CLI and the API take the user's file as it is; sniffing the first
non-blank byte (``{``) is enough to tell our JSON formats from TREC lines,
which never start with a brace.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from trec_bridge.errors import InvalidInput
from trec_bridge.files import head_bytes, read_input_bytes
from trec_bridge.model import Dataset, Qrels, Query, Run


def is_json(path: str | Path) -> bool:
    """Sniff the first non-blank byte of the (possibly gzipped) file without reading all of it."""
    if not Path(path).is_file():
        read_input_bytes(path)  # raises the right error for a missing file or a directory
    return head_bytes(path).lstrip(b" \t\r\n")[:1] == b"{"


def load_run_any(path: str | Path, order: str = "score", chunks: bool = False) -> Run:
    """``chunks``: the IDs are chunk IDs, so a repeat is reported by the chunk collapse (E_CHUNK_DUPLICATE)."""
    if is_json(path):
        from .json_run import load_run
        from .ranx_json import looks_like_ranx, read_ranx_run

        if looks_like_ranx(path):
            return read_ranx_run(path)
        return load_run(path, allow_duplicates=chunks)
    from .trec_run import read_trec_run

    return read_trec_run(path, order=order)


def load_dataset_any(path: str | Path, queries_file: str | Path | None = None, threshold: int | None = None) -> Dataset:
    """A JSON dataset, or TREC qrels whose query set is the qrels' queries or a query-ID file."""
    if is_json(path):
        from .json_dataset import load_dataset
        from .ranx_json import looks_like_ranx, read_ranx_dataset

        if looks_like_ranx(path):
            return read_ranx_dataset(path, threshold=threshold)
        dataset = load_dataset(path)
        if queries_file is not None:
            raise InvalidInput("E_USAGE", "--queries applies to TREC qrels; a JSON dataset lists its own queries",
                               file=str(queries_file))
        if threshold is not None:
            dataset.threshold = threshold
        return dataset
    from .trec_qrels import read_trec_qrels

    qrels = read_trec_qrels(path)
    if queries_file is None:
        ids, source, extra = qrels.query_ids(), "qrels", {}
    else:
        ids = read_query_ids(queries_file)
        judged = set(qrels.query_ids())
        outside = [q for q in qrels.query_ids() if q not in set(ids)]
        qrels = Qrels(qrels.frame.filter(pl.col("query_id").is_in(ids)), qrels.source)
        source = "query_file"
        extra = {"query_file": str(queries_file), "judged_queries_not_in_query_file": outside,
                 "listed_queries_without_judgments": [q for q in ids if q not in judged]}
    return Dataset(
        queries=tuple(Query(q) for q in ids), qrels=qrels, dataset_id=None,
        threshold=1 if threshold is None else threshold, completeness="pooled", corpus=None,
        query_source=source, metadata=extra, source=str(path),
    )


def read_query_ids(path: str | Path) -> list[str]:
    """Query IDs, one per line (first whitespace-separated field, so TREC topic TSVs work too)."""
    from .text_lines import check_bytes

    raw = read_input_bytes(path)
    check_bytes(raw, str(path))  # a BOM would become part of the first ID; NUL, bad UTF-8: refused with a line
    text = raw.decode("utf-8")
    ids: list[str] = []
    seen: set[str] = set()
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        qid = line.split()[0]
        if qid in seen:
            raise InvalidInput("E_QUERY_FILE", "query ID listed twice", file=str(path), line=n, query=qid)
        seen.add(qid)
        ids.append(qid)
    if not ids:
        raise InvalidInput("E_QUERY_SET_EMPTY", "the query file lists no query", file=str(path))
    return ids
