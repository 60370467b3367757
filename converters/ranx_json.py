"""ranx's JSON layout for runs and qrels, both ways.

ranx (``Run.from_file``/``Qrels.from_file`` with ``kind="json"``, and their
``save``) keeps a run as ``{"q1": {"d3": 0.3, "d2": 0.2}}`` and qrels as
``{"q1": {"d1": 1, "d2": 2}}``: no format tag, no run name, no order but the
scores.  So:

* reading a run orders each query like every TREC reader here does
  (trec_eval's rule: score descending, equal scores by document ID
  descending) and says in ``Run.order`` where ties had to be broken; the
  run's name is what the caller gives (the file has none);
* reading is strict: the same key twice (which ``json.load`` and ranx would
  silently merge), NaN/Infinity, booleans or strings as scores, non-integer
  grades, IDs with whitespace and a qrels query with no judgment are errors;
* writing uses the TREC writer's scores (the run's own scores where they are
  strictly decreasing even as float32, else n, n-1, ..., 1), so ranx, which
  sorts by score, reads exactly the run's order.  A ranx run cannot say that a
  query failed, nor carry run/dataset IDs or metadata: ``write_ranx_run``
  reports what it left out.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from itertools import repeat

import polars as pl

from trec_bridge.errors import InvalidInput, TrecBridgeError
from trec_bridge.files import atomic_write
from trec_bridge.grades import first_out_of_range, grade_range_error
from trec_bridge.model import QRELS_SCHEMA, RUN_SCHEMA, Dataset, Qrels, Query, Run
from trec_bridge.messages import quote

from . import strict_json as sj


# --------------------------------------------------------------------------- reading


def _nested(doc, file: str, what: str) -> dict:
    if not isinstance(doc, dict):
        raise InvalidInput("E_JSON_FORMAT", f"a ranx {what} is a JSON object {{query ID: {{document ID: value}}}}, "
                           f"found {sj.show(doc)}", file=file, json_path="$")
    if "format" in doc and isinstance(doc["format"], str) and doc["format"] in sj.KNOWN_FORMATS:
        raise InvalidInput("E_JSON_FORMAT", f"this is a trec-bridge {sj.KNOWN_FORMATS[doc['format']]} "
                           f"(\"format\": \"{doc['format']}\"), not a ranx {what}", file=file, json_path="$.format")
    qids = list(doc)
    sj.check_ids(qids, lambda i: (qids[i],), file)
    for q, inner in doc.items():
        if not isinstance(inner, dict):
            raise sj.schema_error((q,), sj.msg_type("an object {document ID: value}", inner), file)
    return doc


def _flatten(doc: dict, file: str) -> tuple[list, list, list]:
    qids: list[str] = []
    docs: list[str] = []
    values: list = []
    for q, inner in doc.items():
        qids.extend(repeat(q, len(inner)))
        docs.extend(inner.keys())
        values.extend(inner.values())
    sj.check_ids(docs, lambda i: (qids[i], docs[i]), file)
    return qids, docs, values


def read_ranx_run(path: str | os.PathLike, *, run_id: str | None = None, dataset_id: str | None = None,
                  dataset_version: str | None = None) -> Run:
    """A ranx JSON run as a ``Run`` in trec_eval's order (score desc, ties by document ID desc).

    A query with ``{}`` is an explicitly empty ranking (a record, not missing).
    """
    return ranx_run_from_document(sj.read_json_file(path), str(path), run_id=run_id, dataset_id=dataset_id,
                                  dataset_version=dataset_version)


def ranx_run_from_document(doc, file: str, *, run_id: str | None = None, dataset_id: str | None = None,
                           dataset_version: str | None = None) -> Run:
    """A parsed ranx run (see ``read_ranx_run``)."""
    from .trec_run import order_rows

    doc = _nested(doc, file, "run")
    qids, docs, scores = _flatten(doc, file)
    if not set(map(type, scores)) <= {int, float}:
        i = next(i for i, s in enumerate(scores) if type(s) not in (int, float))
        raise InvalidInput("E_RUN_SCORE", f"a score must be a number, found {sj.show(scores[i])}", file=file,
                           json_path=sj.json_path((qids[i], docs[i])), query=qids[i], doc=docs[i])
    for i, s in enumerate(scores):  # the parser refuses NaN/Infinity; ints beyond float range remain
        if not math.isfinite(float(s)):
            raise InvalidInput("E_RUN_SCORE", f"score {s} is not finite", file=file,
                               json_path=sj.json_path((qids[i], docs[i])), query=qids[i], doc=docs[i])
    frame = pl.DataFrame({"query_id": qids, "doc_id": docs, "score": [float(s) for s in scores]},
                         schema={k: RUN_SCHEMA[k] for k in ("query_id", "doc_id", "score")})
    return order_rows(frame, "score", file=file).to_run(queries=tuple(doc), run_id=run_id, dataset_id=dataset_id,
                                                       dataset_version=dataset_version, order_source="score", source=file)


def read_ranx_qrels(path: str | os.PathLike) -> Qrels:
    """A ranx JSON qrels file as ``Qrels`` (iteration "0"), in file order."""
    return ranx_qrels_from_document(sj.read_json_file(path), str(path))


def ranx_qrels_from_document(doc, file: str) -> Qrels:
    """Parsed ranx qrels (see ``read_ranx_qrels``)."""
    doc = _nested(doc, file, "qrels")
    if not doc:  # as an empty TREC qrels file: nothing defines the query set
        raise InvalidInput("E_FILE_EMPTY", "the ranx qrels lists no query", file=file)
    for q, inner in doc.items():
        if not inner:
            raise sj.schema_error((q,), f"query {quote(q)} has no judgment; a qrels file lists judged documents "
                                  "(leave the query out, or judge its documents 0)", file)
    qids, docs, grades = _flatten(doc, file)
    if not set(map(type, grades)) <= {int}:
        i = next(i for i, g in enumerate(grades) if type(g) is not int)
        raise InvalidInput("E_QRELS_GRADE", f"a relevance grade must be an integer, found {sj.show(grades[i])}",
                           file=file, json_path=sj.json_path((qids[i], docs[i])), query=qids[i], doc=docs[i])
    bad = first_out_of_range(grades)
    if bad is not None:
        raise grade_range_error(grades[bad], file=file, json_path=sj.json_path((qids[bad], docs[bad])),
                                query=qids[bad], doc=docs[bad])
    frame = pl.DataFrame({"query_id": qids, "iteration": ["0"] * len(qids), "doc_id": docs, "grade": grades},
                         schema=QRELS_SCHEMA)
    return Qrels(frame, source=file)


def read_ranx_dataset(path: str | os.PathLike, *, dataset_id: str | None = None, dataset_version: str | None = None,
                      threshold: int | None = None) -> Dataset:
    """ranx JSON qrels as a ``Dataset`` the way TREC qrels are read: the judged queries are the query set
    (``query_source="qrels"``), open corpus, pooled, grade scale = grades seen (plus the threshold if none
    reaches it)."""
    return ranx_dataset_from_document(sj.read_json_file(path), str(path), dataset_id=dataset_id,
                                      dataset_version=dataset_version, threshold=threshold)


def ranx_dataset_from_document(doc, file: str, *, dataset_id: str | None = None, dataset_version: str | None = None,
                               threshold: int | None = None) -> Dataset:
    """Parsed ranx qrels as a ``Dataset`` (see ``read_ranx_dataset``)."""
    qrels = ranx_qrels_from_document(doc, file)
    t = 1 if threshold is None else threshold
    seen = set(qrels.frame.get_column("grade").unique().to_list())
    scale = tuple(sorted(seen | ({t} if max(seen) < t else set())))
    return Dataset(queries=tuple(Query(q) for q in qrels.query_ids()), qrels=qrels, dataset_id=dataset_id,
                   dataset_version=dataset_version, grades=scale, threshold=t, completeness="pooled", corpus=None,
                   query_source="qrels", source=file)


# --------------------------------------------------------------------------- writing


@dataclass
class RanxWriteInfo:
    """What writing to ranx's layout had to do or leave out, for the caller to report."""

    path: str
    synthetic_queries: list[str] = field(default_factory=list)  # written with scores n, n-1, ..., 1
    empty_queries: list[str] = field(default_factory=list)  # written as {} (ranx keeps them)
    failed_queries: list[str] = field(default_factory=list)  # not in the file: ranx cannot say "failed"
    dropped: list[str] = field(default_factory=list)  # run fields the layout has no place for


