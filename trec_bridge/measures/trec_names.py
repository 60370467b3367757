"""How a family is named in trec_eval's vocabulary, in both directions.

trec_eval names a measure by a ``-m`` name and an optional parameter list
(``-m P.5,10``, ``-m iprec_at_recall``, ``-m ndcg.1=0,2=1``, ``-m set_F.0.5``)
and prints one line per value (``P_10``, ``iprec_at_recall_0.00``, ``ndcg``).
A family declares this once, as ``Family.tool_names["trec_eval"]``: either
the short form ``(plain, cut)`` (the ``-m`` name without a cutoff, and the one
that takes a cutoff list; None where trec_eval has no such measure), or a
``TrecEvalName`` when its parameters are not cutoffs.  ``trec_eval_form``
turns either into a ``TrecEvalName``, so the adapters, the measure-string
parser and the ``trec_eval`` drop-in read one shape.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

from .base import Measure, _num

# trec_eval 9.0.4's default cutoff list for its cutoff measures (P, recall, ndcg_cut, map_cut, relative_P, ...)
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecEvalName:
    """One ``-m`` name of a family and how its parameter list maps to measures.

    ``to_measures(param_text)`` gives the measures ``-m name[.param_text]``
    computes (param_text None: trec_eval's defaults), ``spell(measure)``
    gives ``(param_text or None, printed name)`` for one measure, or None when
    this ``-m`` name does not compute it.
    """

    name: str
    to_measures: Callable[[str | None], list] = field(compare=False)
    spell: Callable[[object], tuple[str | None, str] | None] = field(compare=False)


def trec_eval_form(family) -> list[TrecEvalName] | str:
    """A family's trec_eval names as ``TrecEvalName`` objects (the short form converted), or the reason it has none."""
    named = family.native("trec_eval")
    if named is None:
        return f"no trec_eval measure for {family.name}"
    if isinstance(named, str):
        return named
    if isinstance(named, TrecEvalName):
        return [named]
    if isinstance(named, list):
        return named
    plain, cut = named
    out = []
    if plain is not None:
        out.append(_plain_name(family.name, plain, takes_cut=cut is None))
    if cut is not None:
        out.append(cutoff_name(family.name, cut))
    return out


def registered() -> dict[str, TrecEvalName]:
    """Every ``-m`` name the registered families declare -> its ``TrecEvalName`` (what the parser and the
    drop-in look names up in; a family added later is in it with no change here)."""
    from .base import FAMILIES

    out: dict[str, TrecEvalName] = {}
    for family in FAMILIES.values():
        form = trec_eval_form(family)
        for named in form if isinstance(form, list) else ():
            out.setdefault(named.name, named)
    return out


def _plain_name(family: str, name: str, takes_cut: bool) -> TrecEvalName:
    def spell(m):
        if m.family != family or (m.cutoff is not None and not takes_cut):
            return None
        return None, name
    return TrecEvalName(name, lambda text: [Measure(family)], spell)


def atol(text: str) -> int:
    """C's ``atol``: the leading integer of ``text`` after blanks (``23.4`` -> 23, ``2e1`` -> 2), 0 without one."""
    match = re.match(r"\s*([+-]?[0-9]+)", text)
    return int(match[1]) if match else 0


# strtod's longest prefix after C-locale blanks: a hexadecimal or decimal number, or inf / infinity / nan (any case)
_ATOF = re.compile(r"[ \t\n\v\f\r]*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
                   r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                   r"|(?i:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)))")


def atof(text: str) -> float:
    """C's ``atof`` (strtod): the number at the start of ``text`` (``2,5`` -> 2, ``1e`` -> 1, ``0x1p-2`` -> 0.25,
    ``-nan`` a NaN with its sign), 0.0 without one."""
    match = _ATOF.match(text)
    if match is None:
        return 0.0
    number = match[1]
    body = number.lstrip("+-")
    negative = number.startswith("-")
    if body[:2] in ("0x", "0X"):
        value = float.fromhex(body if "p" in body.lower() else body + "p0")
        return -value if negative else value
    if body[:1] in "nN":  # nan(chars)
        return math.copysign(math.nan, -1.0 if negative else 1.0)
    return float(number)


def cutoff_name(family: str, name: str, defaults: tuple[int, ...] = DEFAULT_CUTOFFS) -> TrecEvalName:
    """A ``-m`` name whose parameters are cutoffs (``P.5,10`` -> P@5, P@10; printed ``P_5``), with trec_eval's
    default list for it (``defaults``: most take 5 ... 1000; success takes 1, 5, 10)."""
    def to_measures(text: str | None) -> list:
        """trec_eval's cutoff list: each read as C's atol reads it (``23.4`` is 23, the parser's note shows it),
        ascending whatever the order given (te_init_meas_a_float_cut_long sorts it), a repeat or a cutoff below 1
        refused as trec_eval refuses them ("duplicate cutoffs detected", "Negative cutoff detected")."""
        cutoffs = defaults if text is None else sorted(atol(k) for k in text.split(","))
        if any(k <= 0 for k in cutoffs):
            raise ValueError(f"a cutoff of {name}.{text} is not a positive integer")
        if len(set(cutoffs)) != len(cutoffs):
            raise ValueError(f"duplicate cutoffs in {name}.{text}")
        return [Measure(family, cutoff=k) for k in cutoffs]

    def spell(m):
        if m.family != family or m.cutoff is None:
            return None
        return str(m.cutoff), f"{name}_{m.cutoff}"
    return TrecEvalName(name, to_measures, spell)


def gain_map_name(family: str, name: str) -> TrecEvalName:
    """``-m name`` (the grade as gain) or ``-m name.1=0,2=1`` (trec_eval's rel_level=gain list, our ``gains=``).

    For the families whose parameter is a gain map (ndcg, G, ndcg_rel, Rndcg),
    printed ``name_1=0,2=1``.  Only grades >= 0 can be given a gain in
    trec_eval's list; ``gain=exp`` is spelled as the plain name, since its map
    depends on the judged grades (the trec_eval adapter adds it).
    """
    def to_measures(text: str | None) -> list:
        """Each ``grade=gain`` of the list, the grade read as C's atol reads it (m_ndcg.c); unlisted grades keep
        their value, as ``gains=`` does."""
        if text is None:
            return [Measure(family)]
        gains: dict[int, float] = {}
        for item in text.split(","):
            grade, sep, gain = item.partition("=")
            value = float(gain) if sep else None  # float() raises ValueError on a bad gain
            if value is None or value != value or abs(value) == float("inf"):
                raise ValueError(f"{item!r} in {name}.{text} is not grade=gain with a finite gain")
            gains[atol(grade)] = value
        return [Measure(family, gains=tuple(sorted(gains.items())))]

    def spell(m):
        if m.family != family or m.cutoff is not None:
            return None
        spec = ",".join(f"{g}={_num(v)}" for g, v in (m.gains or ()) if g >= 0)
        return (spec, f"{name}_{spec}") if spec else (None, name)
    return TrecEvalName(name, to_measures, spell)
