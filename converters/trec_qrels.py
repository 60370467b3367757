"""TREC qrels files (``qid iteration docno grade``) to and from ``Qrels``.

Stricter than the anchors where they disagree or guess: exactly four columns,
integer grades (negative ones kept: some collections use -1/-2 for "junk"),
no blank line (trec_eval stops there, ir_measures skips it), no (query,
document) judged twice.  The iteration column is kept but never interpreted,
unless the caller declares the file a diversity qrels (``subtopics=True``:
``qid subtopic docno grade``, ndeval's layout), where it is the subtopic and
each (query, subtopic, document) is judged once.
"""
from __future__ import annotations

import gzip
import io
import os

import numpy as np
import polars as pl

from trec_bridge.errors import InvalidInput
from trec_bridge.files import atomic_write, read_input_bytes
from trec_bridge.grades import first_out_of_range, grade_range_error
from trec_bridge.model import QRELS_SCHEMA, Qrels
from trec_bridge.messages import quote

from . import invisible
from .text_lines import Field, check_bytes, split_columns
from .trec_run import BAD_ID_PATTERN, INTEGER_PATTERN

QRELS_LAYOUT = "query iteration doc grade"
QRELS_FIELDS = [
    Field("query_id"),
    Field("iteration"),
    Field("doc_id"),
    Field("grade", pl.Int64, INTEGER_PATTERN, None, "E_QRELS_GRADE",
          "an integer relevance grade (such as 0, 1, 2, -1; -1023..1023)"),
]


def read_trec_qrels(path: str | os.PathLike, *, subtopics: bool = False) -> Qrels:
    """Read a TREC qrels file (plain or gzip), rows in file order; ``subtopics``: a diversity qrels."""
    name = str(path)
    raw = read_input_bytes(path)
    census = check_bytes(raw, name)
    cols = split_columns(raw, QRELS_FIELDS, name, blank_lines="reject", layout=QRELS_LAYOUT, census=census)
    frame = cols.frame.select(list(QRELS_SCHEMA)).cast(QRELS_SCHEMA)
    bad = first_out_of_range(frame.get_column("grade"))
    if bad is not None:
        raise grade_range_error(frame.item(bad, "grade"), file=name, line=cols.line_of(bad),
                                query=frame.item(bad, "query_id"), doc=frame.item(bad, "doc_id"))
    check_qrels_duplicates(frame, file=name, lines=cols.lines, subtopics=subtopics)
    return Qrels(frame, source=name, subtopics=subtopics)


def check_qrels_duplicates(frame: pl.DataFrame, *, file: str | None = None, lines: np.ndarray | None = None,
                           subtopics: bool = False) -> None:
    """Raise E_QRELS_DUPLICATE for the first (query, doc) judged a second time (with ``subtopics``: the first
    (query, subtopic, doc))."""
    key = ["query_id", "iteration", "doc_id"] if subtopics else ["query_id", "doc_id"]
    if frame.group_by(key[:-1]).agg(pl.col("doc_id").n_unique() == pl.len()).get_column("doc_id").all():
        return  # every query (subtopic) judges distinct documents
    again = frame.select(~pl.struct(*key).is_first_distinct()).to_series().to_numpy()
    i = int(np.flatnonzero(again)[0])
    qid, did = frame.get_column("query_id")[i], frame.get_column("doc_id")[i]
    same = pl.all_horizontal(pl.col(c) == frame.get_column(c)[i] for c in key)
    first = int(frame.select(same).to_series().arg_true()[0])
    hint = "" if subtopics else _subtopic_hint(frame, first, i)
    if file is None:
        raise InvalidInput("E_QRELS_DUPLICATE", f"judged twice (items {first + 1} and {i + 1}){hint}", query=qid,
                           doc=did)
    line = (lambda r: int(lines[r]) if lines is not None else r + 1)
    raise InvalidInput("E_QRELS_DUPLICATE", f"judged twice (first on line {line(first)}){hint}",
                       file=file, line=line(i), query=qid, doc=did)


def _subtopic_hint(frame: pl.DataFrame, first: int, again: int) -> str:
    """A pair judged twice under two values of the second column may be a diversity qrels read as an ordinary one."""
    its = frame.get_column("iteration")
    if its[first] is None or its[again] is None or its[first] == its[again]:
        return ""
    return (f"; its second column differs ({quote(its[first])}, {quote(its[again])}): if that column is the subtopic, "
            "this is a diversity qrels (qid subtopic docno grade), read as one with --subtopics")


def write_trec_qrels(qrels: Qrels, path: str | os.PathLike, *, iteration: str = "0") -> None:
    """Write ``qrels`` as TREC qrels (gzip when ``path`` ends in .gz), atomically, in row order.

    ``iteration`` fills rows whose iteration is null; others keep theirs.
    """
    target = str(path)
    frame = qrels.frame.select(list(QRELS_SCHEMA)).cast(QRELS_SCHEMA)
    if frame.get_column("grade").null_count():
        i = int(frame.get_column("grade").is_null().arg_true()[0])
        raise InvalidInput("E_QRELS_GRADE", "a judgment without a grade cannot be written",
                           query=frame.get_column("query_id")[i], doc=frame.get_column("doc_id")[i])
    frame = frame.with_columns(pl.col("iteration").fill_null(iteration))
    for column, what in (("query_id", "query"), ("iteration", "iteration"), ("doc_id", "document")):
        col = frame.get_column(column)
        bad = col.str.contains(BAD_ID_PATTERN) | (col.str.len_bytes() == 0)
        if bad.any():
            i = int(bad.arg_true()[0])
            raise InvalidInput("E_TREC_COLUMNS", f"{what} {quote(col[i])} is empty or contains whitespace or NUL; it "
                               f"cannot be written to the TREC file {target}",
                               query=frame.get_column("query_id")[i], doc=frame.get_column("doc_id")[i])
    starts_bom = frame.get_column("query_id").str.starts_with("\ufeff")
    if starts_bom.any():
        qid = frame.get_column("query_id")[int(starts_bom.arg_true()[0])]
        raise InvalidInput("E_BOM", f"query ID {quote(qid)} starts with U+FEFF (a byte-order mark); it cannot be written",
                           query=qid)
    for column, what in (("query_id", "query"), ("iteration", "iteration"), ("doc_id", "document")):
        invisible.refuse_in_column(frame.get_column(column), what, lambda i: {"query": frame.get_column("query_id")[i]})
    if frame.height == 0:
        raise InvalidInput("E_FILE_EMPTY", "no judgment to write; an empty qrels file is not readable", file=target)
    buf = io.BytesIO()
    frame.write_csv(buf, separator=" ", include_header=False, quote_style="never", line_terminator="\n")
    data = buf.getvalue()
    if target.endswith(".gz"):
        data = gzip.compress(data, compresslevel=6, mtime=0)
    atomic_write(target, data)
