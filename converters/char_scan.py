"""Whether any value of a string column holds a character of a class, told on the values joined.

A character class matches exactly one character, so it matches somewhere in
the values joined end to end exactly when it matches inside one of them.
The joined text is then told in one pass: when the class holds no printable
ASCII character (whitespace, controls, invisible characters) and the text is
printable ASCII alone, numpy's minimum and maximum of its bytes settle it;
otherwise polars' engine scans the one long string instead of starting over
on every row.  On W1's parts (460k IDs) about a third of the time of
``str.contains`` row by row (issue 22, bench/README.md).  The values are
joined in slices, so the joined text stays a few MB whatever the column's
length.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import polars as pl

SLICE_ROWS = 1 << 20
_PRINTABLE = (0x21, 0x7E)  # "!" to "~": ASCII but space, controls and DEL


def any_holds(col: pl.Series, char_class: str) -> bool:
    """``col.str.contains(char_class).any()`` (nulls hold nothing) for a class ``[...]`` of single characters."""
    if not (char_class.startswith("[") and char_class.endswith("]")):
        raise ValueError(f"not a character class: {char_class!r}")
    quick = _misses_printable(char_class)
    for start in range(0, col.len(), SLICE_ROWS):
        joined = col.slice(start, SLICE_ROWS).str.join("")
        if quick and _printable_ascii(joined.item()):
            continue
        if joined.str.contains(char_class).item():
            return True
    return False


@lru_cache(maxsize=None)
def _misses_printable(char_class: str) -> bool:
    """Whether the class matches no printable ASCII character (asked of polars' engine, which tells matches)."""
    chars = pl.Series([chr(c) for c in range(_PRINTABLE[0], _PRINTABLE[1] + 1)], dtype=pl.String)
    return not chars.str.contains(char_class).any()


def printable_ascii(col: pl.Series) -> bool:
    """Whether every value is printable ASCII alone (``!`` to ``~``: no space, control, DEL or other character);
    a column of such values holds no whitespace, NUL, byte-order mark or invisible character."""
    for start in range(0, col.len(), SLICE_ROWS):
        if not _printable_ascii(col.slice(start, SLICE_ROWS).str.join("").item()):
            return False
    return True


def _printable_ascii(text: str) -> bool:
    if not text.isascii():
        return False
    octets = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return not len(octets) or bool(octets.min() >= _PRINTABLE[0] and octets.max() <= _PRINTABLE[1])
