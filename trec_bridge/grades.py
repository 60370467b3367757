"""The relevance grades trec-bridge accepts: integers from -1023 to 1023, one rule for every input.

Why these bounds: the exponential nDCG gain 2^g - 1 is a finite double only up
to g = 1023 (2^1024 overflows to inf, and inf/inf used to print nan), so every
gain of every accepted grade can be computed.  Negative grades (TREC -1, -2:
junk) earn no gain and are never relevant; the lower bound mirrors the upper
one, so that a grade is always a small integer that every reference tool holds
(trec_eval's C code sizes per-query arrays by the largest grade:
``references/base.py`` ``grade_limit_reason``).

Every reader of judgments (TREC qrels, JSON dataset, ranx JSON, Python columns)
and ``dataset_checks.check_dataset`` (which the scorer runs on any Dataset,
however it was built) apply this one rule with ``first_out_of_range`` and
``grade_range_error``.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Iterable

import numpy as np

if TYPE_CHECKING:
    import polars as pl

from .errors import InvalidInput

GRADE_MIN = -1023
GRADE_MAX = 1023


def first_out_of_range(grades: pl.Series | Iterable[int]) -> int | None:
    """Position of the first grade outside GRADE_MIN..GRADE_MAX (nulls are not this rule's business)."""
    pl = sys.modules.get("polars")  # a Series exists only once polars is loaded: a list of grades never loads it
    if pl is not None and isinstance(grades, pl.Series):
        bad = ((grades < GRADE_MIN) | (grades > GRADE_MAX)).fill_null(False)
        return int(bad.arg_true()[0]) if bad.any() else None
    for i, g in enumerate(grades):
        if not GRADE_MIN <= int(g) <= GRADE_MAX:
            return i
    return None


def grade_range_error(grade: int, **where) -> InvalidInput:
    """The one message for a grade outside the range (``where``: file, line, json_path, query, doc)."""
    return InvalidInput("E_GRADE_RANGE", range_message(grade), **where)


def range_message(grade: int) -> str:
    return (f"grade {_short(grade)} is outside the accepted range {GRADE_MIN}..{GRADE_MAX} "
            "(the exponential nDCG gain 2^g-1 of a larger grade overflows a double)")


def _short(grade: int) -> str:
    text = str(int(grade)) if isinstance(grade, (int, np.integer)) else repr(grade)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} digits)"
