"""Run JSON (``trec-bridge.run`` version 1) <-> ``model.Run``.

The JSON list order *is* the run's order: no scores are needed and none are
used to reorder (``order_source = "list"``; ``"ordered_by": "score"`` records
that the lists were read from a TREC file's scores, ``order_source = "score"``).  Three states stay distinct:
a query with ``[]`` ran and found nothing, a query in ``failures`` failed, a
query in neither is missing; a query in both is refused.  Writing puts the
built document through the loader's checks first, so an unloadable file is
never written.  Field reference: docs/formats.md.
"""
from __future__ import annotations

import os
from itertools import repeat
from operator import itemgetter, methodcaller

import polars as pl

from trec_bridge.errors import InvalidInput
from trec_bridge.files import atomic_write
from trec_bridge.model import RUN_SCHEMA, Run
from trec_bridge.messages import quote

from . import strict_json as sj
from .run_timing import TIMING_KEY, check_timing

FORMAT = "trec-bridge.run"
SCHEMA = "run.v1.json"
# Ranking entries are checked by _columns (jsonschema would take minutes on 7M entries).
LIGHT = {"/properties/rankings/additionalProperties": {"type": "array"}}
_ENTRY_FIELDS = ("doc_id", "score")
_ENTRY_SHAPES = {frozenset({"doc_id"}), frozenset({"doc_id", "score"})}
_DOC_ID = itemgetter("doc_id")
_SCORE = methodcaller("get", "score")
_SCORE_OR_0 = methodcaller("get", "score", 0)
_LAYOUT = {"system": 64, "rankings": 1, "failures": 1, "timing": 1}
# "ordered_by": "score" marks lists that are their scores' strict reading (a run read from a TREC file by
# score): the scores are the run's own, and a TREC file written from it keeps them (converters.trec_run).
ORDERED_BY_KEY = "ordered_by"
# Run.metadata keys this format carries (and TIMING_KEY); other keys are not written.
SYSTEM_KEY, FAILURE_KINDS_KEY = "system", "failure_kinds"


def load_run(path: str | os.PathLike, *, allow_duplicates: bool = False) -> Run:
    """Read a run JSON file (gzip allowed); raise InvalidInput on anything off.

    ``allow_duplicates=True`` leaves a repeated ID in the frame for the caller
    to judge: a chunk run (where the chunk map's check names it
    E_CHUNK_DUPLICATE) or a reference policy that keeps duplicates.
    """
    file = str(path)
    return document_to_run(sj.read_document(path, FORMAT), file, allow_duplicates=allow_duplicates)


def document_to_run(doc: dict, file: str | None = None, *, allow_duplicates: bool = False, queries=None) -> Run:
    """A parsed, format-checked document -> a checked Run (``queries``: ranked queries beyond ``doc``'s rankings,
    for a writer checking a document's other members alone)."""
    sj.validate(doc, SCHEMA, file, LIGHT)
    return _to_model(doc, file, allow_duplicates, queries)


def dump_run(run: Run, path: str | os.PathLike) -> None:
    """Write ``run`` as JSON, atomically; refuse (InvalidInput) what load would refuse."""
    doc = run_to_document(run)
    try:
        document_to_run(doc, None)
        # The rankings were just checked entry by entry; re-parse only the rest (free-form system).
        sj.encode_checked(sj.render({**doc, "rankings": {}}, _LAYOUT), strict=True, file=None)
        data = sj.encode_checked(sj.render(doc, _LAYOUT), strict=False, file=None)
    except InvalidInput as exc:
        raise InvalidInput(exc.code, f"cannot write this run as JSON: {exc.message}", file=run.source,
                           json_path=exc.where.json_path, query=exc.where.query, doc=exc.where.doc) from None
    atomic_write(path, data)


# ---------------------------------------------------------------- JSON -> model


