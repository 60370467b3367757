"""TREC run files (``qid Q0 docno rank score tag``) to and from the columnar ``Run``.

Reading applies the project's strict policy on top of what trec_eval accepts
(see docs/trec-files.md) and orders each query the way trec_eval does: score
descending, ties by document ID descending in byte order.  Writing chooses
scores that make trec_eval 9 (float32), pytrec_eval, ir_measures and ranx all
read the run's own order, and puts what TREC cannot carry in a sidecar.
"""
from __future__ import annotations

import gzip
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import polars as pl

from trec_bridge.errors import InvalidInput, TrecBridgeError, UsageError
from trec_bridge.files import read_input_bytes, sha256_bytes
from trec_bridge.outputs import write_files
from trec_bridge.model import RUN_SCHEMA, QueryOrders, Run
from trec_bridge.ordering import (as_float32, in_trec_order, keys_repeat, pair_keys, pair_keys_of_blocks, positions,
                                  score_permutation, synthetic_scores)
from trec_bridge.messages import quote

from . import invisible
from .char_scan import printable_ascii
from . import sidecar as _sidecar
from .text_lines import PY_WHITESPACE, Field, check_bytes, has_data, split_columns

SCORE_PATTERN = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
INTEGER_PATTERN = r"^[+-]?[0-9]+$"
RUN_LAYOUT = "query Q0 doc rank score tag"
_ID_FIELDS = [
    Field("query_id"),
    Field("q0", pl.Categorical),  # few distinct values: categorical parsing saves time and memory
    Field("doc_id"),
]
_SCORE_AND_TAG = [
    Field("score", pl.Float64, SCORE_PATTERN, lambda c: c.is_finite(), "E_RUN_SCORE",
          "a finite decimal number (such as 12.5, -3, 1e-5)"),
    Field("tag", pl.Categorical),
]
# --order rank: the rank column decides the order, so it must be a rank.
RANKED_RUN_FIELDS = _ID_FIELDS + [
    Field("rank", pl.Int64, INTEGER_PATTERN, lambda c: c >= 0, "E_RUN_RANK",
          "a non-negative integer (at most 2^63-1)"),
] + _SCORE_AND_TAG
# --order score (the default): trec_eval, pytrec_eval and ir_measures never read the rank column, so any token
# is accepted; a numeric one (0-based, decimal, negative) is kept to report a rank/score disagreement, others are null.
RUN_FIELDS = _ID_FIELDS + [Field("rank", pl.Float64)] + _SCORE_AND_TAG


def run_fields(order: str) -> list[Field]:
    """The columns as the reader checks them: the rank column is validated only where it is used."""
    return RANKED_RUN_FIELDS if order == "rank" else RUN_FIELDS
DEFAULT_TAG = "trec-bridge"
MAX_SYNTHETIC = 1 << 24  # synthetic scores must stay exact in a float32
# any character Python's str.split() splits on, or NUL: an ID holding one cannot be written
BAD_ID_PATTERN = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in PY_WHITESPACE + "\x00") + "]"


@dataclass
class TrecWriteInfo:
    """What writing a run to TREC had to do, for the caller to report."""

    path: str
    sidecar: str | None = None
    synthetic_queries: list[str] = field(default_factory=list)  # written with scores n, n-1, ..., 1
    synthetic_reasons: dict[str, str] = field(default_factory=dict)  # query -> why (NO_SCORES, OFF_ORDER, TOOL_TIES)
    kept_as_tools_read: dict[str, str] = field(default_factory=dict)  # own scores kept that tools read their own way
    empty_queries: list[str] = field(default_factory=list)  # no line in the TREC file
    failed_queries: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- reading

