"""Open a dataset or a run whatever its format: the one format detector of every command.

The CLI and the API take the user's file as it is.  JSON or TREC: the first
non-blank byte (``{``) tells them apart, as TREC lines never start with a
brace.  Which JSON layout: the parsed document's top-level ``format`` key
(``json_layout``), decided on the whole document the reader then uses, so
the detector can never disagree with the reader (a 64 KB sniff once called a
dataset whose ``format`` came later "not a ranx qrels").
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from trec_bridge.errors import InvalidInput
from trec_bridge.files import head_bytes, read_input_bytes
from trec_bridge.model import Dataset, Query, Run

from .columnar_paths import IPC_SUFFIXES, PARQUET_SUFFIXES, columnar_kind  # noqa: F401  (the suffixes re-exported)

if TYPE_CHECKING:  # pathlib is imported where a folder is looked into: score on small files needs none (cli/quick.py)
    from pathlib import Path


def is_json(path: str | Path) -> bool:
    """Whether the first non-blank byte of the (possibly gzipped) file is ``{``, read no further than it."""
    if not os.path.isfile(path):
        read_input_bytes(path)  # raises the right error for a missing file or a directory
    n = 4096
    while True:
        head = head_bytes(path, n)
        data = head.lstrip(b" \t\r\n")
        if data or len(head) < n:  # found, or the whole (blank) file was read
            return data[:1] == b"{"
        n *= 16  # megabytes of blanks before the brace: still JSON, as the reader will find


RUN_LINES_FORMAT = b'"trec-bridge.run-lines"'
_FIRST_LINE = 1 << 20  # a header longer than this is not sniffed (its file is read as a JSON document)


def is_run_lines(path: str | Path) -> bool:
    """Whether the file is a run in JSON Lines: its first line is an object naming ``trec-bridge.run-lines``."""
    head = head_bytes(path, _FIRST_LINE)
    first, newline, _ = head.partition(b"\n")
    if not newline or RUN_LINES_FORMAT not in first:
        return False
    import msgspec  # only when a file may be JSON Lines: TREC start-up stays light

    try:
        header = msgspec.json.decode(first)
    except (msgspec.DecodeError, RecursionError):
        return False  # a broken first line: read as a document, whose reader says what is wrong
    return isinstance(header, dict) and header.get("format") == RUN_LINES_FORMAT.decode().strip('"')


@dataclass(frozen=True)
class JsonLayout:
    """A JSON layout the detector knows: which top-level objects are its own, and how to read them.

    The readers import their converter module when called, so that reading
    TREC files never imports the JSON machinery.  Layouts are tried in
    registration order; a converter module for a new layout registers one.
    """

    name: str
    claims: Callable[[dict], bool]
    read_run: Callable[[dict, str, bool], Run]  # (document, file, chunks)
    read_dataset: Callable[[dict, str, int | None], Dataset]  # (document, file, threshold)
    lists_queries: bool = False  # its datasets list their own query set, so --queries is refused


JSON_LAYOUTS: dict[str, JsonLayout] = {}


def register_layout(layout: JsonLayout) -> JsonLayout:
    JSON_LAYOUTS[layout.name] = layout
    return layout


def json_layout(doc: Any, file: str | None, what: str) -> str:
    """The name of the registered layout that claims ``doc``: ``"trec-bridge"`` (a document naming its
    format), ``"ranx"`` (``{query ID: {document ID: value}}``), ...

    ``what`` is "run" or "dataset", for the message when no layout claims the document.
    """
    if not isinstance(doc, dict):
        return "trec-bridge"  # the format check says what a document must be
    for layout in JSON_LAYOUTS.values():
        if layout.claims(doc):
            return layout.name
    bad = next(k for k, v in doc.items() if not isinstance(v, dict))
    from . import strict_json as sj  # jsonschema: imported only when JSON is read (TREC start-up stays light)

    raise InvalidInput("E_JSON_FORMAT", sj.msg_missing_format(FORMATS[what], found=(bad, doc[bad])), file=file,
                       json_path="$")


FORMATS = {"run": "trec-bridge.run", "dataset": "trec-bridge.dataset"}


def _own_run(doc: dict, file: str, chunks: bool) -> Run:
    from . import strict_json as sj
    from .json_run import document_to_run

    sj.check_format(doc, FORMATS["run"], file)
    return document_to_run(doc, file, allow_duplicates=chunks)


def _own_dataset(doc: dict, file: str, threshold: int | None) -> Dataset:
    from . import strict_json as sj
    from .json_dataset import document_to_dataset

    sj.check_format(doc, FORMATS["dataset"], file)
    dataset = document_to_dataset(doc, file)
    if threshold is not None:
        dataset.threshold = threshold
    return dataset


def _ranx_run(doc: dict, file: str, chunks: bool) -> Run:
    from .ranx_json import ranx_run_from_document

    return ranx_run_from_document(doc, file)


def _ranx_dataset(doc: dict, file: str, threshold: int | None) -> Dataset:
    from .ranx_json import ranx_dataset_from_document

    return ranx_dataset_from_document(doc, file, threshold=threshold)


# a "format" key whose value is not an object names the document's format (a ranx query may be called "format")
register_layout(JsonLayout("trec-bridge", lambda doc: "format" in doc and not isinstance(doc["format"], dict),
                           _own_run, _own_dataset, lists_queries=True))
register_layout(JsonLayout("ranx", lambda doc: all(isinstance(v, dict) for v in doc.values()),
                           _ranx_run, _ranx_dataset))


def looks_like_ranx(path: str | Path) -> bool:
    """Whether the file is in ranx's layout, by the one detector every command uses (``json_layout``)."""
    if not is_json(path):
        return False
    from . import strict_json as sj  # jsonschema: imported only when JSON is read (TREC start-up stays light)

    try:
        return json_layout(sj.read_json_file(path), str(path), "run") == "ranx"
    except InvalidInput:
        return False


def load_run_any(path: str | Path, order: str = "score", chunks: bool = False) -> Run:
    """``chunks``: the IDs are chunk IDs, so a repeat is reported by the chunk collapse (E_CHUNK_DUPLICATE)."""
    kind = columnar_kind(path)
    if kind is not None:
        from .columnar import read_columnar_run

        return read_columnar_run(path, kind)
    if is_json(path):
        from . import strict_json as sj
        from .json_run_fast import read_run_fast

        if is_run_lines(path):
            from .json_run_lines import read_run_lines

            return read_run_lines(path, allow_duplicates=chunks)
        run = read_run_fast(path, allow_duplicates=chunks)  # a trec-bridge run document, read fast
        if run is not None:
            return run
        file = str(path)
        doc = sj.read_json_file(path)
        return JSON_LAYOUTS[json_layout(doc, file, "run")].read_run(doc, file, chunks)
    from .trec_run import read_trec_run

    return read_trec_run(path, order=order)


def load_dataset_any(path: str | Path, queries_file: str | Path | None = None, threshold: int | None = None,
                     subtopics: bool = False) -> Dataset:
    """A JSON dataset, or TREC (or Parquet / Arrow) qrels whose query set is the qrels' queries or a query-ID file;
    ``subtopics``: the qrels are a diversity qrels (their second column, or ``iteration``, is the subtopic)."""
    kind = columnar_kind(path)
    if kind is None and is_json(path):
        from . import strict_json as sj

        file = str(path)
        doc = sj.read_json_file(path)
        layout = JSON_LAYOUTS[json_layout(doc, file, "dataset")]
        dataset = layout.read_dataset(doc, file, threshold)  # the document's own errors come first
        if layout.lists_queries and queries_file is not None:
            raise InvalidInput("E_USAGE", "--queries applies to TREC qrels; a JSON dataset lists its own queries",
                               file=str(queries_file))
        if subtopics and not dataset.qrels.subtopics:
            raise InvalidInput("E_USAGE", "--subtopics declares TREC (or Parquet / Arrow) qrels a diversity qrels; "
                               "a JSON dataset declares its own (subtopic_judgments), and this one has none", file=file)
        return dataset
    from .trec_qrels import read_trec_qrels

    if kind is not None:
        from .columnar import read_columnar_qrels

        qrels = read_columnar_qrels(path, kind, subtopics)
    else:
        qrels = read_trec_qrels(path, subtopics=subtopics)
    if queries_file is None:
        ids, source, extra = qrels.query_ids(), "qrels", {}
    else:
        ids = read_query_ids(queries_file)
        judged = set(qrels.query_ids())
        outside = [q for q in qrels.query_ids() if q not in set(ids)]
        import polars as pl

        qrels = qrels.with_frame(qrels.frame.filter(pl.col("query_id").is_in(ids)))
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