def _to_model(doc: dict, file: str | None, allow_duplicates: bool = False, queries=None) -> Run:
    """``queries``: the run's ranked queries when ``doc`` is a shell without its rankings (the fast reader)."""
    rankings: dict = doc["rankings"]
    qids, docs, scores, ranks = _columns(rankings, file)
    frame = pl.DataFrame(
        {"query_id": qids, "doc_id": docs, "score": pl.Series(scores, dtype=pl.Float64), "rank": ranks}, schema=RUN_SCHEMA
    )
    _check_scores(frame, file)
    if not allow_duplicates:
        _check_duplicates(frame, file)
    failures: dict = doc.get("failures", {})
    conflict = next((q for q in failures if q in rankings), None)
    if conflict is not None:
        raise InvalidInput("E_RUN_QUERY_CONFLICT", f"query {quote(conflict)} has both a ranking and a failure record; keep one",
                           file=file, json_path=sj.json_path(("failures", conflict)), query=conflict)
    metadata: dict = {}
    if "system" in doc:
        metadata[SYSTEM_KEY] = doc["system"]
    if TIMING_KEY in doc:
        known = set(queries or ())
        check_timing(doc[TIMING_KEY], lambda q: q in rankings or q in failures or q in known, file)
        metadata[TIMING_KEY] = doc[TIMING_KEY]
    kinds = {q: f["kind"] for q, f in failures.items() if "kind" in f}
    if kinds:
        metadata[FAILURE_KINDS_KEY] = kinds
    return Run(
        frame=frame,
        queries=tuple(rankings),
        failures={q: f["reason"] for q, f in failures.items()},
        run_id=doc["run_id"],
        dataset_id=doc["dataset_id"],
        dataset_version=doc.get("dataset_version"),
        metadata=metadata,
        order=None,
        order_source="score" if doc.get(ORDERED_BY_KEY) == "score" else "list",
        source=file,
        unique_checked=not allow_duplicates,
    )


def _columns(rankings: dict, file: str | None) -> tuple[list, list, list, list]:
    """Flatten rankings into columns; the entry checks the lightened schema left out.

    A ranking of only bare IDs, or only well-formed objects, is handled with
    C-level map/extend; entry-by-entry Python runs only for mixed lists.
    """
    qids: list[str] = []
    docs: list = []
    scores: list = []
    ranks: list[int] = []
    for q, entries in rankings.items():
        n = len(entries)
        qids.extend(repeat(q, n))
        ranks.extend(range(1, n + 1))
        types = set(map(type, entries))
        if types <= {str}:
            docs.extend(entries)
            scores.extend(repeat(None, n))
        elif types == {dict} and set(map(frozenset, entries)) <= _ENTRY_SHAPES:
            if None in map(_SCORE_OR_0, entries):  # "score": null is not "no score"
                i = next(i for i, e in enumerate(entries) if "score" in e and e["score"] is None)
                raise sj.schema_error(("rankings", q, i, "score"), sj.msg_type("a number", None), file)
            docs.extend(map(_DOC_ID, entries))
            scores.extend(map(_SCORE, entries))
        else:
            for i, e in enumerate(entries):
                if type(e) is str:
                    docs.append(e)
                    scores.append(None)
                elif type(e) is dict:
                    docs.append(_entry_doc(e, ("rankings", q, i), file))
                    scores.append(e.get("score"))
                else:
                    raise sj.schema_error(("rankings", q, i), sj.msg_type('a document ID or an object with "doc_id"', e), file)

    def at(k: int) -> tuple:
        return ("rankings", qids[k], ranks[k] - 1)

    def doc_at(k: int) -> tuple:
        return at(k) + ("doc_id",) if type(rankings[qids[k]][ranks[k] - 1]) is dict else at(k)

    sj.check_ids(docs, doc_at, file)
    sj.check_types(scores, (int, float, type(None)), "a number", lambda k: at(k) + ("score",), file)
    return qids, docs, scores, ranks


def _entry_doc(e: dict, at: tuple, file: str | None) -> str:
    for key in e:
        if key not in _ENTRY_FIELDS:
            raise sj.schema_error(at, sj.msg_unknown_field(key, _ENTRY_FIELDS), file)
    if "doc_id" not in e:
        raise sj.schema_error(at, sj.msg_missing_field("doc_id"), file)
    if "score" in e and type(e["score"]) not in (int, float):
        raise sj.schema_error(at + ("score",), sj.msg_type("a number", e["score"]), file)
    return e["doc_id"]