def read_trec_run(path: str | os.PathLike, order: Literal["score", "rank"] = "score", *,
                  use_sidecar: bool = True) -> Run:
    """Read a TREC run (plain or gzip) into a ``Run``.

    ``order="score"`` is trec_eval's order (score descending, ties by document
    ID descending); ``order="rank"`` follows the rank column (equal ranks keep
    file order).  When ``<path>.manifest.json`` exists (and ``use_sidecar``),
    its SHA-256 must match and the run it describes comes back: its queries,
    failures, IDs and order (the rank column the writer wrote, whatever
    ``order``), with the file's scores in ``frame`` (what every tool reads)
    and the run's own scores, where the file holds synthetic ones, in
    ``Run.own_scores()``.
    """
    if order not in ("score", "rank"):
        raise UsageError("E_USAGE", f"order must be 'score' or 'rank', not {quote(order)}")
    name = str(path)
    raw = read_input_bytes(path)
    manifest = None
    side = _sidecar.sidecar_path(path)
    if use_sidecar and side.is_file():
        manifest = _sidecar.load_manifest(side, path, kind="run")
    census = check_bytes(raw, name)
    if manifest is not None and not has_data(raw):
        return _sidecar.apply_run_manifest(_empty_run(name), manifest, str(side))
    if manifest is not None:
        order = "rank"  # the writer put the run's own order in the rank column (its scores may not follow it)
    cols = split_columns(raw, run_fields(order), name, blank_lines="skip", layout=RUN_LAYOUT, census=census)
    run = _run_of(cols.frame, cols.lines, order, name)
    if manifest is not None:
        run = _sidecar.apply_run_manifest(run, manifest, str(side))
    return run


def read_trec_run_as_trec_eval(path: str | os.PathLike) -> tuple[Run, int]:
    """A TREC run read as trec_eval 9 reads it where that is wider than ``read_trec_run``: words after the
    sixth field of a line are ignored (get_trec_results.c skips the rest of the line).  Returns the run and
    the number of lines that had such words; every other check is ``read_trec_run``'s."""
    name = str(path)
    raw, cut = _first_six_fields(read_input_bytes(path))
    census = check_bytes(raw, name)
    cols = split_columns(raw, run_fields("score"), name, blank_lines="skip", layout=RUN_LAYOUT, census=census)
    return _run_of(cols.frame, cols.lines, "score", name), cut


def last_line_tag(path: str | os.PathLike, tail: int = 1 << 16) -> str:
    """The run tag of the file's last data line: what trec_eval 9 prints as ``runid`` (each line it parses
    overwrites the one it keeps).  Only the file's end is read, unless it is gzipped."""
    with open(path, "rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
        if not gzipped:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - tail))
            data = fh.read()
    if gzipped:
        data = read_input_bytes(path)
    for line in reversed(data.split(b"\n")):
        fields = line.split()
        if len(fields) >= 6:
            return fields[5].decode("utf-8", "replace")
    return ""


def _first_six_fields(raw: bytes) -> tuple[bytes, int]:
    """Each line cut to its first six whitespace-separated fields (lines, and so line numbers, kept)."""
    lines = raw.split(b"\n")
    cut = 0
    for i, line in enumerate(lines):
        fields = line.split()
        if len(fields) > 6:
            lines[i], cut = b" ".join(fields[:6]), cut + 1
    return b"\n".join(lines), cut


def _run_of(frame: pl.DataFrame, lines: np.ndarray | None, order: str, name: str) -> Run:
    """The Run of parsed rows (a whole file or a part), with what ordering them computed kept for the scorer."""
    ordered = order_rows(frame, order, file=name, lines=lines)
    run_id, metadata = _tags(frame.get_column("tag"))
    run = ordered.to_run(run_id=run_id, metadata=metadata, order_source=order, source=name)
    return run


def _empty_run(name: str) -> Run:
    return Run(frame=pl.DataFrame(schema=RUN_SCHEMA), queries=(), source=name)


def _tags(tag: pl.Series) -> tuple[str, dict]:
    codes = tag.to_physical()  # a categorical's codes: equal codes, equal tags
    if (codes == codes[0]).all():  # the usual run: one tag, seen with one comparison per row
        return str(tag[0]), {}
    tags = tag.unique(maintain_order=True).cast(pl.String).to_list()
    return tags[0], ({"trec_tags": tags} if len(tags) > 1 else {})


