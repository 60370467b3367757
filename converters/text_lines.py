"""Splitting TREC text files into typed columns, fast, with exact line numbers.

Shared by the run and qrels readers so both apply the same byte-level checks
(BOM, NUL, UTF-8, whitespace the anchor tools disagree on) and the same two
parse paths:

* fast path: the file uses one separator (a single space or a single tab, LF
  or CRLF ends).  polars' CSV reader parses it into typed columns in one
  multi-threaded pass; the result is only trusted when no field is empty, the
  parser raised nothing and there is exactly one row per line, which is
  exactly the case where "one separator" and "any run of whitespace" split
  the same way.
* general path: anything else (mixed tabs and spaces, several blanks, blank
  lines, ...).  Lines are split by a vectorised regex; it is also the path
  that locates the first bad line when the fast path fails.

No per-line Python runs unless an error was found and must be described.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np
import polars as pl

from trec_bridge.errors import InvalidInput
from trec_bridge.messages import quote

from . import invisible

# trec_eval splits on C isspace(): space, \t, \r, \v, \f and the newline.
_SEP_CLASS = r"[ \t\r\x0b\x0c]"
_FIELD = r"[^ \t\r\x0b\x0c]+"

# Characters Python's str.split() (pytrec_eval, ir_measures, ranx) treats as
# separators but C's isspace() (trec_eval) does not: a line containing one has
# a different number of columns depending on the tool.
AMBIGUOUS_WHITESPACE = (
    "\x1c\x1d\x1e\x1f\x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)
# Everything str.isspace() accepts, i.e. what no written ID may contain.
PY_WHITESPACE = " \t\n\r\x0b\x0c" + AMBIGUOUS_WHITESPACE
_UNICODE_WS_CLASS = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in AMBIGUOUS_WHITESPACE if ord(c) > 0x7F) + "]"
_DATA_BYTE = re.compile(rb"[^ \t\r\x0b\x0c\n]")
UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Field:
    """One column of a TREC line: its name, type and validity rule."""

    name: str
    dtype: type[pl.DataType] | pl.DataType = pl.String
    pattern: str | None = None  # full match the text must satisfy (numeric columns)
    valid: Callable[[pl.Expr], pl.Expr] | None = None  # extra check on the typed value
    code: str | None = None  # error code when the value is invalid
    expected: str = ""  # "a finite decimal number", for messages


@dataclass
class Columns:
    """Typed columns of the data lines, and where each row came from."""

    frame: pl.DataFrame
    lines: np.ndarray | None  # 1-based line number per row; None: row i is line i + 1
    raw: bytes  # the decoded-from bytes, to quote a line in an error message

    def line_of(self, row: int) -> int:
        return int(self.lines[row]) if self.lines is not None else row + 1


def clip(text: str, limit: int = 120) -> str:
    """A quoted piece of the user's file, shortened so a megabyte line does not become a megabyte message."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def line_at(raw: bytes, offset: int) -> int:
    """1-based number of the line holding byte ``offset``."""
    return raw.count(b"\n", 0, offset) + 1


def line_text(raw: bytes, line: int) -> str:
    """Text of one 1-based line (for error messages only)."""
    start = 0
    if line > 1:
        ends = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10)
        start = int(ends[line - 2]) + 1
    end = raw.find(b"\n", start)
    return raw[start: end if end >= 0 else len(raw)].decode("utf-8", "replace").rstrip("\r")


@dataclass(frozen=True)
class ByteCensus:
    """How often each control byte (0x00-0x1f) occurs: one vectorised pass instead of a search per byte."""

    controls: np.ndarray  # int64[32]
    ascii: bool

    def count(self, byte: int) -> int:
        return int(self.controls[byte])

    def lines(self, raw: bytes) -> int:
        return self.count(10) + (0 if raw.endswith(b"\n") else 1)


