"""Dataset JSON (``trec-bridge.dataset`` version 1) <-> ``model.Dataset``.

Loading is: strict parse, format check, schema, then ``check_dataset`` with
JSON paths in its messages.  Writing builds the document from the model, puts
it through the same checks, and only then writes it, so the tool never writes
a dataset it would refuse to read.  The layout is fixed (one query, one
judged query, one chunk-map entry per line) so dump -> load -> dump is
byte-identical and diffs stay readable.  Field reference: docs/formats.md.
"""
from __future__ import annotations

import os

import polars as pl

from trec_bridge.dataset_checks import check_dataset
from trec_bridge.errors import InvalidInput
from trec_bridge.files import atomic_write
from trec_bridge.model import CHUNK_SCHEMA, QRELS_SCHEMA, ChunkMap, Dataset, Qrels, Query
from trec_bridge.messages import quote

from . import strict_json as sj

FORMAT = "trec-bridge.dataset"
SCHEMA = "dataset.v1.json"
DEFAULT_ITERATION = "0"
# Bulk parts that jsonschema would take seconds over; _to_model checks them.
LIGHT = {
    "/properties/judgments/additionalProperties": {"type": "object"},
    "/properties/trec_iterations/additionalProperties": {"type": "object"},
    "/properties/subtopic_judgments/additionalProperties": {"type": "object"},
    "/properties/chunk_map": {"type": "object"},
    "/properties/corpus/properties/documents": {"type": ["array", "object"]},
    "/properties/unjudged_queries": {"type": "array"},
}
# jsonschema takes ~0.1 ms a query object and a judged query's key (a minute for 100k queries, 500k judgments):
# these two are checked in bulk first (_bulk_valid), and validated by the schema only when the bulk check doubts
# them, so every error keeps the schema's own message and order.
QUICK = {**{k: v for k, v in LIGHT.items() if not k.startswith("/properties/judgments/")},
         "/properties/queries": {"type": "array", "minItems": 1}, "/properties/judgments": {"type": "object"}}
_COMPLETENESS = ("exhaustive", "pooled")
_LAYOUT = {"grades": 1, "corpus": 1, "queries": 1, "judgments": 1, "subtopic_judgments": 2, "trec_iterations": 1,
           "chunk_map": 1, "metadata": 64}
_QUERY_FIELDS = ("query_id", "text", "split", "tags", "answerable", "completeness")


def load_dataset(path: str | os.PathLike) -> Dataset:
    """Read a dataset JSON file (gzip allowed); raise InvalidInput on anything off."""
    file = str(path)
    doc = sj.read_document(path, FORMAT)
    return document_to_dataset(doc, file)


def document_to_dataset(doc: dict, file: str | None = None) -> Dataset:
    """A parsed, format-checked document -> a checked Dataset."""
    validate_light(doc, file)
    ds = _to_model(doc, file)
    check_dataset(ds, locate=lambda where: sj.json_path(_json_parts(where, ds.qrels.subtopics)))
    return ds


def dump_dataset(dataset: Dataset, path: str | os.PathLike) -> None:
    """Write ``dataset`` as JSON, atomically; refuse (InvalidInput) what load would refuse."""
    check_dataset(dataset)
    doc = dataset_to_document(dataset)
    layout = dict(_LAYOUT, corpus=2 if isinstance(doc["corpus"].get("documents"), dict) else 1)  # texts: one per line
    try:
        validate_light(doc, None)
        _to_model(doc, None)
        data = sj.encode_checked(sj.render(doc, layout), strict=True, file=None)  # numbers, depth, surrogates
    except InvalidInput as exc:
        raise InvalidInput(exc.code, f"cannot write this dataset as JSON: {exc.message}", file=dataset.source,
                           json_path=exc.where.json_path) from None
    atomic_write(path, data)


# ---------------------------------------------------------------- JSON -> model


def validate_light(doc: dict, file: str | None) -> None:
    """``sj.validate(doc, SCHEMA, file, LIGHT)``, the same verdict: the quick schema and the bulk checks when both
    find nothing, else the light schema's first error."""
    try:
        sj.validate(doc, SCHEMA, file, QUICK)
        if _bulk_valid(doc):
            return
    except InvalidInput:
        pass
    sj.validate(doc, SCHEMA, file, LIGHT)