class OrderedRows(NamedTuple):
    frame: pl.DataFrame  # RUN_SCHEMA, grouped by query, rank = position 1..n
    queries: tuple[str, ...]  # in first-appearance order (= the frame's group order)
    orders: QueryOrders
    starts: np.ndarray  # first row of each query's group in ``frame``
    keys: np.ndarray  # ordering.pair_keys of the rows of ``frame`` (computed for the duplicate check)

    def to_run(self, **fields) -> Run:
        """The ``Run`` of these rows, keeping what ordering them computed (blocks, pair keys, duplicates refused),
        so the scorer does not compute it again; ``fields``: the Run's other fields (``queries`` to override)."""
        run = Run(**{"queries": self.queries, **fields}, frame=self.frame, order=self.orders, unique_checked=True)
        run.remember_blocks(self.starts, list(self.queries))
        run.remember_pair_keys(self.keys)
        return run


class GroupedRows(NamedTuple):
    """A run's rows grouped by query and checked for repeated documents, not yet ordered (``group_rows``)."""

    frame: pl.DataFrame  # query_id, doc_id, score (and rank when read): grouped by query, input order inside
    queries: pl.Series  # in first-appearance order (= the frame's group order)
    qidx: np.ndarray  # each row's query: its position in ``queries``
    row: np.ndarray | None  # the input row of each grouped row (None: not moved, the usual case)
    keys: np.ndarray  # ordering.pair_keys of the rows of ``frame``
    starts: np.ndarray  # first row of each query's group in ``frame``


def group_rows(frame: pl.DataFrame, *, file: str | None = None, lines: np.ndarray | None = None,
               unique_pairs: bool = False, runs: pl.DataFrame | None = None) -> GroupedRows:
    """Group a frame's rows by query (first appearance, input order inside) and refuse a document listed twice
    in a query (``unique_pairs``: the rows come from a dict of dicts, where no pair can repeat).

    ``frame`` has query_id, doc_id, score (no nulls) and optionally rank, in
    input order; ``lines`` maps input rows to file lines for messages (None: row + 1); ``runs``: the query
    column's runs of equal IDs (``Series.rle``) when the caller has them.
    """
    frame = frame.select([c for c in ("query_id", "doc_id", "score", "rank") if c in frame.columns])
    if frame.height == 0:
        nothing = np.zeros(0, dtype=np.int64)
        return GroupedRows(frame, pl.Series("query_id", [], dtype=pl.String), nothing, None,
                           np.zeros(0, dtype=np.uint64), nothing)
    frame, queries, qidx, row, keys = _grouped_by_query(frame, runs)
    starts = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]])  # groups are contiguous, in qidx order
    if not unique_pairs:
        check_repeated_documents(frame, qidx, keys, row, file, lines, starts)
    return GroupedRows(frame, queries, qidx, row, keys, starts)


def order_rows(frame: pl.DataFrame, order: str = "score", *, file: str | None = None,
               lines: np.ndarray | None = None, unique_pairs: bool = False) -> OrderedRows:
    """Group rows by query (first appearance), check duplicates and sort each query (``group_rows``, then
    ``order_grouped``).

    Returns the RUN_SCHEMA frame (rank = position 1..n), the queries in
    first-appearance order and the per-query ``QueryOrder``.
    """
    return order_grouped(group_rows(frame, file=file, lines=lines, unique_pairs=unique_pairs), order)