def byte_census(raw: bytes, step: int = 1 << 20, *, line_ends_parsed: int | None = None) -> ByteCensus:
    """Counts of the control bytes, in slices so the temporary masks stay small.

    Usually every control byte is a newline: two counting passes show it, and
    the full histogram is only taken when they disagree.  ``line_ends_parsed``
    is how many line ends polars' parse of ``raw`` found; it splits lines at LF
    only (a CR or any other control byte stays inside a field), so when the
    control bytes number exactly that many, they are those LFs and the
    newline pass is skipped.
    """
    data = np.frombuffer(raw, dtype=np.uint8)
    controls = np.zeros(32, dtype=np.int64)
    below = sum(int(np.count_nonzero(data[at:at + step] < 32)) for at in range(0, len(data), step))
    if below == line_ends_parsed:
        newlines = below
    else:
        newlines = sum(int(np.count_nonzero(data[at:at + step] == 10)) for at in range(0, len(data), step))
    if below == newlines:
        controls[10] = newlines
    else:
        for at in range(0, len(data), step):
            piece = data[at:at + step]
            controls += np.bincount(piece[piece < 32], minlength=32)
    return ByteCensus(controls, raw.isascii())


def check_bytes(raw: bytes, file: str, *, at_file_start: bool = True,
                line_ends_parsed: int | None = None) -> ByteCensus:
    """Reject what would make tools read different data from the same bytes; return the byte census.

    ``at_file_start`` is False for a later piece of a file read in parts (it starts at a line start).
    ``line_ends_parsed``: see ``byte_census``.
    """
    if raw.startswith(UTF8_BOM) and not at_file_start:
        raise InvalidInput("E_BOM", "a line starts with a UTF-8 byte-order mark (files concatenated?)",
                           file=file, line=1)
    if raw.startswith(UTF8_BOM):
        raise InvalidInput(
            "E_BOM", "the file starts with a UTF-8 byte-order mark; trec_eval, pytrec_eval and ir_measures "
            "would silently read it as part of the first query ID. Save the file as UTF-8 without BOM",
            file=file, line=1)
    census = byte_census(raw, line_ends_parsed=line_ends_parsed)
    mid = -1 if census.ascii else raw.find(b"\n" + UTF8_BOM)
    if mid >= 0:
        raise InvalidInput("E_BOM", "a line starts with a UTF-8 byte-order mark (files concatenated?)",
                           file=file, line=line_at(raw, mid) + 1)
    if census.count(0):
        raise InvalidInput("E_NUL_BYTE", "the file contains a NUL byte (binary or UTF-16 data?)",
                           file=file, line=line_at(raw, raw.find(b"\x00")))
    if not census.ascii:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput("E_ENCODING", f"not valid UTF-8 (byte {raw[exc.start]:#04x} at offset {exc.start})",
                               file=file, line=line_at(raw, exc.start)) from None
    at = -1 if census.ascii else invisible.find_in_bytes(raw)
    if at >= 0:
        line = line_at(raw, at)
        char = raw[at:at + 3].decode("utf-8", "ignore")[0]
        raise invisible.error(char, clip(line_text(raw, line)), "the line", file=file, line=line)
    hits = [raw.find(bytes([b])) for b in (0x1c, 0x1d, 0x1e, 0x1f) if census.count(b)]
    if hits:
        at = min(hits)
        _ambiguous(chr(raw[at]), line_at(raw, at), file)
    return census


def _ambiguous(char: str, line: int, file: str) -> None:
    raise InvalidInput(
        "E_TREC_COLUMNS", f"the line contains U+{ord(char):04X}, which Python-based tools (pytrec_eval, "
        "ir_measures, ranx) treat as a column separator and trec_eval does not; they would read different "
        "columns", file=file, line=line)


