"""Per-subtopic judgments beside the ``Ranking``: what the diversity measures read, and nothing the others pay for.

A diversity qrels (``Qrels.subtopics``) judges a document once per subtopic.
The ranking builder then joins the run with one row per judged (query,
document), its *pair*, whose grade is its highest over the subtopics, and
carries each judged row's pair index; ``SubtopicTable`` lists every pair's
(subtopic, grade) judgments.  An ordinary qrels goes through none of this: its
rows are the pairs, and the builder carries the grade alone.

``check_measures`` is the rule between the two shapes: a diversity measure
needs a declared diversity qrels, and an ordinary measure reads a diversity
qrels only where every document has a single judgment (then that is its grade).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .errors import InvalidInput
from .measures.base import FAMILIES, Measure
from .messages import quote
from .model import Qrels

if TYPE_CHECKING:  # polars is imported where a frame is built (score on small plain files: cli/quick.py)
    import polars as pl


@dataclass(frozen=True)
class SubtopicTable:
    """Every judged pair's subtopic judgments, as CSR arrays indexed by pair."""

    start: np.ndarray  # int64, pairs + 1: pair p's judgments are [start[p], start[p + 1])
    subtopic: np.ndarray  # int64 per judgment: the subtopic's index, in order of first appearance in the qrels
    grade: np.ndarray  # int64 per judgment
    doc_order: np.ndarray  # int64 per pair: its document ID's place in byte order (ndeval's tie-break)

    def judgments_of(self, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position in ``pairs``, judgment index) of every subtopic judgment of each of ``pairs``, in order."""
        counts = self.start[pairs + 1] - self.start[pairs]
        owner = np.repeat(np.arange(len(pairs), dtype=np.int64), counts)
        first = np.repeat(self.start[pairs] - np.cumsum(counts) + counts, counts)
        return owner, first + np.arange(len(owner), dtype=np.int64)


def judged_pairs(qrels: Qrels) -> tuple[pl.DataFrame, SubtopicTable]:
    """One row per judged (query, document) of a diversity qrels, in order of first appearance, with its highest
    grade and its index (``pair``); and the table of its subtopic judgments (made once per qrels frame)."""
    if qrels._pairs is None or qrels._pairs[0] is not qrels.frame:
        qrels._pairs = (qrels.frame, _judged_pairs(qrels.frame))
    return qrels._pairs[1]


def _judged_pairs(frame: pl.DataFrame) -> tuple[pl.DataFrame, SubtopicTable]:
    import polars as pl

    pairs = (frame.group_by("query_id", "doc_id", maintain_order=True)
             .agg(pl.col("iteration").first(), pl.col("grade").max())
             .with_row_index("pair").with_columns(pl.col("pair").cast(pl.Int64))
             .select("query_id", "iteration", "doc_id", "grade", "pair"))
    subtopics = (frame.select(pl.col("iteration").unique(maintain_order=True)).with_row_index("subtopic")
                 .with_columns(pl.col("subtopic").cast(pl.Int64)))
    rows = (frame.with_row_index("_row")
            .join(pairs.select("query_id", "doc_id", "pair"), on=["query_id", "doc_id"], how="left")
            .join(subtopics, on="iteration", how="left")
            .sort("pair", "_row"))  # a pair's judgments together, in qrels order
    start = np.zeros(pairs.height + 1, dtype=np.int64)
    start[1:] = np.cumsum(np.bincount(rows.get_column("pair").to_numpy(), minlength=pairs.height))
    doc_order = pairs.get_column("doc_id").rank("dense").to_numpy().astype(np.int64)  # polars orders strings by bytes
    return pairs, SubtopicTable(start, rows.get_column("subtopic").to_numpy().astype(np.int64),
                                rows.get_column("grade").to_numpy().astype(np.int64), doc_order)


def check_measures(qrels: Qrels, measures: list[Measure]) -> None:
    """Refuse a measure the qrels' shape cannot give: a diversity measure without subtopics, an ordinary one on
    a document judged for several subtopics."""
    for m in measures:
        family = FAMILIES[m.family]
        if family.subtopics and not qrels.subtopics:
            raise InvalidInput("E_SUBTOPICS_UNDECLARED", f"{m} reads per-subtopic judgments (a diversity qrels: qid "
                               f"subtopic docno grade), and these qrels are not declared one{_hint(qrels)}; give "
                               "--subtopics (a JSON dataset: subtopic_judgments) if their second column is the "
                               "subtopic", file=qrels.source)
        if not family.subtopics and qrels.subtopics:
            import polars as pl

            several = qrels.frame.filter(pl.struct("query_id", "doc_id").is_duplicated())
            if several.height:
                q, _, d, _ = several.row(0)
                raise InvalidInput("E_SUBTOPICS_AMBIGUOUS", f"{m} needs one grade per document, and this diversity "
                                   f"qrels judges {quote(d)} for several subtopics; score {m} with the ad hoc "
                                   "qrels", file=qrels.source, query=q, doc=d)


def _hint(qrels: Qrels) -> str:
    values = qrels.frame.get_column("iteration").n_unique()
    return f" (their second column has {values} distinct values)" if values > 1 else ""