def order_grouped(grouped: GroupedRows, order: str = "score") -> OrderedRows:
    """Sort each query of grouped rows: by score as trec_eval does (``order="rank"``: by the rank column)."""
    frame, queries, qidx, row, keys, starts = grouped
    n = frame.height
    if n == 0:
        return OrderedRows(pl.DataFrame(schema=RUN_SCHEMA), (), (), starts, keys)
    has_rank = "rank" in frame.columns
    score = frame.get_column("score").to_numpy()
    doc = frame.get_column("doc_id")
    same = np.ones(n, dtype=bool)
    same[starts] = False
    nq = queries.len()
    perm = score_permutation(qidx, score, doc, same)
    s_ord = score if perm is None else score[perm]
    eq_prev = same.copy()
    eq_prev[1:] &= s_ord[1:] == s_ord[:-1]
    tied = eq_prev
    tied[:-1] |= eq_prev[1:]
    ties = np.bincount(qidx[np.flatnonzero(tied)], minlength=nq)  # few rows: no 7M-element temporary
    disagree = np.zeros(nq, dtype=bool)
    if has_rank:
        rank = frame.get_column("rank").to_numpy()
        r_ord = rank if perm is None else rank[perm]
        ok = ~same
        ok[1:] |= r_ord[:-1] < r_ord[1:]
        if perm is not None or (~ok).any():  # equal ranks are in order when file order decides
            file_row = np.arange(n) if row is None else row
            w_ord = file_row if perm is None else file_row[perm]
            ok[1:] |= (r_ord[:-1] == r_ord[1:]) & (w_ord[:-1] < w_ord[1:])
        if frame.get_column("rank").null_count():  # a token that is not a number says nothing about the order
            known = ~np.isnan(r_ord)
            ok[1:] |= ~(known[:-1] & known[1:])
        disagree[qidx[np.flatnonzero(~ok)]] = True
        if order == "rank":
            in_file_order = ~same
            in_file_order[1:] |= rank[:-1] <= rank[1:]
            perm = None if in_file_order.all() else np.lexsort((np.arange(n) if row is None else row, rank, qidx))
    # a permutation stays inside each query, so query_id needs no reordering
    out = pl.DataFrame({
        "query_id": frame.get_column("query_id"),
        "doc_id": doc if perm is None else doc.gather(perm),
        "score": score if perm is None else score[perm],
        "rank": positions(starts, n),
    }, schema=RUN_SCHEMA)
    qlist = tuple(queries.to_list())
    orders = QueryOrders(qlist, ties, disagree)
    return OrderedRows(out, qlist, orders, starts, keys if perm is None else keys[perm])


def _grouped_by_query(frame: pl.DataFrame, runs: pl.DataFrame | None = None
                      ) -> tuple[pl.DataFrame, pl.Series, np.ndarray, np.ndarray | None, np.ndarray]:
    """(frame, queries, qidx, row, keys): the rows grouped by query in first-appearance order, file order inside.

    ``row`` maps the grouped rows to input rows (None: not moved, the usual
    case); ``keys`` are their pair keys; ``runs``: the query column's ``rle`` if already made.
    """
    if runs is None:
        runs = frame.get_column("query_id").rle().struct.unnest()  # one row per run of equal query IDs
    block_q, block_len = runs.get_column("value"), runs.get_column("len").to_numpy()
    block_id = np.repeat(np.arange(len(block_len)), block_len)  # 0, 0, ..., 1, 1, ...
    if block_q.n_unique() == block_q.len():
        queries, qidx, row = block_q, block_id, None  # row None: file order (no permutation)
        keys = pair_keys_of_blocks(block_q, block_len, frame.get_column("doc_id"))
    else:  # a query's lines are not contiguous: group them, keeping file order inside
        queries = block_q.unique(maintain_order=True)
        lookup = pl.DataFrame({"query_id": queries, "qi": np.arange(queries.len())})
        block_qi = (pl.DataFrame({"query_id": block_q})
                    .join(lookup, on="query_id", how="left", maintain_order="left").get_column("qi").to_numpy())
        qidx_file = block_qi[block_id]
        row = np.argsort(qidx_file, kind="stable")
        qidx = qidx_file[row]
        frame = frame[row]
        keys = pair_keys(frame.get_column("query_id"), frame.get_column("doc_id"))
    return frame, queries, qidx, row, keys