def _check_unicode_whitespace(cols: "Columns", fields: list[Field], file: str) -> None:
    """Non-ASCII separators (NBSP, U+2028, ...) inside a field: only possible in a non-ASCII file."""
    raw = cols.raw
    if not any(lead in raw for lead in (b"\xc2", b"\xe1", b"\xe2", b"\xe3")):
        return  # every such character is encoded with one of these lead bytes
    names = [f.name for f in fields if f.dtype in (pl.String, pl.Categorical)]
    flags = cols.frame.select(pl.any_horizontal(pl.col(n).cast(pl.String).str.contains(_UNICODE_WS_CLASS)
                                                for n in names))
    rows = flags.to_series().arg_true()
    if rows.len():
        line = cols.line_of(int(rows[0]))
        _ambiguous(next(c for c in line_text(raw, line) if c in AMBIGUOUS_WHITESPACE), line, file)


def has_data(raw: bytes) -> bool:
    """Whether the file holds any non-whitespace byte."""
    return _DATA_BYTE.search(raw) is not None


def count_lines(raw: bytes) -> int:
    return raw.count(b"\n") + (0 if raw.endswith(b"\n") else 1)


def split_columns(raw: bytes, fields: list[Field], file: str, *, blank_lines: Literal["skip", "reject"],
                  layout: str, census: ByteCensus | None = None,
                  parsed: tuple[str, pl.DataFrame | None] | None = None) -> Columns:
    """Parse ``raw`` (already through ``check_bytes``) into one typed column per field.

    ``layout`` names the columns for messages ("query Q0 doc rank score tag").
    ``parsed`` is an optional ``(separator, parse_typed(raw, fields, separator))``
    made ahead (by a reader thread); it is used only if the byte census agrees.
    Raises InvalidInput for an empty file, a blank line (when rejected), a
    wrong column count or an invalid value, naming the first offending line.
    """
    if not has_data(raw):
        raise InvalidInput("E_FILE_EMPTY", "the file has no data line", file=file)
    census = census or byte_census(raw)
    frame = _fast_path(raw, fields, census, parsed)
    cols = Columns(frame, None, raw) if frame is not None else _general_path(raw, fields, file, blank_lines, layout)
    if not census.ascii:
        _check_unicode_whitespace(cols, fields, file)
    _check_values(cols, fields, file, typed=True)
    return cols


def _schema(fields: list[Field], typed: bool) -> dict:
    return {f.name: (f.dtype if typed else pl.String) for f in fields}


def parse_typed(raw: bytes, fields: list[Field], separator: str) -> pl.DataFrame | None:
    """polars' multi-threaded parse into typed columns; None when the parser complains (take the exact path).

    polars sizes its work by the first line: a first line of millions of
    fields took gigabytes before failing, so a first line without exactly
    one separator between fields goes straight to the exact path.
    """
    end = raw.find(b"\n")
    if raw.count(separator.encode(), 0, end if end >= 0 else len(raw)) != len(fields) - 1:
        return None
    try:
        return pl.read_csv(raw, separator=separator, has_header=False, quote_char=None,
                           schema=_schema(fields, typed=True), infer_schema=False)
    except Exception:  # noqa: BLE001 - any parser complaint means: take the exact path
        return None


def _fast_path(raw: bytes, fields: list[Field], census: ByteCensus,
               parsed: tuple[str, pl.DataFrame | None] | None = None) -> pl.DataFrame | None:
    """``parsed``: (separator, ``parse_typed``'s result) done ahead of the census, used when that separator fits."""
    if census.count(0x0b) or census.count(0x0c):
        return None
    if census.count(13) and census.count(13) != raw.count(b"\r\n"):
        return None
    has_tab, has_space = census.count(9) > 0, b" " in raw
    if has_tab and has_space:
        return None
    separator = "\t" if has_tab else " "
    frame = parsed[1] if parsed is not None and parsed[0] == separator else parse_typed(raw, fields, separator)
    if frame is None or sum(frame.null_count().row(0)) or frame.height != census.lines(raw):
        return None
    return frame


def _read_lines(raw: bytes) -> pl.Series:
    """Every line of the file as a string (blank lines as null), in order."""
    n = count_lines(raw)
    try:
        lines = pl.read_csv(raw, separator="\x00", has_header=False, quote_char=None,
                            schema={"line": pl.String}, infer_schema=False).get_column("line")
        if lines.len() == n:
            return lines
    except Exception:  # noqa: BLE001 - fall back to the plain split below
        pass
    parts = raw.decode("utf-8").split("\n")
    if raw.endswith(b"\n"):
        parts.pop()
    return pl.Series("line", parts, dtype=pl.String)


