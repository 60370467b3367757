"""Runs and datasets out to the tools the field uses: trec_eval, pytrec_eval, ir_measures, ranx.

Every file target is written atomically, with scores that make each tool read
the run's own order (the TREC writer's rule: the run's scores when they are
strictly decreasing even as float32, else n, n-1, ..., 1 for that query), and
everything the target cannot hold is *said* (``ExportInfo.notes``), never
dropped silently.

| target | runs | datasets | read back with |
|---|---|---|---|
| ``trec`` / ``trec-qrels`` | ``qid Q0 doc rank score tag`` + sidecar | ``qid iter doc grade`` | trec_eval, ``pytrec_eval.parse_run``/``parse_qrel``, ``ir_measures.read_trec_run``/``read_trec_qrels``, ``ranx.Run.from_file(p, kind="trec")`` |
| ``ranx-json`` | ``{"q": {"d": score}}`` | ``{"q": {"d": grade}}`` | ``ranx.Run.from_file(p, kind="json")`` / ``ranx.Qrels.from_file(...)`` |
| ``ir-measures-tsv`` | header ``query_id doc_id score`` | header ``query_id doc_id relevance iteration`` | ``read_ir_measures_tsv(p)`` -> pandas DataFrame that ir_measures takes as is |

In memory (no file): ``run_to_ir_measures`` / ``qrels_to_ir_measures``
(``ScoredDoc`` / ``Qrel`` lists) and ``run_to_dataframe`` /
``qrels_to_dataframe`` (pandas, ir_measures' column names) live in
``converters.interop`` and are re-exported here.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass, field

import polars as pl

from trec_bridge.errors import InvalidInput, UsageError
from trec_bridge.files import atomic_write
from trec_bridge.model import QRELS_SCHEMA, Dataset, Qrels, Run
from trec_bridge.messages import quote

from . import invisible
from .targets import DATASET_TARGETS, RUN_TARGETS
from .interop import qrels_to_dataframe, qrels_to_ir_measures, run_to_dataframe, run_to_ir_measures  # noqa: F401

__all__ = [
    "RUN_TARGETS", "DATASET_TARGETS", "ExportInfo", "export_run", "export_dataset", "read_ir_measures_tsv",
    "run_to_ir_measures", "qrels_to_ir_measures", "run_to_dataframe", "qrels_to_dataframe",
    "dataset_to_ir_measures", "dataset_to_dataframe",
]

RUN_TSV_COLUMNS = ("query_id", "doc_id", "score")
QRELS_TSV_COLUMNS = ("query_id", "doc_id", "relevance", "iteration")


@dataclass
class ExportInfo:
    """What an export wrote and what the target could not hold."""

    path: str
    target: str
    rows: int
    sidecar: str | None = None
    synthetic_queries: list[str] = field(default_factory=list)  # written with scores n..1
    notes: list[str] = field(default_factory=list)  # what was left out or needs a flag on the tool's side


def dataset_to_ir_measures(dataset: Dataset) -> list:
    """The dataset's judgments as ``ir_measures.Qrel`` items (iteration kept)."""
    return qrels_to_ir_measures(dataset.qrels)


def dataset_to_dataframe(dataset: Dataset):
    """The dataset's judgments as a pandas DataFrame with ir_measures' columns."""
    return qrels_to_dataframe(dataset.qrels)


# --------------------------------------------------------------------------- runs


def export_run(run: Run, path: str | os.PathLike, to: str, *, sidecar: bool = True) -> ExportInfo:
    """Write ``run`` for another tool: ``to`` is one of RUN_TARGETS."""
    if to not in RUN_TARGETS:
        raise UsageError("E_USAGE", f"a run exports to {', '.join(RUN_TARGETS)}, not {quote(to)}")
    target = str(path)
    if to == "trec":
        from .trec_run import write_trec_run

        w = write_trec_run(run, target, sidecar=sidecar)
        info = ExportInfo(target, to, run.frame.height, sidecar=w.sidecar, synthetic_queries=w.synthetic_queries)
        if not w.sidecar and (w.empty_queries or w.failed_queries):
            info.notes.append(f"without the sidecar, {len(w.empty_queries)} empty and {len(w.failed_queries)} failed "
                              "queries are not in the file; every tool will read them as missing")
        elif w.empty_queries or w.failed_queries:
            info.notes.append(f"{len(w.empty_queries)} empty and {len(w.failed_queries)} failed queries have no line; "
                              "only trec-bridge reads them back (from the sidecar), other tools see them as missing")
        return info
    if to == "ranx-json":
        from .ranx_json import write_ranx_run

        w = write_ranx_run(run, target)
        info = ExportInfo(target, to, run.frame.height, synthetic_queries=w.synthetic_queries)
        if w.failed_queries:
            info.notes.append(f"{len(w.failed_queries)} failed queries are not in the file (ranx has no 'failed'); "
                              f"ranx will read them as missing, e.g. {quote(w.failed_queries[0])}")
        if w.empty_queries:
            info.notes.append(f"{len(w.empty_queries)} empty rankings are written as {{}}")
        if w.dropped:
            info.notes.append(f"ranx's layout has no place for {', '.join(w.dropped)}; not written")
        return info
    return _run_tsv(run, target)