def check_repeated_documents(frame: pl.DataFrame, qidx: np.ndarray, keys: np.ndarray, row: np.ndarray | None,
                             file: str | None, lines: np.ndarray | None, starts: np.ndarray | None = None) -> None:
    """Raise for the first document listed twice in a query (``qidx``: the rows' queries, each query's rows
    together; ``starts``: where each query's rows start, when the caller has them).

    Screened on a 64-bit hash of (query, document) sorted inside each query
    (``ordering.keys_repeat``): equal keys are only *possible* duplicates (a
    hash collision is not one), so the exact string comparison runs only then.
    """
    doc = frame.get_column("doc_id")
    if starts is None:
        starts = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]])
    if not keys_repeat(keys, starts):
        return
    pairs = pl.DataFrame({"qi": qidx, "d": doc})
    if pairs.group_by("qi").agg(pl.col("d").n_unique() == pl.len()).get_column("d").all():
        return  # a hash collision, not a repeated document
    row = np.arange(len(qidx)) if row is None else row
    again = pairs.select(~pl.struct("qi", "d").is_first_distinct()).to_series()
    rows = np.flatnonzero(again.to_numpy())
    i = int(rows[np.argmin(row[rows])])
    same = np.flatnonzero((qidx == qidx[i]) & (doc == doc[i]).to_numpy())
    first = int(row[same].min())
    qid, did = frame.get_column("query_id")[i], doc[i]
    if file is None:
        raise InvalidInput("E_RUN_DUPLICATE_DOC", f"document listed twice for this query (items {first + 1} and "
                           f"{int(row[i]) + 1})", query=qid, doc=did)
    line = (lambda r: int(lines[r]) if lines is not None else r + 1)
    raise InvalidInput("E_RUN_DUPLICATE_DOC", f"document listed twice for this query (first on line {line(first)})",
                       file=file, line=line(int(row[i])), query=qid, doc=did)


# --------------------------------------------------------------------------- writing

ScoreMode = Literal["auto", "keep", "order"]
SCORE_MODES = ("auto", "keep", "order")
# why a query's own scores would not make every tool read the run's order
NO_SCORES = "documents without a score"
OFF_ORDER = "its list order is not the order of its scores (edited, or ordered by the rank column)"
TOOL_TIES = "scores tied, or equal as float32: trec_eval and the Python tools would break those ties differently"


