"""The canonical layout of a run's rankings read as columns, with no Python object per entry.

``json_run_dump`` writes every scored entry as ``{"doc_id": "ID", "score": NUM}``
and joins them with ", ".  On bytes in that shape (and no backslash), ending
each "line" at ``}`` and splitting it at ``"`` gives seven fields, always the
same ones: ``, {`` · ``doc_id`` · ``: `` · ID · ``, `` · ``score`` · ``: NUM``.
polars' CSV reader (Rust, every core) splits 7M entries that way in a fraction
of the time any JSON parser needs to build them as objects.  What makes this
safe is the check afterwards, on every field of every entry: the constant
fields are exactly the constants, the first field is whitespace and ``{``,
with a comma unless it opens its query's list, the number is a JSON number,
every ID passes the ID rule, the entries per query are the ``}`` in its span,
and nothing but whitespace follows the last one.  Anything else (bare IDs,
other spacing, another writer's layout) returns None and the caller decodes
those queries with msgspec; no error is ever reported from here.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from . import strict_json as sj

FIELDS = [f"f{i}" for i in range(7)]
_OPEN = r"^[ \t\r\n]*(,[ \t\r\n]*)?\{$"
_NUMBER = r"^: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$"
_BLANK = np.frombuffer(b" \t\r\n", dtype=np.uint8)
INT64_LIMIT = 2.0 ** 63


def canonical_columns(data, spans: list[tuple[str, int, int]]) -> tuple[np.ndarray, pl.Series, pl.Series] | None:
    """(entries per query, doc IDs, scores) of the queries' spans ``(query, start, end)`` in ``data`` (each span
    is its ``[...]``, consecutive in the file), or None when the bytes are not in the canonical shape."""
    first, last = spans[0][1], spans[-1][2]
    region = bytearray(memoryview(data)[first:last])  # one copy, to blank the brackets and keys in
    if region.find(b"\\") >= 0:
        return None
    view = np.frombuffer(region, dtype=np.uint8)
    starts = np.array([s for _, s, _ in spans], dtype=np.int64) - first
    ends = np.array([e for _, _, e in spans], dtype=np.int64) - first
    if (view[starts] != ord("[")).any() or (view[ends - 1] != ord("]")).any():
        return None
    view[starts] = view[ends - 1] = ord(" ")
    for gap_start, gap_end in zip(ends[:-1].tolist(), starts[1:].tolist()):  # `,\n    "q2": ` between spans
        view[gap_start:gap_end] = ord(" ")
    closes = np.flatnonzero(view == ord("}"))
    counts = np.searchsorted(closes, ends) - np.searchsorted(closes, starts)
    tail = view[closes[-1] + 1:] if len(closes) else view
    if not np.isin(tail, _BLANK).all():
        return None
    if not len(closes):
        return counts, pl.Series("doc_id", [], dtype=pl.String), pl.Series("score", [], dtype=pl.Float64)
    return _read_fields(region, closes[-1] + 1, counts)


def _read_fields(region: bytearray, used: int, counts: np.ndarray) -> tuple[np.ndarray, pl.Series, pl.Series] | None:
    try:
        fields = pl.read_csv(bytes(memoryview(region)[:used]), has_header=False, separator='"', eol_char="}", quote_char=None,
                             new_columns=FIELDS, schema_overrides={f: pl.String for f in FIELDS},
                             truncate_ragged_lines=False)
    except Exception:  # noqa: BLE001 - a ragged line, bad UTF-8: not the canonical shape
        return None
    if fields.width != 7 or fields.height != int(counts.sum()):
        return None
    opens_list = np.zeros(fields.height, dtype=bool)
    opens_list[(np.cumsum(counts) - counts)[counts > 0]] = True  # each query's first entry has no comma before it
    ok = fields.select(
        (pl.col("f1") == "doc_id") & (pl.col("f2") == ": ") & (pl.col("f4") == ", ") & (pl.col("f5") == "score")
        & pl.col("f0").str.contains(_OPEN) & (pl.col("f0").str.contains(",", literal=True) != pl.lit(opens_list))
        & pl.col("f6").str.contains(_NUMBER) & (pl.col("f6") != ": -0")  # -0 is the integer 0 in the exact reader
        & (pl.col("f3").str.len_bytes() > 0) & ~pl.col("f3").str.contains(sj.ID_BAD_CHARS)
    ).to_series()
    if ok.null_count() or not ok.all():
        return None
    scores = fields.get_column("f6").str.slice(2).cast(pl.Float64, strict=False).alias("score")
    if scores.null_count() or not (scores.abs() < INT64_LIMIT).all():  # an integer beyond int64: the exact reader
        return None
    return counts, fields.get_column("f3").alias("doc_id"), scores