def _bulk_valid(doc: dict) -> bool:
    """What QUICK left out is valid: every query object ($defs/query), every judged query's ID ($defs/id) and
    its judgments an object."""
    judgments = doc.get("judgments")
    if type(judgments) is not dict:  # subtopic judgments (or none): the light schema checks them
        return False
    return (all(map(_query_valid, doc["queries"])) and all(map(sj.id_is_valid, judgments))
            and all(type(inner) is dict for inner in judgments.values()))


def _query_valid(q) -> bool:
    """One query object as $defs/query accepts it (known fields, each of its type)."""
    if type(q) is not dict or not sj.id_is_valid(q.get("query_id")) or not set(q) <= set(_QUERY_FIELDS):
        return False
    if "text" in q and type(q["text"]) is not str or "split" in q and not _text(q["split"]):
        return False
    tags = q.get("tags", [])
    if type(tags) is not list or not all(map(_text, tags)) or len(set(tags)) != len(tags):
        return False
    return ("answerable" not in q or type(q["answerable"]) is bool) and q.get("completeness", "pooled") in _COMPLETENESS


def _text(value) -> bool:
    return type(value) is str and value != ""


def _to_model(doc: dict, file: str | None) -> Dataset:
    default_it = doc.get("trec_iteration", DEFAULT_ITERATION)
    subtopics = "subtopic_judgments" in doc
    if subtopics:
        frame = _subtopic_judgments(doc["subtopic_judgments"], file)
    else:
        qids, docs, grades = _judgments(doc["judgments"], file)
        frame = pl.DataFrame({"query_id": qids, "doc_id": docs, "grade": grades}, schema={k: QRELS_SCHEMA[k] for k in ("query_id", "doc_id", "grade")})
        frame = _with_iterations(frame, default_it, doc.get("trec_iterations", {}), file).select(list(QRELS_SCHEMA))
    corpus, texts = _corpus(doc["corpus"], file)
    g = doc["grades"]
    return Dataset(
        queries=tuple(_query(q) for q in doc["queries"]),
        unjudged_queries=_unjudged(doc.get("unjudged_queries", []), file),
        qrels=Qrels(frame, source=file, subtopics=subtopics),
        dataset_id=doc["dataset_id"],
        dataset_version=doc.get("dataset_version"),
        grades=tuple(g["scale"]),
        threshold=g["threshold"],
        grade_definitions={int(k): v for k, v in g.get("definitions", {}).items()},
        completeness=doc["completeness"],
        corpus=corpus,
        corpus_texts=texts,
        chunk_map=_chunk_map(doc["chunk_map"], file) if "chunk_map" in doc else None,
        query_source="dataset",
        description=doc.get("description"),
        official_measures=_measures(doc.get("official_measures", []), file),
        metadata=doc.get("metadata", {}),
        trec_iteration=default_it,
        source=file,
    )


def _query(q: dict) -> Query:
    return Query(query_id=q["query_id"], text=q.get("text"), split=q.get("split"), tags=tuple(q.get("tags", ())),
                 answerable=q.get("answerable"), completeness=q.get("completeness"))


def _unjudged(ids: list, file: str | None) -> tuple[str, ...]:
    sj.check_ids(ids, lambda i: ("unjudged_queries", i), file)
    return tuple(ids)


def _flatten(nested: dict) -> tuple[list, list, list]:
    """``{a: {b: v}}`` as parallel lists of a, b and v, in document order."""
    outer: list = []
    inner: list = []
    values: list = []
    for key, sub in nested.items():
        outer.extend([key] * len(sub))
        inner.extend(sub.keys())
        values.extend(sub.values())
    return outer, inner, values


def _judgments(judgments: dict, file: str | None) -> tuple[list, list, list]:
    """Flatten query -> doc -> grade in document order, checking what LIGHT left out."""
    qids, docs, grades = _flatten(judgments)
    _check_judged(qids, docs, grades, lambda i: ("judgments", qids[i], docs[i]), file)
    return qids, docs, grades


def _check_judged(qids: list, docs: list, grades: list, where, file: str | None) -> None:
    """Document IDs are IDs and grades JSON integers (booleans and 1.0 refused: the TREC qrels' code)."""
    sj.check_ids(docs, where, file)
    if not set(map(type, grades)) <= {int}:
        i = next(i for i, g in enumerate(grades) if type(g) is not int)
        raise InvalidInput("E_QRELS_GRADE", f"a relevance grade must be an integer, found {sj.show(grades[i])}", file=file,
                           json_path=sj.json_path(where(i)), query=qids[i], doc=docs[i])


