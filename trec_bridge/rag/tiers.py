"""Acceptance tiers: the thresholds file and the tier of a value.

A thresholds file (TOML) gives, per measure, the lowest value of each tier:

    domain_discount = 0.05        # optional: 0 (default) or 0.05 .. 0.10
    min_queries = 200             # optional: the sample-size rule (sample.py)
    expected_repeats = 3          # optional: runs of the system the method expects
    [triage]                      # optional
    k = 10
    recall_below = 0.3
    ndcg_below = 0.5
    [measures."R@3"]              # optional: when present, replaces the built-in table
    excellent = 0.70
    good = 0.60
    pass = 0.50

Numbers are read as decimals (never through a binary float), so a level of
0.70 is exactly 7/10; the domain discount lowers every level to
``level * (1 - discount)``, again exactly.  The tier of a value ``v`` is the
highest tier whose level ``v`` reaches (``v >= level``: a boundary value
belongs to the higher tier).  A rational measure (recall, RR, ...) is
compared through its exact fraction; a float measure (nDCG) is compared with
the level correctly rounded to a float, so that a mean printed as 0.85 is
not put below a level of 0.85 by the binary representation.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from ..errors import InvalidInput, TrecBridgeError
from ..files import read_input_bytes
from ..measures import parse_measures
from ..measures.base import Measure
from ..integers import INT64_MAX, in_range, range_text
from ..messages import quote

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

LEVEL_NAMES = ("excellent", "good", "pass")

# Policy §8, the built-in table (measure -> excellent, good, pass), as decimal text.  The method's nDCG
# has exponential gain 2^grade - 1, named explicitly: a plain nDCG@5 is linear, as in every tool.
METHOD_NDCG_GAIN = "exp"
DEFAULT_TABLE: dict[str, tuple[str, str, str]] = {
    "R@3": ("0.70", "0.60", "0.50"),
    "R@5": ("0.80", "0.70", "0.60"),
    "R@10": ("0.90", "0.80", "0.70"),
    "RR@20": ("0.80", "0.70", "0.60"),
    f"nDCG(gain={METHOD_NDCG_GAIN})@5": ("0.85", "0.75", "0.65"),
    f"nDCG(gain={METHOD_NDCG_GAIN})@10": ("0.80", "0.70", "0.60"),
}
DEFAULT_MIN_QUERIES = 200
DEFAULT_EXPECTED_REPEATS = 3
DISCOUNT_RANGE = (Fraction(5, 100), Fraction(10, 100))
TOP_KEYS = {"format", "version", "domain_discount", "min_queries", "expected_repeats", "triage", "measures"}


@dataclass(frozen=True)
class Levels:
    excellent: Fraction
    good: Fraction
    pass_: Fraction

    def scaled(self, factor: Fraction) -> "Levels":
        return Levels(self.excellent * factor, self.good * factor, self.pass_ * factor)

    def as_tuple(self) -> tuple[Fraction, Fraction, Fraction]:
        return (self.excellent, self.good, self.pass_)


@dataclass(frozen=True)
class Triage:
    k: int = 10
    recall_below: Fraction = Fraction(3, 10)
    ndcg_below: Fraction = Fraction(1, 2)

    def measures(self) -> list[Measure]:
        return [self.recall_measure, self.ndcg_measure]

    @property
    def recall_measure(self) -> Measure:
        return Measure("R", self.k)

    @property
    def ndcg_measure(self) -> Measure:
        """The method's nDCG@k (exponential gain), as in the tier table."""
        return Measure("nDCG", self.k, gain=METHOD_NDCG_GAIN)


@dataclass
class Thresholds:
    """Nominal levels per measure (canonical measure name), and the rules around them."""

    levels: dict[str, Levels]
    domain_discount: Fraction = Fraction(0)
    min_queries: int = DEFAULT_MIN_QUERIES
    expected_repeats: int = DEFAULT_EXPECTED_REPEATS
    triage: Triage = field(default_factory=Triage)
    source: str = "built-in (policy §8)"

    def measures(self) -> list[Measure]:
        return parse_measures(list(self.levels))

    def effective(self, name: str) -> Levels:
        """The levels after the domain discount (exact)."""
        return self.levels[name].scaled(1 - self.domain_discount)

    def discount_note(self) -> str | None:
        if not self.domain_discount:
            return None
        pct = self.domain_discount * 100
        pct_text = str(pct.numerator) if pct.denominator == 1 else f"{float(pct):g}"
        return (f"domain discount applied: every level lowered by {pct_text}% "
                f"(level x {fraction_decimal(1 - self.domain_discount)}), as declared in {self.source}")


def default_thresholds() -> Thresholds:
    return Thresholds(levels={name: Levels(*(Fraction(v) for v in vals)) for name, vals in DEFAULT_TABLE.items()})


def tier_of(levels: Levels, value: float | None, exact: Fraction | None = None) -> str:
    """excellent / good / pass / fail; a boundary value belongs to the higher tier; no value fails."""
    if value is None and exact is None:
        return "fail"
    for name, level in zip(LEVEL_NAMES, levels.as_tuple()):
        if _reaches(value, exact, level):
            return name
    return "fail"


def below(value: float | None, exact: Fraction | None, limit: Fraction) -> bool:
    """``value < limit`` with the same exactness rule as the tiers (None is never below)."""
    if value is None and exact is None:
        return False
    return not _reaches(value, exact, limit)


def _reaches(value: float | None, exact: Fraction | None, level: Fraction) -> bool:
    if exact is not None:
        return exact >= level
    return value >= float(level)  # float(Fraction) is correctly rounded