def _general_path(raw: bytes, fields: list[Field], file: str, blank_lines: str, layout: str) -> Columns:
    lines = _read_lines(raw)
    n = len(fields)
    regex = "^" + _SEP_CLASS + "*" + (_SEP_CLASS + "+").join([f"({_FIELD})"] * n) + _SEP_CLASS + "*$"
    parts = lines.str.extract_groups(regex).struct.unnest()
    parts.columns = [f.name for f in fields]
    info = pl.DataFrame({
        "blank": lines.is_null() | lines.str.contains("^" + _SEP_CLASS + "*$"),
        "ok": parts.get_column(fields[0].name).is_not_null(),
    })
    blank = info.get_column("blank").to_numpy()
    bad_cols = np.flatnonzero(~blank & ~info.get_column("ok").to_numpy())
    first_blank = np.flatnonzero(blank)
    problems = []
    if bad_cols.size:
        problems.append(int(bad_cols[0]))
    if blank_lines == "reject" and first_blank.size:
        problems.append(int(first_blank[0]))
    if problems:
        row = min(problems)
        if blank[row]:
            raise InvalidInput("E_TREC_BLANK_LINE", "blank line; a qrels file may not contain blank lines "
                               "(trec_eval stops with 'Malformed line' there)", file=file, line=row + 1)
        text = lines[row]
        found = len(re.findall(_FIELD, text))
        raise InvalidInput("E_TREC_COLUMNS", f"expected {n} columns ({layout}), found {found}: {quote(clip(text.strip()))}",
                           file=file, line=row + 1)
    keep = np.flatnonzero(~blank)
    frame = parts if keep.size == len(blank) else parts[keep]
    cols = Columns(frame, keep + 1, raw)
    _check_values(cols, fields, file, typed=False)
    frame = cols.frame.with_columns(
        pl.col(f.name).cast(f.dtype, strict=False) for f in fields if f.dtype != pl.String)
    return Columns(frame, cols.lines, raw)


def _check_values(cols: Columns, fields: list[Field], file: str, *, typed: bool) -> None:
    """Raise for the earliest row whose value breaks its field's rule."""
    checks = []
    for f in fields:
        if f.code is None:
            continue
        col = pl.col(f.name)
        if typed:
            if f.valid is None:
                continue
            bad = ~f.valid(col)
        else:
            value = col.cast(f.dtype, strict=False)
            bad = ~col.str.contains(f.pattern) | value.is_null()
            if f.valid is not None:
                bad = bad | ~f.valid(value).fill_null(False)
        checks.append(bad.alias(f.name))
    if not checks:
        return
    if not cols.frame.select(pl.any_horizontal(checks).any()).item():
        return  # the usual case, in one pass; the flags are only materialised to name the first bad row
    flags = cols.frame.select(checks)
    firsts = {name: int(np.argmax(flags.get_column(name).to_numpy())) for name in flags.columns
              if flags.get_column(name).any()}
    name = min(firsts, key=lambda k: (firsts[k], [f.name for f in fields].index(k)))
    row = firsts[name]
    f = next(f for f in fields if f.name == name)
    line = cols.line_of(row)
    if typed:
        tokens = re.findall(_FIELD, line_text(cols.raw, line))
        text = tokens[fields.index(f)] if len(tokens) == len(fields) else str(cols.frame.get_column(name)[row])
    else:
        text = cols.frame.get_column(name)[row]
    where = {"file": file, "line": line}
    names = cols.frame.columns
    if "query_id" in names:
        where["query"] = cols.frame.get_column("query_id")[row]
    if "doc_id" in names:
        where["doc"] = cols.frame.get_column("doc_id")[row]
    raise InvalidInput(f.code, f"{f.name} {quote(clip(text))} is not {f.expected}", **where)