def _subtopic_judgments(judgments: dict, file: str | None) -> pl.DataFrame:
    """Flatten query -> subtopic -> doc -> grade in document order into qrels rows (the subtopic as iteration)."""
    qids, subs, inner_maps = _flatten(judgments)
    sj.check_ids(subs, lambda i: ("subtopic_judgments", qids[i], subs[i]), file)
    sj.check_types(inner_maps, (dict,), "an object (document ID -> grade)",
                   lambda i: ("subtopic_judgments", qids[i], subs[i]), file)
    rq, rs, rd, rg = [], [], [], []
    for q, sub, inner in zip(qids, subs, inner_maps):
        rq.extend([q] * len(inner))
        rs.extend([sub] * len(inner))
        rd.extend(inner.keys())
        rg.extend(inner.values())
    _check_judged(rq, rd, rg, lambda i: ("subtopic_judgments", rq[i], rs[i], rd[i]), file)
    return pl.DataFrame({"query_id": rq, "iteration": rs, "doc_id": rd, "grade": rg}, schema=QRELS_SCHEMA)


def _with_iterations(frame: pl.DataFrame, default: str, overrides: dict, file: str | None) -> pl.DataFrame:
    if not overrides:
        return frame.with_columns(iteration=pl.lit(default, dtype=pl.String))
    oq, od, oi = _flatten(overrides)
    sj.check_ids(od, lambda i: ("trec_iterations", oq[i], od[i]), file)
    sj.check_ids(oi, lambda i: ("trec_iterations", oq[i], od[i]), file)
    ov = pl.DataFrame({"query_id": oq, "doc_id": od, "iteration": oi}, schema={"query_id": pl.String, "doc_id": pl.String, "iteration": pl.String})
    orphan = ov.join(frame, on=["query_id", "doc_id"], how="anti", maintain_order="left")
    if orphan.height:
        q, d, _ = orphan.row(0)
        raise sj.schema_error(("trec_iterations", q, d), f"no judgment for ({quote(q)}, {quote(d)}) to give an iteration to", file)
    joined = frame.join(ov, on=["query_id", "doc_id"], how="left", maintain_order="left")
    return joined.with_columns(pl.col("iteration").fill_null(pl.lit(default, dtype=pl.String)))


def _corpus(corpus: dict, file: str | None) -> tuple[tuple[str, ...] | None, dict[str, str] | None]:
    if corpus["kind"] == "open":
        return None, None
    documents = corpus["documents"]
    if isinstance(documents, list):
        sj.check_ids(documents, lambda i: ("corpus", "documents", i), file)
        sj.check_unique(documents, lambda i: ("corpus", "documents", i), file)
        return tuple(documents), None
    ids = list(documents)
    sj.check_ids(ids, lambda i: ("corpus", "documents", ids[i]), file)
    texts = list(documents.values())
    sj.check_types(texts, (str,), "a string (the document's text)", lambda i: ("corpus", "documents", ids[i]), file)
    return tuple(ids), dict(documents)


def _chunk_map(mapping: dict, file: str | None) -> ChunkMap:
    chunks, docs = list(mapping), list(mapping.values())
    sj.check_ids(chunks, lambda i: ("chunk_map", chunks[i]), file)
    sj.check_ids(docs, lambda i: ("chunk_map", chunks[i]), file)
    return ChunkMap(pl.DataFrame({"chunk_id": chunks, "doc_id": docs}, schema=CHUNK_SCHEMA), source=file)


def _measures(measures: list, file: str | None) -> tuple[str, ...]:
    """Each official measure must parse, so a typo fails at load, not at scoring time."""
    from trec_bridge.measures.parse import parse_measure

    for i, m in enumerate(measures):
        try:
            parse_measure(m)
        except InvalidInput as exc:
            raise InvalidInput(exc.code, exc.message, file=file, json_path=sj.json_path(("official_measures", i))) from None
    return tuple(measures)