def _run_tsv(run: Run, target: str) -> ExportInfo:
    from .trec_run import check_writable_ids, ordered_frame, trec_score_columns

    frame = ordered_frame(run)
    check_writable_ids(frame, run.run_id or "tsv", target)
    scores, synthetic = trec_score_columns(frame)
    table = frame.select(pl.col("query_id"), pl.col("doc_id"), scores)
    atomic_write(target, _tsv(table, RUN_TSV_COLUMNS))
    info = ExportInfo(target, "ir-measures-tsv", frame.height, synthetic_queries=synthetic)
    lost = [q for q in run.queries if q not in set(frame.get_column("query_id").unique().to_list())]
    if lost or run.failures:
        info.notes.append(f"{len(lost)} empty and {len(run.failures)} failed queries have no row; ir_measures will "
                          "read them as missing")
    return info


def _tsv(table: pl.DataFrame, columns: tuple[str, ...]) -> bytes:
    buf = io.BytesIO()
    table.write_csv(buf, separator="\t", include_header=False, quote_style="never", line_terminator="\n")
    return ("\t".join(columns) + "\n").encode("utf-8") + buf.getvalue()


def read_ir_measures_tsv(path: str | os.PathLike):
    """A TSV written by this module as the pandas DataFrame ir_measures takes.

    IDs stay strings (``"007"`` is not 7, ``"NA"`` is not missing) and the
    score or grade column is numeric, as ir_measures requires; the pandas
    line that ``export run/dataset --help`` prints does the same
    (``trec_bridge.cli.export.RUN_TSV_RECIPE`` / ``QRELS_TSV_RECIPE``).
    """
    import pandas as pd

    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, na_filter=False)
    if "score" in df.columns:
        df["score"] = df["score"].astype("float64")
    if "relevance" in df.columns:
        df["relevance"] = df["relevance"].astype("int64")
    return df


# --------------------------------------------------------------------------- datasets


def export_dataset(dataset: Dataset, path: str | os.PathLike, to: str) -> ExportInfo:
    """Write the dataset's judgments for another tool: ``to`` is one of DATASET_TARGETS."""
    if to not in DATASET_TARGETS:
        raise UsageError("E_USAGE", f"a dataset exports to {', '.join(DATASET_TARGETS)}, not {quote(to)}")
    from trec_bridge.dataset_checks import check_dataset

    check_dataset(dataset)  # an export never carries judgments trec-bridge would refuse
    target = str(path)
    qrels = dataset.qrels
    info = ExportInfo(target, to, qrels.frame.height)
    if to == "trec-qrels":
        from .trec_qrels import write_trec_qrels

        write_trec_qrels(qrels, target, iteration=dataset.trec_iteration)
    elif to == "ranx-json":
        from .ranx_json import write_ranx_qrels

        write_ranx_qrels(qrels, target)
        odd = qrels.frame.filter(pl.col("iteration").fill_null("0") != "0").height
        if odd:
            info.notes.append(f"ranx's layout has no iteration column; {odd} judgments' iterations are not written")
    else:
        _qrels_tsv(qrels, target, dataset.trec_iteration)
    info.notes.extend(_dataset_notes(dataset, to))
    return info


def _qrels_tsv(qrels: Qrels, target: str, iteration: str) -> None:
    frame = qrels.frame.select(list(QRELS_SCHEMA)).cast(QRELS_SCHEMA).with_columns(pl.col("iteration").fill_null(iteration))
    if frame.height == 0:
        raise InvalidInput("E_FILE_EMPTY", "no judgment to write", file=target)
    from .trec_qrels import check_qrels_duplicates
    from .trec_run import BAD_ID_PATTERN

    check_qrels_duplicates(frame)
    for column in ("query_id", "doc_id", "iteration"):
        col = frame.get_column(column)
        bad = col.str.contains(BAD_ID_PATTERN) | (col.str.len_bytes() == 0)
        if bad.any():
            i = int(bad.arg_true()[0])
            raise InvalidInput("E_TREC_COLUMNS", f"{column} {quote(col[i])} is empty or contains whitespace; it cannot be "
                               f"written to {target}", query=frame.get_column("query_id")[i])
        invisible.refuse_in_column(col, column, lambda i: {"query": frame.get_column("query_id")[i]})
    table = frame.select("query_id", "doc_id", pl.col("grade").alias("relevance"), "iteration")
    atomic_write(target, _tsv(table, QRELS_TSV_COLUMNS))


def _dataset_notes(dataset: Dataset, to: str) -> list[str]:
    notes = []
    unjudged = len(set(dataset.query_ids()) - set(dataset.qrels.query_ids()))
    if unjudged:
        notes.append(f"{unjudged} queries of the dataset have no judgment and are not in the file; every tool's "
                     "query set will be the judged queries")
    t = dataset.threshold
    if t != 1:
        flag = {"trec-qrels": f"trec_eval -l{t} / pytrec_eval relevance_level={t}",
                "ranx-json": f"qrels.set_relevance_level({t}) or metric names ending in -l{t}",
                "ir-measures-tsv": f"measures with rel={t}, e.g. P(rel={t})@10"}[to]
        notes.append(f"the dataset's relevance threshold is {t}, which the file cannot say: use {flag}")
    return notes