def write_trec_run(run: Run, path: str | os.PathLike, sidecar: bool = True,
                   scores: ScoreMode = "auto") -> TrecWriteInfo:
    """Write ``run`` as a TREC run (gzip when ``path`` ends in .gz), atomically.

    Lines are ``qid Q0 doc rank score tag`` with rank 1..n in the run's order.
    Which scores (``scores``; see ``choose_scores``): ``"auto"`` writes a run
    read from a TREC file by score with its own scores, so that every tool
    reads the written file exactly as it read the original, and otherwise
    acts as ``"order"``; ``"order"`` keeps a query's scores only when every
    tool reads the run's order from them, and writes n, n-1, ..., 1 otherwise;
    ``"keep"`` writes every query's own scores and lets each tool read them
    its own way.  With ``sidecar``, ``<path>.manifest.json`` keeps what TREC
    cannot (including the scores replaced by synthetic ones).
    """
    if scores not in SCORE_MODES:
        raise UsageError("E_USAGE", f"scores must be one of {', '.join(SCORE_MODES)}, not {scores!r}")
    target = str(path)
    frame = ordered_frame(run)
    tag = run.run_id if run.run_id is not None else DEFAULT_TAG
    check_writable_ids(frame, tag, target)
    if frame.height == 0 and not sidecar:
        raise InvalidInput("E_FILE_EMPTY", "the run has no ranked document; a TREC file without sidecar "
                           "cannot express that", file=target)
    choice = choose_scores(frame, keep_tool_ties=scores == "keep" or (scores == "auto" and run.order_source == "score"),
                           keep_off_order=scores == "keep")
    data = trec_lines(frame, choice, tag).getvalue()
    if target.endswith(".gz"):
        data = gzip.compress(data, compresslevel=6, mtime=0)
    ranked = set(frame.get_column("query_id").unique().to_list())
    synthetic = list(choice.synthetic)
    info = TrecWriteInfo(path=target, synthetic_queries=synthetic, synthetic_reasons=dict(choice.synthetic),
                         kept_as_tools_read=dict(choice.kept),
                         empty_queries=[q for q in run.queries if q not in ranked],
                         failed_queries=list(run.failures))
    side = _sidecar.sidecar_path(target)
    if not sidecar:
        # the TREC file first, then the stale sidecar goes: killed in between, the old sidecar's hash does not
        # match the new file, which is an error on reading (E_SIDECAR_MISMATCH), never silently applied
        write_files([(target, data)], then_remove=[side] if _sidecar.is_ours(side) else [])
        return info
    manifest = _sidecar.build_run_manifest(run, frame, Path(target).name, sha256_bytes(data), synthetic)
    text = _sidecar.render_manifest(manifest, side)  # fails here, before any write, on odd metadata
    # both or neither (an existing TREC file stays as it was unless both are written); the sidecar is renamed
    # first, so a kill between the renames leaves a sidecar whose hash names the new TREC file next to the
    # old one: refused on reading (E_SIDECAR_MISMATCH), never a new TREC file read without its sidecar
    write_files([(side, text), (target, data)])
    info.sidecar = str(side)
    return info


def trec_lines(frame: pl.DataFrame, choice: ChosenScores, tag: str) -> io.BytesIO:
    """The TREC lines of an ordered frame: ``qid Q0 doc rank score tag``, with the chosen scores."""
    buf = io.BytesIO()
    write_trec_lines(frame, choice, tag, buf)
    return buf


def write_trec_lines(frame: pl.DataFrame, choice: ChosenScores, tag: str, buffer) -> None:
    """``trec_lines`` written to ``buffer`` (anything with ``write``: a file the outputs module opened) as polars
    makes them, without a copy of the text.  Scores all the run's own are left to the CSV writer, whose float
    text is ``score_column``'s (the same shortest round-trip digits; tests/test_trec_score_text.py holds the two
    equal) and costs 17 ms for 524,288 lines against 29 with the strings made first."""
    score = pl.Series("score", choice.values) if not choice.synthetic_rows.any() else score_column(choice)
    lines = frame.select(pl.col("query_id"), pl.lit("Q0").alias("q0"), pl.col("doc_id"), pl.col("rank"),
                         score, pl.lit(tag).alias("tag"))
    lines.write_csv(buffer, separator=" ", include_header=False, quote_style="never", line_terminator="\n")


def ordered_frame(run: Run) -> pl.DataFrame:
    """The run's frame grouped by ``run.queries`` order with rank 1..n (sorted if it was not)."""
    frame = run.own_frame().select(list(RUN_SCHEMA)).cast(RUN_SCHEMA)  # the run's own scores: a writer's
    if frame.height == 0:
        return frame
    pos = {q: i for i, q in enumerate(run.queries)}
    qids = frame.get_column("query_id")
    if _in_order(qids, frame.get_column("rank"), pos):
        return frame
    unknown = [q for q in qids.unique().to_list() if q not in pos]
    if unknown:
        raise UsageError("E_USAGE", f"run frame has rows for query {quote(unknown[0])}, which run.queries does not list")
    qpos = qids.replace_strict(pos, return_dtype=pl.Int64).to_numpy()
    rank = frame.get_column("rank").to_numpy()
    n = frame.height
    start = np.r_[True, qpos[1:] != qpos[:-1]]
    expected = np.arange(n) - np.flatnonzero(start)[np.cumsum(start) - 1] + 1
    if (np.all(qpos[1:] >= qpos[:-1]) if n > 1 else True) and np.array_equal(rank, expected):
        return frame
    frame = frame[np.lexsort((rank, qpos))]
    qpos = np.sort(qpos, kind="stable")
    start = np.r_[True, qpos[1:] != qpos[:-1]]
    position = np.arange(n) - np.flatnonzero(start)[np.cumsum(start) - 1] + 1
    return frame.with_columns(rank=pl.Series(position, dtype=pl.Int64))


