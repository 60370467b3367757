"""Integers from the user, read with a bound.

Python's integers have no size, so an unbounded option or parameter lets a
user's 20-digit number reach numpy (OverflowError), a loop count or a
resample array, and a 5,000-digit one break ``int()`` itself (Python refuses
to convert more than 4,300 digits, a ValueError).  Every integer the user
gives (command-line options, measure cutoffs and parameters, thresholds-file
fields) is read here: its digits are checked before any conversion, and the
value must lie in a stated range, else an error with the caller's code.
"""
from __future__ import annotations

import re
from typing import Callable

from .errors import UsageError
from .messages import quote

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_INTEGER = re.compile(r"[+-]?[0-9]+")
_MAX_DIGITS = 19  # every int64 fits; more digits are out of any range used here, whatever their value


def parse_int(text: str) -> int | None:
    """The integer a decimal text spells (ASCII digits, optional sign), None when it spells none.

    A text too long for any range here gives a value just past int64 instead of being converted.
    """
    text = text.strip()
    if not _INTEGER.fullmatch(text):
        return None
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > _MAX_DIGITS:
        return INT64_MIN - 1 if text.startswith("-") else INT64_MAX + 1
    return int(text)


def in_range(value: int, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def range_text(low: int, high: int) -> str:
    """``from 1 to 2**63-1``, ``>= 0``: how a bound reads in a message."""
    def show(v: int) -> str:
        return {INT64_MAX: "2**63-1", INT64_MIN: "-2**63"}.get(v, f"{v:,}")
    if (low, high) == (INT64_MIN, INT64_MAX):
        return "a 64-bit integer (from -2**63 to 2**63-1)"
    if low in (0, 1):
        return f"a {'positive' if low else 'non-negative'} integer (at most {show(high)})"
    return f"an integer from {show(low)} to {show(high)}"


def int_option(name: str, low: int, high: int = INT64_MAX, code: str = "E_USAGE") -> Callable[[str], int]:
    """An argparse ``type=`` reading option ``name`` as an integer in [low, high], else ``code`` (exit 1)."""
    def read(text: str) -> int:
        value = parse_int(text)
        if value is None or not low <= value <= high:
            raise UsageError(code, f"{name} must be {range_text(low, high)}, got {quote(text)}")
        return value
    read.__name__ = "integer"
    return read
