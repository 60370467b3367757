"""AvgIPrec (trec_eval 11pt_avg): the mean of IPrec at recall levels, by default the 11 levels 0.0, 0.1, ..., 1.0.

ir_measures has no such measure and "11pt_avg" is not a name a measure
string can start with, hence AvgIPrec.  Other levels: ``AvgIPrec(levels=[0.2,
0.5,0.8])``, trec_eval's ``-m 11pt_avg.0.2,0.5,0.8`` (its 3-pt average).
Exact: the fractions, each divided by the number of levels; the double is
trec_eval's bit for bit (m_11pt_avg.c's sum from the top level down, then the
division; a z-score against a deviation of 0 compares it exactly).

m_11pt_avg.c walks the levels from the last to the first assuming they
ascend; a list in another order it reads its own way, so levels must be
given in ascending order (a repeat counts twice, as there).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInput
from ..messages import quote
from .base import Family, Measure, Ranking, Terms, Values, register
from .iprec import DEFAULT_LEVELS, interpolated
from .trec_names import TrecEvalName, atof

MAX_LEVELS = 1000  # a levels= list longer than this is a typo, not an average


def avg_iprec(r: Ranking, m, ctx) -> Values:
    levels = interpolated(r, ctx.rel, list(m.param("levels", DEFAULT_LEVELS)))
    num = np.concatenate([n for n, _ in levels])
    den = np.concatenate([d for _, d in levels]) * len(levels)
    query = np.tile(np.arange(r.n_queries, dtype=np.int64), len(levels))
    keep = num != 0
    order = np.argsort(query[keep], kind="stable")
    terms = Terms(query[keep][order], num[keep][order], den[keep][order])
    total = np.zeros(r.n_queries)
    for n, d in reversed(levels):  # m_11pt_avg.c's double: each level's n/d added from the last level down
        total += n / d
    return Values(total / len(levels), terms)


def read_levels(value, token: str) -> tuple[float, ...]:
    """Recall levels: a non-empty list of numbers in [0, 1], ascending (trec_eval walks them so)."""
    if not isinstance(value, (list, tuple)) or not value or len(value) > MAX_LEVELS or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1 for v in value):
        raise InvalidInput("E_MEASURE_PARAM", f"levels must be a list of 1 to {MAX_LEVELS} recall levels in [0, 1], "
                           f"got {quote(value)} (in {quote(token)})")
    levels = tuple(float(v) for v in value)
    if any(b < a for a, b in zip(levels, levels[1:])):
        raise InvalidInput("E_MEASURE_PARAM", f"levels must ascend (trec_eval's 11pt_avg walks them from the last "
                           f"down and reads another order its own way), got {quote(value)} (in {quote(token)})")
    return levels


def _to_measures(text: str | None) -> list:
    """``-m 11pt_avg`` is the 11 default levels; ``-m 11pt_avg.0.2,0.5,0.8`` the levels read as trec_eval's
    get_float_params reads them (each comma piece by atof)."""
    if text is None:
        return [Measure("AvgIPrec")]
    levels = read_levels([atof(piece) for piece in text.split(",")], f"-m 11pt_avg.{text}")
    return [Measure("AvgIPrec") if levels == DEFAULT_LEVELS else Measure("AvgIPrec", extra=(("levels", levels),))]


def _spell(m):
    """11pt_avg, or 11pt_avg_LEVELS (the drop-in prints the -m text as typed, as trec_eval does)."""
    if m.family != "AvgIPrec":
        return None
    levels = m.param("levels")
    if levels is None:
        return None, "11pt_avg"
    text = ",".join(f"{v:g}" for v in levels)
    return text, f"11pt_avg_{text}"


register(Family("AvgIPrec", avg_iprec, rational=True, needs_cutoff=False, takes_cutoff=False,
                params=frozenset({"rel", "levels"}), param_readers={"levels": read_levels},
                param_defaults={"levels": DEFAULT_LEVELS},
                description="interpolated precision averaged over recall levels (default 0.0, 0.1, ..., 1.0)",
                tool_names={"trec_eval": TrecEvalName("11pt_avg", _to_measures, _spell)}))