def _in_order(qids: pl.Series, ranks: pl.Series, pos: dict[str, int]) -> bool:
    """Whether the rows are grouped in ``run.queries`` order with rank 1..n, as every reader leaves them: told by
    the runs of equal query IDs (a few hundred a part), not by mapping every row."""
    runs = qids.rle()
    order = [pos.get(q, -1) for q in runs.struct.field("value").to_list()]
    if min(order) < 0 or any(a >= b for a, b in zip(order, order[1:])):
        return False
    lengths = runs.struct.field("len").to_numpy().astype(np.int64)
    starts = np.cumsum(lengths) - lengths
    return bool(np.array_equal(ranks.to_numpy(), np.arange(len(qids)) - np.repeat(starts, lengths) + 1))


def check_writable_ids(frame: pl.DataFrame, tag: str, target: str) -> None:
    """IDs with whitespace (or empty, or NUL) would change the column count: refuse them."""
    # the usual column is printable ASCII alone: none of the characters refused below, told in one pass
    plain = {column: printable_ascii(frame.get_column(column)) for column in ("query_id", "doc_id")}
    for column, what in (("query_id", "query"), ("doc_id", "document")):
        col = frame.get_column(column)
        if plain[column] and not (col.str.len_bytes() == 0).any():
            continue
        bad = col.str.contains(BAD_ID_PATTERN) | (col.str.len_bytes() == 0)
        if bad.any():
            i = int(bad.arg_true()[0])
            where = {"query": frame.get_column("query_id")[i]}
            if column == "doc_id":
                where["doc"] = col[i]
            raise InvalidInput("E_TREC_COLUMNS", f"{what} ID {quote(col[i])} is empty or contains whitespace or NUL; "
                               f"it cannot be written to the TREC file {target}", **where)
    starts_bom = None if plain["query_id"] else frame.get_column("query_id").str.starts_with("\ufeff")
    if starts_bom is not None and starts_bom.any():
        qid = frame.get_column("query_id")[int(starts_bom.arg_true()[0])]
        raise InvalidInput("E_BOM", f"query ID {quote(qid)} starts with U+FEFF (a byte-order mark); it cannot be written "
                           f"to the TREC file {target}", query=qid)
    for column, what in (("query_id", "query"), ("doc_id", "document")):
        if not plain[column]:
            invisible.refuse_in_column(frame.get_column(column), f"{what} ID",
                                       lambda i: {"query": frame.get_column("query_id")[i]})
    if not tag or any(c in PY_WHITESPACE + "\x00" for c in tag):
        raise InvalidInput("E_TREC_COLUMNS", f"run ID {quote(tag)} is empty or contains whitespace or NUL; it cannot be "
                           f"the tag column of the TREC file {target}")
    invisible.refuse_in([tag], "run ID")


class ChosenScores(NamedTuple):
    """The scores to write (float64 per row) and what was decided, per query."""

    values: np.ndarray
    synthetic_rows: np.ndarray  # bool per row: written as n - position + 1
    synthetic: dict[str, str]  # query -> why its own scores were not written (first reason found)
    kept: dict[str, str]  # query -> why tools may read its kept scores in another order than the run's
    ranked: list[str]  # the queries with rows, in row order


