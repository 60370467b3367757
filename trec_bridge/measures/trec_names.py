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
        out.append(_cutoff_name(family.name, cut))
    return out


def _plain_name(family: str, name: str, takes_cut: bool) -> TrecEvalName:
    def spell(m):
        if m.family != family or (m.cutoff is not None and not takes_cut):
            return None
        return None, name
    return TrecEvalName(name, lambda text: [Measure(family)], spell)


def _cutoff_name(family: str, name: str) -> TrecEvalName:
    def to_measures(text: str | None) -> list:
        cutoffs = DEFAULT_CUTOFFS if text is None else [int(k) for k in text.split(",")]
        return [Measure(family, cutoff=k) for k in cutoffs]

    def spell(m):
        if m.family != family or m.cutoff is None:
            return None
        return str(m.cutoff), f"{name}_{m.cutoff}"
    return TrecEvalName(name, to_measures, spell)


def cutoff_form(family: str, name: str) -> TrecEvalName:
    """The ``-m name.k1,k2`` form of a family declared with TrecEvalName objects (nDCG's ``ndcg_cut``)."""
    return _cutoff_name(family, name)


def gain_map_name(family: str, name: str) -> TrecEvalName:
    """``-m name`` (the grade as gain) or ``-m name.1=0,2=1`` (trec_eval's rel_level=gain list, our ``gains=``).

    For the families whose parameter is a gain map (ndcg, G, ndcg_rel, Rndcg),
    printed ``name_1=0,2=1``.  Only grades >= 0 can be given a gain in
    trec_eval's list; ``gain=exp`` is spelled as the plain name, since its map
    depends on the judged grades (the trec_eval adapter adds it).
    """
    def to_measures(text: str | None) -> list:
        if text is None:
            return [Measure(family)]
        pairs = (part.split("=") for part in text.split(","))
        return [Measure(family, gains=tuple(sorted((int(g), float(v)) for g, v in pairs)))]

    def spell(m):
        if m.family != family or m.cutoff is not None:
            return None
        spec = ",".join(f"{g}={_num(v)}" for g, v in (m.gains or ()) if g >= 0)
        return (spec, f"{name}_{spec}") if spec else (None, name)
    return TrecEvalName(name, to_measures, spell)