def ranx_run_document(run: Run) -> tuple[dict, RanxWriteInfo]:
    """``{query: {doc: score}}`` in the run's order, with scores that order ranx like the run."""
    from .trec_run import ordered_frame, trec_score_values

    frame = ordered_frame(run)
    qids, docs = frame.get_column("query_id").to_list(), frame.get_column("doc_id").to_list()
    _check_writable(list(run.queries), qids, docs)
    values, rows, synthetic = trec_score_values(frame)
    info = RanxWriteInfo(path="", synthetic_queries=synthetic, failed_queries=list(run.failures))
    doc: dict = {}
    for q, d, s, made_up in zip(qids, docs, values.tolist(), rows.tolist()):
        inner = doc.get(q)
        if inner is None:
            inner = doc[q] = {}
        inner[d] = int(s) if made_up else s  # synthetic scores n..1 are integers
    ordered = {}
    for q in run.queries:
        if q in run.failures:
            continue
        ordered[q] = doc.get(q, {})
        if not ordered[q]:
            info.empty_queries.append(q)
    for name, value in (("run_id", run.run_id), ("dataset_id", run.dataset_id),
                        ("dataset_version", run.dataset_version)):
        if value is not None:
            info.dropped.append(name)
    if run.metadata:
        info.dropped.append("metadata")
    return ordered, info