def _check_scores(frame: pl.DataFrame, file: str | None) -> None:
    """The parser refuses NaN/inf; a Run built in code may still hold one."""
    bad = frame.filter(pl.col("score").is_nan() | pl.col("score").is_infinite())
    if bad.height:
        q, d, s, r = bad.row(0)
        raise InvalidInput("E_RUN_SCORE", f"score {s} is not finite", file=file,
                           json_path=sj.json_path(("rankings", q, r - 1, "score")), query=q, doc=d)


def _check_duplicates(frame: pl.DataFrame, file: str | None) -> None:
    """No silent de-duplication: a repeat would move later documents up."""
    dup = frame.filter(~pl.struct("query_id", "doc_id").is_first_distinct())
    if not dup.height:
        return
    q, d, _, second = dup.row(0)
    first = frame.filter((pl.col("query_id") == q) & (pl.col("doc_id") == d)).item(0, "rank")
    raise InvalidInput("E_RUN_DUPLICATE_DOC", f"document {quote(d)} appears twice in the ranking of query {quote(q)}, at positions "
                       f"{first} and {second} (counting from 1)", file=file, json_path=sj.json_path(("rankings", q, second - 1)),
                       query=q, doc=d)


# ---------------------------------------------------------------- model -> JSON


def run_to_document(run: Run) -> dict:
    """The JSON document for ``run``: rankings in ``run.queries`` order, bare IDs where the score is null."""
    doc = run_header(run)
    doc["rankings"] = _rankings(run)
    doc.update(tail_of(run))
    return doc


def run_header(run: Run) -> dict:
    """Every member of the run's document before ``rankings``, in the canonical order."""
    doc: dict = {"format": FORMAT, "version": sj.FORMAT_VERSION}
    for key, value in (("dataset_id", run.dataset_id), ("dataset_version", run.dataset_version), ("run_id", run.run_id)):
        if value is not None:  # a missing required one is reported by the check before writing
            doc[key] = value
    if run.metadata.get(SYSTEM_KEY) is not None:
        doc["system"] = sj.sorted_keys(run.metadata[SYSTEM_KEY])
    if run.order_source == "score":
        doc[ORDERED_BY_KEY] = "score"
    return doc


def tail_of(run: Run) -> dict:
    """The members after ``rankings``: ``failures`` and ``timing``, when the run has them."""
    tail = {"failures": failures_of(run)} if run.failures else {}
    if run.metadata.get(TIMING_KEY):
        tail[TIMING_KEY] = run.metadata[TIMING_KEY]
    return tail


def failures_of(run: Run) -> dict:
    """The ``failures`` member: query ID -> {reason, kind when known}."""
    kinds = run.metadata.get(FAILURE_KINDS_KEY) or {}
    return {q: {"reason": r, "kind": kinds[q]} if q in kinds else {"reason": r} for q, r in run.failures.items()}


def _rankings(run: Run) -> dict:
    frame = run.own_frame()  # a sidecar's original scores where the TREC file holds synthetic ones
    groups = frame.group_by("query_id", maintain_order=True).agg(
        pl.len().alias("n"), (pl.col("rank") == pl.int_range(1, pl.len() + 1)).all().alias("ranked")
    )
    runs_of_ids = int(frame.get_column("query_id").rle_id().max()) + 1 if frame.height else 0
    if runs_of_ids != groups.height or not groups.get_column("ranked").all():
        raise ValueError("Run.frame breaks the model invariant: rows grouped by query, rank 1..n within each query")
    stray = set(groups.get_column("query_id").to_list()) - set(run.queries)
    if stray:
        raise ValueError(f"Run.frame has rows for queries not in Run.queries: {sorted(stray)[:5]}")
    docs, scores = frame.get_column("doc_id").to_list(), frame.get_column("score").to_list()
    entries = [d if s is None else {"doc_id": d, "score": s} for d, s in zip(docs, scores)]
    by_query, start = {}, 0
    for q, n in zip(groups.get_column("query_id").to_list(), groups.get_column("n").to_list()):
        by_query[q] = entries[start:start + n]
        start += n
    return {q: by_query.get(q, []) for q in run.queries}