def fraction_decimal(f: Fraction) -> str:
    """A level as short decimal text (levels come from decimals, so this is exact when it can be)."""
    d = Decimal(f.numerator) / Decimal(f.denominator)
    if Fraction(d) == f:
        text = format(d.normalize(), "f")
        whole, _, frac = text.partition(".")
        return f"{whole}.{frac:0<2}"  # at least two decimals: 0.70, 0.665, 1.00
    return f"{f.numerator}/{f.denominator}"


# ----------------------------------------------------------------- loading


def load_thresholds(path: str | Path) -> Thresholds:
    file = str(path)
    raw = read_input_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("E_ENCODING", "thresholds file is not valid UTF-8", file=file) from None
    try:
        doc = tomllib.loads(text, parse_float=Decimal)
    except ValueError as exc:  # TOMLDecodeError, or an integer of more than 4,300 digits (int()'s limit)
        raise InvalidInput("E_THRESHOLDS", f"not valid TOML: {exc}", file=file) from None
    return thresholds_from_dict(doc, file)


def thresholds_from_dict(doc: dict, file: str | None = None) -> Thresholds:
    def bad(msg: str) -> InvalidInput:
        return InvalidInput("E_THRESHOLDS", msg, file=file)

    unknown = sorted(set(doc) - TOP_KEYS)
    if unknown:
        raise bad(f"unknown key(s) {unknown}; allowed: {sorted(TOP_KEYS)}")
    if "format" in doc and doc["format"] != "trec-bridge.thresholds":
        raise bad(f"format must be \"trec-bridge.thresholds\", found {quote(doc['format'])}")
    if "version" in doc and (type(doc["version"]) is not int or doc["version"] != 1):
        raise bad(f"version must be 1, found {quote(doc['version'])}")
    out = default_thresholds()
    out.source = file or "thresholds"
    if "measures" in doc:
        out.levels = _levels_table(doc["measures"], bad)
    if "domain_discount" in doc:
        d = _number(doc["domain_discount"], "domain_discount", bad)
        if d != 0 and not (DISCOUNT_RANGE[0] <= d <= DISCOUNT_RANGE[1]):
            raise bad(f"domain_discount must be 0 (none) or between 0.05 and 0.10 (a 5-10% lowering of "
                      f"every level, policy §8), found {doc['domain_discount']}")
        out.domain_discount = d
    if "min_queries" in doc:
        out.min_queries = _positive_int(doc["min_queries"], "min_queries", bad)
    if "expected_repeats" in doc:
        out.expected_repeats = _positive_int(doc["expected_repeats"], "expected_repeats", bad)
    if "triage" in doc:
        out.triage = _triage(doc["triage"], bad)
    return out


def _levels_table(table, bad) -> dict[str, Levels]:
    if not isinstance(table, dict) or not table:
        raise bad("[measures] must be a table of measures, e.g. [measures.\"R@3\"]")
    levels: dict[str, Levels] = {}
    for key, entry in table.items():
        try:
            (measure,) = parse_measures(key)
        except (TrecBridgeError, ValueError) as exc:
            raise bad(f"measure {quote(key)}: {getattr(exc, 'message', exc)}") from None
        name = str(measure)
        if name in levels:
            raise bad(f"measure {quote(key)} is the same measure as another entry ({name})")
        if not isinstance(entry, dict):
            raise bad(f"measure {quote(key)} must be a table with excellent, good and pass")
        extra = sorted(set(entry) - set(LEVEL_NAMES))
        missing = [n for n in LEVEL_NAMES if n not in entry]
        if extra or missing:
            raise bad(f"measure {quote(key)}: needs exactly excellent, good and pass"
                      + (f"; unknown {extra}" if extra else "") + (f"; missing {missing}" if missing else ""))
        vals = [_number(entry[n], f"{key}.{n}", bad) for n in LEVEL_NAMES]
        for n, v in zip(LEVEL_NAMES, vals):
            if not 0 <= v <= 1:
                raise bad(f"measure {quote(key)}: {n} = {entry[n]} is outside [0, 1]")
        if not vals[0] >= vals[1] >= vals[2]:
            raise bad(f"measure {quote(key)}: levels must satisfy excellent >= good >= pass, "
                      f"found {entry['excellent']}, {entry['good']}, {entry['pass']}")
        levels[name] = Levels(*vals)
    return levels


def _triage(table, bad) -> Triage:
    if not isinstance(table, dict):
        raise bad("[triage] must be a table (k, recall_below, ndcg_below)")
    extra = sorted(set(table) - {"k", "recall_below", "ndcg_below"})
    if extra:
        raise bad(f"[triage]: unknown key(s) {extra}; allowed: k, recall_below, ndcg_below")
    base = Triage()
    k = _positive_int(table["k"], "triage.k", bad) if "k" in table else base.k
    limits = []
    for name, default in (("recall_below", base.recall_below), ("ndcg_below", base.ndcg_below)):
        v = _number(table[name], f"triage.{name}", bad) if name in table else default
        if not 0 < v <= 1:
            raise bad(f"triage.{name} must be in (0, 1], found {table[name]}")
        limits.append(v)
    return Triage(k, *limits)


def _number(value, name: str, bad) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise bad(f"{name} must be a number, found {quote(value)}")
    if isinstance(value, Decimal) and not value.is_finite():
        raise bad(f"{name} must be a finite number, found {value}")
    return Fraction(value)


def _positive_int(value, name: str, bad) -> int:
    if not in_range(value, 1, INT64_MAX):
        raise bad(f"{name} must be {range_text(1, INT64_MAX)}, found {quote(value)}")
    return value
