"""A measure is a value: a family name plus typed parameters, printed in ir_measures' syntax.

Kernels (one module per family) compute per-query values on a ``Ranking``:
columnar arrays grouped by query.  Kernels know nothing of policies: they
compute ``num/den`` (or a float) and the scorer decides what a query with no
relevant document becomes (null or 0).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

import numpy as np

UNJUDGED = np.iinfo(np.int64).min  # grade of a retrieved document with no judgment


@dataclass(frozen=True)
class Measure:
    """``family`` is the canonical name (R, RR, P, Success, AP, nDCG, Judged)."""

    family: str
    cutoff: int | None = None
    rel: int | None = None  # None: the dataset's threshold
    gain: str | None = None  # nDCG: "exp" or "linear"; None: the policy's default
    gains: tuple[tuple[int, float], ...] | None = None  # nDCG: explicit grade -> gain map

    def __str__(self) -> str:
        params = []
        if self.rel is not None:
            params.append(f"rel={self.rel}")
        if self.gain is not None:
            params.append(f"gain={self.gain}")
        if self.gains is not None:
            inner = ",".join(f"{g}:{_num(v)}" for g, v in self.gains)
            params.append(f"gains={{{inner}}}")
        text = self.family + (f"({','.join(params)})" if params else "")
        return text + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def rational(self) -> bool:
        return FAMILIES[self.family].rational


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


@dataclass
class Ranking:
    """One policy's view of a run joined with the judgments, grouped by query.

    Rows of query ``i`` are ``offsets[i]:offsets[i+1]``, ranks 1..n inside.
    ``qrels_*`` describe all judgments of the scored queries (for recall
    denominators and the nDCG ideal), grouped the same way.
    """

    n_queries: int
    offsets: np.ndarray  # int64, n_queries + 1
    row_query: np.ndarray  # int64 per row
    rank: np.ndarray  # int64 per row, 1-based
    grade: np.ndarray  # int64 per row, UNJUDGED when not judged
    qrels_query: np.ndarray  # int64 per judgment
    qrels_grade: np.ndarray  # int64 per judgment

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def per_query_count(self, row_mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.row_query[row_mask], minlength=self.n_queries).astype(np.int64)

    def relevant_count(self, rel: int) -> np.ndarray:
        """Relevant judged documents per query (grade >= rel, never a negative grade)."""
        mask = (self.qrels_grade >= rel) & (self.qrels_grade >= 0)
        return np.bincount(self.qrels_query[mask], minlength=self.n_queries).astype(np.int64)

    def relevant_rows(self, rel: int, cutoff: int | None) -> np.ndarray:
        mask = (self.grade >= rel) & (self.grade >= 0)
        if cutoff is not None:
            mask &= self.rank <= cutoff
        return mask


@dataclass
class Values:
    """Per-query results of one measure, before the policy's null/zero rule.

    Rational families fill ``num``/``den`` (value = num/den, 0 when den = 0)
    or ``exact`` for values that are sums of fractions (AP).
    """

    value: np.ndarray  # float64 per query
    num: np.ndarray | None = None
    den: np.ndarray | None = None
    exact: Callable[[int], Fraction] | None = None

    def fraction(self, i: int) -> Fraction | None:
        if self.num is not None:
            d = int(self.den[i])
            return Fraction(int(self.num[i]), d) if d else Fraction(0)
        if self.exact is not None:
            return self.exact(i)
        return None


@dataclass(frozen=True)
class Family:
    name: str
    kernel: Callable  # (Ranking, Measure, MeasureContext) -> Values
    rational: bool
    needs_cutoff: bool
    params: frozenset = field(default_factory=frozenset)  # allowed parameter names
    description: str = ""


@dataclass(frozen=True)
class MeasureContext:
    """What the policy decides for one measure: threshold and nDCG gain."""

    rel: int
    gain: Callable[[np.ndarray], np.ndarray] | None = None
    ideal_floor: int = 1  # grades below this never enter the nDCG ideal or DCG


FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    FAMILIES[family.name] = family
    return family


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den as float64, 0 where den is 0."""
    out = np.zeros(len(num), dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out
