"""Sidecar manifest: what a TREC run file cannot say, kept beside it.

TREC lines cannot express an explicitly empty ranking, failed queries, the
run and dataset IDs, metadata, missing scores, or tied scores (every tool
breaks ties its own way, so the writer replaces them by synthetic scores).
``<file>.manifest.json`` carries all of it, bound to the exact bytes of the
TREC file by SHA-256, so a manifest is never applied to a file edited since.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from trec_bridge.errors import InvalidInput, TrecBridgeError
from trec_bridge.files import sha256_file
from trec_bridge.model import QueryOrder, Run
from trec_bridge.messages import quote

if TYPE_CHECKING:  # polars is imported where a frame is built, pathlib where a path is: score on small files checks
    from pathlib import Path  # that a run has no sidecar with neither (converters/trec_plain.py)

    import polars as pl

FORMAT = "trec-bridge.sidecar"
VERSION = 1
SUFFIX = ".manifest.json"


def sidecar_path(path: str | os.PathLike) -> Path:
    """``run.trec`` -> ``run.trec.manifest.json`` (``run.trec.gz`` -> ``run.trec.gz.manifest.json``)."""
    from pathlib import Path

    return Path(str(path) + SUFFIX)


def build_run_manifest(run: Run, frame: pl.DataFrame, trec_name: str, sha256: str,
                       synthetic: list[str]) -> dict:
    """The manifest for ``run`` written as ``frame`` (ordered, rank 1..n) to a file with this hash."""
    unscored, original = synthetic_originals(frame, synthetic)
    return run_manifest(run, document_counts(frame), unscored, original, trec_name, sha256)


def document_counts(frame: pl.DataFrame) -> dict[str, int]:
    """Query ID -> its rows in ``frame``."""
    return dict(frame.group_by("query_id").len().iter_rows()) if frame.height else {}


def synthetic_originals(frame: pl.DataFrame, synthetic: list[str]) -> tuple[list[str], dict[str, list]]:
    """The queries written with scores n..1 that had no score at all, and the own scores of the others (in the
    frame's order): what the manifest keeps of them."""
    unscored, original = [], {}
    if synthetic:
        import polars as pl

        sub = frame.filter(pl.col("query_id").is_in(synthetic))
        for (qid,), part in sub.group_by("query_id", maintain_order=True):
            scores = part.get_column("score")
            if scores.null_count() == scores.len():
                unscored.append(qid)
            else:
                original[qid] = scores.to_list()
    return unscored, original


def run_manifest(run: Run, counts: dict[str, int], unscored: list[str], original: dict[str, list], trec_name: str,
                 sha256: str) -> dict:
    """The manifest of ``run`` (its queries, IDs, failures, metadata and order; ``run.frame`` is not read), given
    its documents per query and what ``synthetic_originals`` found, for a TREC file with this hash."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": "run",
        "trec_file": {"name": trec_name, "sha256": sha256},
        "dataset_id": run.dataset_id,
        "dataset_version": run.dataset_version,
        "run_id": run.run_id,
        "queries": [{"query_id": q, "documents": int(counts.get(q, 0))} for q in run.queries],
        "failures": dict(run.failures),
        "metadata": run.metadata,
        "order_source": run.order_source,
        "order": None if run.order is None else [
            {"query_id": o.query_id, "ties_broken": o.ties_broken, "rank_disagrees": o.rank_disagrees}
            for o in run.order],
        "unscored_queries": unscored,
        "original_scores": original,
    }


def render_manifest(manifest: dict, path: str | os.PathLike) -> str:
    """The manifest as JSON text (compact when it holds many scores); raise before anything is written."""
    import json  # here and below: asking for a sidecar's path (every TREC run read) imports no JSON machinery

    big = sum(len(v) for v in manifest.get("original_scores", {}).values()) > 100_000
    try:
        text = json.dumps(manifest, ensure_ascii=False, allow_nan=False, indent=None if big else 1) + "\n"
    except (TypeError, ValueError) as exc:
        raise TrecBridgeError("E_OUTPUT", f"the sidecar cannot be written as JSON: metadata that is not JSON, "
                              f"or a NaN score ({exc})", file=str(path)) from None
    _metadata_reads_back(manifest.get("metadata"), path)
    return text


def _metadata_reads_back(metadata, path) -> None:
    """The free-form metadata must pass the strict reader (int64, depth), or the sidecar could not be read."""
    import json

    from .strict_json import encode_checked

    try:
        encode_checked(json.dumps(metadata, ensure_ascii=False), strict=True, file=str(path))
    except InvalidInput as exc:
        raise TrecBridgeError("E_OUTPUT", f"the sidecar cannot be written: its metadata would not read back "
                              f"([{exc.code}] {exc.message})", file=str(path)) from None


def is_ours(path: Path) -> bool:
    """Whether ``path`` is a trec-bridge manifest (one left by an earlier write of the same TREC file)."""
    if not path.is_file():
        return False
    from .strict_json import read_json_file  # jsonschema: imported only when a sidecar exists (TREC start-up)

    try:
        doc = read_json_file(path)
    except (TrecBridgeError, OSError):
        return False
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def load_manifest(path: Path, trec_path: str | os.PathLike, kind: str) -> dict:
    """The manifest at ``path``, checked to describe exactly the bytes of ``trec_path``."""
    side = str(path)
    from .strict_json import read_json_file  # jsonschema: imported only when a sidecar exists (TREC start-up)

    try:  # the strict reader of every JSON input: a BOM, UTF-16, duplicate keys, NaN, deep nesting are refused
        manifest = read_json_file(path)
    except TrecBridgeError as exc:
        raise InvalidInput("E_SIDECAR", f"the sidecar manifest cannot be read: [{exc.code}] {exc.message}",
                           file=side, line=exc.where.line) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InvalidInput("E_SIDECAR", f"not a {FORMAT} manifest", file=side)
    if manifest.get("version") != VERSION:
        raise InvalidInput("E_SIDECAR", f"unsupported sidecar version {quote(manifest.get('version'))} "
                           f"(this tool reads version {VERSION})", file=side)
    if manifest.get("kind") != kind:
        raise InvalidInput("E_SIDECAR", f"the manifest describes a {quote(manifest.get('kind'))} file, not a {kind}",
                           file=side)
    trec_file = manifest.get("trec_file")
    expected = trec_file.get("sha256") if isinstance(trec_file, dict) else None  # "trec_file": true was a traceback
    if not isinstance(expected, str):  # a manifest that cannot say which file it belongs to is never applied
        raise InvalidInput("E_SIDECAR", "the manifest has no trec_file.sha256, so it cannot be matched to its "
                           f"TREC file {trec_path}. Delete the manifest, or read without it (--ignore-sidecar / "
                           "use_sidecar=False)", file=side)
    if expected != sha256_file(trec_path):
        raise InvalidInput("E_SIDECAR_MISMATCH", f"the manifest was written for other content than {trec_path} "
                           "(SHA-256 differs): the TREC file was edited or replaced, or a write was interrupted "
                           "between the sidecar and its TREC file. Delete the manifest, or read without it "
                           "(--ignore-sidecar / use_sidecar=False)", file=side)
    return manifest


def apply_run_manifest(run: Run, manifest: dict, side: str) -> Run:
    """``run`` as parsed from the TREC file (in rank order), completed by its manifest.

    The manifest restores what TREC cannot hold for the strict reading (queries,
    empty rankings, failures, IDs, the run's order) and the original scores for
    writers (``Run.own_scores``); the frame keeps the file's scores, because an
    emulated tool reads exactly the bytes the tool would read.
    """
    try:
        entries = [(str(e["query_id"]), int(e["documents"])) for e in manifest["queries"]]
        failures = {str(k): str(v) for k, v in manifest["failures"].items()}
        unscored = [str(q) for q in manifest["unscored_queries"]]
        original = {str(q): list(v) for q, v in manifest["original_scores"].items()}
        order = manifest["order"]
        order = None if order is None else tuple(
            QueryOrder(str(o["query_id"]), int(o["ties_broken"]), bool(o["rank_disagrees"])) for o in order)
        order_source = manifest["order_source"]
        metadata = manifest["metadata"]
        ids = {k: manifest[k] for k in ("run_id", "dataset_id", "dataset_version")}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidInput("E_SIDECAR", f"malformed sidecar manifest ({type(exc).__name__}: {exc})",
                           file=side) from None
    qids = [q for q, _ in entries]
    if len(set(qids)) != len(qids):  # found by fuzzing: the Run would list the query twice
        q = next(q for i, q in enumerate(qids) if q in qids[:i])
        raise InvalidInput("E_SIDECAR", f"the manifest lists query {quote(q)} twice", file=side, query=q)
    both = next((q for q in failures if q in set(qids)), None)
    if both is not None:
        raise InvalidInput("E_SIDECAR", f"the manifest lists query {quote(both)} both with a ranking and as failed",
                           file=side, query=both)
    if order_source not in ("list", "score", "rank") or not isinstance(metadata, dict):
        raise InvalidInput("E_SIDECAR", "malformed sidecar manifest (order_source or metadata)", file=side)
    ranked = [(q, n) for q, n in entries if n > 0]
    found = run.frame.group_by("query_id", maintain_order=True).len().rows() if run.frame.height else []
    if [tuple(x) for x in found] != ranked:
        raise InvalidInput("E_SIDECAR", "the manifest's queries do not match the TREC file's", file=side)
    counts = dict(ranked)
    replace = {q: [None] * counts.get(q, 0) for q in unscored}
    for q, values in original.items():
        numbers = [v for v in values if v is not None]
        if not set(map(type, numbers)) <= {int, float} or not np.isfinite(np.asarray(numbers, dtype=float)).all():
            raise InvalidInput("E_SIDECAR", f"malformed original scores for query {quote(q)}", file=side, query=q)
        replace[q] = values
    for q, values in replace.items():
        if len(values) != counts.get(q, -1):
            raise InvalidInput("E_SIDECAR", f"the manifest has {len(values)} scores for query {quote(q)}, the TREC file "
                               f"{counts.get(q, 0)} documents", file=side, query=q)
    out = Run(frame=run.frame, queries=tuple(q for q, _ in entries), failures=failures, metadata=metadata,
              order=order, order_source=order_source, source=run.source, unique_checked=run.unique_checked, **ids)
    if replace:  # the frame keeps the file's scores: what every tool reads; writers take these
        out.remember_own_scores(_restore_scores(run.frame, replace).get_column("score"))
    return out


def _restore_scores(frame: pl.DataFrame, replace: dict[str, list]) -> pl.DataFrame:
    import polars as pl

    keys = list(replace)
    lens = np.array([len(replace[q]) for q in keys], dtype=np.int64)
    offsets = np.repeat(np.cumsum(lens) - lens, lens)
    values = [v for q in keys for v in replace[q]]
    rep = pl.DataFrame({
        "query_id": pl.Series(keys, dtype=pl.String).gather(np.repeat(np.arange(len(keys)), lens)),
        "rank": np.arange(int(lens.sum()), dtype=np.int64) - offsets + 1,
        "_orig": pl.Series(values, dtype=pl.Float64, strict=False),
        "_hit": pl.repeat(True, int(lens.sum()), eager=True),
    })
    out = frame.join(rep, on=["query_id", "rank"], how="left", maintain_order="left")
    return out.with_columns(score=pl.when(pl.col("_hit")).then(pl.col("_orig")).otherwise(pl.col("score"))
                            ).select(frame.columns)