def choose_scores(frame: pl.DataFrame, *, keep_tool_ties: bool = False, keep_off_order: bool = False
                  ) -> ChosenScores:
    """Which queries keep their own scores in a TREC file, and which get n, n-1, ..., 1.

    ``frame`` is ordered (grouped by query, rank 1..n).  A query's scores make
    every tool read its order when all are present, finite and strictly
    decreasing after rounding to float32 (trec_eval 9 and pytrec_eval read
    float32; ir_measures and ranx doubles): they are always kept.  Scores
    whose ties (exact or float32) the tools break their own way are kept
    with ``keep_tool_ties`` when the list is their strict reading (score
    descending, equal scores by document ID descending, the TREC reader's
    order); scores in another order than the list only with
    ``keep_off_order``.  A query with a missing score always gets synthetic
    scores: a TREC line needs one.
    """
    n = frame.height
    qids = frame.get_column("query_id")
    if n == 0:
        return ChosenScores(np.empty(0), np.zeros(0, dtype=bool), {}, {}, [])
    change = qids.ne_missing(qids.shift(1)).to_numpy()
    starts = np.flatnonzero(change)  # each query's block; its flags are or-reduced over it (reduceat: 0.02 ms
    sizes = np.diff(np.append(starts, n))  # for 524,288 rows, against 2.3 for np.bincount with weights)
    score = frame.get_column("score").cast(pl.Float64).to_numpy()  # null -> nan
    s32 = as_float32(score)
    first = change.copy()
    missing_q = np.logical_or.reduceat(~np.isfinite(score), starts)
    all_tools = first.copy()
    all_tools[1:] |= s32[:-1] > s32[1:]
    all_tools &= np.isfinite(s32)  # beyond the float32 range trec_eval reads inf
    tools_q = ~np.logical_or.reduceat(~all_tools, starts)
    keep_q = ~missing_q & tools_q
    off_q = np.zeros_like(keep_q)
    if not keep_q.all():
        strict = in_trec_order(~first, score, frame.get_column("doc_id"))
        off_q = np.logical_or.reduceat(~strict, starts)
        if keep_tool_ties:
            keep_q |= ~missing_q & ~off_q
        if keep_off_order:
            keep_q |= ~missing_q
    names = qids.gather(starts).to_list()

    def why(i: int) -> str:
        return NO_SCORES if missing_q[i] else OFF_ORDER if off_q[i] else TOOL_TIES
    synthetic = {names[i]: why(i) for i in np.flatnonzero(~keep_q)}
    kept = {names[i]: why(i) for i in np.flatnonzero(keep_q & ~tools_q)}
    rows = np.repeat(~keep_q, sizes)
    if not rows.any():
        return ChosenScores(score, rows, synthetic, kept, names)
    if sizes.max() >= MAX_SYNTHETIC:
        raise TrecBridgeError("E_OUTPUT", f"a query has {sizes.max()} documents; synthetic scores need fewer than "
                              f"{MAX_SYNTHETIC}")
    rank = frame.get_column("rank").to_numpy()
    values = np.where(rows, synthetic_scores(np.repeat(sizes, sizes), rank), score)
    return ChosenScores(values, rows, synthetic, kept, names)


def score_column(choice: ChosenScores) -> pl.Series:
    """Score text per row: the shortest digits that read back as the same double, integers for synthetic ones."""
    text = pl.Series(choice.values).cast(pl.String)
    if choice.synthetic_rows.any():
        ints = pl.Series(np.where(choice.synthetic_rows, choice.values, 0).astype(np.int64)).cast(pl.String)
        text = pl.select(pl.when(pl.Series(choice.synthetic_rows)).then(ints).otherwise(text)).to_series()
    return text.alias("score")


def trec_score_columns(frame: pl.DataFrame) -> tuple[pl.Series, list[str]]:
    """Score text per row that makes every tool read the frame's order, and the queries that needed synthetic scores."""
    choice = choose_scores(frame)
    return score_column(choice), list(choice.synthetic)


def trec_score_values(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Float64 scores that order every tool like the frame; see ``choose_scores``."""
    choice = choose_scores(frame)
    return choice.values, choice.synthetic_rows, list(choice.synthetic)