def write_ranx_run(run: Run, path: str | os.PathLike) -> RanxWriteInfo:
    """Write ``run`` in ranx's JSON layout, atomically (see the module notes for what is left out)."""
    doc, info = ranx_run_document(run)
    info.path = str(path)
    atomic_write(path, _encode(doc))
    return info


def ranx_qrels_document(qrels: Qrels) -> dict:
    frame = qrels.frame
    if frame.get_column("grade").null_count():
        i = int(frame.get_column("grade").is_null().arg_true()[0])
        raise InvalidInput("E_QRELS_GRADE", "a judgment without a grade cannot be written",
                           query=frame.get_column("query_id")[i], doc=frame.get_column("doc_id")[i])
    from .trec_qrels import check_qrels_duplicates

    check_qrels_duplicates(frame)  # a JSON object cannot hold the same document twice
    _check_writable(frame.get_column("query_id").unique(maintain_order=True).to_list(),
                    frame.get_column("query_id").to_list(), frame.get_column("doc_id").to_list())
    doc: dict = {}
    for q, d, g in frame.select("query_id", "doc_id", "grade").iter_rows():
        doc.setdefault(q, {})[d] = int(g)
    return doc


def write_ranx_qrels(qrels: Qrels, path: str | os.PathLike) -> None:
    """Write ``qrels`` as ranx JSON ``{query: {doc: grade}}``, atomically (the iteration column is not kept)."""
    doc = ranx_qrels_document(qrels)
    if not doc:
        raise InvalidInput("E_FILE_EMPTY", "no judgment to write", file=str(path))
    atomic_write(path, _encode(doc))


def _check_writable(queries: list, qids: list, docs: list) -> None:
    """Never write an ID the reader would refuse (empty, whitespace, control characters)."""
    try:
        sj.check_ids(queries, lambda i: (queries[i],), None)
        sj.check_ids(docs, lambda i: (qids[i], docs[i]), None)
    except InvalidInput as exc:
        raise InvalidInput(exc.code, f"cannot be written as ranx JSON: {exc.message}", json_path=exc.where.json_path,
                           query=exc.where.query) from None


def _encode(doc: dict) -> bytes:
    """One query per line; ``repr``-exact floats (json uses the shortest round-tripping form)."""
    try:
        lines = [f"  {json.dumps(q, ensure_ascii=False)}: {json.dumps(inner, ensure_ascii=False, allow_nan=False)}"
                 for q, inner in doc.items()]
    except ValueError as exc:  # pragma: no cover - scores were checked finite
        raise TrecBridgeError("E_OUTPUT", f"cannot be written as JSON: {exc}") from None
    return ("{\n" + ",\n".join(lines) + "\n}\n" if lines else "{}\n").encode("utf-8")