def _json_parts(where: tuple, subtopics: bool = False) -> tuple:
    """dataset_checks' places -> JSON path parts of this format (``subtopics``: a diversity dataset's)."""
    kind, *rest = where
    judgments = "subtopic_judgments" if subtopics else "judgments"
    if kind == "query":
        return ("queries", *rest)
    if kind == "unjudged_query":
        return ("unjudged_queries", *rest)
    if kind == "judgment":
        return ("subtopic_judgments", rest[0], rest[2], rest[1]) if len(rest) == 3 else ("judgments", *rest)
    if kind == "query_judgments":
        return (judgments, rest[0])
    if kind == "judgments":
        return (judgments,)
    if kind == "threshold":
        return ("grades", "threshold")
    if kind == "grade_scale":
        return ("grades", "scale", rest[0])
    if kind == "grade_definition":
        return ("grades", "definitions", str(rest[0]))
    if kind == "chunk":
        return ("chunk_map", rest[0])
    return (kind,)  # "judgments", "completeness"


# ---------------------------------------------------------------- model -> JSON


def dataset_to_document(ds: Dataset) -> dict:
    """The JSON document for ``ds``, keys in the documented order."""
    frame = ds.qrels.frame
    doc: dict = {"format": FORMAT, "version": sj.FORMAT_VERSION}
    if ds.dataset_id is not None:  # else the check before writing says "missing field"
        doc["dataset_id"] = ds.dataset_id
    if ds.dataset_version is not None:
        doc["dataset_version"] = ds.dataset_version
    if ds.description is not None:
        doc["description"] = ds.description
    doc["grades"] = _grades(ds, frame)
    doc["completeness"] = ds.completeness
    if ds.corpus is None:
        doc["corpus"] = {"kind": "open"}
    elif ds.corpus_texts is None:
        doc["corpus"] = {"kind": "listed", "documents": list(ds.corpus)}
    else:
        doc["corpus"] = {"kind": "listed", "documents": {d: ds.corpus_texts.get(d) for d in ds.corpus}}
    doc["queries"] = [_query_doc(q) for q in ds.queries]
    if ds.unjudged_queries:
        doc["unjudged_queries"] = list(ds.unjudged_queries)
    if ds.qrels.subtopics:
        doc["subtopic_judgments"] = _nest_subtopics(frame)
    else:
        doc["judgments"] = _nest(frame, "grade")
        if ds.trec_iteration != DEFAULT_ITERATION:
            doc["trec_iteration"] = ds.trec_iteration
        odd = frame.filter(pl.col("iteration") != ds.trec_iteration)
        if odd.height:
            doc["trec_iterations"] = _nest(odd, "iteration")
    if ds.chunk_map is not None:
        cm = ds.chunk_map.frame
        doc["chunk_map"] = dict(zip(cm.get_column("chunk_id").to_list(), cm.get_column("doc_id").to_list()))
    if ds.official_measures:
        doc["official_measures"] = list(ds.official_measures)
    if ds.metadata:
        doc["metadata"] = sj.sorted_keys(ds.metadata)
    return doc


def _grades(ds: Dataset, frame: pl.DataFrame) -> dict:
    """A Dataset from TREC qrels may declare no scale: write the grades seen (plus the threshold)."""
    if ds.grades is not None:
        scale = list(ds.grades)
    else:
        scale = sorted(set(frame.get_column("grade").unique().to_list()) | {ds.threshold})
    out: dict = {"scale": scale, "threshold": ds.threshold}
    if ds.grade_definitions:
        out["definitions"] = {str(g): text for g, text in ds.grade_definitions.items()}
    return out


def _query_doc(q: Query) -> dict:
    out = {"query_id": q.query_id, "text": q.text, "split": q.split, "tags": list(q.tags) or None,
           "answerable": q.answerable, "completeness": q.completeness}
    return {k: out[k] for k in _QUERY_FIELDS if out[k] is not None}


def _nest(frame: pl.DataFrame, column: str) -> dict:
    """Rows (query, doc, value) -> {query: {doc: value}}, both levels in row order."""
    out: dict = {}
    for q, d, v in zip(frame.get_column("query_id").to_list(), frame.get_column("doc_id").to_list(), frame.get_column(column).to_list()):
        inner = out.get(q)
        if inner is None:
            inner = out[q] = {}
        inner[d] = v
    return out


def _nest_subtopics(frame: pl.DataFrame) -> dict:
    """Rows (query, subtopic, doc, grade) -> {query: {subtopic: {doc: grade}}}, every level in row order."""
    out: dict = {}
    for q, sub, d, g in frame.select("query_id", "iteration", "doc_id", "grade").iter_rows():
        out.setdefault(q, {}).setdefault(sub, {})[d] = g
    return out
